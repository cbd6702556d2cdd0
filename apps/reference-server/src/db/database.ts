import SQLite from "better-sqlite3";
import {
  type CompiledQuery,
  Kysely,
  PostgresDialect,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteStatement,
  sql,
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
  /** PostgreSQL's pool (the one `kysely` runs on), for stores that write in the same database. */
  pool: pg.Pool | undefined;
  /**
   * The first row of a compiled read (`null`: none), run at once on SQLite's one connection, or
   * `undefined` when it cannot be (PostgreSQL, or a transaction is open on the connection): the
   * caller then runs it through `kysely`, which waits for the connection. Only the first row is
   * read (better-sqlite3's `get`): no array of rows is built for a read by primary key.
   */
  readFirstNow(query: CompiledQuery): unknown;
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
  let readFirstNow: Db["readFirstNow"] = () => undefined;
  let pgPool: pg.Pool | undefined;
  if (config.kind === "sqlite") {
    const native = new SQLite(config.filename);
    native.pragma("journal_mode = WAL");
    native.pragma("foreign_keys = ON");
    // SQLite's own lower() folds ASCII only (https://sqlite.org/lang_corefunc.html#lower), so the
    // case-insensitive filters (db/query.ts) found no "Émilie" for ?name=Émilie; PostgreSQL's
    // folds every letter. An application-defined function of the same name takes its place.
    native.function("lower", { deterministic: true }, (value: unknown) =>
      value === null ? null : String(value).toLowerCase(),
    );
    // Integers come back as BigInt, so a 64-bit id keeps every digit; the statement cache's
    // exactStatement turns the ones a number holds exactly back into numbers.
    native.defaultSafeIntegers(true);
    const database = withStatementCache(native);
    kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
    // Kysely runs every query behind its connection lock, several promise turns each. A read
    // outside a transaction needs none of them: better-sqlite3 is synchronous, so no other query
    // of this process can run while it does. While a transaction is open (the lock is held across
    // its awaits) the read must wait its turn, or it would see the transaction's uncommitted rows.
    readFirstNow = (query) =>
      native.inTransaction ? undefined : database.prepare(query.sql).get(query.parameters);
  } else {
    const pool = new pg.Pool({
      connectionString: config.schema ? withSearchPath(config.url, config.schema) : config.url,
      max: 10,
      // A database that cannot be reached must turn into a quick 503, not a hanging request.
      connectionTimeoutMillis: 2000,
      // A database behind a partition keeps the connection open and never answers: without a
      // bound on the wait for a result, the request would hang for as long as the client waits.
      // The query fails instead ("Query read timeout": a 503, see fromDatabaseError).
      query_timeout: QUERY_TIMEOUT_MS,
      idleTimeoutMillis: 10_000,
      // bigint columns (ids, money in minor units) as numbers while exact, BigInt beyond.
      types: {
        getTypeParser: ((oid: number, format?: "text" | "binary") =>
          oid === INT8_OID && format !== "binary"
            ? parseInt8
            : pg.types.getTypeParser(oid, format ?? "text")) as typeof pg.types.getTypeParser,
      },
    });
    // An idle client that loses its connection emits on the pool; without a listener that is a crash.
    pool.on("error", () => {});
    // So does a checked-out client whose socket dies mid-query (ECONNRESET): the query itself
    // rejects (→ 503), but the client also emits "error", and the pool listens only while idle.
    pool.on("connect", (client) => client.on("error", () => {}));
    kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    pgPool = pool;
  }
  return {
    kind: config.kind,
    schema: config.kind === "postgres" ? config.schema : undefined,
    kysely,
    pool: pgPool,
    readFirstNow,
    async ping() {
      // A database behind a partition keeps the pooled connection open and never answers: without
      // a bound, /ready would hang instead of answering 503 (spec part 7: 503 for a database down).
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        await Promise.race([
          sql`select 1`.execute(kysely),
          new Promise<never>((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`The database did not answer within ${PING_TIMEOUT_MS} ms`)),
              PING_TIMEOUT_MS,
            );
          }),
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      await kysely.destroy();
    },
  };
}

