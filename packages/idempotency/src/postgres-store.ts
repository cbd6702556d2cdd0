import { withinTime } from "@svc/kernel/internal";
import { fromBase64, randomHex, toBase64, utf8Length } from "./bytes.js";
import { type IdempotencyStoreCall, storeCalls } from "./diagnostics.js";
import { STORE_TIMEOUT_MS, storeMaxRecordBytes, storeOptions } from "./option-error.js";
import { StoreUnavailableError } from "./redis-store.js";
import { type ClaimResult, type IdempotencyStore, keptWithin, type StoredResponse } from "./store.js";

/**
 * How long after the key's outcome commits with the effect a retry waits (409, as for an execution
 * in flight) for the execution to record the response it sends, before the committed record (its
 * status and fields, no body) is replayed in its place: an execution records it milliseconds after
 * its commit, so one that has not within this time is taken to have died or hung.
 */
const SETTLE_MS = 2000;

/**
 * What the store needs of a PostgreSQL client: `query(text, values)`, as a `pg` `Pool`, `Client`
 * or pooled client has it. Nothing else of `pg` is used, so the store works with any client of that
 * shape (and `pg` stays an optional peer dependency).
 */
export interface PgQueryable {
  /** Runs one statement with `$1`… parameters. */
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount?: number | null }>;
}

/** Options of {@link PostgresStore}. */
export interface PostgresStoreOptions {
  /** The pool (or client) the store's own statements run on: claims, renewals, completions. */
  pool: PgQueryable;
  /**
   * The table of records, optionally schema-qualified (`svc.idempotency_keys`). Created by
   * {@link PostgresStore.migrate}.
   * @default "idempotency_keys"
   */
  table?: string;
  /**
   * The most bytes one record holds as stored (headers and base64 body in JSON); a larger
   * response is kept without its body, then as its status alone.
   * @default 1048576 (1 MiB)
   */
  maxRecordBytes?: number;
  /** Each statement of the store's own is given up after this long (a 503 from the middleware). @default 1000 */
  timeoutMs?: number;
  /** How long a record committed with {@link PostgresStore.commit} is replayed. @default 86400000 (24 h) */
  retentionMs?: number;
}

/** A claim as the handler has it (`res.locals.idempotency`, or `begin()`'s `decision.claim`). */
export interface CommitClaim {
  /** The scoped key the record is stored under. */
  readonly key: string;
  /** The fencing token of this execution: the commit lands only while it still owns the key. */
  readonly token: string;
}

/**
 * The claim is no longer this execution's (its lease ran out and a retry claimed the key): the
 * transaction that holds {@link PostgresStore.commit} must roll back, so its effect never commits
 * next to the other execution's.
 *
 * @example try { await store.commit(client, claim, response) } catch (err) { await client.query("ROLLBACK"); throw err }
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export class ClaimLostError extends Error {
  constructor(key: string) {
    super(`idempotency: the claim on ${key} is no longer this execution's; roll the transaction back`);
    this.name = "ClaimLostError";
  }
}

const TABLE = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

/** A record's response as a JSON value (the body in base64). */
interface ResponseJson {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
  bodyOmitted?: true;
}

const toJson = (r: StoredResponse): ResponseJson => ({
  status: r.status,
  headers: r.headers,
  body: toBase64(r.body),
  ...(r.bodyOmitted === true ? { bodyOmitted: true as const } : {}),
});

const fromJson = (j: ResponseJson): StoredResponse => ({
  status: j.status,
  headers: j.headers,
  body: fromBase64(j.body),
  ...(j.bodyOmitted === true ? { bodyOmitted: true as const } : {}),
});

