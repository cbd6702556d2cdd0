import { errorHandler } from "@svc/errors/express";
import { reply } from "@svc/kernel";
import { listen, serviceUrl, uniquePrefix } from "@svc/test-utils";
import { redisClientMajors } from "@svc/test-utils/redis-clients";
import express from "express";
import { describe, expect, it } from "vitest";
import { RedisStore } from "../src/index.js";
import { keyed } from "./pipeline-app.js";

// Every client major inside the peer ranges (`ioredis ^5 || ^6`, `redis ^4.6 || ^5 || ^6`)
// claims, completes and replays through the same scripts.
const url = serviceUrl("REDIS_URL");

describe.skipIf(!url).each(redisClientMajors())("RedisStore with $name", ({ connect }) => {
  it("a repeated POST with one Idempotency-Key runs the handler once and replays its response", async () => {
    const { client, close, unroutable } = await connect(url as string);
    const app = express();
    const store = new RedisStore({ client, prefix: uniquePrefix("idem-clients") });
    let runs = 0;
    app.post(
      "/orders",
      express.json(),
      keyed({ store }, (req) => {
        runs++;
        return reply({ order: runs, item: (req.body as { item: string }).item }, { status: 201 });
      }),
    );
    app.use(errorHandler({ logger: { error() {} } }));
    const server = await listen(app);
    try {
      const post = () =>
        fetch(`${server.url}/orders`, {
          method: "POST",
          headers: { "Content-Type": "application/json", "Idempotency-Key": '"order-1"' },
          body: JSON.stringify({ item: "book" }),
        });
      const first = await post();
      const second = await post();
      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(await second.json()).toEqual(await first.json());
      expect(runs).toBe(1);
      // On a Cluster, ioredis must find the key in every script call, or it picks a master at random.
      expect(unroutable()).toEqual([]);
    } finally {
      await server.close();
      await close();
    }
  });
});