/**
 * The URL with `-c search_path=<schema>` added to its `options` parameter. node-postgres lets
 * every value of a connection string override the pool's own settings, so an `options` of the
 * pool itself was dropped whenever the URL carried one (`?options=-c statement_timeout=5000`) and
 * the tables landed in `public`. The schema comes last, so it wins over a search_path the URL's
 * options also set (libpq's `options` keyword: command-line options sent at connection start,
 * applied in order; PostgreSQL docs, libpq "Parameter Key Words").
 */
function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url);
  const options = parsed.searchParams.get("options")?.trim();
  parsed.searchParams.set("options", `${options ? `${options} ` : ""}-c search_path=${schema}`);
  return parsed.toString();
}

/** How long a query waits for PostgreSQL's answer; no query of the service takes near that long. */
const QUERY_TIMEOUT_MS = 10_000;

/** How long a readiness ping waits for the database: as long as a new connection may take. */
const PING_TIMEOUT_MS = 2000;

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

/** Whether a value is a number a 64-bit integer may have been rounded to (|n| ≥ 2^53). */
function inexact(value: unknown): boolean {
  return typeof value === "number" && (value > Number.MAX_SAFE_INTEGER || value < -Number.MAX_SAFE_INTEGER);
}

/** Whether any value of `rows` (raw rows: arrays of column values) is {@link inexact}. */
function hasInexact(rows: unknown[][]): boolean {
  for (const row of rows) if (hasInexactValue(row)) return true;
  return false;
}

/** Whether any value of a raw row is {@link inexact}. */
function hasInexactValue(row: unknown[]): boolean {
  for (const value of row) if (inexact(value)) return true;
  return false;
}

/** Applies {@link exactInteger} to every BigInt of a raw row read in safe-integer mode. */
function exactRow(row: unknown[]): unknown[] {
  for (let i = 0; i < row.length; i++) {
    const value = row[i];
    if (typeof value === "bigint") row[i] = exactInteger(value);
  }
  return row;
}

/** Applies {@link exactInteger} to every BigInt of a row object read in safe-integer mode. */
function exactObject(row: unknown): unknown {
  const values = row as Record<string, unknown>;
  for (const key in values) {
    const value = values[key];
    if (typeof value === "bigint") values[key] = exactInteger(value);
  }
  return row;
}

/**
 * A function that turns a raw row (an array of column values) into the object better-sqlite3
 * would have made: one property per column name in column order, a later column of the same name
 * overwriting the value of an earlier one. Written as one object literal, so every row of a
 * statement shares one shape; better-sqlite3 sets the properties one by one by name, which costs
 * more than the query itself on a primary-key read. Undefined for a name an object literal
 * treats differently from an assignment (`__proto__`).
 */
function rowBuilder(names: readonly string[]): ((row: unknown[]) => unknown) | undefined {
  if (names.includes("__proto__")) return undefined;
  const last = new Map(names.map((name, index) => [name, index]));
  const fields = [...last].map(([name, index]) => `${JSON.stringify(name)}: row[${index}]`);
  return new Function("row", `return { ${fields.join(", ")} };`) as (row: unknown[]) => unknown;
}

/**
 * A statement whose integers read as {@link exactInteger} has them: numbers while exact, BigInt
 * beyond. Reading every integer as a BigInt and converting it back costs a BigInt per value on
 * every query, and nearly every value fits a number; so a statement that only reads (a SELECT)
 * runs with integers as numbers, and only when a value comes back as large as 2^53 (where a
 * rounded 64-bit integer lands) does it run again in safe-integer mode, which gives the exact
 * digits. Reading twice changes nothing (better-sqlite3 is synchronous: no write of this process
 * comes in between). A statement that writes (INSERT ... RETURNING) runs once, in safe-integer
 * mode. Rows are read as arrays and made objects by {@link rowBuilder}.
 */
