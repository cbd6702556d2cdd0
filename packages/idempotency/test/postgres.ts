import { randomBytes } from "node:crypto";
import { serviceUrl } from "@svc/test-utils";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";

/** `DATABASE_URL` when it names PostgreSQL, else undefined (the suites that need it skip). */
const databaseUrl = serviceUrl("DATABASE_URL");
export const postgresUrl = databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl) ? databaseUrl : undefined;

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A schema of its own for the calling test file, made before its tests and dropped after them,
 * with an `effects` table the tests' handlers write to. `pool()` is its pool (throws when
 * PostgreSQL is not configured: such suites are skipped).
 */
export function throwawaySchema(label: string): { pool(): pg.Pool } {
  const schema = `svc_idem_${label}_${process.pid}_${randomBytes(4).toString("hex")}`;
  let pool: pg.Pool | undefined;
  beforeAll(async () => {
    if (!postgresUrl) return;
    await admin(`CREATE SCHEMA ${schema}`);
    pool = new pg.Pool({ connectionString: postgresUrl, options: `-c search_path=${schema}`, max: 8 });
    await pool.query("CREATE TABLE effects (id serial PRIMARY KEY, key text NOT NULL)");
  });
  afterAll(async () => {
    await pool?.end();
    if (postgresUrl) await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });
  return {
    pool() {
      if (pool === undefined) throw new Error("PostgreSQL is not configured (DATABASE_URL)");
      return pool;
    },
  };
}
