import { subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { type ThrowawayRedis, throwawayRedis } from "@svc/test-utils";
import { FRAMEWORKS, serve } from "@svc/test-utils/conformance";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RateLimitDiagnostic, RedisStore } from "../src/index.js";
import { limitedMounts } from "./frameworks.js";

/** One window for the whole run (Redis's clock cannot be fixed): no edge between the requests. */
const ONE_WINDOW = 1e15;

describe("insurance: a throw-away redis-server stopped and restarted", () => {
  let redis: ThrowawayRedis;
  beforeAll(async () => {
    redis = await throwawayRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it.each(FRAMEWORKS)(
    "%s: limit 4, 2 instances: Redis up → 200; stopped → 200, 200, 429 (2 per instance), one warn, one store-failed; restarted → the store decides (r=3), one info, one store-recovered",
    async (framework) => {
      await redis.start();
      const client = new Redis(redis.url, {
        enableOfflineQueue: false,
        autoResendUnfulfilledCommands: false,
        maxRetriesPerRequest: 0,
        lazyConnect: true,
        retryStrategy: () => 50,
      });
      client.on("error", () => {});
      await client.connect();
      const warned: string[] = [];
      const informed: string[] = [];
      const logger = {
        warn: (_o: unknown, m: string) => warned.push(m),
        info: (_o: unknown, m: string) => informed.push(m),
      };
      const seen: RateLimitDiagnostic[] = [];
      const listener = (m: unknown) => seen.push(m as RateLimitDiagnostic);
      subscribeDiagnostics("svc:ratelimit", listener);
      const server = await serve(
        framework,
        limitedMounts(() => ({
          limit: 4,
          windowMs: ONE_WINDOW,
          algorithm: "fixed-window",
          store: new RedisStore({ client, prefix: `insured-${framework}:` }),
          insurance: { instances: 2 },
          logger,
        })),
      );
      try {
        expect((await fetch(server.url)).status).toBe(200);
        await redis.stop();
        const insured = [];
        for (let i = 0; i < 3; i++) insured.push(await fetch(server.url));
        expect(insured.map((r) => r.status)).toEqual([200, 200, 429]);
        expect(insured[2]?.headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+$/);
        expect(warned).toHaveLength(1);
        expect(warned[0]).toMatch(/in memory at 2 per/);
        const failed = seen.filter((m) => m.decision === "store-failed");
        expect(failed).toHaveLength(1);
        expect(failed[0]).toMatchObject({ failMode: "insurance" });
        const decided = seen.filter((m) => m.decision === "allowed" || m.decision === "limited");
        expect(decided.map((m) => ("insured" in m ? m.insured : false))).toEqual([false, true, true, true]);

        await redis.start();
        while (client.status !== "ready") await new Promise((resolve) => setTimeout(resolve, 20));
        const back = await fetch(server.url);
        expect(back.status).toBe(200);
        // The store's count, not the insurance's (r=0): the throw-away server kept nothing on
        // disk, so its count starts over with this request.
        expect(back.headers.get("ratelimit")).toMatch(/^"default";r=3;t=\d+$/);
        expect(informed).toHaveLength(1);
        const recovered = seen.filter((m) => m.decision === "store-recovered");
        expect(recovered).toHaveLength(1);
        expect(recovered[0]).toMatchObject({ insured: 3 });
        expect(warned).toHaveLength(1);
      } finally {
        unsubscribeDiagnostics("svc:ratelimit", listener);
        await server.close();
        client.disconnect();
      }
    },
  );
});
