/**
 * The counting algorithm a limiter uses.
 *
 * - `fixed-window`: at most `limit` per clock-aligned window. Exact inside a window; a client may
 *   send up to `2 × limit` across a window boundary (the end of one window and the start of the next).
 * - `sliding-window`: the weighted two-window counter (current window's count plus the previous
 *   window's count weighted by how much of it still overlaps the last `windowMs`). Never allows more
 *   than `limit` in one aligned window; across a boundary it assumes the previous window's requests
 *   were evenly spread, so a burst at the very end of the previous window is under-weighted.
 * - `gcra`: the generic cell rate algorithm (a token bucket without a refill timer): one request
 *   every `windowMs / limit` on average with bursts of up to `burst`. Exact: never more than
 *   `burst + elapsed / (windowMs / limit)` in any interval.
 *
 * `Retry-After` is the exact wait until a request is admitted, so its longest differs: `windowMs`
 * for `fixed-window`; `2 × windowMs` for `sliding-window` (the window's end, then the decay of
 * what it passes on: 6 per 60 s spent as a window starts → 70 s); `cost × windowMs / limit` for
 * `gcra`.
 *
 * @example
 * createRateLimiter({ algorithm: "gcra", limit: 10, windowMs: 1000, burst: 20 });
 * @see https://blog.cloudflare.com/counting-things-a-lot-of-different-things/
 * @see https://en.wikipedia.org/wiki/Generic_cell_rate_algorithm
 */
export type Algorithm = "fixed-window" | "sliding-window" | "gcra";

/**
 * The list of {@link Algorithm} names, for validation.
 * @example
 * ALGORITHMS.includes(process.env.RATE_ALGORITHM as Algorithm);
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10
 */
export const ALGORITHMS: readonly Algorithm[] = ["fixed-window", "sliding-window", "gcra"];

/**
 * A limiter's resolved, validated policy; stores receive it with every decision.
 * @example
 * const { algorithm, limit, windowMs } = limiter.policy;
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10#section-2
 */
export interface RateLimitPolicy {
  readonly algorithm: Algorithm;
  /** Requests (cost units) per window. */
  readonly limit: number;
  /** Window length in milliseconds (for `gcra`: the time in which `limit` units replenish). */
  readonly windowMs: number;
  /** Largest burst for `gcra`; equals `limit` for the window algorithms. */
  readonly burst: number;
}

/**
 * The outcome of one `consume` call.
 *
 * @example
 * const d = await limiter.consume("user:42");
 * if (!d.allowed) console.warn(`retry in ${d.retryAfterMs} ms`);
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export interface Decision {
  /** Whether the request may proceed; a denied request consumes nothing. */
  allowed: boolean;
  /** The quota the client sees (`limit`, or `burst` for `gcra`). */
  limit: number;
  /** Units still available right after this decision (never negative). */
  remaining: number;
  /** Epoch milliseconds at which the full quota is available again. */
  resetAt: number;
  /**
   * Milliseconds until a request of the same cost would be allowed; `0` when allowed;
   * `Infinity` when it never will be (its cost is more than `limit`, or `burst` for `gcra`).
   */
  retryAfterMs: number;
  /** The store's clock at the decision, epoch ms (Redis `TIME` for the Redis store). */
  now: number;
}

/**
 * Where limiter state lives. {@link MemoryStore} (one process) and {@link RedisStore} (a fleet)
 * implement it; a store applies the policy atomically per decision.
 *
 * @example
 * const limiter = createRateLimiter({ limit: 100, windowMs: 60_000, store: new MemoryStore() });
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export interface RateLimitStore {
  /**
   * Applies `policy` to `key` for a request of `cost` units and returns the decision.
   * `now` is the caller's clock (epoch ms); stores with their own clock (Redis) ignore it.
   */
  consume(key: string, cost: number, policy: RateLimitPolicy, now: number): Decision | Promise<Decision>;
  /** Forgets the state of `key` (a client gets its full quota back). */
  reset(key: string): void | Promise<void>;
  /**
   * Gives back `cost` units that `decision` (an allowed one) spent, if its window (or, for
   * `gcra`, its bucket) still holds them; nothing otherwise. The middleware's
   * `skipSuccessfulRequests` / `skipFailedRequests` need it; a store without it refuses them at
   * construction.
   */
  refund?(key: string, cost: number, policy: RateLimitPolicy, decision: Decision): void | Promise<void>;
  /**
   * Called once per limiter at construction with the limiter's policy: a store that cannot apply
   * it (an algorithm it does not implement, a second window length) throws an option error here
   * instead of failing per request.
   */
  attach?(policy: RateLimitPolicy): void;
}
