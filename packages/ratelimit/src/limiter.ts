import { checkOptionNames, digest } from "@svc/kernel/internal";
import { maxCostOf } from "./express-store.js";
import { MemoryStore } from "./memory-store.js";
import { optionError, refused } from "./option-error.js";
import { isThenable } from "./thenable.js";
import {
  ALGORITHMS,
  type Algorithm,
  type Decision,
  type RateLimitPolicy,
  type RateLimitStore,
} from "./types.js";

/**
 * Options of {@link createRateLimiter}.
 * @example
 * const options: RateLimiterOptions = { limit: 100, windowMs: 60_000, algorithm: "sliding-window" };
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export interface RateLimiterOptions {
  /**
   * Units (requests, by default) allowed per window. Must be a positive integer.
   */
  limit: number;
  /**
   * Window length in milliseconds; for `gcra`, the time in which `limit` units replenish. At
   * most 10^15 (for `gcra`, `windowMs × burst / limit` too).
   * @default 60_000
   */
  windowMs?: number;
  /**
   * The counting algorithm; see {@link Algorithm} for each one's accuracy and longest `Retry-After`
   * (with the default, a 60 s window may answer more than 60 s; `fixed-window` never does).
   * @default "sliding-window"
   */
  algorithm?: Algorithm;
  /**
   * Largest burst for `gcra` (units that may be spent at once when the bucket is full).
   * @default limit
   */
  burst?: number;
  /**
   * Where the state lives.
   * @default a new MemoryStore()
   */
  store?: RateLimitStore;
  /**
   * Prepended to every key. Two limiters sharing one store object must use different prefixes.
   * When one extends another (`""` and `"login:"`), a key of the shorter one that would spell a
   * key of the longer (`login:alice`) is counted under a digest instead, so they never meet.
   * @default ""
   */
  prefix?: string;
  /**
   * The clock (epoch ms) handed to stores without their own; injectable for tests. It must answer
   * a time value (ECMA-262 §21.4.1.1: a finite number of at most 8.64 × 10^15 ms either side of
   * the epoch): it is called once at construction to check that, and a later answer that is not
   * one (NaN, Infinity, a string, a Date object) or a throw fails that decision with a `TypeError`
   * of code `ERR_SVC_RATELIMIT_NOW` (the middleware's 500), never a decision computed from it.
   * @default Date.now
   */
  now?: () => number;
  /**
   * Once a request is refused for exceeding the limit, the key is refused for this many
   * milliseconds whatever its quota says (rate-limiter-flexible's `blockDuration`): a client that
   * hammers past its limit waits out the block instead of getting a request through each time a
   * unit comes back. The block is kept in the store (a GCRA cell of its own, under a key no
   * client can spell), so on Redis every instance sharing the store refuses the client until
   * the same moment, on Redis's clock; the 429's `Retry-After` and `RateLimit` `t` are the time
   * left of the block. Requests refused during the block do not extend it. With a block, each
   * decision asks the store twice (block, then quota), three times when it starts a block. Not
   * with an express-rate-limit store, which counts only fixed windows of its own. `0`: no block.
   * @default 0
   */
  blockDurationMs?: number;
}

/**
 * A limiter bound to one policy and one store. Create it with {@link createRateLimiter}.
 * @example
 * const { allowed } = await limiter.consume(`user:${id}`, 5);
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export interface RateLimiter {
  /** The resolved policy. */
  readonly policy: RateLimitPolicy;
  /** The store the limiter counts in. */
  readonly store: RateLimitStore;
  /** The key prefix. */
  readonly prefix: string;
  /**
   * Spends `cost` units of `key`'s quota if they are available and reports the outcome. A denied
   * request spends nothing. A `cost` above the limit (`burst` for `gcra`) is denied with
   * `retryAfterMs` `Infinity`, since no wait would let it through. Rejects when the store fails
   * (Redis down, memory store full).
   */
  consume(key: string, cost?: number): Promise<Decision>;
  /**
   * {@link RateLimiter.consume} without the promise when the store answers synchronously
   * (`MemoryStore`): the decision itself, or a promise for stores that do I/O. Throws (or rejects)
   * when the store fails. `policy` (from {@link RateLimiter.policyFor}) applies another limit.
   */
  decide(key: string, cost?: number, policy?: RateLimitPolicy): Decision | Promise<Decision>;
  /**
   * This limiter's policy with another `limit` (a per-request limit), checked and cached: the
   * same object for the same limit, so stores see a bounded set of policies.
   */
  policyFor(limit: number): RateLimitPolicy;
  /**
   * Gives back the `cost` units an allowed `decision` spent, while its window still holds them
   * (the store's `refund`; a no-op for a denied decision). Rejects when the store fails.
   */
  refund(key: string, cost: number, decision: Decision, policy?: RateLimitPolicy): Promise<void>;
  /** Gives `key` its full quota back (and lifts its block, if any). */
  reset(key: string): Promise<void>;
  /** `blockDurationMs`: how long a key that exceeded the limit stays refused; `0` for no block. */
  readonly blockDurationMs: number;
}

