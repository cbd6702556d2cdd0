import SQLite from "better-sqlite3";
import {
  Kysely,
  type KyselyPlugin,
  PostgresDialect,
  type QueryResult,
  type SqliteDatabase,
  SqliteDialect,
  sql,
  type UnknownRow,
} from "kysely";
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
    // Integers come back as BigInt, so a 64-bit id keeps every digit; exactIntegers turns the
    // ones a number holds exactly back into numbers.
    native.defaultSafeIntegers(true);
    kysely = new Kysely<Database>({
      dialect: new SqliteDialect({ database: withStatementCache(native) }),
      plugins: [exactIntegers],
    });
  } else {
    const pool = new pg.Pool({
      connectionString: config.url,
      max: 10,
      // A database that cannot be reached must turn into a quick 503, not a hanging request.
      connectionTimeoutMillis: 2000,
      idleTimeoutMillis: 10_000,
      // bigint columns (ids, money in minor units) as numbers while exact, BigInt beyond.
      types: {
        getTypeParser: ((oid: number, format?: "text" | "binary") =>
          oid === INT8_OID && format !== "binary"
            ? parseInt8
            : pg.types.getTypeParser(oid, format ?? "text")) as typeof pg.types.getTypeParser,
      },
      ...(config.schema ? { options: `-c search_path=${config.schema}` } : {}),
    });
    // An idle client that loses its connection emits on the pool; without a listener that is a crash.
    pool.on("error", () => {});
    // So does a checked-out client whose socket dies mid-query (ECONNRESET): the query itself
    // rejects (→ 503), but the client also emits "error", and the pool listens only while idle.
    pool.on("connect", (client) => client.on("error", () => {}));
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

/** PostgreSQL's type oid of `bigint` (int8). */
const INT8_OID = 20;
const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * A 64-bit integer as the rest of the service reads it: a number while a number holds it
 * exactly (|n| < 2^53), a BigInt beyond, so no id or amount is ever rounded.
 */
export function exactInteger(value: bigint): number | bigint {
  return value <= MAX_EXACT && value >= -MAX_EXACT ? Number(value) : value;
}

/** node-postgres hands `bigint` columns over as text; see {@link exactInteger}. */
function parseInt8(text: string): number | bigint {
  return exactInteger(BigInt(text));
}

/** Applies {@link exactInteger} to every BigInt better-sqlite3 returns in safe-integer mode. */
const exactIntegers: KyselyPlugin = {
  transformQuery: (args) => args.node,
  async transformResult(args): Promise<QueryResult<UnknownRow>> {
    for (const row of args.result.rows) {
      for (const key in row) {
        const value = row[key];
        if (typeof value === "bigint") row[key] = exactInteger(value);
      }
    }
    return args.result;
  },
};

/** How many distinct SQL texts keep their prepared statement. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * better-sqlite3 behind a bounded cache of prepared statements. Kysely's SQLite driver calls
 * `prepare(sql)` for every query, and preparing (parsing and planning the SQL) costs more than
 * running a primary-key read; the same SQL text gets the same statement back, with fresh
 * parameters bound on each run. The least recently used statement leaves when the cache is full
 * (list queries vary with their filters and sort). A statement still being iterated is not
 * shared: the caller gets a fresh one.
 */
export function withStatementCache(native: SQLite.Database, max = STATEMENT_CACHE_SIZE): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    prepare(text: string) {
      const cached = statements.get(text);
      if (cached !== undefined && !cached.busy) {
        // Re-insert to mark it as the most recently used (a Map keeps insertion order).
        statements.delete(text);
        statements.set(text, cached);
        return cached;
      }
      const statement = native.prepare(text);
      if (cached === undefined) {
        if (statements.size >= max) {
          const oldest = statements.keys().next();
          if (!oldest.done) statements.delete(oldest.value);
        }
        statements.set(text, statement);
      }
      return statement;
    },
    close() {
      statements.clear();
      native.close();
    },
  };
}
