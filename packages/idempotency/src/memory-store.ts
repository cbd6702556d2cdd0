import type { ClaimResult, IdempotencyStore, StoredResponse } from "./store.js";

/**
 * Options of {@link MemoryStore}.
 *
 * @example new MemoryStore({ maxEntries: 50_000 })
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export interface MemoryStoreOptions {
  /**
   * Most records kept; past it the oldest completed records go first, then the oldest of all.
   * @default 10000
   */
  maxEntries?: number;
  /**
   * The clock in milliseconds, for tests.
   * @default Date.now
   */
  now?: () => number;
}

type Entry =
  | { state: "in-flight"; fingerprint: string; token: string; expiresAt: number }
  | { state: "completed"; fingerprint: string; token: string; expiresAt: number; response: StoredResponse };

/**
 * An in-process {@link IdempotencyStore}: bounded, with per-record expiry, no timers. Right for
 * one process; a fleet behind a load balancer needs a shared store such as {@link RedisStore}.
 *
 * @example app.post("/orders", idempotency({ store: new MemoryStore({ maxEntries: 50_000 }) }), create);
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export class MemoryStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  readonly #max: number;
  readonly #now: () => number;
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
    const max = options.maxEntries ?? 10_000;
    if (!Number.isInteger(max) || max < 1) {
      throw new TypeError(`MemoryStore: maxEntries must be a positive integer, got ${String(max)}`);
    }
    this.#max = max;
    this.#now = options.now ?? Date.now;
  }

  /** Live records (expired ones are dropped lazily). */
  get size(): number {
    return this.#entries.size;
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
    this.#makeRoom(now);
    this.#fence += 1;
    const token = String(this.#fence);
    const expiresAt = now + leaseMs;
    this.#entries.set(key, { state: "in-flight", fingerprint, token, expiresAt });
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
    this.#entries.delete(key);
    const expiresAt = now + retentionMs;
    const completed: Entry = {
      state: "completed",
      fingerprint: entry.fingerprint,
      token,
      expiresAt,
      // A copy, so the caller's buffer can change afterwards; the typed-array copy is native.
      response: { ...response, body: new Uint8Array(response.body) },
    };
    this.#entries.set(key, completed);
    this.#completed.push([key, completed]);
    this.#compact();
    if (expiresAt < this.#noExpiryBefore) this.#noExpiryBefore = expiresAt;
    return true;
  }

  async release(key: string, token: string): Promise<boolean> {
    const entry = this.#live(key, this.#now());
    if (entry?.state !== "in-flight" || entry.token !== token) return false;
    this.#entries.delete(key);
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
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
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

  #makeRoom(now: number): void {
    if (this.#entries.size < this.#max) return;
    if (this.#noExpiryBefore <= now) {
      let earliest = Number.POSITIVE_INFINITY;
      for (const [key, entry] of this.#entries) {
        if (entry.expiresAt <= now) this.#entries.delete(key);
        else if (entry.expiresAt < earliest) earliest = entry.expiresAt;
      }
      this.#noExpiryBefore = earliest;
    }
    if (this.#entries.size < this.#max) return;
    // An evicted in-flight record would let a duplicate run, so completed records go first.
    const queue = this.#completed;
    while (this.#head < queue.length) {
      const [key, entry] = queue[this.#head] as [string, Entry];
      queue[this.#head] = undefined as unknown as [string, Entry];
      this.#head += 1;
      if (this.#entries.get(key) === entry) {
        this.#entries.delete(key);
        this.#compact();
        return;
      }
    }
    this.#compact();
    const oldest = this.#entries.keys().next();
    if (!oldest.done) this.#entries.delete(oldest.value);
  }
}
