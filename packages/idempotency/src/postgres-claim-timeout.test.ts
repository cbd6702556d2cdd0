import { errorHandler } from "@svc/errors/express";
import { createPipeline, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { postgresUrl, throwawaySchema } from "../test/postgres.js";
import { idempotency } from "./express.js";
import { type PgQueryable, PostgresStore } from "./postgres-store.js";
import { StoreUnavailableError } from "./redis-store.js";
import type { ClaimResult } from "./store.js";

// draft-ietf-httpapi-idempotency-key-header §2.6: a request is refused with 409 only while another
// execution of its key is in progress. A claim whose statement the store gave up on (a 503) runs
// nothing, so when it lands anyway it must not refuse the client's retry for the whole lease.
const database = throwawaySchema("claimtimeout");

let tables = 0;
async function freshStore(
  pool: PgQueryable = database.pool(),
): Promise<{ store: PostgresStore; table: string }> {
  const table = `idem_t${++tables}`;
  const store = new PostgresStore({ pool, table, timeoutMs: 200 });
  await store.migrate();
  return { store, table };
}

/** The database's pool, keeping each claim's INSERT to be awaited: it has landed once settled. */
function watched(): { pool: PgQueryable; inserts: Array<Promise<unknown>> } {
  const pool = database.pool();
  const inserts: Array<Promise<unknown>> = [];
  return {
    inserts,
    pool: {
      query(text, values) {
        const answer = pool.query(text, values);
        if (text.trimStart().startsWith("INSERT")) inserts.push(answer.catch(() => {}));
        return answer;
      },
    },
  };
}

/** Holds a lock no INSERT into `table` gets past, until `release()`. */
async function blockInserts(table: string): Promise<{ release: () => Promise<void> }> {
  const client = await database.pool().connect();
  await client.query("BEGIN");
  await client.query(`LOCK TABLE ${table} IN EXCLUSIVE MODE`);
  return {
    async release() {
      await client.query("COMMIT");
      client.release();
    },
  };
}

/** Rows of `key` in `table`, as the database has them. */
async function rowsOf(table: string, key: string): Promise<Array<{ token: string; state: string }>> {
  const { rows } = await database.pool().query(`SELECT token, state FROM ${table} WHERE key = $1`, [key]);
  return rows;
}

/**
 * The client's retry: sent again while the key is in flight or the store is unavailable (a 409 or
 * a 503), at most 5 s (the lease is 60 s); the last answer.
 */
async function retry(store: PostgresStore, key: string): Promise<ClaimResult> {
  for (const until = Date.now() + 5000; ; ) {
    const answer = await store.claim(key, "fp", 60_000).catch((e: unknown) => {
      if (e instanceof StoreUnavailableError && Date.now() <= until) return undefined;
      throw e;
    });
    if (answer && (answer.outcome !== "in-flight" || Date.now() > until)) return answer;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(!postgresUrl)("PostgresStore: a claim the store gave up on", () => {
  it("its INSERT lands after the time-out (held on a lock) → the record is taken back; the retry claims the key", async () => {
    const { pool, inserts } = watched();
    const { store, table } = await freshStore(pool);
    const lock = await blockInserts(table);
    await expect(store.claim("k1", "fp", 60_000)).rejects.toThrow(StoreUnavailableError);
    await lock.release();
    await Promise.all(inserts); // the claim has landed: the retry comes after it
    const answer = await retry(store, "k1");
    expect(answer.outcome).toBe("claimed");
    expect(await rowsOf(table, "k1")).toEqual([
      { token: (answer as { token: string }).token, state: "in-flight" },
    ]);
  });

  it("retries meeting it (and each other) at once → exactly one claims the key", async () => {
    const { store, table } = await freshStore();
    const lock = await blockInserts(table);
    await expect(store.claim("k2", "fp", 60_000)).rejects.toThrow(StoreUnavailableError);
    // Retries sent while the timed-out INSERT still waits: they land with it, in any order.
    const retries = Array.from({ length: 8 }, () => store.claim("k2", "fp", 60_000).catch((e: unknown) => e));
    await lock.release();
    const first = await Promise.all(retries);
    const tokens = (rs: unknown[]) =>
      rs.flatMap((r) =>
        (r as ClaimResult | undefined)?.outcome === "claimed" ? [(r as { token: string }).token] : [],
      );
    // Every record no retry holds (the timed-out claim's, a timed-out retry's) is taken back.
    for (const until = Date.now() + 5000; Date.now() < until; ) {
      const rows = await rowsOf(table, "k2");
      if (rows.every((row) => tokens(first).includes(row.token))) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const again = await Promise.all(Array.from({ length: 8 }, () => store.claim("k2", "fp", 60_000)));
    const claimed = tokens([...first, ...again]);
    expect(claimed).toHaveLength(1);
    expect(await rowsOf(table, "k2")).toEqual([{ token: claimed[0], state: "in-flight" }]);
  });

  it("its INSERT committed but the answer was lost (the connection dropped) → the record is taken back", async () => {
    const pool = database.pool();
    let lose = true;
    const losing: PgQueryable = {
      query(text, values) {
        const answer = pool.query(text, values);
        if (!lose || !text.trimStart().startsWith("INSERT")) return answer;
        lose = false;
        return answer.then(() => {
          throw new Error("Connection terminated unexpectedly");
        });
      },
    };
    const { store, table } = await freshStore(losing);
    await expect(store.claim("k3", "fp", 60_000)).rejects.toThrow(StoreUnavailableError);
    const answer = await retry(store, "k3");
    expect(answer.outcome).toBe("claimed");
    expect(await rowsOf(table, "k3")).toEqual([
      { token: (answer as { token: string }).token, state: "in-flight" },
    ]);
  });

  it("a pool whose statement_timeout is within timeoutMs: the server ends the blocked INSERT, the claim fails with its error, the retry claims the key", async () => {
    const table = `idem_t${++tables}`;
    // The table is made through a pool without the limit: on a loaded host its DDL alone can take
    // longer than the statement_timeout under test.
    await new PostgresStore({ pool: database.pool(), table }).migrate();
    const pool = database.pool({ statement_timeout: 250 });
    const store = new PostgresStore({ pool, table, timeoutMs: 5000 });
    const lock = await blockInserts(table);
    const failed = await store.claim("k5", "fp", 60_000).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(StoreUnavailableError);
    // query_canceled: the server's own end of the statement, not the store's time-out.
    expect((failed as Error).cause).toMatchObject({ code: "57014" });
    expect(await rowsOf(table, "k5")).toEqual([]);
    await lock.release();
    const answer = await retry(store, "k5");
    expect(answer.outcome).toBe("claimed");
    expect(await rowsOf(table, "k5")).toEqual([
      { token: (answer as { token: string }).token, state: "in-flight" },
    ]);
  });

  it("a timed-out claim that found the key held by another execution takes nothing from it", async () => {
    const { store, table } = await freshStore();
    const owner = await store.claim("k4", "fp", 60_000);
    if (owner.outcome !== "claimed") throw new Error("not claimed");
    const lock = await blockInserts(table);
    await expect(store.claim("k4", "fp", 60_000)).rejects.toThrow(StoreUnavailableError);
    await lock.release();
    // The owner's record stays, past the time the taking back would have needed.
    await new Promise((r) => setTimeout(r, 400));
    expect(await rowsOf(table, "k4")).toEqual([{ token: owner.token, state: "in-flight" }]);
    expect(await store.renew("k4", owner.token, 60_000)).toBe(true);
    expect((await store.claim("k4", "fp", 60_000)).outcome).toBe("in-flight");
  });
});

let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.skipIf(!postgresUrl)("through the pipeline: a claim that timed out, then landed", () => {
  it("the request gets 503 with Retry-After, nothing runs; the client's retry runs the handler once (no 409 for the lease)", async () => {
    const { pool, inserts } = watched();
    const { store, table } = await freshStore(pool);
    let runs = 0;
    const app = express();
    const svc = expressAdapter(createPipeline());
    const keys = idempotency({ store, logger: { warn() {} }, leaseMs: 60_000 });
    app.post(
      "/transfers",
      express.json(),
      svc.handle(
        async () => {
          runs++;
          return reply({ id: runs }, { status: 201, headers: { location: `/transfers/${runs}` } });
        },
        { idempotency: keys },
      ),
    );
    app.use(errorHandler({ logger: { error() {} } }));
    server = await listen(app);
    const send = () =>
      fetch(`${server?.url}/transfers`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": '"t-1"' },
        body: '{"amount":1}',
      });
    const lock = await blockInserts(table);
    const first = await send();
    expect(first.status).toBe(503);
    expect(first.headers.get("retry-after")).not.toBeNull();
    await lock.release();
    await Promise.all(inserts);
    expect(runs).toBe(0);
    // The client retries while it is told to (409 with Retry-After), for 5 s at most.
    let answer = await send();
    for (const until = Date.now() + 5000; answer.status === 409 && Date.now() < until; answer = await send())
      await new Promise((r) => setTimeout(r, 25));
    expect(answer.status).toBe(201);
    expect(runs).toBe(1);
    const replay = await send();
    expect([replay.status, replay.headers.get("idempotent-replayed"), runs]).toEqual([201, "true", 1]);
  });
});
