// #region readme-core
import { randomBytes } from "node:crypto";
import type { ClaimResult, IdempotencyStore, StoredResponse } from "@svc/idempotency";

/** What the store needs of a better-sqlite3 `Database` (a driver of the same shape fits too). */
export interface SqliteDatabase {
  exec(sql: string): unknown;
  prepare(sql: string): {
    run(...params: unknown[]): { changes: number };
    get(...params: unknown[]): unknown;
  };
  transaction<T>(fn: () => T): { immediate(): T };
}

/** Record of a response as the table keeps it: the body as a BLOB, the headers as JSON. */
interface Row {
  fingerprint: string;
  token: string;
  state: "in-flight" | "completed";
  status: number | null;
  headers: string | null;
  body: Uint8Array | null;
  omitted: number;
  expires_at: number;
}

/**
 * An idempotency store in SQLite through better-sqlite3: one row per key. Each method is one
 * `BEGIN IMMEDIATE` transaction (SQLite's write lock), so claims are atomic across every
 * connection and process on the file; complete, release and renew act only while the caller's
 * token is the row's.
 */
export class SqliteStore implements IdempotencyStore {
  readonly #db: SqliteDatabase;
  readonly #maxRecordBytes: number;

  constructor(db: SqliteDatabase, options: { maxRecordBytes?: number } = {}) {
    this.#db = db;
    this.#maxRecordBytes = options.maxRecordBytes ?? 1_048_576;
    db.exec("PRAGMA busy_timeout = 1000"); // another process holds the lock: wait, then throw
    db.exec(`CREATE TABLE IF NOT EXISTS idempotency_keys (
      key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, token TEXT NOT NULL, state TEXT NOT NULL,
      status INTEGER, headers TEXT, body BLOB, omitted INTEGER NOT NULL DEFAULT 0,
      expires_at INTEGER NOT NULL) WITHOUT ROWID`);
  }

  async claim(key: string, fingerprint: string, leaseMs: number): Promise<ClaimResult> {
    return this.#db
      .transaction((): ClaimResult => {
        const now = Date.now();
        const row = this.#live(key, now);
        if (row?.state === "completed") {
          return { outcome: "completed", fingerprint: row.fingerprint, response: response(row) };
        }
        if (row)
          return {
            outcome: "in-flight",
            fingerprint: row.fingerprint,
            leaseRemainingMs: row.expires_at - now,
          };
        const token = randomBytes(16).toString("hex");
        this.#db
          .prepare(`INSERT OR REPLACE INTO idempotency_keys (key, fingerprint, token, state, expires_at)
            VALUES (?, ?, ?, 'in-flight', ?)`)
          .run(key, fingerprint, token, now + leaseMs);
        return { outcome: "claimed", token };
      })
      .immediate();
  }

  async complete(key: string, token: string, stored: StoredResponse, retentionMs: number): Promise<boolean> {
    const kept = this.#within(stored);
    const { changes } = this.#db
      .prepare(`UPDATE idempotency_keys SET state = 'completed', status = ?, headers = ?, body = ?,
        omitted = ?, expires_at = ? WHERE key = ? AND token = ? AND state = 'in-flight' AND expires_at > ?`)
      .run(
        kept.status,
        JSON.stringify(kept.headers),
        Buffer.from(kept.body),
        kept.bodyOmitted ? 1 : 0,
        Date.now() + retentionMs,
        key,
        token,
        Date.now(),
      );
    return changes === 1;
  }

  async release(key: string, token: string): Promise<boolean> {
    const { changes } = this.#db
      .prepare(
        "DELETE FROM idempotency_keys WHERE key = ? AND token = ? AND state = 'in-flight' AND expires_at > ?",
      )
      .run(key, token, Date.now());
    return changes === 1;
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    const { changes } = this.#db
      .prepare(`UPDATE idempotency_keys SET expires_at = ?
        WHERE key = ? AND token = ? AND state = 'in-flight' AND expires_at > ?`)
      .run(Date.now() + leaseMs, key, token, Date.now());
    return changes === 1;
  }

  /** Deletes expired rows (a claim replaces its own key's anyway): run it from time to time. */
  sweep(): number {
    return this.#db.prepare("DELETE FROM idempotency_keys WHERE expires_at <= ?").run(Date.now()).changes;
  }

  #live(key: string, now: number): Row | undefined {
    const row = this.#db.prepare("SELECT * FROM idempotency_keys WHERE key = ?").get(key) as Row | undefined;
    return row && row.expires_at > now ? row : undefined;
  }

  /** The response, else without its body, else its status alone: no row past maxRecordBytes. */
  #within(stored: StoredResponse): StoredResponse {
    const size = (r: StoredResponse) => r.body.byteLength + Buffer.byteLength(JSON.stringify(r.headers));
    if (size(stored) <= this.#maxRecordBytes) return stored;
    const { "content-type": _t, "content-encoding": _e, ...headers } = stored.headers;
    const bodiless: StoredResponse = {
      status: stored.status,
      headers,
      body: new Uint8Array(),
      bodyOmitted: true,
    };
    return size(bodiless) <= this.#maxRecordBytes ? bodiless : { ...bodiless, headers: {} };
  }
}

function response(row: Row): StoredResponse {
  return {
    status: row.status ?? 500,
    headers: JSON.parse(row.headers ?? "{}") as StoredResponse["headers"],
    body: new Uint8Array(row.body ?? new Uint8Array()),
    ...(row.omitted === 1 ? { bodyOmitted: true as const } : {}),
  };
}
// #endregion readme-core
