import { randomBytes } from "node:crypto";
import { errorHandler, HttpError } from "@svc/errors";
import { type Listening, listen, serviceUrl } from "@svc/test-utils";
import express from "express";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type IdempotencyLocals, idempotency } from "./idempotency.js";
import { ClaimLostError, PostgresStore } from "./postgres-store.js";
import type { IdempotencyStore, StoredResponse } from "./store.js";

// draft-ietf-httpapi-idempotency-key-header §2.6: a retry of a completed request gets "the result of
// the previously completed operation". With the key's outcome committed in the transaction of the
// effect, no failure after the commit (a 5xx, the process gone, the store unreachable) lets a retry
// run the effect again.
const databaseUrl = serviceUrl("DATABASE_URL");
const postgresUrl = databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl) ? databaseUrl : undefined;
const schema = `svc_idem_${process.pid}_${randomBytes(4).toString("hex")}`;
let pool: pg.Pool | undefined;

beforeAll(async () => {
  if (!postgresUrl) return;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  pool = new pg.Pool({ connectionString: postgresUrl, options: `-c search_path=${schema}`, max: 8 });
  await pool.query("CREATE TABLE effects (id serial PRIMARY KEY, key text NOT NULL)");
});
afterAll(async () => {
  await pool?.end();
  if (!postgresUrl) return;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
});

let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

let tables = 0;
async function freshStore(options: { retentionMs?: number } = {}): Promise<PostgresStore> {
  const store = new PostgresStore({ pool: pool as pg.Pool, table: `idem_${++tables}`, ...options });
  await store.migrate();
  return store;
}

const response = (status: number, location: string): StoredResponse => ({
  status,
  headers: { location },
  body: new Uint8Array(Buffer.from(`{"location":"${location}"}`)),
});

