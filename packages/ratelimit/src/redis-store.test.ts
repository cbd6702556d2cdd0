import { errorHandler } from "@svc/errors/express";
import { listen, serviceUrl, type ThrowawayRedis, throwawayRedis, uniquePrefix } from "@svc/test-utils";
import express from "express";
import { Redis } from "ioredis";
import { createClient, type RedisClientType } from "redis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RateLimitOptions, rateLimit } from "./express.js";
import { createRateLimiter } from "./limiter.js";
import { RedisStore, StoreTimeoutError } from "./redis-store.js";
import type { Algorithm } from "./types.js";

const url = serviceUrl("REDIS_URL");
const DAY = 86_400_000;

/**
 * The one window every decision of a burst must fall in. Redis's clock cannot be fixed, and a
 * sliding-window burst that straddles a window edge is rightly admitted past the limit: the
 * count before the edge is weighted down as the new window runs (50 × (1 − d / 60 s) ≤ 49 once
 * d ≥ 1.2 s, a run this machine takes under load). 10^15 ms (the longest window accepted) puts
 * the only edge in the year 33658, so the whole run is in the window starting at 0, and the
 * key's own window start and counts say so after the run.
 */
const ONE_WINDOW = 1e15;

const SAFE_IOREDIS = {
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  commandTimeout: 1000,
  maxRetriesPerRequest: 0,
  lazyConnect: true,
} as const;

async function ioredis(at: string): Promise<Redis> {
  const client = new Redis(at, { ...SAFE_IOREDIS, retryStrategy: () => 50 });
  client.on("error", () => {});
  await client.connect();
  return client;
}

type NodeRedis = RedisClientType;

async function nodeRedis(at: string): Promise<NodeRedis> {
  const client = createClient({
    url: at,
    disableOfflineQueue: true,
    socket: { reconnectStrategy: () => 50 },
  });
  client.on("error", () => {});
  await (client.connect() as Promise<unknown>);
  // Through `unknown`: relating the client's inferred type to `RedisClientType` costs the type
  // checker seconds a file.
  return client as unknown as NodeRedis;
}

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