/** Every option {@link createRateLimiter} takes; anything else is refused by name. */
export const LIMITER_OPTIONS = [
  "limit",
  "windowMs",
  "algorithm",
  "burst",
  "store",
  "prefix",
  "now",
  "blockDurationMs",
] as const;

/** Prefixes already claimed per store object, so two limiters cannot silently share counters. */
const claimed = new WeakMap<RateLimitStore, Set<string>>();

/** The options of {@link createRateLimiter}, checked and resolved once, at construction. */
interface LimiterConfig {
  policy: RateLimitPolicy;
  store: RateLimitStore;
  prefix: string;
  /** Every prefix claimed on `store` so far, this one included (live: later limiters join it). */
  prefixes: ReadonlySet<string>;
  now: () => number;
  /** Whether `burst` was given (else a per-request limit also sets the burst). */
  burstGiven: boolean;
  /** The block cell's policy (`blockDurationMs`), or undefined for no block. */
  block: RateLimitPolicy | undefined;
}

/**
 * The longest span a policy may give a key, in ms: `RedisStore`'s script sets a key's PEXPIRE to
 * its span plus 1 s (up to windowMs for the fixed window, 2 × windowMs for the sliding window,
 * windowMs × burst / limit for gcra), and Redis hands a Lua number to a command as "%.17g", so
 * from 10^17 on PEXPIRE gets "1e+17" and refuses it: every decision failed, and with failMode
 * "open" nothing was limited. Lua numbers are exact only to 2^53 (about 9 × 10^15): 10^15 ms
 * (about 31,700 years) keeps a window's end (now + 2 × windowMs) and the expiry exact.
 */
const MAX_SPAN_MS = 1_000_000_000_000_000;

/**
 * ECMA-262 §21.4.1.1 (Time Values and Time Range): a time value, what `Date.now()` answers and a
 * `Date` holds, is a finite number of milliseconds from the epoch, "−8.64 × 10^15 to 8.64 × 10^15
 * milliseconds". A clock answer outside that range, or not a number, is not a time: NaN made the
 * fixed window start over on every request (nothing was limited) and the sliding window and GCRA
 * refuse every one, with `NaN` in `RateLimit` and `X-RateLimit-Reset`; 1e300 left the GCRA
 * bucket always full.
 */
const MAX_TIME_VALUE = 8.64e15;

/** How a clock's answer is shown in an error: a bigint with its `n`, a Date as ISO 8601. */
function describeTime(value: unknown): string {
  if (typeof value === "bigint") return `${value}n`;
  if (value instanceof Date)
    return `a Date (${Number.isFinite(value.getTime()) ? value.toISOString() : "Invalid Date"})`;
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "a function";
  if (typeof value === "object" && value !== null) return "an object";
  return String(value);
}

/**
 * The time `now()` answers, checked: a `TypeError` with code `ERR_SVC_RATELIMIT_NOW` (the code
 * of the option at fault; the middleware answers it with a 500, not its `failMode`, as it is no
 * store failure) when the clock throws or answers anything but a time value.
 */
function readClock(now: () => number): number {
  let value: unknown;
  try {
    value = now();
  } catch (err) {
    const error = optionError("rate limit", "now", "now() threw");
    error.cause = err;
    throw error;
  }
  if (typeof value === "number" && Number.isFinite(value) && Math.abs(value) <= MAX_TIME_VALUE) return value;
  throw optionError(
    "rate limit",
    "now",
    `now() answered ${describeTime(value)}, not epoch milliseconds (a finite number within ±8.64e15, ECMA-262 §21.4.1.1)`,
  );
}

