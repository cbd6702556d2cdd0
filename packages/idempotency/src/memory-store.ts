import { checkOptionNames } from "@svc/errors";
import { optionError } from "./option-error.js";
import { type ClaimResult, type IdempotencyStore, type StoredResponse, withoutBody } from "./store.js";

/** Bytes counted for a record besides its key, fingerprint, token, headers and body. */
export const RECORD_OVERHEAD_BYTES = 256;

/**
 * Options of {@link MemoryStore}.
 *
 * @example new MemoryStore({ maxEntries: 50_000, maxBytes: 128 * 1024 * 1024 })
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export interface MemoryStoreOptions {
  /**
   * Most records kept; past it expired records go, then the oldest completed ones. In-flight
   * records are never evicted: a store full of them refuses new keys ({@link StoreFullError}, a
   * 503 from the middleware) rather than let a retry of one run again.
   * @default 10000
   */
  maxEntries?: number;
  /**
   * Most bytes kept, over all records: each counts its key, fingerprint, token, replayed headers
   * and body, plus 256 bytes. Past it the oldest completed records go; never an in-flight one,
   * as with `maxEntries`.
   * @example new MemoryStore({ maxBytes: 8 * 1024 * 1024 }) // 8 MiB
   * @default 33554432 (32 MiB)
   */
  maxBytes?: number;
  /**
   * Largest record kept whole. A larger response is stored without its body (`bodyOmitted`):
   * its replay sends the status and headers only, and the handler never runs twice.
   * @example new MemoryStore({ maxRecordBytes: 256 * 1024 })
   * @default 1048576 (1 MiB), at most `maxBytes`
   */
  maxRecordBytes?: number;
  /**
   * The clock in milliseconds, for tests.
   * @default Date.now
   */
  now?: () => number;
}

type Entry =
  | { state: "in-flight"; fingerprint: string; token: string; expiresAt: number; bytes: number }
  | {
      state: "completed";
      fingerprint: string;
      token: string;
      expiresAt: number;
      bytes: number;
      response: StoredResponse;
    };

function headerBytes(headers: StoredResponse["headers"]): number {
  let n = 0;
  for (const [name, value] of Object.entries(headers)) {
    n += name.length + 4;
    for (const v of Array.isArray(value) ? value : [value]) n += Buffer.byteLength(v) + 4;
  }
  return n;
}

/**
 * Thrown by {@link MemoryStore.claim} when the store is full of in-flight records (nothing has
 * expired, no completed record is left to evict). The middleware handles it as any store failure
 * (`onStoreError`: a 503 with `Retry-After`, or an unprotected run).
 *
 * @example try { await store.claim(key, fp, 60_000); } catch (err) { if (err instanceof StoreFullError) shed(); }
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.7
 */
export class StoreFullError extends Error {
  constructor(maxEntries: number, maxBytes: number) {
    super(
      `MemoryStore is full of in-flight records (maxEntries ${maxEntries}, maxBytes ${maxBytes}); none is evicted, since a retry of an evicted one would run again`,
    );
    this.name = "StoreFullError";
  }
}

