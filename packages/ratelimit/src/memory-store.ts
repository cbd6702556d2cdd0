import { checkOptionNames } from "@svc/kernel/internal";
import { decideKey, type KeyState, refundKey } from "./key-state.js";
import { refused } from "./option-error.js";
import type { Decision, RateLimitPolicy, RateLimitStore } from "./types.js";

/**
 * Options of {@link MemoryStore}.
 * @example
 * new MemoryStore({ maxKeys: 200_000 });
 * @see https://blog.cloudflare.com/counting-things-a-lot-of-different-things/
 */
export interface MemoryStoreOptions {
  /**
   * The most keys held at once; memory grows with live keys up to this bound and never past it:
   * about 110 bytes a key plus the key string, at most 256 characters through a limiter (a longer
   * key is counted under its SHA-256 digest), so at most about `maxKeys × 640` bytes.
   * @default 1_000_000
   */
  maxKeys?: number;
  /**
   * How many least-recently-used keys eviction looks at (from the cold end) when the store is full.
   * @default 32
   */
  evictionScan?: number;
}

/**
 * Thrown (and handled by the limiter's `failMode`) when the store is full and every key eviction
 * looked at is still limited in its current window: evicting one would hand a limited client a
 * fresh quota.
 * @example
 * try { store.consume(key, 1, policy, Date.now()); } catch (err) { if (err instanceof StoreFullError) shed(); }
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.6.4
 */
export class StoreFullError extends Error {
  constructor(maxKeys: number) {
    super(`MemoryStore is full (${maxKeys} keys) of clients that are limited in their current window`);
    this.name = "StoreFullError";
  }
}

const NONE = -1;
/** Floating point slack for the sliding window and GCRA arithmetic (milliseconds or units). */
const EPS = 1e-6;
const INITIAL_SLOTS = 1024;
const FIXED = 0;
const SLIDING = 1;
const GCRA = 2;
/** The algorithm of a slot, as kept in a byte. */
const ALGORITHM_CODE = { "fixed-window": FIXED, "sliding-window": SLIDING, gcra: GCRA } as const;

/**
 * The embedded store: one process, O(1) per decision, no timer per key (no timer at all), a hard
 * bound on keys.
 *
 * State lives in typed arrays indexed by a slot number (one `Map<string, slot>` lookup per
 * decision), about 110 bytes per key plus the key string (at most 256 characters through a
 * limiter, which counts a longer key under its digest). Slots are kept in least-recently-used
 * order through an intrusive list. When the store is full and a new key arrives, eviction looks at
 * up to `evictionScan` keys from the cold end and
 * 1. drops the first key whose state has expired (nothing is lost), else
 * 2. drops the coldest key that still has quota left in its window (that client's count starts
 *    over: it may get up to its remaining quota again), else
 * 3. evicts nothing and fails the decision with {@link StoreFullError}, which the middleware's
 *    `failMode` turns into a pass (`open`) or a 503 (`closed`).
 * A key that is limited in its current window is never evicted, so eviction cannot reset it.
 *
 * @example
 * const store = new MemoryStore({ maxKeys: 200_000 });
 * app.use(rateLimit({ limit: 100, windowMs: 60_000, store }));
 * @see https://blog.cloudflare.com/counting-things-a-lot-of-different-things/
 */
export class MemoryStore implements RateLimitStore {
  readonly maxKeys: number;
  readonly #scan: number;
  readonly #index = new Map<string, number>();
  #keys: (string | undefined)[] = [];
  /** Window start (window algorithms) or theoretical arrival time (GCRA), epoch ms. */
  #t: Float64Array;
  /**
   * Count in the current window. Float64, not Uint32: a limit may be any safe integer (a byte
   * quota, with `cost` the request's size, passes 2^32 at 4 GiB), and a Uint32 count wraps there,
   * back to a fresh quota (RFC 6585 §4: the limit is "too many requests in a given amount of time").
   */
  #c: Float64Array;
  /** Count in the previous window (sliding window only); Float64 as `#c`. */
  #p: Float64Array;
  /**
   * What eviction judges the slot by, copied from the policy of the decision that last touched
   * it: the algorithm ({@link ALGORITHM_CODE}), the window (ms) and the room a decision needs
   * (the limit; for GCRA the tolerance `windowMs / limit × (burst - 1)`). Per slot, not an index
   * into a table of policy objects: a per-request `limit(req)` makes a policy per limit, and a
   * bounded table shared between them judged one client by another's limit (a client limited
   * at 1 counted as having room under someone's 5000, evicted, and handed a fresh quota).
   */
  #alg: Uint8Array;
  #win: Float64Array;
  #room: Float64Array;
  #prev: Int32Array;
  #next: Int32Array;
  #head = NONE;
  #tail = NONE;
  #allocated = 0;
  #free: number[] = [];

