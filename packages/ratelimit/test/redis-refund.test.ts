import { errorHandler } from "@svc/errors/express";
import { listen, serviceUrl, uniquePrefix } from "@svc/test-utils";
import express from "express";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { rateLimit } from "../src/express.js";
import { ALGORITHMS, createRateLimiter, RedisStore } from "../src/index.js";

// skipFailedRequests / skipSuccessfulRequests against Redis: the refund script gives units back
// in the window (or GCRA bucket) that counted them, and never creates a key.

const url = serviceUrl("REDIS_URL");

describe.skipIf(!url)("RedisStore refund", () => {
  const prefix = uniquePrefix("rl-refund");
  let client: Redis;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    client = new Redis(url as string, {
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
    });
    await client.connect();
  });
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((c) => c()));
  });
  afterAll(async () => {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(...keys);
    await client.quit();
  });

  it.each(ALGORITHMS)(
    "%s, limit 1, skipFailedRequests: three 500s are given back, then 200, then 429",
    async (algorithm) => {
      const app = express();
      const store = new RedisStore({ client, prefix: `${prefix}${algorithm}:` });
      app.get(
        "/",
        // One-day windows: Redis's clock cannot be fixed, and a window boundary between the last
        // two requests (60 s windows) would let the final one through.
        rateLimit({
          limit: 1,
          windowMs: 86_400_000,
          algorithm,
          store,
          skipFailedRequests: true,
          logger: { warn() {} },
        }),
        (req, res) => {
          res.status(req.headers["x-fail"] ? 500 : 200).end();
        },
      );
      app.use(errorHandler({ logger: { error() {} } }));
      const server = await listen(app);
      closers.push(server.close);
      for (let i = 0; i < 3; i++) {
        const failed = await fetch(server.url, { headers: { "X-Fail": "1" } });
        expect(failed.status).toBe(500);
        // The refund runs after the response: wait until Redis shows it before the next request.
        await waitForRefund(store, algorithm);
      }
      expect((await fetch(server.url)).status).toBe(200);
      expect((await fetch(server.url)).status).toBe(429);
    },
  );

  /** Polls until the key's spend is back to zero (window count 0, or GCRA TAT not ahead of now). */
  async function waitForRefund(store: RedisStore, algorithm: string): Promise<void> {
    const keys = await client.keys(`${store.prefix}*`);
    // Polls for up to 10 s (not a count of 10 ms sleeps, which a loaded machine can outrun).
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      const [t, c] = keys[0] ? await client.hmget(keys[0], "t", "c") : [null, null];
      const [sec, micro] = await client.time();
      const now = Number(sec) * 1000 + Math.floor(Number(micro) / 1000);
      if (algorithm === "gcra" ? Number(t) <= now + 1 : Number(c) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error("refund not seen in Redis");
  }

  it("refund of a key that expired (or was reset) creates nothing", async () => {
    const store = new RedisStore({ client, prefix: `${prefix}gone:` });
    const limiter = createRateLimiter({ limit: 5, algorithm: "fixed-window", store });
    const decision = await limiter.consume("k");
    await limiter.reset("k");
    await limiter.refund("k", 1, decision);
    expect(await client.exists(store.redisKey("k"))).toBe(0);
  });

  it("sliding window: a refund after the window rolled gives the units back from the previous window", async () => {
    const store = new RedisStore({ client, prefix: `${prefix}slide:` });
    const limiter = createRateLimiter({ limit: 5, windowMs: 60_000, algorithm: "sliding-window", store });
    const decision = await limiter.consume("k", 3);
    const key = store.redisKey("k");
    // Pretend the window rolled: the state now says "counted one window later", the 3 are previous.
    const start = Math.floor(decision.now / 60_000) * 60_000;
    await client.hset(key, "t", String(start + 60_000), "c", "0", "p", "3");
    await limiter.refund("k", 2, decision);
    expect(await client.hmget(key, "c", "p")).toEqual(["0", "1"]);
  });
});
