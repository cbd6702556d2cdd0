import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, client, type Started } from "./harness.js";

/**
 * A write none of whose possible answers the client accepts is refused with 406 before it runs
 * (RFC 9110 §15.5.7, §12.5.1): an employee or a transfer has no CSV representation (CSV is offered
 * for pages only), so `Accept: text/csv` on a write to one changes nothing and gets the error
 * record, and its `Idempotency-Key` stays free. A DELETE answers 204, which has no representation
 * for `Accept` to refuse.
 */
describe.each(backends)("writes and Accept on $name", (backend) => {
  let s: Started;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    s = await backend.start();
    api = client(s.url);
  });
  afterAll(() => s.stop());

  const count = async (path: string): Promise<number> =>
    ((await (await api(`${path}?size=1`)).json()) as { page: { totalElements: number } }).page.totalElements;
  const transfer = (key: string, accept: string) =>
    api("/transfers", {
      method: "POST",
      headers: { "idempotency-key": key, accept },
      json: { fromAccountId: 6, toAccountId: 1, amount: 0.01 },
    });
  const employee = (n: string) => ({
    name: `Write Accept ${n}`,
    email: `write.accept.${n}.${randomUUID()}@example.com`,
    department: "Engineering",
    city: "Berlin",
    salary: 85000,
  });
  const created = async (): Promise<number> => {
    const res = await api("/employees", { method: "POST", json: employee("a") });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: number }).id;
  };
  const expectRecord406 = async (res: Response, path: string) => {
    expect(res.status).toBe(406);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const record = (await res.json()) as Record<string, unknown>;
    expect(record).toMatchObject({ status: 406, error: "Not Acceptable", path });
    expect(String(record.message)).not.toContain("text/csv");
  };

  it.each([
    ["PATCH", { city: "Paris" }],
    ["PUT", { ...employee("b"), city: "Paris" }],
  ])(
    "%s /employees/{id}, Accept: text/csv → 406 error record before the write: the employee unchanged",
    async (method, json) => {
      const id = await created();
      const before = await (await api(`/employees/${id}`)).json();
      const res = await api(`/employees/${id}`, { method, headers: { accept: "text/csv" }, json });
      await expectRecord406(res, `/employees/${id}`);
      expect(await (await api(`/employees/${id}`)).json()).toEqual(before);
    },
  );

  it("POST /employees, Accept: text/csv → 406 error record before the write: no employee created", async () => {
    const before = await count("/employees");
    const res = await api("/employees", {
      method: "POST",
      headers: { accept: "text/csv" },
      json: employee("c"),
    });
    await expectRecord406(res, "/employees");
    expect(await count("/employees")).toBe(before);
  });

  it("PATCH /employees/{id}, Accept: text/csv, application/xml;q=0.5 → 200 XML (an acceptable answer is chosen)", async () => {
    const id = await created();
    const res = await api(`/employees/${id}`, {
      method: "PATCH",
      headers: { accept: "text/csv, application/xml;q=0.5" },
      json: { city: "Paris" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    expect(await res.text()).toContain("<city>Paris</city>");
  });

  it.each(["text/csv", "image/png"])(
    "DELETE /employees/{id}, Accept: %s → 204 (no content, nothing for Accept to refuse)",
    async (accept) => {
      const id = await created();
      const res = await api(`/employees/${id}`, { method: "DELETE", headers: { accept } });
      expect(res.status).toBe(204);
      expect((await api(`/employees/${id}`)).status).toBe(404);
    },
  );

  it("POST /transfers with 10 keys, Accept: text/csv, each sent twice → every answer 406, no transfer", async () => {
    const before = await count("/transfers");
    for (let i = 0; i < 10; i++) {
      const key = randomUUID();
      for (let attempt = 0; attempt < 2; attempt++)
        await expectRecord406(await transfer(key, "text/csv"), "/transfers");
    }
    expect(await count("/transfers")).toBe(before);
  });

  it("POST /transfers, Accept: text/csv, then the same key with Accept: application/json → the key was free: 202, one transfer", async () => {
    const before = await count("/transfers");
    const key = randomUUID();
    await expectRecord406(await transfer(key, "text/csv"), "/transfers");
    const res = await transfer(key, "application/json");
    expect(res.status).toBe(202);
    expect(typeof ((await res.json()) as { id?: number }).id).toBe("number");
    expect(await count("/transfers")).toBe(before + 1);
  });

  it("GET /transfers/{id}, Accept: text/csv → 406 (no CSV of one transfer)", async () => {
    const made = await transfer(randomUUID(), "application/json");
    const location = made.headers.get("location") ?? "";
    await made.arrayBuffer();
    const res = await api(new URL(location).pathname, { headers: { accept: "text/csv" } });
    expect(res.status).toBe(406);
  });
});
