import { randomUUID } from "node:crypto";
import * as diagnostics_channel from "node:diagnostics_channel";
import { subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { type Listening, listen, serviceUrl, throwawayRedis, uniquePrefix } from "@svc/test-utils";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { buildApp, post, sleep } from "../test/helpers.js";
import { postgresUrl, throwawaySchema } from "../test/postgres.js";
import { createIdempotency } from "./core.js";
import { decisions, type IdempotencyDiagnostic } from "./diagnostics.js";
import { MemoryStore } from "./memory-store.js";
import { PostgresStore } from "./postgres-store.js";
import { RedisStore, StoreUnavailableError } from "./redis-store.js";
import type { IdempotencyStore } from "./store.js";

const heard: IdempotencyDiagnostic[] = [];
const listener = (message: unknown) => heard.push(message as IdempotencyDiagnostic);
afterEach(() => {
  unsubscribeDiagnostics("svc:idempotency", listener);
  heard.length = 0;
  vi.restoreAllMocks();
});

const silent = { warn() {}, error() {} };
const attempt = (request: object, key: string, body: unknown) => ({
  method: "POST",
  target: "/orders",
  headers: { "idempotency-key": `"${key}"`, "content-type": "application/json" },
  body,
  request,
});

/** A store whose every call fails, as an unreachable Redis does. */
const down: IdempotencyStore = {
  claim: () => Promise.reject(new Error("connection refused")),
  complete: () => Promise.reject(new Error("connection refused")),
  release: () => Promise.reject(new Error("connection refused")),
  renew: () => Promise.reject(new Error("connection refused")),
};

describe("svc:idempotency: one message per keyed request looked up", () => {
  it("claimed, in-progress, replayed, mismatch → each with its request and the scope", async () => {
    subscribeDiagnostics("svc:idempotency", listener);
    const core = createIdempotency({
      store: new MemoryStore(),
      scope: () => "tenant-a",
      logger: silent,
      waitMs: 0,
    });
    const key = randomUUID();
    const [first, second, third, fourth] = [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }];
    const claim = await core.begin(attempt(first, key, { a: 1 }));
    await core.begin(attempt(second, key, { a: 1 }));
    if (claim.outcome !== "claimed") throw new Error("not claimed");
    await core.complete(claim.claim, { status: 201, headers: {}, body: new Uint8Array() });
    await core.begin(attempt(third, key, { a: 1 }));
    await core.begin(attempt(fourth, key, { a: 2 }));
    expect(heard).toEqual([
      { request: first, decision: "claimed", scope: "tenant-a" },
      { request: second, decision: "in-progress", scope: "tenant-a" },
      { request: first, decision: "completed", scope: "tenant-a", status: 201 },
      { request: third, decision: "replayed", scope: "tenant-a" },
      { request: fourth, decision: "mismatch", scope: "tenant-a", fingerprint: "default" },
    ]);
  });

  it.each([
    ["fail", false],
    ["pass-through", true],
  ] as const)(
    "the store down, onStoreError %s → store-failed, passed %s, with the store's error",
    async (mode, passed) => {
      subscribeDiagnostics("svc:idempotency", listener);
      const core = createIdempotency({ store: down, scope: () => "s", logger: silent, onStoreError: mode });
      const request = {};
      const decision = await core.begin(attempt(request, randomUUID(), {}));
      expect(decision.outcome).toBe(passed ? "pass" : "error");
      expect(heard).toEqual([
        { request, decision: "store-failed", scope: "s", passed, error: new Error("connection refused") },
      ]);
    },
  );

  it("no subscriber → nothing published", async () => {
    const publish = vi.spyOn(diagnostics_channel.channel(decisions.name), "publish");
    const core = createIdempotency({ store: new MemoryStore(), scope: () => "s", logger: silent });
    await core.begin(attempt({}, randomUUID(), {}));
    expect(publish).not.toHaveBeenCalled();
  });
});

/** The decisions heard while `run` ran, the request left out. */
async function decided(run: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  subscribeDiagnostics("svc:idempotency", listener);
  try {
    await run();
  } finally {
    unsubscribeDiagnostics("svc:idempotency", listener);
  }
  return heard.splice(0).map(({ ...m }) => {
    delete (m as { request?: unknown }).request;
    return m;
  });
}