/** `limit`, `windowMs`, `algorithm` and `burst`, checked, as one frozen policy. */
function resolvePolicy(options: RateLimiterOptions): RateLimitPolicy {
  const { limit } = options;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit <= 0)
    throw refused("rate limit", "limit", limit, "a positive integer");
  const windowMs = options.windowMs ?? 60_000;
  if (typeof windowMs !== "number" || !Number.isFinite(windowMs) || windowMs < 1 || windowMs > MAX_SPAN_MS)
    throw refused(
      "rate limit",
      "windowMs",
      windowMs,
      `a number of milliseconds >= 1 and at most ${MAX_SPAN_MS} (10^15, about 31,700 years)`,
    );
  const algorithm = options.algorithm ?? "sliding-window";
  if (!ALGORITHMS.includes(algorithm))
    throw refused(
      "rate limit",
      "algorithm",
      algorithm,
      `one of ${ALGORITHMS.map((a) => `"${a}"`).join(", ")}`,
    );
  const burst = options.burst ?? limit;
  if (typeof burst !== "number" || !Number.isSafeInteger(burst) || burst <= 0)
    throw refused("rate limit", "burst", burst, "a positive integer");
  if (algorithm !== "gcra" && options.burst !== undefined && options.burst !== limit)
    throw optionError("rate limit", "burst", `burst only applies to the gcra algorithm, not ${algorithm}`);
  const span = (windowMs * burst) / limit;
  if (algorithm === "gcra" && span > MAX_SPAN_MS)
    throw optionError(
      "rate limit",
      "burst",
      `burst must keep the gcra bucket's span windowMs × burst / limit at most ${MAX_SPAN_MS} (10^15 ms), got ${span}`,
    );
  return Object.freeze({ algorithm, limit, windowMs, burst });
}

/** Claims `prefix` in `store` for one limiter: two limiters must not silently share counters. */
function claimPrefix(store: RateLimitStore, prefix: string): ReadonlySet<string> {
  const prefixes = claimed.get(store) ?? new Set<string>();
  if (prefixes.has(prefix))
    throw optionError(
      "rate limit",
      "prefix",
      `this store is already used by another limiter with prefix ${JSON.stringify(prefix)}; ` +
        "give each limiter sharing a store its own prefix, or its own store",
    );
  prefixes.add(prefix);
  claimed.set(store, prefixes);
  return prefixes;
}

function resolveLimiterConfig(options: RateLimiterOptions): LimiterConfig {
  if (typeof options !== "object" || options === null)
    throw refused("rate limit", "options", options, "an object with at least limit");
  // A misspelt option (`windowMS`) would otherwise leave its default in force without a word.
  checkOptionNames("ratelimit", options, LIMITER_OPTIONS, "rate limit");
  const policy = resolvePolicy(options);
  const prefix = options.prefix ?? "";
  if (typeof prefix !== "string") throw refused("rate limit", "prefix", prefix, "a string");
  const store: RateLimitStore = options.store ?? new MemoryStore();
  if (
    typeof store !== "object" ||
    store === null ||
    typeof store.consume !== "function" ||
    typeof store.reset !== "function"
  )
    throw refused(
      "rate limit",
      "store",
      store,
      "a RateLimitStore (consume(key, cost, policy, now) and reset(key)): MemoryStore, RedisStore, or expressRateLimitStore(store) for an express-rate-limit store",
    );
  const now = options.now ?? Date.now;
  if (typeof now !== "function")
    throw refused("rate limit", "now", now, "a function returning epoch milliseconds");
  // Once here, so a clock that cannot answer a time (`now: Date`, which answers a string) is
  // refused at startup rather than on every request.
  readClock(now);
  const block = resolveBlock(options.blockDurationMs, store);
  store.attach?.(policy);
  const prefixes = claimPrefix(store, prefix);
  return { policy, store, prefix, prefixes, now, burstGiven: options.burst !== undefined, block };
}

/**
 * `blockDurationMs` as the policy of the key's block cell: a GCRA bucket of one unit that
 * refills in `blockDurationMs`. Spending its unit starts the block (the cell's theoretical
 * arrival time becomes now + `blockDurationMs`); reading it at cost 0 answers `remaining` 0 and
 * `resetAt` at the block's end while it lasts. Every store already applies GCRA atomically on
 * its own clock (Redis `TIME`), so the block is exact across instances without a script of its own.
 */
