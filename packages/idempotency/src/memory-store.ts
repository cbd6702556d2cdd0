import { checkOptionNames } from "@svc/kernel/internal";
import { utf8Length } from "./bytes.js";
import { optionError } from "./option-error.js";
import { type ClaimResult, type IdempotencyStore, keptWithin, type StoredResponse } from "./store.js";

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
   * Most records kept; past it expired records go, then completed ones (those of a client past
   * its share, `maxEntriesPerScope`, first; then the oldest). In-flight
   * records are never evicted: a store full of them refuses new keys ({@link StoreFullError}, a
   * 503 from the middleware) rather than let a retry of one run again.
   * @default 10000
   */
  maxEntries?: number;
  /**
   * Most bytes kept, over all records: each counts its key, fingerprint, token, replayed headers
   * and body, plus 256 bytes. Past it completed records go (a client past its share,
   * `maxBytesPerScope`, first); never an in-flight one, as with `maxEntries`. A completed record
   * that still does not fit is kept without its body, else with its status alone: the store never
   * holds more.
   * @example new MemoryStore({ maxBytes: 8 * 1024 * 1024 }) // 8 MiB
   * @default 33554432 (32 MiB)
   */
  maxBytes?: number;
  /**
   * Largest record kept whole, counted as `maxBytes` counts (key, fingerprint, token, replayed
   * headers and body, plus 256 bytes). A larger response is stored without its body
   * (`bodyOmitted`): its replay sends the status and headers only, and the handler never runs
   * twice. One whose replayed headers alone pass it (a long `Location`) is stored with its status
   * alone, so no record passes it.
   * @example new MemoryStore({ maxRecordBytes: 256 * 1024 })
   * @default 1048576 (1 MiB), at most `maxBytes`
   */
  maxRecordBytes?: number;
  /**
   * A client's share of `maxEntries`: the records of one scope (the part of a key before its first
   * `:`, the principal the middleware scopes keys by) it may hold before its records are the
   * first to go. A client past its share gives up its own oldest completed records for its new
   * ones, and any client's new record takes those of a client past its share first, so a client
   * within its share never loses a record to another's traffic while some client is past its
   * share; only with every client within its share (the store full of at least
   * `maxEntries / maxEntriesPerScope` clients) does the oldest completed record go, whoever's.
   * A client uses the room nobody else needs. Its in-flight records never exceed it: a claim past
   * it is refused ({@link ScopeFullError}, a 503 from the middleware), since they cannot be evicted.
   * All unauthenticated callers are one scope (`"anonymous"`). `maxEntries` turns the share off.
   * @example new MemoryStore({ maxEntries: 10_000, maxEntriesPerScope: 500 }) // twenty clients at their share fill it
   * @default a tenth of maxEntries, rounded up (1000)
   */
  maxEntriesPerScope?: number;
  /**
   * A client's share of `maxBytes`, counted as `maxBytes` counts; past it, its records are the
   * first to go, as with `maxEntriesPerScope`.
   * @example new MemoryStore({ maxBytes: 64 * 1024 * 1024, maxBytesPerScope: 4 * 1024 * 1024 })
   * @default a tenth of maxBytes, rounded up (3355444, 3.2 MiB)
   */
  maxBytesPerScope?: number;
  /**
   * The clock in milliseconds, for tests.
   * @default Date.now
   */
  now?: () => number;
}

type Entry =
  | {
      state: "in-flight";
      scope: string;
      fingerprint: string;
      token: string;
      expiresAt: number;
      bytes: number;
    }
  | {
      state: "completed";
      scope: string;
      fingerprint: string;
      token: string;
      expiresAt: number;
      bytes: number;
      response: StoredResponse;
    };

/** What one scope (one client) holds: its counts and its completed records, oldest first. */
interface ScopeUse {
  entries: number;
  bytes: number;
  inFlight: number;
  completed: number;
  queue: Array<[string, Entry] | undefined>;
  head: number;
}

/** The scope of a key: the part before its first `:` (the middleware writes `scope:method:route:key`). */
function scopeOfKey(key: string): string {
  const colon = key.indexOf(":");
  return colon === -1 ? "" : key.slice(0, colon);
}