describe("svc:idempotency: a claimed execution's end, through the step", () => {
  const servers: Listening[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  async function app() {
    const server = await listen(buildApp({ store: new MemoryStore(), logger: silent }).app);
    servers.push(server);
    return server.url;
  }

  it("201 → claimed, then completed with status 201, both with the same request", async () => {
    const url = await app();
    subscribeDiagnostics("svc:idempotency", listener);
    expect((await post(`${url}/orders`, randomUUID(), {})).status).toBe(201);
    expect(heard.map((m) => m.decision)).toEqual(["claimed", "completed"]);
    expect(heard[1]).toMatchObject({ decision: "completed", scope: "anonymous", status: 201 });
    expect(heard[1]?.decision !== "store-recovered" && heard[1]?.request).toBe(
      heard[0]?.decision !== "store-recovered" && heard[0]?.request,
    );
    expect(heard[0]?.decision !== "store-recovered" && heard[0]?.request).toBeTypeOf("object");
  });

  it("500 (not stored) → released, reason not-stored, status 500; the retry is claimed again", async () => {
    const url = await app();
    const key = randomUUID();
    const messages = await decided(async () => {
      expect((await post(`${url}/broken`, key, {})).status).toBe(500);
      expect((await post(`${url}/broken`, key, {})).status).toBe(201);
    });
    expect(messages).toEqual([
      { decision: "claimed", scope: "anonymous" },
      { decision: "released", scope: "anonymous", reason: "not-stored", status: 500 },
      { decision: "claimed", scope: "anonymous" },
      { decision: "completed", scope: "anonymous", status: 201 },
    ]);
  });

  it("the handler throws → released, reason failed", async () => {
    const url = await app();
    const messages = await decided(async () => {
      expect((await post(`${url}/flaky`, randomUUID(), {})).status).toBe(500);
    });
    expect(messages).toEqual([
      { decision: "claimed", scope: "anonymous" },
      { decision: "released", scope: "anonymous", reason: "failed" },
    ]);
  });

  it("a lease lost before complete → no completed message (the logger says so)", async () => {
    let now = 1_000_000;
    const warnings: string[] = [];
    const core = createIdempotency({
      store: new MemoryStore({ now: () => now }),
      scope: () => "s",
      leaseMs: 1000,
      renewLease: false,
      logger: { warn: (_o, m) => warnings.push(m ?? "") },
    });
    const key = randomUUID();
    const messages = await decided(async () => {
      const first = await core.begin(attempt({}, key, {}));
      now += 2000;
      await core.begin(attempt({}, key, {}));
      if (first.outcome !== "claimed") throw new Error("not claimed");
      await core.complete(first.claim, { status: 201, headers: {}, body: new Uint8Array() });
    });
    expect(messages.map((m) => m.decision)).toEqual(["claimed", "claimed"]);
    expect(warnings.filter((w) => w.includes("lease lost before the response was stored"))).toHaveLength(1);
  });
});

const pgDatabase = throwawaySchema("diag");
let pgTables = 0;
async function pgStore(): Promise<PostgresStore> {
  const store = new PostgresStore({ pool: pgDatabase.pool(), table: `diag_${++pgTables}` });
  await store.migrate();
  return store;
}
const redisUrl = serviceUrl("REDIS_URL");
const redisPrefix = uniquePrefix("idempotency-diag");
const redis = redisUrl ? new Redis(redisUrl) : undefined;
afterAll(async () => {
  if (redis === undefined) return;
  const keys = await redis.keys(`${redisPrefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

describe.skipIf(!postgresUrl)("svc:idempotency: lease-expired (PostgresStore)", () => {
  it("a claim whose lease ran out, claimed again → lease-expired; the first's complete then publishes nothing", async () => {
    const core = createIdempotency({
      store: await pgStore(),
      scope: () => "s",
      leaseMs: 50,
      renewLease: false,
      logger: silent,
    });
    const key = randomUUID();
    const messages = await decided(async () => {
      const first = await core.begin(attempt({}, key, {}));
      await sleep(120);
      const second = await core.begin(attempt({}, key, {}));
      expect(second).toMatchObject({ outcome: "claimed" });
      if (first.outcome !== "claimed") throw new Error("not claimed");
      await core.complete(first.claim, { status: 201, headers: {}, body: new Uint8Array() });
    });
    expect(messages).toEqual([
      { decision: "claimed", scope: "s" },
      { decision: "lease-expired", scope: "s" },
    ]);
  });

  it("the store tells a lease run out from a new key, a released key and a record past its retention", async () => {
    const store = await pgStore();
    const fresh = await store.claim("k", "fp", 50);
    expect(fresh).toEqual({ outcome: "claimed", token: expect.any(String) });
    await sleep(120);
    const taken = await store.claim("k", "fp", 60_000);
    expect(taken).toEqual({ outcome: "claimed", token: expect.any(String), leaseExpired: true });
    if (taken.outcome !== "claimed") throw new Error("not claimed");
    expect(await store.release("k", taken.token)).toBe(true);
    expect(await store.claim("k", "fp", 60_000)).not.toHaveProperty("leaseExpired");
    const done = await store.claim("r", "fp", 60_000);
    if (done.outcome !== "claimed") throw new Error("not claimed");
    await store.complete("r", done.token, { status: 201, headers: {}, body: new Uint8Array() }, 50);
    await sleep(120);
    expect(await store.claim("r", "fp", 60_000)).not.toHaveProperty("leaseExpired");
  });
});

describe.skipIf(!redisUrl)("svc:idempotency: lease-expired with RedisStore", () => {
  it("a claim whose lease ran out, claimed again → claimed: the record expired with its lease, nothing tells", async () => {
    const core = createIdempotency({
      store: new RedisStore({ client: redis as Redis, prefix: redisPrefix }),
      scope: () => "s",
      leaseMs: 50,
      renewLease: false,
      logger: silent,
    });
    const key = randomUUID();
    const messages = await decided(async () => {
      await core.begin(attempt({}, key, {}));
      await sleep(120);
      await core.begin(attempt({}, key, {}));
    });
    expect(messages.map((m) => m.decision)).toEqual(["claimed", "claimed"]);
  });
});

/** The events on the tracing channels `svc:idempotency:store` while `run` ran, contexts copied. */
async function traced(run: () => Promise<unknown>): Promise<[string, Record<string, unknown>][]> {
  const events: [string, Record<string, unknown>][] = [];
  const off = (["start", "end", "asyncStart", "asyncEnd", "error"] as const).map((event) => {
    const name = `tracing:svc:idempotency:store:${event}`;
    const listener = (context: unknown) => events.push([event, { ...(context as object) }]);
    subscribeDiagnostics(name, listener);
    return () => unsubscribeDiagnostics(name, listener);
  });
  try {
    await run();
  } finally {
    for (const stop of off) stop();
  }
  return events;
}

/** The calls traced: `store operation key` at each `asyncEnd`, after `failed` for a failure. */
const calls = (events: [string, Record<string, unknown>][]) =>
  events
    .filter(([event]) => event === "asyncEnd")
    .map(([, c]) => `${"error" in c ? "failed " : ""}${c.store} ${c.operation} ${c.key}`);

const response = { status: 201, headers: { location: "/orders/1" }, body: new Uint8Array([1, 2]) };

describe.skipIf(!redisUrl)("svc:idempotency:store: RedisStore's calls", () => {
  it("claim, renew, complete, release → start/end/asyncStart/asyncEnd each, with the Redis key", async () => {
    const store = new RedisStore({ client: redis as Redis, prefix: redisPrefix });
    const events = await traced(async () => {
      const a = await store.claim("t1", "fp", 60_000);
      if (a.outcome !== "claimed") throw new Error("not claimed");
      await store.renew("t1", a.token, 60_000);
      await store.complete("t1", a.token, response, 60_000);
      const b = await store.claim("t2", "fp", 60_000);
      if (b.outcome !== "claimed") throw new Error("not claimed");
      await store.release("t2", b.token);
    });
    expect(calls(events)).toEqual([
      `redis claim ${redisPrefix}t1`,
      `redis renew ${redisPrefix}t1`,
      `redis complete ${redisPrefix}t1`,
      `redis claim ${redisPrefix}t2`,
      `redis release ${redisPrefix}t2`,
    ]);
    expect(events.slice(0, 4).map(([event]) => event)).toEqual(["start", "end", "asyncStart", "asyncEnd"]);
    expect(events[3]?.[1]).toMatchObject({ result: { outcome: "claimed", token: expect.any(String) } });
    expect(events.at(-1)?.[1]).toMatchObject({ result: true });
  });

  it("the in-process MemoryStore → nothing traced", async () => {
    const core = createIdempotency({ store: new MemoryStore(), scope: () => "s", logger: silent });
    expect(await traced(() => core.begin(attempt({}, randomUUID(), {})))).toEqual([]);
  });
});

describe.skipIf(!postgresUrl)("svc:idempotency:store: PostgresStore's calls", () => {
  it("claim, renew, commit (on the handler's client), recorded, complete, release → each traced with its key", async () => {
    const store = await pgStore();
    const client = await pgDatabase.pool().connect();
    try {
      const events = await traced(async () => {
        const a = await store.claim("p1", "fp", 60_000);
        if (a.outcome !== "claimed") throw new Error("not claimed");
        await store.renew("p1", a.token, 60_000);
        await client.query("BEGIN");
        await store.commit(client, { key: "p1", token: a.token }, response);
        await client.query("COMMIT");
        await store.recorded("p1", a.token);
        await store.complete("p1", a.token, response, 60_000);
        const b = await store.claim("p2", "fp", 60_000);
        if (b.outcome !== "claimed") throw new Error("not claimed");
        await store.release("p2", b.token);
      });
      expect(calls(events)).toEqual([
        "postgres claim p1",
        "postgres renew p1",
        "postgres commit p1",
        "postgres recorded p1",
        "postgres complete p1",
        "postgres claim p2",
        "postgres release p2",
      ]);
    } finally {
      client.release();
    }
  });

  it("a failing statement → the error event, with the store's error", async () => {
    const store = new PostgresStore({ pool: pgDatabase.pool(), table: "diag_missing" });
    const events = await traced(() => store.claim("p3", "fp", 60_000).catch(() => {}));
    expect(calls(events)).toEqual(["failed postgres claim p3"]);
    expect(events.find(([event]) => event === "error")?.[1]).toMatchObject({
      error: expect.any(StoreUnavailableError),
    });
  });
});

describe.skipIf(!redisUrl)("the store's outage: logged once, its end once (a private redis-server)", () => {
  it.each(["fail", "pass-through"] as const)(
    "onStoreError %s: 6 failing claims → one warn line; Redis back → one info line, one store-recovered",
    async (onStoreError) => {
      const server = await throwawayRedis();
      const client = new Redis(server.url, { maxRetriesPerRequest: 0, retryStrategy: () => 50 });
      client.on("error", () => {});
      const lines: [string, string][] = [];
      const line = (level: string) => (_o: object, m?: string) => lines.push([level, m ?? ""]);
      const logger = { warn: line("warn"), info: line("info"), debug: line("debug") };
      try {
        const core = createIdempotency({
          store: new RedisStore({ client, prefix: redisPrefix, timeoutMs: 300 }),
          scope: () => "s",
          logger,
          onStoreError,
        });
        expect((await core.begin(attempt({}, randomUUID(), {}))).outcome).toBe("claimed");
        await server.stop();
        const messages = await decided(async () => {
          for (let i = 0; i < 6; i++) await core.begin(attempt({}, randomUUID(), {}));
          await server.start();
          let outcome = "";
          for (let i = 0; i < 60 && outcome !== "claimed"; i++) {
            outcome = (await core.begin(attempt({}, randomUUID(), {}))).outcome;
            if (outcome !== "claimed") await sleep(100);
          }
          expect(outcome).toBe("claimed");
          await core.begin(attempt({}, randomUUID(), {}));
        });
        expect(lines.filter(([level]) => level === "warn")).toEqual([
          [
            "warn",
            onStoreError === "fail"
              ? "idempotency store failed to claim a key; answered 503; keyed requests are answered 503 until it answers again"
              : "idempotency store failed to claim a key; running unprotected; keyed requests run unprotected until it answers again",
          ],
        ]);
        const infos = lines.filter(([level]) => level === "info");
        expect(infos).toHaveLength(1);
        expect(infos[0]?.[1]).toMatch(
          /^idempotency store answered again after \d+ ms; \d+ call\(s\) failed meanwhile$/,
        );
        expect(lines.filter(([level]) => level === "debug").length).toBeGreaterThanOrEqual(5);
        const recovered = messages.filter((m) => m.decision === "store-recovered");
        expect(recovered).toEqual([{ decision: "store-recovered", downMs: expect.any(Number) }]);
        expect(messages.filter((m) => m.decision === "store-failed").length).toBeGreaterThanOrEqual(6);
        // The recovery comes before the decision of the claim the store answered.
        const at = messages.findIndex((m) => m.decision === "store-recovered");
        expect(messages.slice(at + 1).map((m) => m.decision)).toEqual(["claimed", "claimed"]);
      } finally {
        client.disconnect();
        await server.stop();
      }
    },
  );
});

describe("a client past its MemoryStore share is no outage", () => {
  it.each([
    ["fail", 0],
    ["pass-through", 1],
  ] as const)(
    "onStoreError %s: ScopeFullError → %i warning(s), then another client's claim → no recovery line",
    async (onStoreError, warned) => {
      const lines: string[] = [];
      let scope = "a";
      const core = createIdempotency({
        store: new MemoryStore({ maxEntriesPerScope: 1 }),
        scope: () => scope,
        onStoreError,
        logger: { warn: (_o, m) => lines.push(`warn ${m}`), info: (_o, m) => lines.push(`info ${m}`) },
      });
      const messages = await decided(async () => {
        await core.begin(attempt({}, randomUUID(), {}));
        await core.begin(attempt({}, randomUUID(), {}));
        scope = "b";
        await core.begin(attempt({}, randomUUID(), {}));
      });
      expect(lines).toHaveLength(warned);
      expect(lines.every((line) => line.startsWith("warn idempotency store failed to claim a key"))).toBe(
        true,
      );
      expect(messages.map((m) => m.decision)).toEqual(["claimed", "store-failed", "claimed"]);
    },
  );
});
