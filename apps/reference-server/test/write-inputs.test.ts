import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, client, type Started } from "./harness.js";

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
