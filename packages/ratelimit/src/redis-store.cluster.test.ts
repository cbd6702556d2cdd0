import { errorHandler } from "@svc/errors/express";
import {
  closeNodeRedisCluster,
  connectIoredisCluster,
  connectNodeRedisCluster,
  listen,
  type RedisCluster,
  redisCluster,
  uniquePrefix,
} from "@svc/test-utils";
import express from "express";
import { Cluster, Redis } from "ioredis";
import { createCluster, type RedisClusterType } from "redis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RateLimitOptions, rateLimit } from "./express.js";
import { createRateLimiter } from "./limiter.js";
import { RedisStore } from "./redis-store.js";
import type { Algorithm } from "./types.js";

/**
 * RedisStore against a real, throw-away 3-master Redis Cluster (started by the test-utils
 * harness), through both clients: ioredis `Cluster` and node-redis `createCluster`.
 */
const cluster = await redisCluster({ masters: 3 });

type NodeRedisCluster = RedisClusterType;
const KINDS = ["ioredis Cluster", "redis createCluster"] as const;
type Kind = (typeof KINDS)[number];

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function serve(options: RateLimitOptions): Promise<string> {
  const app = express();
  app.use(rateLimit({ logger: { warn() {} }, ...options }));
  app.get("/", (_req, res) => {
    res.end("ok");
  });
  app.use(errorHandler({ logger: { error() {} } }));
  const server = await listen(app);
  closers.push(server.close);
  return server.url;
}

/** `errorstat_<NAME>:count=N` of one node (Redis ≥ 6.2 `INFO errorstats`). */
async function errorCount(c: RedisCluster, node: number, name: string): Promise<number> {
  const info = await c.command(node, "INFO", "errorstats");
  return Number(new RegExp(`errorstat_${name}:count=(\\d+)`).exec(info)?.[1] ?? 0);
}

describe("RedisStore with a cluster client: refused settings (no server needed)", () => {
  const seeds = [{ host: "127.0.0.1", port: 1 }];
  const safe = {
    enableOfflineQueue: false,
    retryDelayOnFailover: 0,
    lazyConnect: true,
    redisOptions: { autoResendUnfulfilledCommands: false },
  };
  const refused = (client: ConstructorParameters<typeof RedisStore>[0]["client"], message: RegExp) => {
    try {
      new RedisStore({ client });
    } catch (err) {
      expect(err).toBeInstanceOf(TypeError);
      expect((err as Error).message).toMatch(message);
      expect((err as { code?: string }).code).toBe("ERR_SVC_RATELIMIT_CLIENT");
      return;
    }
    throw new Error("RedisStore accepted the client");
  };

  it("ioredis Cluster with the safe settings → accepted", () => {
    expect(new RedisStore({ client: new Cluster(seeds, safe) }).prefix).toBe("rl:");
  });
  it("ioredis Cluster, enableOfflineQueue left on → TypeError", () =>
    refused(new Cluster(seeds, { ...safe, enableOfflineQueue: true }), /enableOfflineQueue: false/));
  it("ioredis Cluster, retryDelayOnFailover left at its default (100) → TypeError", () =>
    refused(
      new Cluster(seeds, { ...safe, retryDelayOnFailover: undefined }),
      /retryDelayOnFailover: 0, got 100/,
    ));
  it("ioredis Cluster, redisOptions.autoResendUnfulfilledCommands left on → TypeError", () =>
    refused(new Cluster(seeds, { ...safe, redisOptions: {} }), /autoResendUnfulfilledCommands: false/));
  // node-redis 4 keeps the createCluster options private and shows them only on connected nodes:
  // an unconnected cluster is refused there (see the connected cases on the live cluster below).
  const redis4 = process.env.REDIS_MAJOR === "4";
  it.runIf(redis4)("node-redis 4: redis createCluster not yet connected → TypeError (connect it first)", () =>
    refused(
      createCluster({ rootNodes: [{ url: "redis://127.0.0.1:1" }], defaults: { disableOfflineQueue: true } }),
      /connect the redis cluster before creating the store/,
    ),
  );
  it.skipIf(redis4)("redis createCluster with defaults.disableOfflineQueue → accepted", () => {
    const client = createCluster({
      rootNodes: [{ url: "redis://127.0.0.1:1" }],
      defaults: { disableOfflineQueue: true },
    });
    expect(new RedisStore({ client }).timeoutMs).toBe(500);
  });
  it.skipIf(redis4)("redis createCluster without defaults.disableOfflineQueue → TypeError", () =>
    refused(
      createCluster({ rootNodes: [{ url: "redis://127.0.0.1:1" }] }),
      /defaults: \{ disableOfflineQueue: true \}/,
    ),
  );
  it.skipIf(redis4)("timeoutMs: 0 → TypeError ERR_SVC_RATELIMIT_TIMEOUT_MS", () => {
    const client = createCluster({
      rootNodes: [{ url: "redis://127.0.0.1:1" }],
      defaults: { disableOfflineQueue: true },
    });
    expect(() => new RedisStore({ client, timeoutMs: 0 })).toThrow(
      expect.objectContaining({ code: "ERR_SVC_RATELIMIT_TIMEOUT_MS" }),
    );
  });
});