/**
 * An {@link IdempotencyStore} in PostgreSQL: one row per scoped key (its primary key, so two
 * claims of one key can never both succeed), timed by the database's clock, so every instance
 * agrees on when a lease ends. Used like the memory and Redis stores; and where the request's
 * effect is written in the same database, the handler records the key's outcome inside its own
 * transaction with {@link PostgresStore.commit}: the effect and the response it answers commit
 * together or not at all, and a committed claim is never released. A retry then replays it,
 * whether the response failed after the commit, the instance died before the middleware stored
 * it, or the store could not be reached afterwards: exactly once.
 *
 * @example
 * const store = new PostgresStore({ pool });
 * await store.migrate();
 * app.post("/transfers", express.json(), idempotency({ store }), async (req, res) => {
 *   const client = await pool.connect();
 *   await client.query("BEGIN");
 *   const { rows } = await client.query("INSERT INTO transfers (amount) VALUES ($1) RETURNING id", [req.body.amount]);
 *   const location = `/transfers/${rows[0].id}`;
 *   await store.commit(client, res.locals.idempotency, { status: 201, headers: { location }, body: new Uint8Array() });
 *   await client.query("COMMIT");
 *   client.release();
 *   res.status(201).location(location).end();
 * });
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export class PostgresStore implements IdempotencyStore {
  readonly #pool: PgQueryable;
  readonly #table: string;
  readonly #maxRecordBytes: number;
  readonly #timeoutMs: number;
  readonly #retentionMs: number;

  constructor(options: PostgresStoreOptions) {
    const o = storeOptions("PostgresStore", options, [
      "pool",
      "table",
      "maxRecordBytes",
      "timeoutMs",
      "retentionMs",
    ]);
    if (typeof (options.pool as Partial<PgQueryable> | undefined)?.query !== "function") {
      throw o.refused("pool", options.pool, "a pg Pool or Client (an object with query())");
    }
    this.#pool = options.pool;
    const table = options.table ?? "idempotency_keys";
    if (typeof table !== "string" || !TABLE.test(table)) {
      throw o.refused(
        "table",
        table,
        "an unquoted identifier, optionally schema-qualified (letters, digits, _)",
      );
    }
    this.#table = table;
    this.#maxRecordBytes = storeMaxRecordBytes("PostgresStore", options.maxRecordBytes);
    this.#timeoutMs = o.timeoutMs(STORE_TIMEOUT_MS);
    const retentionMs = options.retentionMs ?? 86_400_000;
    if (typeof retentionMs !== "number" || !Number.isFinite(retentionMs) || retentionMs <= 0) {
      throw o.refused("retentionMs", retentionMs, "a positive finite number of milliseconds");
    }
    this.#retentionMs = retentionMs;
  }

  /**
   * Creates the table (and its index on `expires_at`) when missing. The scoped key is the
   * primary key: the unique constraint that makes a claim, and a commit, one per key.
   */
  async migrate(): Promise<void> {
    const t = this.#table;
    const index = `${t.replace(/^.*\./, "")}_expires_at`;
    await this.#pool.query(
      `CREATE TABLE IF NOT EXISTS ${t} (
        key text PRIMARY KEY,
        fingerprint text NOT NULL,
        token text NOT NULL,
        state text NOT NULL CHECK (state IN ('in-flight', 'committed', 'completed')),
        response jsonb,
        expires_at timestamptz NOT NULL,
        settle_by timestamptz
      )`,
    );
    await this.#pool.query(`ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS settle_by timestamptz`);
    await this.#pool.query(`CREATE INDEX IF NOT EXISTS ${index} ON ${t} (expires_at)`);
  }

  /**
   * Deletes up to `limit` expired records (a claim replaces an expired record of its own key
   * anyway; this bounds the table for keys never sent again). Run it from time to time.
   */
  async sweep(limit = 1000): Promise<number> {
    const t = this.#table;
    const res = await this.#pool.query(
      `DELETE FROM ${t} WHERE key IN (SELECT key FROM ${t} WHERE expires_at <= clock_timestamp() LIMIT $1)`,
      [limit],
    );
    return res.rowCount ?? 0;
  }

  /** Claims `key` for `leaseMs` (a new key, or an expired record's), else answers the live record. */
  claim(key: string, fingerprint: string, leaseMs: number): Promise<ClaimResult> {
    return this.#traced("claim", key, () => this.#claim(key, fingerprint, leaseMs));
  }

  async #claim(key: string, fingerprint: string, leaseMs: number): Promise<ClaimResult> {
    const t = this.#table;
    for (let attempt = 0; attempt < 3; attempt++) {
      const token = randomHex(16);
      // One statement: a new key, or an expired record taken over (a committed record has its
      // retention as expiry, so it is never taken over while it is replayed).
      const sent = performance.now();
      // `expired`: the record taken over was another execution's claim whose lease ran out, as
      // against a new key or a record past its retention (the subquery sees the row as it was
      // before this statement: a statement never sees its own changes).
      const insert = this.#send(
        `INSERT INTO ${t} AS r (key, fingerprint, token, state, response, expires_at)
         VALUES ($1, $2, $3, 'in-flight', NULL, clock_timestamp() + make_interval(secs => $4::float8 / 1000))
         ON CONFLICT (key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, token = EXCLUDED.token,
           state = 'in-flight', response = NULL, expires_at = EXCLUDED.expires_at
         WHERE r.expires_at <= clock_timestamp()
         RETURNING token, COALESCE((SELECT b.state = 'in-flight' FROM ${t} b WHERE b.key = $1), false) AS expired`,
        [key, fingerprint, token, Math.ceil(leaseMs)],
      );
      let claimed: { rows: unknown[] };
      try {
        claimed = await this.#bounded(insert);
      } catch (err) {
        // No one will run the request under this token, yet the claim may have landed (its answer
        // lost) or still land (the statement waits for a connection or a lock): taken back, so the
        // client's retry is not refused (409) for the whole lease.
        this.#disown(key, token, insert, sent, leaseMs);
        throw err;
      }
      if (claimed.rows.length === 1) {
        const { expired } = claimed.rows[0] as { expired: boolean };
        return expired === true
          ? { outcome: "claimed", token, leaseExpired: true }
          : { outcome: "claimed", token };
      }
      const found = await this.#query(
        `SELECT state, fingerprint, response,
           extract(epoch FROM (expires_at - clock_timestamp())) * 1000 AS remaining,
           extract(epoch FROM (settle_by - clock_timestamp())) * 1000 AS settling
         FROM ${t} WHERE key = $1 AND expires_at > clock_timestamp()`,
        [key],
      );
      const row = found.rows[0] as
        | {
            state: string;
            fingerprint: string;
            response: ResponseJson | null;
            remaining: number | string;
            settling: number | string | null;
          }
        | undefined;
      if (row === undefined) continue; // expired between the two statements: claim again
      // Committed with the effect, while its execution still makes the response it will record
      // (for SETTLE_MS at most, and never past its lease): a retry now would replay the outcome the transaction committed
      // (status and Location) instead of the response the first request gets, so it waits as for
      // an execution in flight. Once the execution records its response, or that time is over (it
      // died or hangs after the commit), the committed record is replayed.
      const settling = row.settling === null ? 0 : Number(row.settling);
      if (row.state === "committed" && settling > 0) {
        return { outcome: "in-flight", fingerprint: row.fingerprint, leaseRemainingMs: Math.ceil(settling) };
      }
      if (row.state !== "in-flight" && row.response !== null) {
        return { outcome: "completed", fingerprint: row.fingerprint, response: fromJson(row.response) };
      }
      const remaining = Math.max(0, Math.ceil(Number(row.remaining)));
      return { outcome: "in-flight", fingerprint: row.fingerprint, leaseRemainingMs: remaining };
    }
    throw new StoreUnavailableError(`idempotency: the record of ${key} kept changing under the claim`);
  }

  /**
   * Stores the response the handler sent. A record already committed with this token keeps its
   * committed status: the response sent replaces it only when its status is the same (the
   * faithful bytes of what was committed); true either way.
   */
  complete(key: string, token: string, response: StoredResponse, retentionMs: number): Promise<boolean> {
    return this.#traced("complete", key, async () => {
      const t = this.#table;
      const stored = toJson(this.#kept(response));
      const res = await this.#query(
        `WITH up AS (
           UPDATE ${t} SET state = 'completed', response = $3::jsonb, settle_by = NULL,
             expires_at = clock_timestamp() + make_interval(secs => $4::float8 / 1000)
           WHERE key = $1 AND token = $2
             AND (state = 'in-flight' OR (state = 'committed' AND (response->>'status')::int = $5))
           RETURNING 1)
         SELECT (SELECT count(*) FROM up) AS updated,
           EXISTS (SELECT 1 FROM ${t} WHERE key = $1 AND token = $2 AND state <> 'in-flight') AS kept`,
        [key, token, JSON.stringify(stored), Math.ceil(retentionMs), response.status],
      );
      return updatedOrKept(res);
    });
  }

  /** Drops an in-flight claim; a committed one is never released (false). */
  async release(key: string, token: string): Promise<boolean> {
    const res = await this.#tracedQuery(
      "release",
      key,
      `DELETE FROM ${this.#table} WHERE key = $1 AND token = $2 AND state = 'in-flight'`,
      [key, token],
    );
    return (res.rowCount ?? 0) > 0;
  }

  /**
   * Extends an in-flight claim; true for a claim this token has committed in the handler's own
   * transaction while the handler runs (nothing left to renew, and nothing lost); false for a
   * record completed, released, expired or another token's, as the store interface says.
   */
  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    const t = this.#table;
    const res = await this.#tracedQuery(
      "renew",
      key,
      `WITH up AS (
         UPDATE ${t} SET expires_at = clock_timestamp() + make_interval(secs => $3::float8 / 1000)
         WHERE key = $1 AND token = $2 AND state = 'in-flight' RETURNING 1)
       SELECT (SELECT count(*) FROM up) AS updated,
         EXISTS (SELECT 1 FROM ${t} WHERE key = $1 AND token = $2 AND state = 'committed') AS kept`,
      [key, token, Math.ceil(leaseMs)],
    );
    return updatedOrKept(res);
  }

  /**
   * The response committed or stored under `key` by `token`; undefined while in flight, or
   * another's. The execution asks when it answers with that record (it failed after the commit),
   * so the record is settled: retries replay it from now on.
   */
  async recorded(key: string, token: string): Promise<StoredResponse | undefined> {
    const found = await this.#tracedQuery(
      "recorded",
      key,
      `UPDATE ${this.#table} SET settle_by = NULL
       WHERE key = $1 AND token = $2 AND state <> 'in-flight' RETURNING response`,
      [key, token],
    );
    const row = found.rows[0] as { response: ResponseJson | null } | undefined;
    return row?.response == null ? undefined : fromJson(row.response);
  }

  /**
   * The statement that records the key's outcome, for a handler to run inside its own transaction
   * with any driver (Kysely's `CompiledQuery.raw(text, values)`, …): it must update one row, else
   * the claim is lost and the transaction must roll back ({@link ClaimLostError}).
   * {@link PostgresStore.commit} runs it on a `pg` client.
   */
  commitStatement(
    claim: CommitClaim,
    response: StoredResponse,
    retentionMs: number = this.#retentionMs,
  ): { text: string; values: unknown[] } {
    const stored = toJson(this.#kept(response));
    return {
      text: `UPDATE ${this.#table} SET state = 'committed', response = $3::jsonb, settle_by = LEAST(expires_at, clock_timestamp() + make_interval(secs => $5::float8 / 1000)),
        expires_at = clock_timestamp() + make_interval(secs => $4::float8 / 1000)
        WHERE key = $1 AND token = $2 AND state = 'in-flight' RETURNING key`,
      values: [claim.key, claim.token, JSON.stringify(stored), Math.ceil(retentionMs), SETTLE_MS],
    };
  }

  /**
   * Records the key's outcome (`response`, what a retry replays) in the handler's transaction on
   * `client`, between its `BEGIN` and `COMMIT`: the effect and the record commit together, under
   * the key's unique constraint. Throws {@link ClaimLostError} when the claim is no longer this
   * execution's: roll back. Once committed, the claim is never released; the response the
   * handler then sends replaces the record when its status is the same.
   */
  async commit(
    client: PgQueryable,
    claim: CommitClaim,
    response: StoredResponse,
    retentionMs?: number,
  ): Promise<void> {
    const { text, values } = this.commitStatement(claim, response, retentionMs);
    const res = await this.#traced("commit", claim.key, async () => client.query(text, values));
    if (res.rows.length !== 1) throw new ClaimLostError(claim.key);
  }

  #kept(response: StoredResponse): StoredResponse {
    const max = this.#maxRecordBytes;
    return keptWithin(response, (form) => utf8Length(JSON.stringify(toJson(form))) <= max);
  }

  /**
   * Takes back the claim `token` made with `insert`, a statement whose answer the claim gave up on.
   * Once it answers: nothing to do when it claimed nothing; its record deleted when it claimed.
   * When it failed, whether it committed is unknown: the record is deleted once the statement has
   * had `timeoutMs` since it was sent (a pool whose `statement_timeout` is at most `timeoutMs` has
   * the server end it by then), tried again while the database cannot be reached. Only the record
   * of this token, still in flight, is deleted: no one else's claim, and no committed outcome.
   * Gives up at the lease's end, when the record expires anyway (as it does when the process dies
   * first).
   */
  #disown(
    key: string,
    token: string,
    insert: Promise<{ rows: unknown[] }>,
    sent: number,
    leaseMs: number,
  ): void {
    const until = sent + leaseMs;
    const sleep = (ms: number) => wait(Math.max(0, ms), undefined);
    const landed = insert.then(
      (res) => (res.rows.length === 1 ? ("claimed" as const) : ("nothing" as const)),
      () => "unknown" as const,
    );
    void (async () => {
      // The lease's timer is cleared once the statement answers, not left to run out.
      const answered = new AbortController();
      const expired = wait(leaseMs, "expired" as const, answered.signal).catch(() => "expired" as const);
      const outcome = await Promise.race([landed, expired]);
      answered.abort();
      if (outcome === "nothing" || outcome === "expired") return;
      if (outcome === "unknown") await sleep(sent + this.#timeoutMs - performance.now());
      for (let delay = 100; performance.now() < until; delay = Math.min(delay * 2, 5000)) {
        try {
          await this.#query(
            `DELETE FROM ${this.#table} WHERE key = $1 AND token = $2 AND state = 'in-flight'`,
            [key, token],
          );
          return;
        } catch {
          await sleep(Math.min(delay, until - performance.now()));
        }
      }
    })();
  }

  /** One call of the store's API on the `svc:idempotency:store` tracing channels. */
  #traced<T>(operation: IdempotencyStoreCall["operation"], key: string, call: () => Promise<T>): Promise<T> {
    return storeCalls.traced({ store: "postgres", operation, key }, call);
  }

  #tracedQuery(
    operation: IdempotencyStoreCall["operation"],
    key: string,
    text: string,
    values: unknown[],
  ): Promise<{ rows: unknown[]; rowCount?: number | null }> {
    return this.#traced(operation, key, () => this.#query(text, values));
  }

  async #query(text: string, values: unknown[]): Promise<{ rows: unknown[]; rowCount?: number | null }> {
    return this.#bounded(this.#send(text, values));
  }

  /** The pool's answer to one statement; a client that throws instead of rejecting, as a rejection. */
  #send(text: string, values: unknown[]): Promise<{ rows: unknown[]; rowCount?: number | null }> {
    try {
      return Promise.resolve(this.#pool.query(text, values));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** `pending`, given up after `timeoutMs`; any failure as a {@link StoreUnavailableError}. */
  async #bounded<T>(pending: Promise<T>): Promise<T> {
    try {
      return await withinTime(
        pending,
        this.#timeoutMs,
        () => new StoreUnavailableError(`idempotency store did not answer within ${this.#timeoutMs} ms`),
      );
    } catch (err) {
      if (err instanceof StoreUnavailableError) throw err;
      throw new StoreUnavailableError("idempotency store failed", { cause: err });
    }
  }
}

/** Whether a statement's `updated` count is above 0, or its record is `kept` by this token already. */
function updatedOrKept(res: { rows: unknown[] }): boolean {
  const row = res.rows[0] as { updated: string | number; kept: boolean } | undefined;
  return row !== undefined && (Number(row.updated) > 0 || row.kept === true);
}

/**
 * `value` after `ms`, on a timer that keeps no process alive (`unref` where the runtime has it:
 * a timer is a plain number on some Fetch runtimes); rejected when `signal` aborts, its timer
 * cleared. `node:timers/promises` without the import, which would keep this module from loading
 * where there is no Node.js.
 * @see https://html.spec.whatwg.org/multipage/timers-and-user-prompts.html#dom-settimeout
 */
function wait<T>(ms: number, value: T, signal?: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", abort);
      resolve(value);
    }, ms) as { unref?: () => void } | number;
    (timer as { unref?: () => void }).unref?.();
    const abort = () => {
      clearTimeout(timer as Parameters<typeof clearTimeout>[0]);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", abort, { once: true });
  });
}
