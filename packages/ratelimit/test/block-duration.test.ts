import { serviceUrl, uniquePrefix } from "@svc/test-utils";
import { FRAMEWORKS, serve } from "@svc/test-utils/conformance";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryStore, RedisStore } from "../src/index.js";
import { limitedMounts } from "./frameworks.js";

const silent = { warn() {} };
const url = serviceUrl("REDIS_URL");

describe.each(FRAMEWORKS)("%s: blockDurationMs", (framework) => {
  it("limit 2 per 1 s, block 60 s, on a test clock: 200, 200, 429 (Retry-After 60, t=60); 2 s on (a new window) → still 429 (58); 60 s on → 200", async () => {
    const clock = { now: 90_000 };
    const server = await serve(
      framework,
      limitedMounts(() => ({
        limit: 2,
        windowMs: 1000,
        algorithm: "fixed-window",
        blockDurationMs: 60_000,
        store: new MemoryStore(),
        now: () => clock.now,
        logger: silent,
      })),
    );
    try {
      expect((await fetch(server.url)).status).toBe(200);
      expect((await fetch(server.url)).status).toBe(200);
      const refused = await fetch(server.url);
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBe("60");
      expect(refused.headers.get("ratelimit")).toBe('"default";r=0;t=60');
      clock.now += 2000;
      const still = await fetch(server.url);
      expect(still.status).toBe(429);
      expect(still.headers.get("retry-after")).toBe("58");
      expect(still.headers.get("ratelimit")).toBe('"default";r=0;t=58');
      clock.now += 58_000;
      const back = await fetch(server.url);
      expect(back.status).toBe(200);
      expect(back.headers.get("ratelimit")).toBe('"default";r=1;t=1');
    } finally {
      await server.close();
    }
  });
});

describe.skipIf(!url)("blockDurationMs on Redis, two instances sharing it", () => {
  const clients: Redis[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const client = new Redis(url as string, {
        enableOfflineQueue: false,
        autoResendUnfulfilledCommands: false,
        maxRetriesPerRequest: 0,
        lazyConnect: true,
      });
      await client.connect();
      clients.push(client);
    }
  });
  afterAll(() => {
    for (const client of clients) client.disconnect();
  });

  it.each(FRAMEWORKS)(
    "%s: gcra 2 per s, block 1.5 s: A 200, 200, 429; B (same client) 429; 0.6 s on (a unit back) both still 429; after Retry-After → 200",
    async (framework) => {
      const prefix = uniquePrefix(`block-${framework}`);
      const instance = (client: Redis) =>
        serve(
          framework,
          limitedMounts(() => ({
            limit: 2,
            windowMs: 1000,
            algorithm: "gcra",
            blockDurationMs: 1500,
            store: new RedisStore({ client, prefix }),
            logger: silent,
          })),
        );
      const a = await instance(clients[0] as Redis);
      const b = await instance(clients[1] as Redis);
      try {
        expect((await fetch(a.url)).status).toBe(200);
        expect((await fetch(a.url)).status).toBe(200);
        const refused = await fetch(a.url);
        expect(refused.status).toBe(429);
        expect(refused.headers.get("retry-after")).toBe("2");
        expect(refused.headers.get("ratelimit")).toBe('"default";r=0;t=2');
        const other = await fetch(b.url);
        expect(other.status).toBe(429);
        expect(Number(other.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        // GCRA gives a unit back every 500 ms: without the block, both would admit one now.
        await new Promise((resolve) => setTimeout(resolve, 600));
        expect((await fetch(b.url)).status).toBe(429);
        expect((await fetch(a.url)).status).toBe(429);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        expect((await fetch(b.url)).status).toBe(200);
        expect((await fetch(a.url)).status).toBe(200);
      } finally {
        await a.close();
        await b.close();
      }
    },
  );
});