function exactStatement(statement: SQLite.Statement): CachedStatement {
  const toObject = statement.reader ? rowBuilder(statement.columns().map((c) => c.name)) : undefined;
  if (toObject === undefined) {
    // A statement that returns no rows (kysely only runs it), or a column named __proto__.
    return {
      reader: statement.reader,
      all: (parameters) => statement.all(parameters).map(exactObject),
      get: (parameters) => (statement.reader ? exactObject(statement.get(parameters) ?? null) : null),
      run: (parameters) => statement.run(parameters),
      *iterate(parameters) {
        for (const row of statement.iterate(parameters)) yield exactObject(row);
      },
    };
  }
  const reread = statement.readonly;
  statement.raw(true);
  if (reread) statement.safeIntegers(false);
  const exactly = (parameters: readonly unknown[]): unknown[][] => {
    if (reread) statement.safeIntegers(true);
    try {
      return (statement.all(parameters) as unknown[][]).map(exactRow);
    } finally {
      if (reread) statement.safeIntegers(false);
    }
  };
  const exactFirst = (parameters: readonly unknown[]): unknown[] | undefined => {
    if (reread) statement.safeIntegers(true);
    try {
      const row = statement.get(parameters) as unknown[] | undefined;
      return row === undefined ? undefined : exactRow(row);
    } finally {
      if (reread) statement.safeIntegers(false);
    }
  };
  return {
    reader: true,
    all(parameters) {
      let rows = reread ? (statement.all(parameters) as unknown[][]) : exactly(parameters);
      if (reread && hasInexact(rows)) rows = exactly(parameters);
      return rows.map(toObject);
    },
    get(parameters) {
      let row = reread ? (statement.get(parameters) as unknown[] | undefined) : exactFirst(parameters);
      if (reread && row !== undefined && hasInexactValue(row)) row = exactFirst(parameters);
      return row === undefined ? null : toObject(row);
    },
    run: (parameters) => statement.run(parameters),
    *iterate(parameters) {
      if (reread) statement.safeIntegers(true);
      try {
        for (const row of statement.iterate(parameters)) yield toObject(exactRow(row as unknown[]));
      } finally {
        if (reread) statement.safeIntegers(false);
      }
    },
  };
}

/** A statement of {@link withStatementCache}: Kysely's, and its first row alone. */
export interface CachedStatement extends SqliteStatement {
  /** The first row of a read (`null`: none, or a statement that returns no rows). */
  get(parameters: readonly unknown[]): unknown;
}

/** The database {@link withStatementCache} returns: Kysely's, with {@link CachedStatement}s. */
export interface CachedDatabase extends SqliteDatabase {
  prepare(sql: string): CachedStatement;
}

/** How many distinct SQL texts keep their prepared statement. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * better-sqlite3 behind a bounded cache of prepared statements. Kysely's SQLite driver calls
 * `prepare(sql)` for every query, and preparing (parsing and planning the SQL) costs more than
 * running a primary-key read; the same SQL text gets the same statement back, with fresh
 * parameters bound on each run. The least recently used statement leaves when the cache is full
 * (list queries vary with their filters and sort). A statement still being iterated is not
 * shared: the caller gets a fresh one. Every statement reads integers as {@link exactStatement} says.
 */
export function withStatementCache(native: SQLite.Database, max = STATEMENT_CACHE_SIZE): CachedDatabase {
  const statements = new Map<string, { native: SQLite.Statement; exact: CachedStatement }>();
  // The most recently used text: asked again (an item GET after an item GET), it is already last.
  let newest: string | undefined;
  return {
    prepare(text: string) {
      const cached = statements.get(text);
      if (cached !== undefined && !cached.native.busy) {
        if (text !== newest) {
          // Re-insert to mark it as the most recently used (a Map keeps insertion order).
          statements.delete(text);
          statements.set(text, cached);
          newest = text;
        }
        return cached.exact;
      }
      const statement = native.prepare(text);
      const exact = exactStatement(statement);
      if (cached === undefined) {
        if (statements.size >= max) {
          const oldest = statements.keys().next();
          if (!oldest.done) statements.delete(oldest.value);
        }
        statements.set(text, { native: statement, exact });
        newest = text;
      }
      return exact;
    },
    close() {
      statements.clear();
      newest = undefined;
      native.close();
    },
  };
}