function resolveBlock(value: unknown, store: RateLimitStore): RateLimitPolicy | undefined {
  if (value === undefined || value === 0) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > MAX_SPAN_MS)
    throw refused(
      "rate limit",
      "blockDurationMs",
      value,
      `0 (no block) or a number of milliseconds > 0 and at most ${MAX_SPAN_MS}`,
    );
  if (maxCostOf(store) !== undefined)
    throw optionError(
      "rate limit",
      "blockDurationMs",
      "blockDurationMs cannot be kept in an express-rate-limit store (it counts only fixed windows of its own); use MemoryStore, RedisStore or the Durable Object store",
    );
  return Object.freeze({ algorithm: "gcra", limit: 1, windowMs: value, burst: 1 });
}

/**
 * The block cell's key for a store key: under the digest form no plain key is stored as
 * (`storeKey` digests any key starting with `sha256:`, and its digests hold no `:`), so no
 * client's key, chosen or not, can spell it.
 */
function blockKey(key: string): string {
  return `${DIGEST}b:${digest("sha256", key, "base64url")}`;
}

/**
 * The refusal of a request while its key is blocked: nothing spent; `retryAfterMs` and
 * `resetAt` the block's end (draft-ietf-httpapi-ratelimit-headers-10 §4.1.2: `t` is when quota
 * is available again, which the block postpones).
 */
function blocked(cell: Decision, policy: RateLimitPolicy): Decision {
  const wait = Math.max(0, Math.ceil(cell.resetAt - cell.now));
  return {
    allowed: false,
    limit: capacityOf(policy),
    remaining: 0,
    resetAt: cell.now + wait,
    retryAfterMs: wait,
    now: cell.now,
  };
}

/** A refusal that started a block at `cell.now`: its wait is the block's, or the quota's if longer. */
function blockStarted(decision: Decision, cell: Decision, blockMs: number): Decision {
  const end = cell.now + blockMs;
  const wait = Math.max(decision.retryAfterMs, end - decision.now);
  return { ...decision, remaining: 0, retryAfterMs: wait, resetAt: Math.max(decision.resetAt, end) };
}

/**
 * Longest key a store is given as is (prefix included). A `key(req)` may come from the request
 * (an API key header, before it is checked), so without a bound every distinct value of up to a
 * header's size would be held whole, in memory or in Redis, until its window ends.
 */
const MAX_STORE_KEY_LENGTH = 256;
const DIGEST = "sha256:";

/**
 * The key a store counts `key` under: `prefix + key`, or, past {@link MAX_STORE_KEY_LENGTH}
 * characters, its SHA-256 digest (a short key that looks like a digest is hashed too, so no two
 * keys share a bucket).
 *
 * Limiters share a store by prefix, and one prefix may extend another (`""` and `"login:"`): the
 * key `login:alice` of the first would then be the key `alice` of the second, so a client whose
 * key it chooses (an API key header) could spend another limiter's quota for someone else (RFC
 * 6585 §4: 429 says "the user has sent too many requests"; another user's requests must not
 * count). A key that would land under a longer prefix claimed on the same store is counted under
 * `sha256:p:<digest of its prefix length, prefix and key>`, which neither a plain key (never
 * stored raw when it starts with `sha256:`) nor a plain digest (base64url, no `:`) can spell.
 */
function storeKey(prefix: string, key: string, prefixes: ReadonlySet<string>): string {
  const full = prefix === "" ? key : prefix + key;
  if (prefixes.size > 1)
    for (const other of prefixes)
      if (other.length > prefix.length && full.startsWith(other))
        return `${DIGEST}p:${digest("sha256", `${prefix.length}:${full}`, "base64url")}`;
  if (full.length <= MAX_STORE_KEY_LENGTH && !full.startsWith(DIGEST)) return full;
  return DIGEST + digest("sha256", full, "base64url");
}

/**
 * The most units one request may cost under `policy`: `limit` for the window algorithms, `burst`
 * for `gcra` (the bucket never holds more). A request costing more can never be allowed, however
 * long the client waits.
 */
export function capacityOf(policy: RateLimitPolicy): number {
  return policy.algorithm === "gcra" ? policy.burst : policy.limit;
}

/**
 * The decision for a request that can never fit: the key's state as it is (read with cost 0, so
 * nothing is spent), refused, with `retryAfterMs` `Infinity`. RFC 9110 §10.2.3: Retry-After
 * indicates "how long the user agent ought to wait before making a follow-up request"; no wait
 * makes this request fit, so no finite wait is promised.
 */
