import { errorHandler } from "@svc/errors/express";
import { listen, serviceUrl, uniquePrefix } from "@svc/test-utils";
import { redisClientMajors } from "@svc/test-utils/redis-clients";
import express from "express";
import { describe, expect, it } from "vitest";
import { rateLimit } from "../src/express.js";
import { RedisStore } from "../src/index.js";
import { inTurn } from "./requests.js";

// Every client major inside the peer ranges (`ioredis ^5 || ^6`, `redis ^4.6 || ^5 || ^6`)
// decides through the same script: two requests pass, the third gets 429.
const url = serviceUrl("REDIS_URL");

describe.skipIf(!url).each(redisClientMajors())("RedisStore with $name", ({ connect }) => {
  it("limit 2: 200, 200, then 429 with Retry-After, counted in Redis", async () => {
    const { client, close, unroutable } = await connect(url as string);
    const app = express();
    const store = new RedisStore({ client, prefix: uniquePrefix("rl-clients") });
    app.use(rateLimit({ limit: 2, windowMs: 60_000, store, logger: { warn() {} } }));
    app.get("/", (_req, res) => {
      res.end("ok");
    });
    app.use(errorHandler({ logger: { error() {} } }));
    const server = await listen(app);
    try {
      const { statuses, last } = await inTurn(server.url, 3);
      expect(statuses).toEqual([200, 200, 429]);
      expect(Number(last.headers.get("retry-after"))).toBeGreaterThan(0);
      // On a Cluster, ioredis must find the key in every script call, or it picks a master at random.
      expect(unroutable()).toEqual([]);
    } finally {
      await server.close();
      await close();
    }
  });
});
