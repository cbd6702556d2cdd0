import type { Server } from "node:http";
import { serviceUrl, uniquePrefix } from "@svc/test-utils";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { type Service, startService } from "../src/server.js";
import { client, frameworkEnv, watchResponses } from "./harness.js";

const redisUrl = serviceUrl("REDIS_URL");

/**
 * The frameworks of the two instances: the suite's own (`SERVER_FRAMEWORK`) twice, and, where that
 * is the default, an Express and a Fastify instance side by side: one service whichever framework
 * serves it, sharing its records and budgets.
 */
type Pair = [label: string, first: Record<string, string>, second: Record<string, string>];
const pairs: Pair[] = [["", frameworkEnv(), frameworkEnv()]];
if (!process.env.SERVER_FRAMEWORK)
  pairs.push([" (Express and Fastify)", { SERVER_FRAMEWORK: "express" }, { SERVER_FRAMEWORK: "fastify" }]);

/** Two instances behind a load balancer share rate limits and idempotency records through Redis. */
describe.skipIf(!redisUrl).each(pairs)("two instances sharing REDIS_URL%s", (_label, first, second) => {
  const prefix = uniquePrefix("reference-server");
  let a: Service;
  let b: Service;
  beforeAll(async () => {
    const env = {
      PORT: "0",
      DATABASE_URL: "sqlite::memory:",
      LOG_LEVEL: "silent",
      REDIS_URL: redisUrl ?? "",
      RATE_LIMIT_MAX: "6",
    };
    a = await startService(loadConfig({ ...env, ...first }), { redisPrefix: prefix });
    b = await startService(loadConfig({ ...env, ...second }), { redisPrefix: prefix });
    for (const s of [a, b]) watchResponses(s.server as Server);
  });
  afterAll(async () => {
    for (const s of [a, b]) {
      s.server.closeAllConnections();
      await s.close();
    }
    const redis = new Redis(redisUrl ?? "");
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it("/ready reports Redis", async () => {
    expect(await (await fetch(`${a.url}/ready`)).json()).toMatchObject({ checks: { redis: "UP" } });
  });

  it("an Idempotency-Key used on one instance is replayed by the other", async () => {
    const init = {
      method: "POST",
      headers: { "idempotency-key": "fleet-1" },
      json: { name: "Fleet", city: "Oslo" },
    };
    const first = await client(a.url)("/departments", init);
    expect(first.status).toBe(201);
    const replay = await client(b.url)("/departments", init);
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(new URL(replay.headers.get("location") ?? "").pathname).toBe(
      new URL(first.headers.get("location") ?? "").pathname,
    );
  });

  it("the rate limit counts requests on both instances together", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await client(i % 2 ? a.url : b.url)("/categories")).status);
    // Two of the six units went to the idempotency test's POSTs.
    expect(statuses.filter((s) => s === 200)).toHaveLength(4);
    expect(statuses.slice(4)).toEqual([429, 429, 429, 429]);
  });
});