  constructor(options: MemoryStoreOptions = {}) {
    if (typeof options !== "object" || options === null)
      throw refused("MemoryStore", "options", options, "an object");
    checkOptionNames("ratelimit", options, ["maxKeys", "evictionScan"], "MemoryStore");
    const maxKeys = options.maxKeys ?? 1_000_000;
    if (typeof maxKeys !== "number" || !Number.isSafeInteger(maxKeys) || maxKeys < 1)
      throw refused("MemoryStore", "maxKeys", maxKeys, "a positive integer");
    const scan = options.evictionScan ?? 32;
    if (typeof scan !== "number" || !Number.isSafeInteger(scan) || scan < 1)
      throw refused("MemoryStore", "evictionScan", scan, "a positive integer");
    this.maxKeys = maxKeys;
    this.#scan = scan;
    const size = Math.min(maxKeys, INITIAL_SLOTS);
    this.#t = new Float64Array(size);
    this.#c = new Float64Array(size);
    this.#p = new Float64Array(size);
    this.#alg = new Uint8Array(size);
    this.#win = new Float64Array(size);
    this.#room = new Float64Array(size);
    this.#prev = new Int32Array(size);
    this.#next = new Int32Array(size);
  }

  /** Keys currently held (live or expired but not yet reused). */
  get size(): number {
    return this.#index.size;
  }

