import { randomBytes } from "node:crypto";
import { HttpError } from "@svc/errors";
import { errorHandler } from "@svc/errors/express";
import { createPipeline, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it, vi } from "vitest";
import { postgresUrl, throwawaySchema } from "../test/postgres.js";
import { commitKey } from "./commit-key.js";
import { idempotency } from "./express.js";
import { MemoryStore } from "./memory-store.js";
import { PostgresStore } from "./postgres-store.js";
import type { IdempotencyKeyClaim } from "./step.js";

// draft-ietf-httpapi-idempotency-key-header §2.6: a retry of a completed request gets "the result of
// the previously completed operation". With the key's outcome committed in the transaction of the
// effect (commitKey), no failure after the commit (a 5xx, the process gone, the store unreachable)
// lets a retry run the effect again, and the failing request itself answers as the replay would.
const database = throwawaySchema("ck");

let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

let tables = 0;
async function freshStore(): Promise<PostgresStore> {
  const store = new PostgresStore({ pool: database.pool(), table: `idem_ck_${++tables}` });
  await store.migrate();
  return store;
}

/** How the first run fails after the handler's transaction committed. */
type After = "5xx" | "dies" | "store-lost" | "none";

/**
 * An app whose POST /transfers inserts an effect row and commits the key's outcome in the same
 * transaction (when `commit` is on); its first run then fails as `after` says: a 503 thrown, no
 * response ever (the process died), or the store failing the write of the record.
 */
async function transfersApp(after: After, commit: boolean) {
  const store = await freshStore();
  let lost = false;
  const lose = <T>(write: () => Promise<T>): Promise<T> => {
    if (!lost) return write();
    lost = false;
    return Promise.reject(new Error("connection lost"));
  };
  // Still a PostgresStore (commitKey needs one), whose next write fails once `lost` is set.
  const complete = store.complete.bind(store);
  const release = store.release.bind(store);
  store.complete = (...a) => lose(() => complete(...a));
  store.release = (...a) => lose(() => release(...a));
  let runs = 0;
  const app = express();
  const svc = expressAdapter(createPipeline());
  const keys = idempotency({ store, logger: { warn() {} }, leaseMs: 300, renewLease: false });
  app.post(
    "/transfers",
    express.json(),
    svc.handle(
      async (req: express.Request, { claim }) => {
        const first = ++runs === 1;
        const client = await database.pool().connect();
        let id: number;
        try {
          await client.query("BEGIN");
          const { rows } = await client.query("INSERT INTO effects (key) VALUES ($1) RETURNING id", [
            String(req.get("idempotency-key")),
          ]);
          id = (rows[0] as { id: number }).id;
          if (commit)
            await commitKey(
              claim,
              client,
              reply.empty({ status: 202, headers: { location: `/transfers/${id}` } }),
            );
          await client.query("COMMIT");
        } catch (err) {
          await client.query("ROLLBACK");
          throw err;
        } finally {
          client.release();
        }
        if (first && after === "5xx") throw HttpError.serviceUnavailable(1, "The database is unavailable");
        // The process is gone: no response, and nothing more reaches the store.
        if (first && after === "dies") return new Promise(() => {});
        if (first && after === "store-lost") lost = true;
        return reply(
          { location: `/transfers/${id}` },
          { status: 202, headers: { location: `/transfers/${id}` } },
        );
      },
      { idempotency: keys },
    ),
  );
  app.use(errorHandler({ logger: { error() {} } }));
  return app;
}

const effectsOf = async (key: string) =>
  (
    (await database.pool().query("SELECT count(*)::int AS n FROM effects WHERE key = $1", [`"${key}"`]))
      .rows[0] as { n: number }
  ).n;

