import { randomUUID } from "node:crypto";
import { rawExchange } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, backends, client, type Started, sqlite } from "./harness.js";

/** One GET with a Host of our choosing (fetch sends the URL's): status and body. */
async function getWithHost(
  base: string,
  path: string,
  host: string,
): Promise<{ status: number; body: string }> {
  const { status, body } = await rawExchange(
    base,
    `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${ADMIN}\r\nAccept: application/json`,
  );
  return { status, body: Buffer.from(body, "latin1").toString("utf8") };
}

/** What a write may carry: the media types its Accept-Post / Accept-Patch name, nothing else. */
describe.each(backends)("write inputs on $name", (backend) => {
  let s: Started;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    s = await backend.start();
    api = client(s.url);
  });
  afterAll(() => s.stop());

  const salaryOf = async (id: number) =>
    ((await (await api(`/employees/${id}`)).json()) as { salary: number }).salary;

  describe("media types of a write body (RFC 9110 §15.5.16, RFC 5789 §2.2)", () => {
    it.each(["application/json-patch+json", "application/merge-patch+json", "application/vnd.svc.v1+json"])(
      "PATCH /employees/3 as %s → 415 with Accept-Patch: application/json, nothing changed",
      async (type) => {
        const before = await salaryOf(3);
        const res = await api("/employees/3", {
          method: "PATCH",
          headers: { "content-type": type },
          body: JSON.stringify({ salary: before + 1 }),
        });
        expect(res.status).toBe(415);
        expect(res.headers.get("accept-patch")).toBe("application/json");
        const record = (await res.json()) as { status: number; message: string };
        expect(record.status).toBe(415);
        expect(record.message).toContain("application/json");
        expect(await salaryOf(3)).toBe(before);
      },
    );

    it("POST /transfers as application/json-patch+json → 415 with Accept-Post: application/json, no transfer", async () => {
      const count = async () =>
        ((await (await api("/transfers?size=1")).json()) as { page: { totalElements: number } }).page
          .totalElements;
      const before = await count();
      const res = await api("/transfers", {
        method: "POST",
        headers: { "content-type": "application/json-patch+json", "idempotency-key": randomUUID() },
        body: JSON.stringify({ fromAccountId: 6, toAccountId: 1, amount: 0.01 }),
      });
      expect(res.status).toBe(415);
      expect(res.headers.get("accept-post")).toBe("application/json");
      expect(await count()).toBe(before);
    });

    it("PATCH /employees/3 as application/json; charset=utf-8 → 200 (the type named, with its charset)", async () => {
      const res = await api("/employees/3", {
        method: "PATCH",
        headers: { "content-type": "application/json; charset=utf-8" },
        body: JSON.stringify({ salary: 77000 }),
      });
      expect(res.status).toBe(200);
      expect(await salaryOf(3)).toBe(77000);
    });
  });
});

describe.each(backends)("numbers the service cannot hold exactly on $name (RFC 8259 §6)", (backend) => {
  let s: Started;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    s = await backend.start();
    api = client(s.url);
  });
  afterAll(() => s.stop());

  const count = async () =>
    ((await (await api("/transfers?size=1")).json()) as { page: { totalElements: number } }).page
      .totalElements;

  it.each([
    ["1.0000000000000001", "amount"],
    ["0.010000000000000001", "amount"],
    ["9007199254740993", "amount"],
  ])("POST /transfers with amount %s → 400 naming %s, no transfer", async (amount, field) => {
    const before = await count();
    const res = await api("/transfers", {
      method: "POST",
      headers: { "idempotency-key": randomUUID(), "content-type": "application/json" },
      body: `{"fromAccountId":6,"toAccountId":1,"amount":${amount}}`,
    });
    expect(res.status).toBe(400);
    const record = (await res.json()) as {
      status: number;
      errors?: Array<{ field: string; message: string }>;
    };
    expect(record.status).toBe(400);
    expect(record.errors?.map((e) => e.field)).toEqual([field]);
    expect(record.errors?.[0]?.message).toContain(amount);
    expect(await count()).toBe(before);
  });

  it("PATCH /employees/3 with salary 50000.000000000001 → 400 naming salary, unchanged", async () => {
    const before = ((await (await api("/employees/3")).json()) as { salary: number }).salary;
    const res = await api("/employees/3", {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: '{"salary":50000.000000000001}',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: Array<{ field: string }> }).errors[0]?.field).toBe("salary");
    expect(((await (await api("/employees/3")).json()) as { salary: number }).salary).toBe(before);
  });

  it("POST /transfers with amount 0.10 (held exactly, two decimals) → 202", async () => {
    const res = await api("/transfers", {
      method: "POST",
      headers: { "idempotency-key": randomUUID(), "content-type": "application/json" },
      body: '{"fromAccountId":6,"toAccountId":1,"amount":0.10}',
    });
    expect(res.status).toBe(202);
  });
});

describe("ALLOWED_HOSTS=127.0.0.1 and other spellings of that host", () => {
  let s: Started;
  let port: string;
  beforeAll(async () => {
    s = await sqlite.start({ ALLOWED_HOSTS: "127.0.0.1" });
    port = new URL(s.url).port;
  });
  afterAll(() => s.stop());

  it.each(["2130706433", "127.1", "0x7f.0.0.1", "0177.0.0.1", "127.000.000.001"])(
    "GET /employees/1 with Host: %s:{port} → 400 error record, no link to it",
    async (host) => {
      const res = await getWithHost(s.url, "/employees/1", `${host}:${port}`);
      expect(res.status).toBe(400);
      const record = JSON.parse(res.body) as { status: number; message: string };
      expect(record.status).toBe(400);
      expect(record.message).toBe("The request's Host header is not a valid host");
      expect(res.body).not.toContain(host);
    },
  );

  it("GET /employees/1 with Host: 127.0.0.1.:{port} → 200, links written as http://127.0.0.1:{port}", async () => {
    const res = await getWithHost(s.url, "/employees/1", `127.0.0.1.:${port}`);
    expect(res.status).toBe(200);
    const employee = JSON.parse(res.body) as { _links: { self: { href: string } } };
    expect(employee._links.self.href).toBe(`http://127.0.0.1:${port}/employees/1`);
    expect(res.body).not.toContain("127.0.0.1.:");
  });

  it("GET /employees/1 with Host: 10.0.0.1:{port} → 421 (another host)", async () => {
    expect((await getWithHost(s.url, "/employees/1", `10.0.0.1:${port}`)).status).toBe(421);
  });
});
