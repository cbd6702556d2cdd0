import { serviceUrl, uniquePrefix } from "@svc/test-utils";
import { Redis } from "ioredis";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { ADMIN, postgres, sqlite } from "./harness.js";

/** The test schemas this worker made (a schema is named after its process), on the shared PostgreSQL. */
async function testSchemas(): Promise<number> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const result = await client.query(
      "select count(*)::int as n from information_schema.schemata where schema_name like $1",
      [`svc_test_${process.pid}_%`],
    );
    return result.rows[0].n as number;
  } finally {
    await client.end();
  }
}

describe.skipIf(!postgres)("the harness on PostgreSQL", () => {
  it("a service refused at start drops the schema made for it", async () => {
    const before = await testSchemas();
    await expect(
      (postgres as NonNullable<typeof postgres>).start({ RATE_LIMIT_MAX: "not a number" }),
    ).rejects.toThrow();
    expect(await testSchemas()).toBe(before);
  });
});

const redisUrl = serviceUrl("REDIS_URL");

describe.skipIf(!redisUrl)("the harness on Redis", () => {
  it("REDIS_KEY_PREFIX is the prefix of every key the service writes", async () => {
    const prefix = uniquePrefix("reference-harness");
    const redis = new Redis(redisUrl as string);
    const s = await sqlite.start({ REDIS_URL: redisUrl as string, REDIS_KEY_PREFIX: prefix });
    try {
      const res = await fetch(`${s.url}/employees/1`, { headers: { authorization: ADMIN } });
      expect(res.status).toBe(200);
      // The request's rate-limit counter, under the prefix the configuration gives.
      expect(await redis.keys(`${prefix}*`)).not.toEqual([]);
    } finally {
      await s.stop();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });
});