function neverFits(decision: Decision): Decision {
  return { ...decision, allowed: false, retryAfterMs: Number.POSITIVE_INFINITY };
}

/** At most this many per-request limits keep a cached policy object; more get fresh ones. */
const POLICY_CACHE = 64;

/**
 * Creates a framework-agnostic limiter. Misconfiguration throws a `TypeError` here, never per
 * request.
 *
 * @example
 * const limiter = createRateLimiter({ limit: 5, windowMs: 1000, algorithm: "gcra" });
 * const { allowed, retryAfterMs } = await limiter.consume("user:42");
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { policy, store, prefix, prefixes, now, burstGiven, block } = resolveLimiterConfig(options);
  const policies = new Map<number, RateLimitPolicy>([[policy.limit, policy]]);

  /** The quota's decision, without the block. */
  function quota(stored: string, cost: number, applied: RateLimitPolicy): Decision | Promise<Decision> {
    if (cost > capacityOf(applied)) {
      const current = store.consume(stored, 0, applied, readClock(now));
      return isThenable(current) ? current.then(neverFits) : neverFits(current);
    }
    return store.consume(stored, cost, applied, readClock(now));
  }

  /**
   * With `blockDurationMs`: the block cell first (a blocked key is refused without touching its
   * quota), then the quota; a refusal for exceeding the quota (not a cost that never fits) starts
   * the block. Synchronous stores stay synchronous.
   */
  function decideBlocked(
    cell: RateLimitPolicy,
    stored: string,
    cost: number,
    applied: RateLimitPolicy,
  ): Decision | Promise<Decision> {
    const bkey = blockKey(stored);
    const afterQuota = (decision: Decision): Decision | Promise<Decision> => {
      if (decision.allowed || !Number.isFinite(decision.retryAfterMs)) return decision;
      const started = store.consume(bkey, 1, cell, readClock(now));
      return isThenable(started)
        ? started.then((c) => blockStarted(decision, c, cell.windowMs))
        : blockStarted(decision, started, cell.windowMs);
    };
    const afterCell = (c: Decision): Decision | Promise<Decision> => {
      if (c.remaining === 0 && c.resetAt > c.now) return blocked(c, applied);
      const decision = quota(stored, cost, applied);
      return isThenable(decision) ? decision.then(afterQuota) : afterQuota(decision);
    };
    const checked = store.consume(bkey, 0, cell, readClock(now));
    return isThenable(checked) ? checked.then(afterCell) : afterCell(checked);
  }

  function decide(key: string, cost = 1, applied: RateLimitPolicy = policy): Decision | Promise<Decision> {
    if (!Number.isSafeInteger(cost) || cost < 0)
      throw new TypeError(`rate limit: cost must be a non-negative integer, got ${String(cost)}`);
    const stored = storeKey(prefix, key, prefixes);
    return block ? decideBlocked(block, stored, cost, applied) : quota(stored, cost, applied);
  }

  function policyFor(limit: number): RateLimitPolicy {
    const cached = policies.get(limit);
    if (cached) return cached;
    if (!Number.isSafeInteger(limit) || limit <= 0)
      throw new TypeError(`rate limit: limit must be a positive integer, got ${String(limit)}`);
    const made = Object.freeze({ ...policy, limit, burst: burstGiven ? policy.burst : limit });
    if (policies.size < POLICY_CACHE) policies.set(limit, made);
    return made;
  }

  return {
    policy,
    store,
    prefix,
    decide,
    policyFor,
    consume(key, cost = 1) {
      try {
        // A plain function, not `async`: a synchronous store (memory) then costs one resolved
        // promise per decision instead of an async frame plus its promise.
        return Promise.resolve(decide(key, cost));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    async refund(key, cost, decision, applied = policy) {
      if (!decision.allowed || cost === 0) return;
      if (!store.refund)
        throw new TypeError("rate limit: this store cannot give units back (no refund method)");
      await store.refund(storeKey(prefix, key, prefixes), cost, applied, decision);
    },
    async reset(key) {
      const stored = storeKey(prefix, key, prefixes);
      await store.reset(stored);
      if (block) await store.reset(blockKey(stored));
    },
    blockDurationMs: block?.windowMs ?? 0,
  };
}