function headerBytes(headers: StoredResponse["headers"]): number {
  let n = 0;
  for (const [name, value] of Object.entries(headers)) {
    n += name.length + 4;
    for (const v of Array.isArray(value) ? value : [value]) n += utf8Length(v) + 4;
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
 * Thrown by {@link MemoryStore.claim} when the claiming scope (client) already holds
 * `maxEntriesPerScope` in-flight records: no other client's room is taken for them. A
 * {@link StoreFullError}, answered the same way by the middleware (a 503 with `Retry-After`).
 *
 * @example if (err instanceof ScopeFullError) log.warn({ scope: err.scope }, "one client holds its share in flight");
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.7
 */
export class ScopeFullError extends StoreFullError {
  /** The scope (the part of the key before its first `:`). */
  readonly scope: string;

  constructor(scope: string, maxEntriesPerScope: number, maxEntries: number, maxBytes: number) {
    super(maxEntries, maxBytes);
    this.message = `MemoryStore: scope ${JSON.stringify(scope)} holds its share of in-flight records (maxEntriesPerScope ${maxEntriesPerScope}); none is evicted, and no other client's room is taken`;
    this.name = "ScopeFullError";
    this.scope = scope;
  }
}

/** `value` when it is an integer from `min` to `max` (the option `bound` names), else the option's error. */
function integerWithin(name: string, value: unknown, min: number, max: number, bound: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw optionError("MemoryStore", name, value, `an integer from ${min} to ${bound} (${max})`);
  }
  return value;
}

/**
 * An in-process {@link IdempotencyStore}: bounded in records (`maxEntries`, 10,000) and in bytes
 * (`maxBytes`, 32 MiB; no record over `maxRecordBytes`, 1 MiB), with per-record expiry, no timers,
 * and a share of both bounds per client (`maxEntriesPerScope`, `maxBytesPerScope`) so that one
 * client's keys cannot evict another's records. Right for one process; a fleet behind a load
 * balancer needs a shared store such as {@link RedisStore}.
 *
 * @example app.post("/orders", idempotency({ store: new MemoryStore({ maxEntries: 50_000 }) }), create);
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export class MemoryStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  readonly #max: number;
  readonly #maxBytes: number;
  readonly #maxRecordBytes: number;
  readonly #maxScopeEntries: number;
  readonly #maxScopeBytes: number;
  readonly #now: () => number;
  /** Every scope holding a record, with what it holds (at most one per record). */
  readonly #scopes = new Map<string, ScopeUse>();
  /** Scopes past their share that hold a completed record: the first whose records go. */
  readonly #pastShare = new Set<string>();
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
      ["maxEntries", "maxBytes", "maxRecordBytes", "maxEntriesPerScope", "maxBytesPerScope", "now"],
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
    const maxRecordBytes = integerWithin(
      "maxRecordBytes",
      options.maxRecordBytes ?? Math.min(1_048_576, maxBytes),
      1024,
      maxBytes,
      "maxBytes",
    );
    const maxScopeEntries = integerWithin(
      "maxEntriesPerScope",
      options.maxEntriesPerScope ?? Math.ceil(max / 10),
      1,
      max,
      "maxEntries",
    );
    const maxScopeBytes = integerWithin(
      "maxBytesPerScope",
      options.maxBytesPerScope ?? Math.ceil(maxBytes / 10),
      1,
      maxBytes,
      "maxBytes",
    );
    const now = options.now ?? Date.now;
    if (typeof now !== "function") throw optionError("MemoryStore", "now", now, "a function () => number");
    this.#max = max;
    this.#maxBytes = maxBytes;
    this.#maxRecordBytes = maxRecordBytes;
    this.#maxScopeEntries = maxScopeEntries;
    this.#maxScopeBytes = maxScopeBytes;
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
    const scope = scopeOfKey(key);
    // draft §2.7: "If the request is retried, while the original request is still being
    // processed, the resource server SHOULD reply with an HTTP 409 status code". Evicting an
    // in-flight record would let that retry claim the key and run a second time, so a client's
    // in-flight records stay within its share: never evicted, they would otherwise crowd out
    // every other client's new keys.
    if ((this.#scopes.get(scope)?.inFlight ?? 0) >= this.#maxScopeEntries) {
      this.#sweep(now);
      if ((this.#scopes.get(scope)?.inFlight ?? 0) >= this.#maxScopeEntries) {
        throw new ScopeFullError(scope, this.#maxScopeEntries, this.#max, this.#maxBytes);
      }
    }
    this.#fence += 1;
    const token = String(this.#fence);
    const bytes = RECORD_OVERHEAD_BYTES + key.length + fingerprint.length + token.length;
    if (!this.#makeRoom(now, bytes, scope)) throw new StoreFullError(this.#max, this.#maxBytes);
    const expiresAt = now + leaseMs;
    this.#set(key, { state: "in-flight", scope, fingerprint, token, expiresAt, bytes });
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
    // The record's bytes as maxBytes and maxRecordBytes count them: the in-flight record's (key,
    // fingerprint, token, overhead), its replayed headers and its body.
    const sizeOf = (form: StoredResponse) => entry.bytes + headerBytes(form.headers) + form.body.byteLength;
    let kept = keptWithin(response, (form) => sizeOf(form) <= this.#maxRecordBytes);
    // Completed records may make room for this one; never an in-flight one (a duplicate would run).
    // Past what is left, a smaller form: without the body, else the status alone, which fits in
    // the room the in-flight record held, so maxBytes is never passed.
    if (!this.#makeRoom(now, sizeOf(kept), entry.scope)) {
      kept = keptWithin(kept, (form) => this.#makeRoom(now, sizeOf(form), entry.scope));
    }
    const completed: Entry = {
      state: "completed",
      scope: entry.scope,
      fingerprint: entry.fingerprint,
      token,
      expiresAt,
      bytes: sizeOf(kept),
      // A copy, so the caller's buffer can change afterwards; the typed-array copy is native.
      response: { ...kept, headers: { ...kept.headers }, body: new Uint8Array(kept.body) },
    };
    this.#set(key, completed);
    this.#completed.push([key, completed]);
    const use = this.#scopes.get(completed.scope) as ScopeUse;
    use.queue.push([key, completed]);
    // Pairs of records gone through the shared queue or by expiry: dropped once they outnumber
    // the scope's live completed records, so its queue stays within 2 × its records + 64.
    if (use.queue.length - use.head > 2 * use.completed + 64) {
      use.queue = use.queue
        .slice(use.head)
        .filter((pair) => pair !== undefined && this.#entries.get(pair[0]) === pair[1]);
      use.head = 0;
    }
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
    if (old) this.#delete(key, old);
    this.#entries.set(key, entry);
    this.#bytes += entry.bytes;
    let use = this.#scopes.get(entry.scope);
    if (use === undefined) {
      use = { entries: 0, bytes: 0, inFlight: 0, completed: 0, queue: [], head: 0 };
      this.#scopes.set(entry.scope, use);
    }
    use.entries += 1;
    use.bytes += entry.bytes;
    if (entry.state === "in-flight") use.inFlight += 1;
    else use.completed += 1;
    this.#rank(entry.scope, use);
  }

  #delete(key: string, entry: Entry): void {
    if (this.#entries.get(key) !== entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
    const use = this.#scopes.get(entry.scope) as ScopeUse;
    use.entries -= 1;
    use.bytes -= entry.bytes;
    if (entry.state === "in-flight") use.inFlight -= 1;
    else use.completed -= 1;
    if (use.entries === 0) {
      this.#scopes.delete(entry.scope);
      this.#pastShare.delete(entry.scope);
      return;
    }
    this.#rank(entry.scope, use);
  }

  /** Whether a scope holding `use` (and `entries`, `bytes` more) is past its share. */
  #pastItsShare(use: ScopeUse, entries = 0, bytes = 0): boolean {
    return use.entries + entries > this.#maxScopeEntries || use.bytes + bytes > this.#maxScopeBytes;
  }

  /** Keeps {@link MemoryStore.#pastShare} to the scopes past their share with a completed record. */
  #rank(scope: string, use: ScopeUse): void {
    if (use.completed > 0 && this.#pastItsShare(use)) this.#pastShare.add(scope);
    else this.#pastShare.delete(scope);
  }

  /** Evicts the oldest completed record of a scope; false when it has none. */
  #evictOldestOf(scope: string): boolean {
    const use = this.#scopes.get(scope);
    if (use === undefined || use.completed === 0) return false;
    const { queue } = use;
    while (use.head < queue.length) {
      const pair = queue[use.head];
      queue[use.head] = undefined;
      use.head += 1;
      if (pair === undefined) continue;
      const [key, entry] = pair;
      if (this.#entries.get(key) !== entry) continue; // replaced, released or evicted since
      this.#delete(key, entry);
      if (use.head > 64 && use.head * 2 > queue.length) {
        queue.splice(0, use.head);
        use.head = 0;
      }
      return true;
    }
    return false;
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
    const live = (pair: [string, Entry] | undefined): pair is [string, Entry] =>
      pair !== undefined && this.#entries.get(pair[0]) === pair[1];
    if (queue.length - this.#head > 2 * this.#max + 1024) {
      this.#completed = queue.slice(this.#head).filter(live);
      this.#head = 0;
      // The scopes' queues hold the same pairs: stale ones (evicted through the other queue,
      // released, expired) go at the same time, so together they stay within 2 × maxEntries + 1024.
      for (const use of this.#scopes.values()) {
        use.queue = use.queue.slice(use.head).filter(live);
        use.head = 0;
      }
    }
  }

  /** Drops the expired records, once the earliest expiry has passed. */
  #sweep(now: number): void {
    if (this.#noExpiryBefore > now) return;
    let earliest = Number.POSITIVE_INFINITY;
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt <= now) this.#delete(key, entry);
      else if (entry.expiresAt < earliest) earliest = entry.expiresAt;
    }
    this.#noExpiryBefore = earliest;
  }

  /**
   * Frees one record slot and `bytes` bytes for a record of `scope`: expired records first; then
   * completed ones, in this order: the scope's own oldest while the new record puts it past its
   * share, the oldest of a scope past its share, the oldest of all. Never an in-flight one (a
   * duplicate would then run: draft §2.7), never a record of a client within its share while
   * another is past its own. False when it could not.
   */
  #makeRoom(now: number, bytes: number, scope: string): boolean {
    if (this.#fits(bytes)) return true;
    this.#sweep(now);
    const queue = this.#completed;
    while (!this.#fits(bytes)) {
      const own = this.#scopes.get(scope);
      if (own !== undefined && this.#pastItsShare(own, 1, bytes) && this.#evictOldestOf(scope)) continue;
      const [other] = this.#pastShare;
      if (other !== undefined && this.#evictOldestOf(other)) continue;
      if (this.#head >= queue.length) break;
      const pair = queue[this.#head] as [string, Entry];
      queue[this.#head] = undefined as unknown as [string, Entry];
      this.#head += 1;
      this.#delete(pair[0], pair[1]);
    }
    this.#compact();
    return this.#fits(bytes);
  }
}