  /** @inheritdoc */
  consume(key: string, cost: number, policy: RateLimitPolicy, now: number): Decision {
    let slot = this.#index.get(key);
    if (slot === undefined) {
      slot = this.#take(now);
      this.#index.set(key, slot);
      this.#keys[slot] = key;
      this.#t[slot] = Number.NEGATIVE_INFINITY;
      this.#c[slot] = 0;
      this.#p[slot] = 0;
      this.#linkHead(slot);
    } else if (slot !== this.#head) {
      this.#unlink(slot);
      this.#linkHead(slot);
    }
    this.#alg[slot] = ALGORITHM_CODE[policy.algorithm];
    this.#win[slot] = policy.windowMs;
    this.#room[slot] =
      policy.algorithm === "gcra" ? (policy.windowMs / policy.limit) * (policy.burst - 1) : policy.limit;
    const t = this.#t[slot] as number;
    const stored: KeyState | undefined =
      t === Number.NEGATIVE_INFINITY
        ? undefined
        : { t, c: this.#c[slot] as number, p: this.#p[slot] as number };
    const { decision, state } = decideKey(stored, policy, cost, now);
    this.#t[slot] = state?.t ?? Number.NEGATIVE_INFINITY;
    this.#c[slot] = state?.c ?? 0;
    this.#p[slot] = state?.p ?? 0;
    return decision;
  }

  /** @inheritdoc */
  reset(key: string): void {
    const slot = this.#index.get(key);
    if (slot === undefined) return;
    this.#index.delete(key);
    this.#keys[slot] = undefined;
    this.#unlink(slot);
    this.#free.push(slot);
  }

  /**
   * Gives back `cost` units an allowed `decision` spent: in the window it was counted in (for
   * `sliding-window`, also once that window became the previous one, where it still weighs), or
   * from the GCRA bucket. A key that was reset or evicted since has nothing to give back.
   */
  refund(key: string, cost: number, policy: RateLimitPolicy, decision: Decision): void {
    const slot = this.#index.get(key);
    if (slot === undefined || !decision.allowed) return;
    const t = this.#t[slot] as number;
    if (t === Number.NEGATIVE_INFINITY) return;
    const back = refundKey(
      { t, c: this.#c[slot] as number, p: this.#p[slot] as number },
      policy,
      cost,
      decision.now,
    );
    if (back === undefined) return;
    this.#t[slot] = back.t;
    this.#c[slot] = back.c;
    this.#p[slot] = back.p;
  }

  /** Forgets every key. */
  clear(): void {
    this.#index.clear();
    this.#keys = [];
    this.#free = [];
    this.#allocated = 0;
    this.#head = NONE;
    this.#tail = NONE;
  }

  /** Whether the slot's state no longer matters at `now`. */
  #expired(slot: number, now: number): boolean {
    const t = this.#t[slot] as number;
    const alg = this.#alg[slot] as number;
    if (alg === GCRA) return t <= now;
    const windowMs = this.#win[slot] as number;
    return t + (alg === SLIDING ? 2 * windowMs : windowMs) <= now;
  }

  /**
   * Whether the slot has no room for one more unit in its current window at `now`, under the
   * policy of the decision that last touched it (RFC 6585 §4: the client "has sent too many
   * requests in a given amount of time"; evicting it would forget that).
   */
  #limited(slot: number, now: number): boolean {
    const t = this.#t[slot] as number;
    const alg = this.#alg[slot] as number;
    const room = this.#room[slot] as number;
    if (alg === GCRA) return t - now > room + EPS;
    if (alg === FIXED) return (this.#c[slot] as number) >= room;
    const windowMs = this.#win[slot] as number;
    const start = Math.floor(now / windowMs) * windowMs;
    // The slot may still describe the previous window: its count then weighs as `prev`.
    const [prev, count] =
      t === start ? [this.#p[slot] as number, this.#c[slot] as number] : [this.#c[slot] as number, 0];
    return (prev * (windowMs - (now - start))) / windowMs + count > room - 1 + EPS;
  }

  /** A free slot for a new key: a released one, a fresh one, or one freed by eviction. */
  #take(now: number): number {
    const released = this.#free.pop();
    if (released !== undefined) return released;
    if (this.#allocated < this.maxKeys) {
      if (this.#allocated === this.#t.length) this.#grow();
      return this.#allocated++;
    }
    let victim = NONE;
    let slot = this.#tail;
    for (let seen = 0; slot !== NONE && seen < this.#scan; seen++) {
      if (this.#expired(slot, now)) {
        victim = slot;
        break;
      }
      if (victim === NONE && !this.#limited(slot, now)) victim = slot;
      slot = this.#prev[slot] as number;
    }
    if (victim === NONE) throw new StoreFullError(this.maxKeys);
    const key = this.#keys[victim];
    if (key !== undefined) this.#index.delete(key);
    this.#unlink(victim);
    return victim;
  }

  #grow(): void {
    const size = Math.min(this.maxKeys, this.#t.length * 2);
    const grow = <T extends Float64Array | Uint8Array | Int32Array>(old: T, make: (n: number) => T): T => {
      const next = make(size);
      next.set(old);
      return next;
    };
    this.#t = grow(this.#t, (n) => new Float64Array(n));
    this.#c = grow(this.#c, (n) => new Float64Array(n));
    this.#p = grow(this.#p, (n) => new Float64Array(n));
    this.#alg = grow(this.#alg, (n) => new Uint8Array(n));
    this.#win = grow(this.#win, (n) => new Float64Array(n));
    this.#room = grow(this.#room, (n) => new Float64Array(n));
    this.#prev = grow(this.#prev, (n) => new Int32Array(n));
    this.#next = grow(this.#next, (n) => new Int32Array(n));
  }

  #linkHead(slot: number): void {
    this.#prev[slot] = NONE;
    this.#next[slot] = this.#head;
    if (this.#head !== NONE) this.#prev[this.#head] = slot;
    this.#head = slot;
    if (this.#tail === NONE) this.#tail = slot;
  }

  #unlink(slot: number): void {
    const prev = this.#prev[slot] as number;
    const next = this.#next[slot] as number;
    if (prev !== NONE) this.#next[prev] = next;
    else this.#head = next;
    if (next !== NONE) this.#prev[next] = prev;
    else this.#tail = prev;
  }
}