describe.skipIf(!cluster)("RedisStore on a 3-master Redis Cluster", () => {
  const c = cluster as RedisCluster;
  const prefix = uniquePrefix("ratelimit-cluster");
  const clients = {} as { "ioredis Cluster": Cluster; "redis createCluster": NodeRedisCluster };

  beforeAll(async () => {
    clients["ioredis Cluster"] = await connectIoredisCluster(c, Cluster, { commandTimeout: 1000 });
    clients["redis createCluster"] = await connectNodeRedisCluster<NodeRedisCluster>(c, createCluster);
  });
  afterAll(async () => {
    clients["ioredis Cluster"]?.disconnect();
    await closeNodeRedisCluster(clients["redis createCluster"]);
    await c.stop();
  });

  // These cases check counting, not latency: a decision that timed out on a machine busy with
  // other suites would pass uncounted (failMode "open") and read as a counting error.
  const storeOf = (kind: Kind, label: string, timeoutMs = 10_000) =>
    new RedisStore({ client: clients[kind], prefix: `${prefix}${label}:`, timeoutMs });

  it("connected redis createCluster without defaults.disableOfflineQueue → TypeError; with it → accepted", async () => {
    const rootNodes = c.nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` }));
    const queueing = createCluster({ rootNodes });
    queueing.on("error", () => {});
    await queueing.connect();
    closers.push(async () => {
      await closeNodeRedisCluster(queueing);
    });
    expect(() => new RedisStore({ client: queueing })).toThrow(/defaults: \{ disableOfflineQueue: true \}/);
    expect(() => new RedisStore({ client: queueing })).not.toThrow(/connect the redis cluster/);
    expect(new RedisStore({ client: clients["redis createCluster"] }).prefix).toBe("rl:");
  });

  it("blockDurationMs: two instances (ioredis Cluster, redis createCluster) sharing a prefix, gcra 20 per 20 s, 35 concurrent decisions → exactly 20 allowed; 1.2 s on (a unit back) both still refuse", async () => {
    const [a, b] = KINDS.map((kind) =>
      createRateLimiter({
        algorithm: "gcra",
        limit: 20,
        // A unit back every second: the 35 decisions are answered well within one, even on a
        // loaded machine, so exactly 20 pass.
        windowMs: 20_000,
        blockDurationMs: 60_000,
        store: new RedisStore({ client: clients[kind], prefix: `${prefix}block:`, timeoutMs: 10_000 }),
      }),
    );
    const limiters = [a, b] as const;
    const decisions = await Promise.all(
      Array.from({ length: 35 }, (_, i) => limiters[i % 2]?.consume("hot")),
    );
    expect(decisions.filter((d) => d?.allowed)).toHaveLength(20);
    // GCRA has given a unit back by now: without the block, an instance would admit again.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const later = await Promise.all(limiters.map((l) => l?.consume("hot")));
    expect(later.map((d) => d?.allowed)).toEqual([false, false]);
    expect(Math.min(...later.map((d) => d?.retryAfterMs ?? 0))).toBeGreaterThan(50_000);
    expect((await b?.consume("other"))?.allowed).toBe(true);
  });

  for (const kind of KINDS) {
    for (const algorithm of ["fixed-window", "sliding-window", "gcra"] as Algorithm[]) {
      it(`${algorithm} via ${kind}: limit 20, 35 concurrent decisions → exactly 20 allowed`, async () => {
        const limiter = createRateLimiter({
          algorithm,
          limit: 20,
          windowMs: 3_600_000,
          store: storeOf(kind, `exact:${algorithm}:${kind}`),
        });
        const decisions = await Promise.all(Array.from({ length: 35 }, () => limiter.consume("hot")));
        expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
        expect(decisions.filter((d) => !d.allowed).every((d) => d.retryAfterMs > 0)).toBe(true);
        expect(Math.min(...decisions.map((d) => d.remaining))).toBe(0);
      });
    }

    it(`${kind} behind a listening server, failMode "open": limit 3, 5 requests → 200 200 200 429 429 (not fail-open)`, async () => {
      // A client the store could not drive would fail every decision, and "open" would pass them all.
      const warnings: unknown[] = [];
      const url = await serve({
        limit: 3,
        windowMs: 3_600_000,
        logger: { warn: (o) => warnings.push(o) },
        store: storeOf(kind, `http:${kind}`),
      });
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await fetch(url)).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      expect(warnings).toEqual([]);
    });

    it(`${kind}: 600 clients → keys on every master, each client counted on its own`, async () => {
      const label = `many:${kind}`;
      const store = storeOf(kind, label);
      const limiter = createRateLimiter({ algorithm: "fixed-window", limit: 5, windowMs: 3_600_000, store });
      const keys = Array.from({ length: 600 }, (_, i) => `ip:198.51.${i >> 8}.${i & 255}`);
      const first = await Promise.all(keys.map((k) => limiter.consume(k)));
      expect(first.every((d) => d.allowed && d.remaining === 4)).toBe(true);
      const second = await Promise.all(keys.map((k) => limiter.consume(k)));
      expect(second.every((d) => d.allowed && d.remaining === 3)).toBe(true);

      // Where the keys are, asked of each master directly (not through the cluster client).
      const owners = await c.slotsByNode();
      const expected = owners.map(
        (slots) => keys.filter((key) => slots.includes(c.slotOf(store.redisKey(key)))).length,
      );
      const stored = [];
      for (const [i, node] of c.nodes.entries()) {
        const direct = new Redis(node.port, node.host);
        const found = await direct.keys(`${prefix}${label}:*`);
        direct.disconnect();
        stored[i] = found.length;
      }
      console.warn(`[cluster] ${kind}: 600 rate-limit keys per master: ${stored.join(" / ")}`);
      expect(stored).toEqual(expected);
      expect(stored.every((n) => n >= 100)).toBe(true);
    });

    it(`${kind}: the hot key's slot resharded during traffic (ASK, then MOVED) → exactly the limit admitted`, async () => {
      const store = storeOf(kind, `reshard:${kind}`);
      const limit = 150;
      const limiter = createRateLimiter({ algorithm: "gcra", limit, windowMs: 86_400_000, store });
      const key = "u:hot-during-reshard";
      const redisKey = store.redisKey(key);
      const slot = c.slotOf(redisKey);
      await limiter.consume(key); // the key exists before the move, so MIGRATE has something to carry
      const from = await c.masterOf(redisKey);
      const to = (from + 1) % 3;
      const asksBefore = await errorCount(c, from, "ASK");
      const moved = async () => (await errorCount(c, from, "MOVED")) + (await errorCount(c, to, "MOVED"));
      const movedBefore = await moved();

      let resharding = true;
      const decisions: boolean[] = [];
      const errors: unknown[] = [];
      const traffic = (async () => {
        // waves of 10 concurrent decisions until the move is over and well past the limit
        while (resharding || decisions.length < limit + 100) {
          const wave = await Promise.allSettled(Array.from({ length: 10 }, () => limiter.consume(key)));
          for (const r of wave) {
            if (r.status === "fulfilled") decisions.push(r.value.allowed);
            else errors.push(r.reason);
          }
        }
      })();
      await new Promise((r) => setTimeout(r, 100));
      await c.reshard(slot, to, { holdMs: 400 });
      resharding = false;
      await traffic;

      expect(await c.masterOf(redisKey)).toBe(to);
      expect(errors).toEqual([]);
      // one decision before the traffic; no over-admission and no lost count across the move
      expect(decisions.filter(Boolean)).toHaveLength(limit - 1);
      // the move was really seen by the client: the old owner answered ASK, and MOVED came from the
      // old owner after the move or, on node-redis 4, from the new one when a concurrent command
      // had taken the one-time ASKING flag (its rediscovery may then see the new owner first)
      expect(await errorCount(c, from, "ASK"), "ASK from the old owner").toBeGreaterThan(asksBefore);
      expect(await moved(), "MOVED from the old or the new owner").toBeGreaterThan(movedBefore);
    });
  }

  // Last: it stops and restarts a master, which empties it.
  it('the master owning a key stops → "closed" answers 503, "open" passes; keys on the other masters keep their limits; restarted → limits again', async () => {
    const label = "fail";
    const storePrefix = `${prefix}${label}:`;
    const down = "ip:203.0.113.7";
    const owner = await c.masterOf(`${storePrefix}{${down}}`);
    let up: string | undefined;
    for (let i = 10; i < 250 && !up; i++) {
      const k = `ip:203.0.113.${i}`;
      if ((await c.masterOf(`${storePrefix}{${k}}`)) !== owner) up = k;
    }
    expect(up).toBeDefined();
    // The client's bucket comes from a header, so one server can send keys to chosen masters.
    const key = (req: { headers: Record<string, unknown> }) => req.headers["x-client"] as string;
    const servers = [];
    for (const kind of KINDS) {
      const warnings: unknown[] = [];
      const store = (mode: string) =>
        new RedisStore({ client: clients[kind], prefix: `${storePrefix}${mode}:${kind}:`, timeoutMs: 300 });
      servers.push({
        kind,
        warnings,
        closed: await serve({
          limit: 2,
          key,
          failMode: "closed",
          failRetryAfterSeconds: 3,
          store: store("closed"),
        }),
        open: await serve({ limit: 2, key, logger: { warn: (o) => warnings.push(o) }, store: store("open") }),
      });
    }
    // same hash tag → same slot whatever the store prefix in front of it
    expect(await c.masterOf(`${storePrefix}closed:x:{${down}}`)).toBe(owner);
    const get = (url: string, client: string) =>
      fetch(url, { headers: { "x-client": client } }).then((r) => r);

    await c.stopNode(owner);
    try {
      for (const s of servers) {
        const closed = await get(s.closed, down as string);
        expect(closed.status, `${s.kind}, closed`).toBe(503);
        expect(closed.headers.get("retry-after")).toBe("3");
        const open = [];
        for (let i = 0; i < 4; i++) open.push((await get(s.open, down)).status);
        expect(open, `${s.kind}, open`).toEqual([200, 200, 200, 200]);
        expect(s.warnings.length, `${s.kind}, open logs the failure`).toBeGreaterThanOrEqual(1);
        // a client whose key lives on a running master is still limited exactly
        const others = [];
        for (let i = 0; i < 3; i++) others.push((await get(s.closed, up as string)).status);
        expect(others, `${s.kind}, other master`).toEqual([200, 200, 429]);
      }
    } finally {
      await c.startNode(owner);
    }

    // Restarted (empty): both clients reach it again and limit from zero.
    for (const s of servers) {
      const deadline = Date.now() + 10_000;
      let status = (await get(s.closed, down)).status;
      while (status === 503 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        status = (await get(s.closed, down)).status;
      }
      expect(status, `${s.kind}, back`).toBe(200);
      const again = [(await get(s.closed, down)).status, (await get(s.closed, down)).status];
      expect(again, `${s.kind}, limits again`).toEqual([200, 429]);
    }
  });
});