describe.skipIf(!postgresUrl)(
  "commitKey in the handler's transaction (PostgresStore): a failure after the commit",
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
        // The first attempt: the committed 202 in place of the 503, a response that never comes (the
        // client gives up), or the 202.
        const first = await send(AbortSignal.timeout(after === "dies" ? 1000 : 10_000)).then(
          async (res) => ({ status: res.status, location: res.headers.get("location") }),
          () => "no response",
        );
        if (after === "dies") expect(first).toBe("no response");
        else expect(first).toEqual({ status: 202, location: expect.stringMatching(/^\/transfers\/\d+$/) });
        if (after === "store-lost") {
          // Its execution never recorded the response it sent, and its lease (300 ms) is not over:
          // a retry now waits as for an execution in flight, rather than replay the committed
          // stand-in while the execution could still record the response it sent.
          const early = await send();
          expect(early.status).toBe(409);
          expect(Number(early.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
          await new Promise((r) => setTimeout(r, 400));
        }
        const immediate = await send();
        expect({ status: immediate.status, replayed: immediate.headers.get("idempotent-replayed") }).toEqual({
          status: 202,
          replayed: "true",
        });
        const location = immediate.headers.get("location");
        expect(location).toMatch(/^\/transfers\/\d+$/);
        if (typeof first === "object") expect(first.location).toBe(location);
        // Long after every lease: still the replay, never a second run.
        await new Promise((r) => setTimeout(r, 700));
        const later = await send();
        expect(later.status).toBe(202);
        expect(later.headers.get("location")).toBe(location);
        expect(await effectsOf(key)).toBe(1);
      },
    );

    it.each(paths)(
      "%s, without commitKey (the record stored after the response) → the effect runs again after the lease",
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

    it("no failure after the commit → the replay is the response sent (same status, its body), not the committed stand-in", async () => {
      server = await listen(await transfersApp("none", true));
      const key = `pg-none-${randomBytes(3).toString("hex")}`;
      const send = () =>
        fetch(`${server?.url}/transfers`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": `"${key}"` },
          body: '{"amount":1}',
        });
      const first = await send();
      const body = await first.json();
      const replay = await send();
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.headers.get("idempotent-body-omitted")).toBeNull();
      expect(await replay.json()).toEqual(body);
      expect(await effectsOf(key)).toBe(1);
    });

    it("the claim lost to another execution (lease over) → 409 with Retry-After, the effect rolled back", async () => {
      const store = await freshStore();
      const keys = idempotency({ store, logger: { warn() {} }, leaseMs: 30, renewLease: false });
      const app = express();
      const svc = expressAdapter(createPipeline());
      app.post(
        "/transfers",
        express.json(),
        svc.handle(
          async (_req, { claim }) => {
            await new Promise((r) => setTimeout(r, 80));
            // Another execution claims the key once the lease is over.
            const other = await store.claim((claim as IdempotencyKeyClaim).key, "other", 60_000);
            expect(other.outcome).toBe("claimed");
            const client = await database.pool().connect();
            try {
              await client.query("BEGIN");
              await client.query("INSERT INTO effects (key) VALUES ('lost')");
              await commitKey(claim, client, reply.empty({ status: 201 }));
              await client.query("COMMIT");
            } catch (err) {
              await client.query("ROLLBACK");
              throw err;
            } finally {
              client.release();
            }
            return reply.empty({ status: 201 });
          },
          { idempotency: keys },
        ),
      );
      app.use(errorHandler({ logger: { error() {} } }));
      server = await listen(app);
      const res = await fetch(`${server.url}/transfers`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": "lost" },
        body: "{}",
      });
      expect(res.status).toBe(409);
      expect(res.headers.get("retry-after")).toBe("1");
      const { rows } = await database
        .pool()
        .query("SELECT count(*)::int AS n FROM effects WHERE key = 'lost'");
      expect(rows[0]).toEqual({ n: 0 });
    });
  },
);

describe("commitKey without a PostgresStore or without a key", () => {
  it("no key (claim undefined) → false, nothing run; a MemoryStore claim → false, recorded after the handler", async () => {
    const client = { query: vi.fn(async () => ({ rows: [] })) };
    expect(await commitKey(undefined, client, reply.empty())).toBe(false);
    const step = idempotency({ store: new MemoryStore() });
    const claim = await step.begin({
      view: { method: "POST", headers: { "idempotency-key": "k" } },
      path: "/t",
    });
    expect(claim?.replay).toBeUndefined();
    expect(await commitKey(claim as IdempotencyKeyClaim, client, reply.empty())).toBe(false);
    expect(client.query).not.toHaveBeenCalled();
  });

  it("a claim that did not come from the step → TypeError", async () => {
    const fake = { complete: async () => {}, release: async () => undefined };
    await expect(commitKey(fake, { query: async () => ({ rows: [] }) }, reply.empty())).rejects.toThrow(
      /the claim the idempotency step gave the handler/,
    );
  });
});
