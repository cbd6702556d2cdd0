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
 * PostgreSQL is not configured: such suites are skipped); `pool(config)` a further pool on the
 * schema with `config` added (a `statement_timeout`, …), ended with the others after the tests.
 */
export function throwawaySchema(label: string): { pool(config?: pg.PoolConfig): pg.Pool } {
  const schema = `svc_idem_${label}_${process.pid}_${randomBytes(4).toString("hex")}`;
  const pools: pg.Pool[] = [];
  const open = (config: pg.PoolConfig = {}): pg.Pool => {
    const pool = new pg.Pool({ connectionString: postgresUrl, max: 8, ...config });
    // Set on each new connection before its first query (which queues behind it), not through the
    // `options` startup parameter: pg ignores that before 8.3.0, and the suites run on the peer
    // range's floor as well. A connection whose schema could not be set is closed, so its queries
    // fail rather than run in `public`.
    pool.on("connect", (client) => {
      client.query(`SET search_path TO ${schema}`).catch(() => client.end());
    });
    pools.push(pool);
    return pool;
  };
  beforeAll(async () => {
    if (!postgresUrl) return;
    await admin(`CREATE SCHEMA ${schema}`);
    await open().query("CREATE TABLE effects (id serial PRIMARY KEY, key text NOT NULL)");
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
    if (postgresUrl) await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });
  return {
    pool(config) {
      const main = pools[0];
      if (main === undefined) throw new Error("PostgreSQL is not configured (DATABASE_URL)");
      return config === undefined ? main : open(config);
    },
  };
}
