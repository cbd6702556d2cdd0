import { serviceUrl } from "@svc/test-utils";
import { afterAll, describe, expect, it } from "vitest";
import { BINARY_RUNTIMES, missing, removeBundles, runStores } from "./runtimes.js";

const redisUrl = serviceUrl("REDIS_URL");
const databaseUrl = serviceUrl("DATABASE_URL");
const runtimes = BINARY_RUNTIMES.filter((name) => {
  const why = missing(name);
  if (why === undefined) return true;
  if (process.env.CI) throw new Error(`the stores cannot run on ${name}: ${why}`);
  console.warn(`[skip] the Redis and PostgreSQL stores on ${name}: ${why}`);
  return false;
});

/**
 * The Redis and PostgreSQL stores (the rate limit's RedisStore, the idempotency step's
 * PostgresStore and RedisStore) on Node.js 22 and 24, Bun and Deno, against the local servers,
 * from the packed tarballs: `src/runtimes/stores.ts` run by each runtime.
 */
describe.skipIf(!redisUrl || !databaseUrl || runtimes.length === 0)("the stores on every runtime", () => {
  afterAll(removeBundles);
  it.each(runtimes)(
    "%s: 200, 200, 429 from Redis; 201, the replay, 422 from PostgreSQL and from Redis",
    async (name) => {
      const result = await runStores(name, {
        REDIS_URL: redisUrl as string,
        DATABASE_URL: databaseUrl as string,
        RUN: `${name.replace(/\W/g, "")}_${process.pid}_${Date.now()}`,
      });
      expect(result.error).toBeUndefined();
      expect(result.limited).toEqual([200, 200, 429]);
      for (const path of ["/orders", "/transfers"]) {
        const [first, replay, other] = result[path] as { status: number; body: string }[];
        expect([first?.status, replay?.status, other?.status], path).toEqual([201, 201, 422]);
        // The replay is the first response, not a second run.
        expect(replay?.body, path).toBe(first?.body);
      }
    },
    // The first case packs the packages and bundles the entries, and each starts a runtime of
    // its own: half a minute and more on a loaded two-core machine.
    120_000,
  );
});