/**
 * An in-process {@link IdempotencyStore}: bounded in records (`maxEntries`, 10,000) and in bytes
 * (`maxBytes`, 32 MiB; no record over `maxRecordBytes`, 1 MiB), with per-record expiry, no timers. Right for
 * one process; a fleet behind a load balancer needs a shared store such as {@link RedisStore}.
 *
 * @example app.post("/orders", idempotency({ store: new MemoryStore({ maxEntries: 50_000 }) }), create);
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export class MemoryStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  readonly #max: number;
  readonly #maxBytes: number;
  readonly #maxRecordBytes: number;
  readonly #now: () => number;
  #bytes = 0;
  #fence = 0;
  /**
   * No record expires before this instant: the exact earliest expiry after a sweep, lowered as
   * records are written (records deleted since may leave it early, never late). A full store
   * sweeps only once it has passed, so a store full of live records does not walk every record
   * on each claim.
   */
  #noExpiryBefore = Number.POSITIVE_INFINITY;
  /**
   * Completed records in the order they completed, oldest at `#head`: the eviction order, without
   * walking the map from its start (past the slots its deletions left) on every eviction. A pair
   * whose record was replaced or dropped since is skipped when reached.
   */
  #completed: Array<[string, Entry]> = [];
  #head = 0;

  constructor(options: MemoryStoreOptions = {}) {
    checkOptionNames(
      "idempotency",
      options,
      ["maxEntries", "maxBytes", "maxRecordBytes", "now"],
      "MemoryStore",
    );
    const max = options.maxEntries ?? 10_000;
    if (typeof max !== "number" || !Number.isSafeInteger(max) || max < 1) {
      throw optionError("MemoryStore", "maxEntries", max, "a positive integer");
    }
    const maxBytes = options.maxBytes ?? 33_554_432;
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 4096) {
      throw optionError("MemoryStore", "maxBytes", maxBytes, "an integer of at least 4096 (bytes)");
    }
    const maxRecordBytes = options.maxRecordBytes ?? Math.min(1_048_576, maxBytes);
    if (!Number.isSafeInteger(maxRecordBytes) || maxRecordBytes < 1024 || maxRecordBytes > maxBytes) {
      throw optionError(
        "MemoryStore",
        "maxRecordBytes",
        maxRecordBytes,
        `an integer from 1024 to maxBytes (${maxBytes})`,
      );
    }
    const now = options.now ?? Date.now;
    if (typeof now !== "function") throw optionError("MemoryStore", "now", now, "a function () => number");
    this.#max = max;
    this.#maxBytes = maxBytes;
    this.#maxRecordBytes = maxRecordBytes;
    this.#now = now;
  }

  /** Live records (expired ones are dropped lazily). */
  get size(): number {
    return this.#entries.size;
  }

  /** Bytes the records hold, as counted against `maxBytes`. */
  get bytes(): number {
    return this.#bytes;
  }

  async claim(key: string, fingerprint: string, leaseMs: number): Promise<ClaimResult> {
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry?.state === "completed") {
      return { outcome: "completed", fingerprint: entry.fingerprint, response: entry.response };
    }
    if (entry) {
      return {
        outcome: "in-flight",
        fingerprint: entry.fingerprint,
        leaseRemainingMs: entry.expiresAt - now,
      };
    }
    this.#fence += 1;
    const token = String(this.#fence);
    const bytes = RECORD_OVERHEAD_BYTES + key.length + fingerprint.length + token.length;
    // draft §2.7: "If the request is retried, while the original request is still being
    // processed, the resource server SHOULD reply with an HTTP 409 status code". Evicting an
    // in-flight record would let that retry claim the key and run a second time.
    if (!this.#makeRoom(now, bytes)) throw new StoreFullError(this.#max, this.#maxBytes);
    const expiresAt = now + leaseMs;
    this.#set(key, { state: "in-flight", fingerprint, token, expiresAt, bytes });
    if (expiresAt < this.#noExpiryBefore) this.#noExpiryBefore = expiresAt;
    return { outcome: "claimed", token };
  }

  async complete(
    key: string,
    token: string,
    response: StoredResponse,
    retentionMs: number,
  ): Promise<boolean> {
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry?.state !== "in-flight" || entry.token !== token) return false;
    // Re-insert so Map order stays oldest-first for eviction.
    this.#delete(key, entry);
    const expiresAt = now + retentionMs;
    const base = entry.bytes + headerBytes(response.headers);
    let kept: StoredResponse =
      base + response.body.byteLength > this.#maxRecordBytes ? withoutBody(response) : response;
    // Completed records may make room for this one; never an in-flight one (a duplicate would run).
    if (!this.#makeRoom(now, base + kept.body.byteLength) && kept.body.byteLength > 0) {
      kept = {
        status: response.status,
        headers: response.headers,
        body: new Uint8Array(),
        bodyOmitted: true,
      };
    }
    const completed: Entry = {
      state: "completed",
      fingerprint: entry.fingerprint,
      token,
      expiresAt,
      bytes: base + kept.body.byteLength,
      // A copy, so the caller's buffer can change afterwards; the typed-array copy is native.
      response: { ...kept, headers: { ...kept.headers }, body: new Uint8Array(kept.body) },
    };
    this.#set(key, completed);
    this.#completed.push([key, completed]);
    this.#compact();
    if (expiresAt < this.#noExpiryBefore) this.#noExpiryBefore = expiresAt;
    return true;
  }

  async release(key: string, token: string): Promise<boolean> {
    const entry = this.#live(key, this.#now());
    if (entry?.state !== "in-flight" || entry.token !== token) return false;
    this.#delete(key, entry);
    return true;
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    const now = this.#now();
    const entry = this.#live(key, now);
    if (entry?.state !== "in-flight" || entry.token !== token) return false;
    // In place: an in-flight record is not in the completion queue, and its Map position (claim
    // order) is only the last-resort eviction order.
    entry.expiresAt = now + leaseMs;
    // A later expiry keeps #noExpiryBefore true; a shorter lease than before must lower it.
    if (entry.expiresAt < this.#noExpiryBefore) this.#noExpiryBefore = entry.expiresAt;
    return true;
  }

  #live(key: string, now: number): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAt <= now) {
      this.#delete(key, entry);
      return undefined;
    }
    return entry;
  }

  #set(key: string, entry: Entry): void {
    const old = this.#entries.get(key);
    if (old) this.#bytes -= old.bytes;
    this.#entries.set(key, entry);
    this.#bytes += entry.bytes;
  }

  #delete(key: string, entry: Entry): void {
    if (this.#entries.get(key) !== entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  #fits(bytes: number): boolean {
    return this.#entries.size < this.#max && this.#bytes + bytes <= this.#maxBytes;
  }

  /** Drops the queue's consumed front, and its stale pairs when they outnumber the live records. */
  #compact(): void {
    const queue = this.#completed;
    if (this.#head > 1024 && this.#head * 2 > queue.length) {
      queue.splice(0, this.#head);
      this.#head = 0;
    }
    if (queue.length - this.#head > 2 * this.#max + 1024) {
      this.#completed = queue.slice(this.#head).filter(([key, entry]) => this.#entries.get(key) === entry);
      this.#head = 0;
    }
  }

  /**
   * Frees one record slot and `bytes` bytes: expired records first, then the oldest completed
   * ones; never an in-flight one (a duplicate would then run). False when it could not.
   */
  #makeRoom(now: number, bytes: number): boolean {
    if (this.#fits(bytes)) return true;
    if (this.#noExpiryBefore <= now) {
      let earliest = Number.POSITIVE_INFINITY;
      for (const [key, entry] of this.#entries) {
        if (entry.expiresAt <= now) this.#delete(key, entry);
        else if (entry.expiresAt < earliest) earliest = entry.expiresAt;
      }
      this.#noExpiryBefore = earliest;
    }
    const queue = this.#completed;
    while (!this.#fits(bytes) && this.#head < queue.length) {
      const [key, entry] = queue[this.#head] as [string, Entry];
      queue[this.#head] = undefined as unknown as [string, Entry];
      this.#head += 1;
      this.#delete(key, entry);
    }
    this.#compact();
    return this.#fits(bytes);
  }
}
