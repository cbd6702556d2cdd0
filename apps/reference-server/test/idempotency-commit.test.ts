import { randomBytes } from "node:crypto";
import { MemoryStore, PostgresStore, RedisStore } from "@svc/idempotency";
import { serviceUrl } from "@svc/test-utils";
import { afterEach, describe, expect, it, vi } from "vitest";
import { client, postgres, type Started } from "./harness.js";

/**
 * On PostgreSQL, POST /transfers commits the Idempotency-Key's outcome with the transfer. Whatever
 * fails after that commit (the response, the instance, the store's write of the response), a
 * retry with the same key replays the transfer's 202 and Location: one transfer per key.
 */
// As the fleet runs: PostgreSQL and Redis (when there is one); the records are PostgreSQL's.
const redisUrl = serviceUrl("REDIS_URL");
const env: Record<string, string> = redisUrl
  ? {
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: `svc-test-commit-${process.pid}-${randomBytes(4).toString("hex")}:`,
    }
  : {};
const BODY = JSON.stringify({ fromAccountId: 3, toAccountId: 4, amount: 1 });

let s: Started | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await s?.stop();
  s = undefined;
});

/** The read of a new row's representation (after its commit) fails, or waits for `open()`. */
function afterCommit(started: Started, how: "fail" | "hang", table = "transfers") {
  const kysely = started.service.db.kysely;
  const executeQuery = kysely.executeQuery.bind(kysely);
  let armed = true;
  let open!: () => void;
  const gate = new Promise<void>((r) => {
    open = r;
  });
  kysely.executeQuery = ((query: Parameters<typeof executeQuery>[0]) => {
    const text = "sql" in query ? query.sql : query.compile().sql;
    if (!armed || !text.includes(`"${table}" as "t"`)) return executeQuery(query);
    armed = false;
    if (how === "fail") return Promise.reject(new Error("Connection terminated unexpectedly"));
    return gate.then(() => executeQuery(query));
  }) as typeof kysely.executeQuery;
  return { open };
}

describe.skipIf(!postgres)("POST /transfers on PostgreSQL: a failure after the transfer committed", () => {
  const paths = [
    ["the read that builds the response fails after the commit", "5xx"],
    ["no response: the instance is gone after the commit, before the record is stored", "dies"],
    ["the store's write of the response fails after the commit", "store-lost"],
  ] as const;

  it.each(paths)("%s → the retry replays the 202 and its Location; one transfer", async (_n, path) => {
    s = await (postgres as NonNullable<typeof postgres>).start(env);
    const api = client(s.url);
    const total = async () =>
      ((await (await api("/transfers?size=1")).json()) as { page: { totalElements: number } }).page
        .totalElements;
    const before = await total();
    const key = `commit-${path}-${randomBytes(4).toString("hex")}`;
    const send = (signal?: AbortSignal) =>
      api("/transfers", {
        method: "POST",
        headers: { "idempotency-key": `"${key}"`, "content-type": "application/json" },
        body: BODY,
        ...(signal ? { signal } : {}),
      });
    const hold = path === "store-lost" ? undefined : afterCommit(s, path === "5xx" ? "fail" : "hang");
    if (path === "store-lost") {
      // Whichever store holds the records loses the write of this response.
      for (const store of [PostgresStore, RedisStore, MemoryStore])
        vi.spyOn(store.prototype, "complete").mockRejectedValueOnce(new Error("connection lost"));
    }
    // "dies": the client gives up after 3 s, longer than the 2 s the committed record waits for
    // its execution to record the response it sends.
    const first = await send(AbortSignal.timeout(path === "dies" ? 3000 : 10_000)).then(
      async (res) => {
        await res.arrayBuffer();
        return res.status;
      },
      () => "no response",
    );
    // A failure after the commit answers as the replay would (issue 44: no 5xx for a committed write).
    expect(first).toBe(path === "dies" ? "no response" : 202);
    if (path === "store-lost") {
      // The execution never recorded the response it sent: for 2 s after the commit a retry waits
      // as for an execution in flight, then the committed record replays.
      const early = await send();
      await early.arrayBuffer();
      expect(early.status).toBe(409);
      expect(Number(early.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      await new Promise((r) => setTimeout(r, 2200));
    }
    const retry = await send();
    await retry.arrayBuffer();
    expect({ status: retry.status, replayed: retry.headers.get("idempotent-replayed") }).toEqual({
      status: 202,
      replayed: "true",
    });
    expect(retry.headers.get("location")).toMatch(/\/transfers\/\d+$/);
    hold?.open();
    expect((await total()) - before).toBe(1);
  });
});

describe.skipIf(!postgres)("every POST that writes, on PostgreSQL: its key commits with its row", () => {
  const unique = () => randomBytes(4).toString("hex");
  const posts = [
    ["/departments", "departments", () => ({ name: `Dept ${unique()}`, city: "Nice" })],
    ["/customers", "customers", () => ({ name: "Keyed", email: `k-${unique()}@example.com`, city: "Nice" })],
    ["/orders", "orders", () => ({ customerId: 1, items: [{ productId: 1, quantity: 1 }] })],
  ] as const;

  it.each(posts)(
    "POST %s whose read after the commit fails → the committed 201; the retry replays it; one row",
    async (path, table, body) => {
      s = await (postgres as NonNullable<typeof postgres>).start(env);
      const api = client(s.url);
      const total = async () =>
        ((await (await api(`${path}?size=1`)).json()) as { page: { totalElements: number } }).page
          .totalElements;
      const before = await total();
      const key = `"post-${table}-${unique()}"`;
      const payload = JSON.stringify(body());
      const send = () =>
        api(path, {
          method: "POST",
          headers: { "idempotency-key": key, "content-type": "application/json" },
          body: payload,
        });
      afterCommit(s, "fail", table);
      const first = await send();
      await first.arrayBuffer();
      expect(first.status).toBe(201);
      const location = first.headers.get("location");
      expect(location).toMatch(new RegExp(`${path}/\\d+$`));
      const retry = await send();
      await retry.arrayBuffer();
      expect({ status: retry.status, replayed: retry.headers.get("idempotent-replayed") }).toEqual({
        status: 201,
        replayed: "true",
      });
      expect(retry.headers.get("location")).toBe(location);
      expect((await total()) - before).toBe(1);
    },
  );
});
