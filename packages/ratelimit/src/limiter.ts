import { MemoryStore } from "./memory-store.js";
import { optionError } from "./option-error.js";
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
   * Window length in milliseconds; for `gcra`, the time in which `limit` units replenish.
   * @default 60_000
   */
  windowMs?: number;
  /**
   * The counting algorithm; see {@link Algorithm} for each one's accuracy.
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
   * @default ""
   */
  prefix?: string;
  /**
   * The clock (epoch ms) handed to stores without their own; injectable for tests.
   * @default Date.now
   */
  now?: () => number;
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
   * request spends nothing. Rejects when the store fails (Redis down, memory store full).
   */
  consume(key: string, cost?: number): Promise<Decision>;
  /**
   * {@link RateLimiter.consume} without the promise when the store answers synchronously
   * (`MemoryStore`): the decision itself, or a promise for stores that do I/O. Throws (or rejects)
   * when the store fails.
   */
  decide(key: string, cost?: number): Decision | Promise<Decision>;
  /** Gives `key` its full quota back. */
  reset(key: string): Promise<void>;
}

/** Prefixes already claimed per store object, so two limiters cannot silently share counters. */
const claimed = new WeakMap<RateLimitStore, Set<string>>();

/** The options of {@link createRateLimiter}, checked and resolved once, at construction. */
interface LimiterConfig {
  policy: RateLimitPolicy;
  store: RateLimitStore;
  prefix: string;
  now: () => number;
}

/** `limit`, `windowMs`, `algorithm` and `burst`, checked, as one frozen policy. */
function resolvePolicy(options: RateLimiterOptions): RateLimitPolicy {
  const { limit } = options;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit <= 0)
    throw optionError("rate limit", "limit", `limit must be a positive integer, got ${String(limit)}`);
  const windowMs = options.windowMs ?? 60_000;
  if (typeof windowMs !== "number" || !Number.isFinite(windowMs) || windowMs < 1)
    throw optionError("rate limit", "windowMs", `windowMs must be a number >= 1, got ${String(windowMs)}`);
  const algorithm = options.algorithm ?? "sliding-window";
  if (!ALGORITHMS.includes(algorithm))
    throw optionError(
      "rate limit",
      "algorithm",
      `unknown algorithm ${JSON.stringify(algorithm)}; use one of ${ALGORITHMS.join(", ")}`,
    );
  const burst = options.burst ?? limit;
  if (algorithm !== "gcra" && options.burst !== undefined && options.burst !== limit)
    throw optionError("rate limit", "burst", `burst only applies to the gcra algorithm, not ${algorithm}`);
  if (!Number.isSafeInteger(burst) || burst <= 0)
    throw optionError("rate limit", "burst", `burst must be a positive integer, got ${String(burst)}`);
  return Object.freeze({ algorithm, limit, windowMs, burst });
}

/** Claims `prefix` in `store` for one limiter: two limiters must not silently share counters. */
function claimPrefix(store: RateLimitStore, prefix: string): void {
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
}

function resolveLimiterConfig(options: RateLimiterOptions): LimiterConfig {
  const policy = resolvePolicy(options);
  const prefix = options.prefix ?? "";
  if (typeof prefix !== "string")
    throw optionError("rate limit", "prefix", `prefix must be a string, got ${typeof prefix}`);
  const store = options.store ?? new MemoryStore();
  if (typeof store.consume !== "function")
    throw optionError("rate limit", "store", "store must implement consume(key, cost, policy, now)");
  claimPrefix(store, prefix);
  return { policy, store, prefix, now: options.now ?? Date.now };
}

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
  const { policy, store, prefix, now } = resolveLimiterConfig(options);

  function decide(key: string, cost = 1): Decision | Promise<Decision> {
    if (!Number.isSafeInteger(cost) || cost < 0)
      throw new TypeError(`rate limit: cost must be a non-negative integer, got ${String(cost)}`);
    return store.consume(prefix === "" ? key : prefix + key, cost, policy, now());
  }

  return {
    policy,
    store,
    prefix,
    decide,
    consume(key, cost = 1) {
      try {
        // A plain function, not `async`: a synchronous store (memory) then costs one resolved
        // promise per decision instead of an async frame plus its promise.
        return Promise.resolve(decide(key, cost));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    async reset(key) {
      await store.reset(prefix + key);
    },
  };
}
