import pg from "pg";
import { describe, expect, it } from "vitest";
import { postgres } from "./harness.js";

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
