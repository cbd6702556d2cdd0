import type { Server } from "node:http";
import { type RedisCluster, redisCluster, uniquePrefix } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createLogger, type Service, startService } from "../src/server.js";
import { frameworkEnv, problemsOf, watchResponses } from "./harness.js";

describe("REDIS_CLUSTER_NODES", () => {
  it("127.0.0.1:7000, redis-1.internal:7001 and [::1]:7002 → three seeds", () => {
    const c = loadConfig({ REDIS_CLUSTER_NODES: "127.0.0.1:7000, redis-1.internal:7001,[::1]:7002" });
    expect(c.redisClusterNodes).toEqual([
      { host: "127.0.0.1", port: 7000 },
      { host: "redis-1.internal", port: 7001 },
      { host: "::1", port: 7002 },
    ]);
    expect(c.redisUrl).toBeUndefined();
  });
  it("unset → no cluster", () => expect(loadConfig({}).redisClusterNodes).toBeUndefined());
  it("REDIS_URL and REDIS_CLUSTER_NODES both set → a problem naming both", () => {
    expect(
      problemsOf({ REDIS_URL: "redis://127.0.0.1:6379", REDIS_CLUSTER_NODES: "127.0.0.1:7000" }),
    ).toEqual([expect.stringMatching(/REDIS_URL and REDIS_CLUSTER_NODES are both set/)]);
  });
  for (const bad of [
    "localhost",
    "127.0.0.1:0",
    "127.0.0.1:70000",
    "::1:7000",
    ".example.com:7000",
    "a b:1",
  ]) {
    it(`entry "${bad}" → a problem quoting it`, () => {
      expect(problemsOf({ REDIS_CLUSTER_NODES: `127.0.0.1:7000,${bad}` })).toEqual([
        expect.stringContaining(`REDIS_CLUSTER_NODES entry "${bad}" must be host:port`),
      ]);
    });
  }
  it("the same node twice → a problem", () => {
    expect(problemsOf({ REDIS_CLUSTER_NODES: "127.0.0.1:7000,127.0.0.1:7000" })).toEqual([
      expect.stringMatching(/names 127.0.0.1:7000 twice/),
    ]);
  });
  it("only commas → a problem", () => {
    expect(problemsOf({ REDIS_CLUSTER_NODES: " , ," })).toEqual([expect.stringMatching(/names no node/)]);
  });
  it("65 seeds → a problem (at most 64)", () => {
    const many = Array.from({ length: 65 }, (_, i) => `127.0.0.1:${7000 + i}`).join(",");
    expect(problemsOf({ REDIS_CLUSTER_NODES: many })).toEqual([expect.stringMatching(/at most 64/)]);
  });
});

const cluster = await redisCluster({ masters: 3 });

describe.skipIf(!cluster)("the service on a Redis Cluster (REDIS_CLUSTER_NODES)", () => {
  const c = cluster as RedisCluster;
  let service: Service;
  beforeAll(async () => {
    const config = loadConfig({
      PORT: "0",
      ...frameworkEnv(),
      LOG_LEVEL: "silent",
      DATABASE_URL: "sqlite::memory:",
      REDIS_CLUSTER_NODES: c.seeds.join(","),
      RATE_LIMIT_MAX: "5",
    });
    service = await startService(config, {
      logger: createLogger({ logLevel: "silent" }),
      redisPrefix: uniquePrefix("reference-cluster"),
    });
    watchResponses(service.server as Server);
  });
  afterAll(async () => {
    service?.server.closeAllConnections();
    await service?.close();
    await c.stop();
  });

  it("/ready → 200 with redis UP", async () => {
    const res = await fetch(`${service.url}/ready`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ checks: { redis: "UP" } });
  });

  it("the rate limit counts in the cluster: RATE_LIMIT_MAX 5 → remaining 4 … 0, then 429", async () => {
    const remaining = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${service.url}/categories`);
      expect(res.status).not.toBe(429);
      remaining.push(res.headers.get("x-ratelimit-remaining"));
    }
    expect(remaining).toEqual(["4", "3", "2", "1", "0"]);
    expect((await fetch(`${service.url}/categories`)).status).toBe(429);
  });

  it("a master stopped → /ready 503 with redis DOWN; started again → /ready 200", async () => {
    await c.stopNode(2);
    try {
      const res = await fetch(`${service.url}/ready`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ checks: { redis: "DOWN" } });
    } finally {
      await c.startNode(2);
    }
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await fetch(`${service.url}/ready`)).status;
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
  });
});