describe.skipIf(!postgresUrl)("PostgresStore, the store interface", () => {
  it("claim → in-flight for a duplicate → complete → completed with the response", async () => {
    const store = await freshStore();
    const first = await store.claim("k1", "fp", 60_000);
    expect(first.outcome).toBe("claimed");
    const dup = await store.claim("k1", "fp", 60_000);
    expect(dup.outcome).toBe("in-flight");
    if (dup.outcome === "in-flight") expect(dup.leaseRemainingMs).toBeGreaterThan(50_000);
    if (first.outcome !== "claimed") throw new Error("not claimed");
    expect(await store.complete("k1", "other-token", response(201, "/a/1"), 60_000)).toBe(false);
    expect(await store.complete("k1", first.token, response(201, "/a/1"), 60_000)).toBe(true);
    const again = await store.claim("k1", "fp", 60_000);
    expect(again).toMatchObject({ outcome: "completed", fingerprint: "fp", response: { status: 201 } });
    if (again.outcome === "completed")
      expect(Buffer.from(again.response.body).toString()).toBe('{"location":"/a/1"}');
  });

  it("release frees the key; renew keeps it; an expired lease is claimed again with a new token", async () => {
    const store = await freshStore();
    const a = await store.claim("k2", "fp", 60_000);
    if (a.outcome !== "claimed") throw new Error("not claimed");
    expect(await store.renew("k2", a.token, 60_000)).toBe(true);
    expect(await store.release("k2", a.token)).toBe(true);
    const b = await store.claim("k2", "fp", 50);
    if (b.outcome !== "claimed") throw new Error("not claimed");
    await new Promise((r) => setTimeout(r, 80));
    const c = await store.claim("k2", "fp", 60_000);
    expect(c.outcome).toBe("claimed");
    expect(await store.complete("k2", b.token, response(201, "/stale"), 60_000)).toBe(false);
  });

  it("20 concurrent claims of one key → exactly one claimed", async () => {
    const store = await freshStore();
    const results = await Promise.all(Array.from({ length: 20 }, () => store.claim("k3", "fp", 60_000)));
    expect(results.filter((r) => r.outcome === "claimed")).toHaveLength(1);
  });

  it("commit in a transaction → a committed claim is never released, and replays", async () => {
    const store = await freshStore();
    const a = await store.claim("k4", "fp", 60_000);
    if (a.outcome !== "claimed") throw new Error("not claimed");
    const client = await (pool as pg.Pool).connect();
    try {
      await client.query("BEGIN");
      await store.commit(client, { key: "k4", token: a.token }, response(202, "/t/4"));
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    expect(await store.release("k4", a.token)).toBe(false);
    expect(await store.claim("k4", "fp", 60_000)).toMatchObject({
      outcome: "completed",
      response: { status: 202 },
    });
  });

  it("commit after the lease was claimed by another execution → ClaimLostError, the effect rolls back", async () => {
    const store = await freshStore();
    const a = await store.claim("k5", "fp", 30);
    if (a.outcome !== "claimed") throw new Error("not claimed");
    await new Promise((r) => setTimeout(r, 60));
    expect((await store.claim("k5", "fp", 60_000)).outcome).toBe("claimed");
    const client = await (pool as pg.Pool).connect();
    try {
      await client.query("BEGIN");
      await client.query("INSERT INTO effects (key) VALUES ('k5')");
      await expect(
        store.commit(client, { key: "k5", token: a.token }, response(202, "/t/5")),
      ).rejects.toThrow(ClaimLostError);
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    const { rows } = await (pool as pg.Pool).query("SELECT count(*)::int AS n FROM effects WHERE key = 'k5'");
    expect(rows[0]).toEqual({ n: 0 });
  });
});

/** How the store fails after the handler's transaction committed. */
type After = "5xx" | "dies" | "store-lost";

/**
 * An app whose POST /transfers inserts an effect row and commits the key's outcome in the same
 * transaction (when `commit` is on); its first run then fails as `after` says: a 503, no response
 * and nothing more stored (the process died), or the store failing the write of the record.
 */
async function transfersApp(after: After, commit: boolean) {
  const inner = await freshStore();
  // Set by the first run after its commit: the store's next write fails (the store is lost).
  let lost = false;
  const lose = <T>(write: () => Promise<T>): Promise<T> => {
    if (!lost) return write();
    lost = false;
    return Promise.reject(new Error("connection lost"));
  };
  const store: IdempotencyStore = {
    claim: (...a) => inner.claim(...a),
    renew: (...a) => inner.renew(...a),
    complete: (...a) => lose(() => inner.complete(...a)),
    release: (...a) => lose(() => inner.release(...a)),
  };
  let runs = 0;
  const app = express();
  app.post(
    "/transfers",
    express.json(),
    idempotency({ store, logger: { warn() {} }, leaseMs: 300, renewLease: false }),
    async (req, res, next) => {
      const claim = res.locals.idempotency as IdempotencyLocals;
      const first = ++runs === 1;
      const client = await (pool as pg.Pool).connect();
      let id: number;
      try {
        await client.query("BEGIN");
        const { rows } = await client.query("INSERT INTO effects (key) VALUES ($1) RETURNING id", [
          String(req.get("idempotency-key")),
        ]);
        id = (rows[0] as { id: number }).id;
        if (commit) await inner.commit(client, claim, response(202, `/transfers/${id}`));
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        return next(err);
      } finally {
        client.release();
      }
      if (first && after === "5xx")
        return next(HttpError.serviceUnavailable(1, "The database is unavailable"));
      // The process is gone: no response, and nothing more reaches the store.
      if (first && after === "dies") return;
      if (first && after === "store-lost") lost = true;
      res
        .status(202)
        .location(`/transfers/${id}`)
        .json({ location: `/transfers/${id}` });
    },
  );
  app.use(errorHandler({ logger: { error() {} } }));
  return app;
}

const effectsOf = async (key: string) =>
  (
    (await (pool as pg.Pool).query("SELECT count(*)::int AS n FROM effects WHERE key = $1", [`"${key}"`]))
      .rows[0] as { n: number }
  ).n;

describe.skipIf(!postgresUrl)(
  "PostgresStore with commit in the handler's transaction: a failure after the commit",
  () => {
    const paths: Array<[string, After]> = [
      ["a 5xx after the commit", "5xx"],
      ["the process gone after the commit, before the record is stored", "dies"],
      ["the store unreachable after the commit", "store-lost"],
    ];

    it.each(paths)(
      "%s → every retry replays the committed 202 and its Location; one effect",
      async (_n, after) => {
        server = await listen(await transfersApp(after, true));
        const key = `pg-${after}-${randomBytes(3).toString("hex")}`;
        const send = (signal?: AbortSignal) =>
          fetch(`${server?.url}/transfers`, {
            method: "POST",
            headers: { "content-type": "application/json", "idempotency-key": `"${key}"` },
            body: '{"amount":1}',
            ...(signal ? { signal } : {}),
          });
        // The first attempt: a 503, a response that never comes (the client gives up), or a 202.
        const first = await send(AbortSignal.timeout(after === "dies" ? 1000 : 10_000)).then(
          async (res) => res.status,
          () => "no response",
        );
        expect(first).toBe(after === "5xx" ? 503 : after === "dies" ? "no response" : 202);
        const immediate = await send();
        expect({ status: immediate.status, replayed: immediate.headers.get("idempotent-replayed") }).toEqual({
          status: 202,
          replayed: "true",
        });
        const location = immediate.headers.get("location");
        expect(location).toMatch(/^\/transfers\/\d+$/);
        // Long after every lease: still the replay, never a second run.
        await new Promise((r) => setTimeout(r, 700));
        const later = await send();
        expect(later.status).toBe(202);
        expect(later.headers.get("location")).toBe(location);
        expect(await effectsOf(key)).toBe(1);
      },
    );

    it.each(paths)(
      "%s, without commit (the record stored after the response) → the effect runs again after the lease",
      async (_n, after) => {
        server = await listen(await transfersApp(after, false));
        const key = `pg-nocommit-${after}-${randomBytes(3).toString("hex")}`;
        const send = (signal?: AbortSignal) =>
          fetch(`${server?.url}/transfers`, {
            method: "POST",
            headers: { "content-type": "application/json", "idempotency-key": `"${key}"` },
            body: '{"amount":1}',
            ...(signal ? { signal } : {}),
          });
        await send(AbortSignal.timeout(1000)).then(
          (res) => res.arrayBuffer(),
          () => undefined,
        );
        await vi.waitFor(
          async () => {
            const res = await send();
            await res.arrayBuffer();
            expect(res.status).not.toBe(409);
          },
          { timeout: 5_000, interval: 50 },
        );
        // What the commit prevents: a second effect for one key.
        expect(await effectsOf(key)).toBe(2);
      },
    );
  },
);
