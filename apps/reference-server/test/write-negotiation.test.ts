import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, client, type Started } from "./harness.js";

/**
 * A write is never refused after it ran: RFC 9110 §12.5.1 lets a server disregard `Accept` and send
 * its default representation, so a POST whose `Accept` names a type the created resource has no
 * representation in (`text/csv`, offered for pages only) gets the default (JSON), which the
 * idempotency key records, and a retry replays it instead of writing again.
 */
describe.each(backends)("writes and Accept on $name", (backend) => {
  let s: Started;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    s = await backend.start();
    api = client(s.url);
  });
  afterAll(() => s.stop());

  const count = async (): Promise<number> =>
    ((await (await api("/transfers?size=1")).json()) as { page: { totalElements: number } }).page
      .totalElements;
  const post = (key: string, accept: string) =>
    api("/transfers", {
      method: "POST",
      headers: { "idempotency-key": key, accept },
      json: { fromAccountId: 6, toAccountId: 1, amount: 0.01 },
    });

  it("POST /transfers with 30 keys, Accept: text/csv, each sent twice → 30 transfers, every answer 202 JSON, no 406", async () => {
    const before = await count();
    const keys = Array.from({ length: 30 }, () => randomUUID());
    const statuses: number[] = [];
    for (const key of keys) {
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await post(key, "text/csv");
        statuses.push(res.status);
        expect(res.headers.get("content-type")).toMatch(/^application\/(hal\+)?json/);
        const body = (await res.json()) as { id?: number };
        expect(typeof body.id).toBe("number");
      }
    }
    expect(statuses.filter((status) => status !== 202)).toEqual([]);
    expect(await count()).toBe(before + 30);
  });

  it("POST /transfers, Accept: text/csv, 10 concurrent retries of one key → one transfer, no 406", async () => {
    const before = await count();
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(key, "text/csv")));
    expect(answers.map((r) => r.status).filter((status) => status === 406)).toEqual([]);
    await Promise.all(answers.map((r) => r.arrayBuffer()));
    expect(await count()).toBe(before + 1);
  });

  it("GET /transfers/{id}, Accept: text/csv → still 406 (a read has no side effect to protect)", async () => {
    const created = await post(randomUUID(), "application/json");
    const location = created.headers.get("location") ?? "";
    const res = await api(new URL(location).pathname, { headers: { accept: "text/csv" } });
    expect(res.status).toBe(406);
  });
});