async function waitUntil(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** `cmdstat_<name>` fields from `INFO commandstats`. */
async function commandStats(client: Redis): Promise<Record<string, Record<string, number>>> {
  const info = await client.info("commandstats");
  const stats: Record<string, Record<string, number>> = {};
  for (const line of info.split("\r\n")) {
    const m = /^cmdstat_([^:]+):(.*)$/.exec(line);
    if (!m) continue;
    const fields: Record<string, number> = {};
    for (const pair of (m[2] as string).split(",")) {
      const [k, v] = pair.split("=");
      fields[k as string] = Number(v);
    }
    stats[m[1] as string] = fields;
  }
  return stats;
}

describe.skipIf(!url)("RedisStore on the shared Redis", () => {
  const prefix = uniquePrefix("ratelimit");
  let io: Redis;
  let nr: NodeRedis;

  beforeAll(async () => {
    io = await ioredis(url as string);
    nr = await nodeRedis(url as string);
  });
  afterAll(async () => {
    const keys = await io.keys(`${prefix}*`);
    if (keys.length > 0) await io.del(...keys);
    io.disconnect();
    await nr.quit();
  });

  describe("a node-redis cluster that gave up on a redirection: the store follows it", () => {
    /**
     * A node-redis cluster, structurally, whose own `sendCommand` always ends on `first` (as
     * node-redis 4 does after `maxCommandRedirections` under a reshard), and whose nodes are
     * `nodes` by address: each answers as `answers[address]` says, or is the shared Redis.
     */
    function gaveUp(
      first: string,
      answers: Record<string, (args: string[]) => Promise<unknown> | undefined>,
    ) {
      const sent: string[] = [];
      const nodeClient = (address: string) => ({
        sendCommand: (args: string[]) => {
          sent.push(`${address} ${args[0]}`);
          if (args[0] === "ASKING") return Promise.resolve("OK");
          return answers[address]?.(args) ?? nr.sendCommand(args);
        },
      });
      const addresses = ["10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"];
      const cluster = {
        masters: [{ client: { options: { disableOfflineQueue: true } } }],
        nodeByAddress: new Map(addresses.map((a) => [a, a])),
        nodeClient: (node: never) => nodeClient(node as string),
        sendCommand: () => Promise.reject(new Error(first)),
      };
      return { cluster, sent };
    }

    /** A fixed-window limiter of `limit` an hour, its store on `cluster`. */
    const limiterOn = (cluster: ReturnType<typeof gaveUp>["cluster"], label: string, limit: number) =>
      createRateLimiter({
        algorithm: "fixed-window",
        limit,
        windowMs: 60_000,
        store: new RedisStore({ client: cluster, prefix: `${prefix}${label}:`, timeoutMs: 5_000 }),
      });

    it("MOVED to a known node → the decision made there", async () => {
      const { cluster, sent } = gaveUp("MOVED 1234 10.0.0.2:6379", {});
      const limiter = limiterOn(cluster, "moved", 2);
      expect((await limiter.consume("k")).allowed).toBe(true);
      expect((await limiter.consume("k")).allowed).toBe(true);
      expect((await limiter.consume("k")).allowed).toBe(false);
      expect(sent.every((line) => line.startsWith("10.0.0.2:6379 "))).toBe(true);
    });

    it("MOVED to the importing node, MOVED back, then ASK → ASKING with the script there, counted once", async () => {
      const moved = () => Promise.reject(new Error("MOVED 1234 10.0.0.1:6379"));
      const ask = () => Promise.reject(new Error("ASK 1234 10.0.0.3:6379"));
      let asked = 0;
      const { cluster, sent } = gaveUp("MOVED 1234 10.0.0.3:6379", {
        // without ASKING the importing node sends the client back; the old owner answers ASK once
        "10.0.0.3:6379": (args) => (sent.at(-2) === "10.0.0.3:6379 ASKING" ? nr.sendCommand(args) : moved()),
        "10.0.0.1:6379": () => (asked++ === 0 ? ask() : undefined),
      });
      const limiter = limiterOn(cluster, "ask", 1);
      expect((await limiter.consume("k")).allowed).toBe(true);
      expect(sent.slice(0, 4)).toEqual([
        "10.0.0.3:6379 evalsha",
        "10.0.0.1:6379 evalsha",
        "10.0.0.3:6379 ASKING",
        "10.0.0.3:6379 evalsha",
      ]);
    });

    it("a node the cluster does not know, or redirections without end → the error, not a decision", async () => {
      const unknown = gaveUp("MOVED 1234 10.9.9.9:6379", {});
      const endless = gaveUp("MOVED 1234 10.0.0.1:6379", {
        "10.0.0.1:6379": () => Promise.reject(new Error("MOVED 1234 10.0.0.2:6379")),
        "10.0.0.2:6379": () => Promise.reject(new Error("MOVED 1234 10.0.0.1:6379")),
      });
      for (const [{ cluster }, message] of [
        [unknown, "MOVED 1234 10.9.9.9:6379"],
        [endless, "MOVED 1234"],
      ] as const) {
        await expect(limiterOn(cluster, `lost:${message}`, 1).consume("k")).rejects.toThrow(message);
      }
      expect(endless.sent.length).toBeLessThanOrEqual(5);
    });
  });

  for (const algorithm of ["fixed-window", "sliding-window", "gcra"] as Algorithm[]) {
    for (const kind of ["ioredis", "redis"] as const) {
      it(`${algorithm} via ${kind}: limit 3 → 3 allowed, the 4th denied with a wait`, async () => {
        const client = kind === "ioredis" ? io : nr;
        const store = new RedisStore({ client, prefix: `${prefix}${algorithm}:${kind}:` });
        // Redis's clock cannot be fixed: a one-day window keeps the four decisions in one window
        // (with 60 s, a minute boundary between them let the 4th through now and then).
        const limiter = createRateLimiter({ algorithm, limit: 3, windowMs: DAY, store });
        const decisions = [];
        for (let i = 0; i < 4; i++) decisions.push(await limiter.consume("k"));
        expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
        expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
        const denied = decisions[3];
        expect(denied?.retryAfterMs).toBeGreaterThan(0);
        expect(denied?.retryAfterMs).toBeLessThanOrEqual(2 * DAY);
        // the decision's clock is Redis's TIME, not this process's
        const [seconds] = (await io.time()) as [number, number];
        expect(Math.abs((denied?.now ?? 0) - seconds * 1000)).toBeLessThan(5000);
        expect(denied?.resetAt).toBeGreaterThan(denied?.now ?? 0);
      });
    }
  }

  for (const [algorithm, windowMs, burst] of [
    ["fixed-window", 1e15, 1],
    ["sliding-window", 1e15, 1],
    ["gcra", 1e15, 1],
    ["gcra", 1e14, 10],
  ] as [Algorithm, number, number][]) {
    it(`${algorithm}, windowMs ${windowMs}, burst ${burst} (the largest span accepted) → the limit holds, no store failure`, async () => {
      const store = new RedisStore({ client: io, prefix: `${prefix}bound:${algorithm}:${burst}:` });
      const limiter = createRateLimiter({
        algorithm,
        limit: 1,
        windowMs,
        ...(algorithm === "gcra" ? { burst } : {}),
        store,
      });
      const allowed = [];
      for (let i = 0; i <= burst; i++) allowed.push((await limiter.consume("k")).allowed);
      expect(allowed).toEqual([...Array(burst).fill(true), false]);
    });
  }

  it("fixed-window, limit(req) lowered from 5 to 2 after 4 requests in the window → 429 with r=0 and X-RateLimit-Remaining 0, never negative", async () => {
    // As above: no window edge inside the run (a DAY window turns at midnight UTC), and no store
    // call that times out on a busy machine passing uncounted under failMode "open".
    const store = new RedisStore({ client: io, prefix: `${prefix}lowered:`, timeoutMs: 10_000 });
    const target = await serve({
      limit: (req) => Number(req.headers["x-plan"]),
      algorithm: "fixed-window",
      windowMs: ONE_WINDOW,
      failMode: "closed",
      store,
    });
    for (let i = 0; i < 4; i++) await fetch(target, { headers: { "x-plan": "5" } });
    const res = await fetch(target, { headers: { "x-plan": "2" } });
    expect(res.status).toBe(429);
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(res.headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+$/);
  });

  it("keys are hash-tagged and expire: <prefix>{ip:1.2.3.4} with a PTTL", async () => {
    const store = new RedisStore({ client: io, prefix: `${prefix}tag:` });
    const limiter = createRateLimiter({ algorithm: "fixed-window", limit: 5, windowMs: 10_000, store });
    await limiter.consume("ip:1.2.3.4");
    const key = `${prefix}tag:{ip:1.2.3.4}`;
    expect(store.redisKey("ip:1.2.3.4")).toBe(key);
    const ttl = await io.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(11_000);
  });

  /**
   * Redis's `TIME` in epoch ms. Windows are aligned to it (`floor(now / windowMs) × windowMs`).
   */
  async function redisNow(): Promise<number> {
    const [seconds, micros] = (await io.time()) as [number, number];
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  async function expectOneWindow(redisKey: string, before: number, counted: number): Promise<void> {
    const after = await redisNow();
    expect(Math.floor(after / ONE_WINDOW)).toBe(Math.floor(before / ONE_WINDOW));
    expect(await io.hgetall(redisKey)).toEqual({
      t: String(Math.floor(before / ONE_WINDOW) * ONE_WINDOW),
      c: String(counted),
      p: "0",
    });
  }

  it("200 concurrent requests against limit 50 (Redis) → exactly 50 × 200", async () => {
    // Atomicity, not latency: with the default 500 ms, a decision that timed out on a busy machine
    // passed uncounted (failMode "open") and showed as 52 × 200. failMode "closed" would show any
    // store failure as a 503 instead of a 200.
    const store = new RedisStore({ client: io, prefix: `${prefix}c200:`, timeoutMs: 10_000 });
    const target = await serve({ limit: 50, windowMs: ONE_WINDOW, failMode: "closed", store });
    const before = await redisNow();
    const statuses = await Promise.all(
      Array.from({ length: 200 }, () => fetch(target).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    expect(statuses.filter((s) => s === 429)).toHaveLength(150);
    await expectOneWindow(store.redisKey("ip:127.0.0.1"), before, 50);
  });

  it("two apps (ioredis and redis clients) sharing one Redis, 200 requests across both → exactly 50", async () => {
    // It once admitted 51 with a 60 s sliding window: a run straddling a window edge (see
    // ONE_WINDOW), and a 500 ms timeout under failMode "open" would pass a request uncounted.
    const shared = `${prefix}fleet:`;
    const options = { limit: 50, windowMs: ONE_WINDOW, failMode: "closed" } as const;
    const storeA = new RedisStore({ client: io, prefix: shared, timeoutMs: 10_000 });
    const storeB = new RedisStore({ client: nr, prefix: shared, timeoutMs: 10_000 });
    const a = await serve({ ...options, store: storeA });
    const b = await serve({ ...options, store: storeB });
    const before = await redisNow();
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => fetch(i % 2 ? a : b).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    expect(statuses.filter((s) => s === 429)).toHaveLength(150);
    // both apps counted in one key, in one window
    expect(storeB.redisKey("ip:127.0.0.1")).toBe(storeA.redisKey("ip:127.0.0.1"));
    await expectOneWindow(storeA.redisKey("ip:127.0.0.1"), before, 50);
  });

  for (const kind of ["ioredis", "redis"] as const) {
    it(`${kind}: a second RedisStore with the same prefix on the same client → TypeError naming the prefix`, () => {
      const client = kind === "ioredis" ? io : nr;
      const shared = `${prefix}reuse:${kind}:`;
      const global = new RedisStore({ client, prefix: shared });
      expect(() => new RedisStore({ client, prefix: shared })).toThrow(
        expect.objectContaining({
          name: "TypeError",
          code: "ERR_SVC_RATELIMIT_PREFIX",
          message: expect.stringContaining(JSON.stringify(shared)),
        }),
      );
      // another prefix on the same client, or the same prefix on another client, is fine
      expect(new RedisStore({ client, prefix: `${shared}login:` }).prefix).toBe(`${shared}login:`);
      global.close();
    });
  }

  it("a global limiter and a login limiter on one client: distinct prefixes count apart over HTTP", async () => {
    const app = express();
    app.use(
      rateLimit({
        logger: { warn() {} },
        limit: 5,
        store: new RedisStore({ client: io, prefix: `${prefix}global:` }),
      }),
    );
    app.post(
      "/login",
      rateLimit({
        limit: 2,
        policyName: "login",
        store: new RedisStore({ client: io, prefix: `${prefix}login:` }),
      }),
      (_req, res) => {
        res.end("ok");
      },
    );
    app.get("/", (_req, res) => {
      res.end("ok");
    });
    app.use(errorHandler({ logger: { error() {} } }));
    const server = await listen(app);
    closers.push(server.close);
    const login = () => fetch(`${server.url}/login`, { method: "POST" });
    expect((await login()).status).toBe(200);
    expect((await login()).status).toBe(200);
    const limited = await login();
    expect(limited.status).toBe(429);
    // the global limiter counted three requests, the login limiter two (its third was refused)
    expect(limited.headers.get("ratelimit")).toMatch(/^"default";r=2;t=\d+, "login";r=0;t=\d+$/);
  });

  it("close() releases the prefix: a new store may take it, the closed one refuses to decide", async () => {
    const shared = `${prefix}reload:`;
    const before = new RedisStore({ client: io, prefix: shared });
    const old = createRateLimiter({ limit: 3, store: before });
    expect((await old.consume("k")).remaining).toBe(2);
    before.close();
    before.close(); // twice is harmless
    const after = new RedisStore({ client: io, prefix: shared });
    await expect(old.consume("k")).rejects.toThrow(/closed/);
    // the reloaded limiter counts in the same keys: the state survives the reload
    expect((await createRateLimiter({ limit: 3, store: after }).consume("k")).remaining).toBe(1);
    expect(() => new RedisStore({ client: io, prefix: shared })).toThrow(/already used/);
    after.close();
  });

  it("ioredis client with the offline queue on → TypeError at construction", () => {
    const lazy = new Redis(url as string, { lazyConnect: true });
    expect(() => new RedisStore({ client: lazy })).toThrow(/enableOfflineQueue: false/);
    const resend = new Redis(url as string, { lazyConnect: true, enableOfflineQueue: false });
    expect(() => new RedisStore({ client: resend })).toThrow(/autoResendUnfulfilledCommands: false/);
  });

  it("redis client without disableOfflineQueue → TypeError at construction", () => {
    const client = createClient({ url: url as string });
    expect(() => new RedisStore({ client })).toThrow(/disableOfflineQueue: true/);
  });
});

describe.skipIf(!url)("RedisStore against a throw-away redis-server", () => {
  let server: ThrowawayRedis;
  let admin: Redis;

  beforeAll(async () => {
    server = await throwawayRedis();
    admin = await ioredis(server.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.stop();
  });

  for (const kind of ["ioredis", "redis"] as const) {
    it(`${kind}: 20 decisions → 20 EVALSHA calls and no other command (one round trip each)`, async () => {
      const client = kind === "ioredis" ? await ioredis(server.url) : await nodeRedis(server.url);
      const limiter = createRateLimiter({
        limit: 100,
        store: new RedisStore({ client, prefix: `rt:${kind}:` }),
      });
      await limiter.consume("warm"); // loads the script (NOSCRIPT, then EVAL) on a fresh server
      await admin.config("RESETSTAT");
      for (let i = 0; i < 20; i++) await limiter.consume(`k${i % 3}`);
      const stats = await commandStats(admin);
      if (kind === "ioredis") (client as Redis).disconnect();
      else await (client as NodeRedis).quit();
      expect(stats.evalsha?.calls).toBe(20);
      expect(stats.evalsha?.failed_calls ?? 0).toBe(0);
      // TIME, HMGET, HSET, PEXPIRE run inside the script (once per decision), not over the wire;
      // INFO and CONFIG are the admin connection's own.
      expect(stats.time?.calls).toBe(20);
      const inScript = ["time", "hmget", "hset", "pexpire"];
      const sent = Object.keys(stats).filter((name) => !inScript.includes(name));
      expect(sent.sort()).toEqual(["config|resetstat", "evalsha", "info"].filter((n) => n in stats).sort());
      expect(sent).not.toContain("eval");
    });
  }

  it("SCRIPT FLUSH between requests → NOSCRIPT, one EVAL, counted exactly once", async () => {
    const client = await ioredis(server.url);
    const limiter = createRateLimiter({
      algorithm: "fixed-window",
      limit: 10,
      store: new RedisStore({ client, prefix: "flush:" }),
    });
    expect((await limiter.consume("k")).remaining).toBe(9);
    await admin.script("FLUSH");
    await admin.config("RESETSTAT");
    expect((await limiter.consume("k")).remaining).toBe(8);
    expect((await limiter.consume("k")).remaining).toBe(7);
    const stats = await commandStats(admin);
    client.disconnect();
    // request 1: EVALSHA → NOSCRIPT (nothing ran), then EVAL; request 2: EVALSHA
    expect(stats.evalsha?.calls).toBe(2);
    expect(stats.evalsha?.failed_calls).toBe(1);
    expect(stats.eval?.calls).toBe(1);
    // the script body ran twice for two requests: no double count
    expect(stats.time?.calls).toBe(2);
  });

  it('redis-server stopped → "closed" answers 503 + Retry-After, "open" passes; restarted → both limit again', async () => {
    const closedClient = await ioredis(server.url);
    const openClient = await nodeRedis(server.url);
    const warnings: object[] = [];
    const closed = await serve({
      limit: 2,
      failMode: "closed",
      failRetryAfterSeconds: 3,
      // A generous timeout: with the offline queue off, a stopped server fails each decision at
      // once ("Stream isn't writeable"), so the timeout never decides the outage half; it only
      // bounds the first decision after the restart (EVALSHA → NOSCRIPT → EVAL, two round trips),
      // which a loaded machine took over 300 ms to answer (a 503 where 200 was expected).
      store: new RedisStore({ client: closedClient, prefix: "fail:closed:", timeoutMs: 5_000 }),
    });
    const open = await serve({
      limit: 2,
      logger: { warn: (o) => warnings.push(o) },
      store: new RedisStore({ client: openClient, prefix: "fail:open:", timeoutMs: 5_000 }),
    });
    expect((await fetch(closed)).status).toBe(200);
    expect((await fetch(open)).status).toBe(200);

    await server.stop();
    const down = await fetch(closed);
    expect(down.status).toBe(503);
    expect(down.headers.get("retry-after")).toBe("3");
    for (let i = 0; i < 4; i++) expect((await fetch(open)).status).toBe(200);
    expect(warnings).toHaveLength(1);

    await server.start(); // empty: no keys, no cached script
    await waitUntil(() => closedClient.status === "ready" && openClient.isReady);
    const again = [];
    for (let i = 0; i < 3; i++) again.push((await fetch(closed)).status);
    expect(again).toEqual([200, 200, 429]);
    const openAgain = [];
    for (let i = 0; i < 3; i++) openAgain.push((await fetch(open)).status);
    expect(openAgain).toEqual([200, 200, 429]);
    closedClient.disconnect();
    await openClient.quit();
    admin.disconnect();
    admin = await ioredis(server.url);
  });

  it("Redis paused (CLIENT PAUSE) → the decision fails after timeoutMs, not when Redis answers", async () => {
    const client = await ioredis(server.url);
    const store = new RedisStore({ client, prefix: "slow:", timeoutMs: 150 });
    const limiter = createRateLimiter({ limit: 5, store });
    await limiter.consume("k");
    await admin.call("CLIENT", "PAUSE", "600", "ALL");
    // our own timer rejects; had the call waited for Redis it would have succeeded after the pause
    await expect(limiter.consume("k")).rejects.toBeInstanceOf(StoreTimeoutError);
    await new Promise((r) => setTimeout(r, 700));
    client.disconnect();
  });
});
