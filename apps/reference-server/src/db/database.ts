import SQLite from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect, sql } from "kysely";
import pg from "pg";
import type { DatabaseConfig } from "../config.js";
import type { Database } from "./schema.js";

/** A connected database: the query builder plus what start-up, /ready and shutdown need. */
export interface Db {
  kind: DatabaseConfig["kind"];
  /** The PostgreSQL schema the tables live in, when not the connection's default. */
  schema: string | undefined;
  kysely: Kysely<Database>;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens SQLite (better-sqlite3) or PostgreSQL (pg pool) behind one Kysely instance, so every
 * query of the repositories is written once for both.
 *
 * @example const db = createDatabase({ kind: "sqlite", filename: ":memory:", url: "sqlite::memory:" });
 */
export function createDatabase(config: DatabaseConfig): Db {
  let kysely: Kysely<Database>;
  if (config.kind === "sqlite") {
    const native = new SQLite(config.filename);
    native.pragma("journal_mode = WAL");
    native.pragma("foreign_keys = ON");
    kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: native }) });
  } else {
    const pool = new pg.Pool({
      connectionString: config.url,
      max: 10,
      // A database that cannot be reached must turn into a quick 503, not a hanging request.
      connectionTimeoutMillis: 2000,
      idleTimeoutMillis: 10_000,
      ...(config.schema ? { options: `-c search_path=${config.schema}` } : {}),
    });
    // An idle client that loses its connection emits on the pool; without a listener that is a crash.
    pool.on("error", () => {});
    kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  }
  return {
    kind: config.kind,
    schema: config.kind === "postgres" ? config.schema : undefined,
    kysely,
    async ping() {
      await sql`select 1`.execute(kysely);
    },
    async close() {
      await kysely.destroy();
    },
  };
}
