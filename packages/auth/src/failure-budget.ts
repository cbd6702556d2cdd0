/**
 * What a {@link FailureLimiter} answers. `@svc/ratelimit`'s `Decision` has these fields.
 *
 * @example
 * const { allowed, remaining, retryAfterMs } = await limiter.consume("c:192.0.2.1", 0);
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export interface FailureDecision {
  /** Whether the `cost` was spent (a denied call spends nothing). */
  allowed: boolean;
  /** Units left after this call. */
  remaining: number;
  /**
   * The budget's size (`@svc/ratelimit`'s `Decision` has it). With it a client with no failure
   * for a user name (`remaining === limit`) can be told from one with some: the user name's
   * budget from every client only refuses the latter, and the former queues ahead for a hashing
   * slot. Without it, a client's failures for a name show only once its own budget for the name
   * is spent, and no client queues ahead.
   */
  limit?: number;
  /** Milliseconds until a call of the same cost would be allowed; `0` when allowed. */
  retryAfterMs: number;
}

/**
 * Counts failed authentications per key. `consume(key, 1)` records a failure (denied once the
 * budget is spent); `consume(key, 0)` reports the budget without spending. `@svc/ratelimit`'s
 * `createRateLimiter(...)` fits as it is, with a `MemoryStore` (one process) or a `RedisStore`
 * (shared by a fleet).
 *
 * @example
 * import { createRateLimiter } from "@svc/ratelimit";
 * const failures: FailureLimiter = createRateLimiter({ limit: 5, windowMs: 15 * 60_000, prefix: "authfail:" });
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Authentication_Cheat_Sheet.html#protect-against-automated-attacks
 */
export interface FailureLimiter {
  consume(key: string, cost: number): FailureDecision | Promise<FailureDecision>;
}

/** Failed attempts the default budget allows per key (client, user name) before it answers 429. */
export const DEFAULT_FAILURE_LIMIT = 10;

/** The span over which the default budget's {@link DEFAULT_FAILURE_LIMIT} units come back. */
export const DEFAULT_FAILURE_WINDOW_MS = 15 * 60_000;

/**
 * Most keys the default budget keeps. The keys `createBasicVerifier` counts under are at most 70
 * characters (an address or its /64, or a SHA-256 digest, behind a two-letter tag), so an entry
 * is about 250 bytes with the map's own: 10,000 keys hold about 2.5 MiB.
 */
export const DEFAULT_FAILURE_KEYS = 10_000;

interface Level {
  /** Units spent, as of `at`. */
  level: number;
  at: number;
}

/**
 * The failure budget a Basic verifier counts with when it is given none: in memory, per process,
 * a leaky bucket per key. Each failure adds a unit; units leak back at `limit` per `windowMs`
 * (one every 90 s by default), so a budget is whole again `windowMs` after its last failure and
 * a slow guesser gets no more than `limit` per window. At most `maxKeys` keys are kept; past it
 * the least recently counted leaves (forgetting its failures), so memory stays bounded under a
 * flood of made-up user names. A fleet shares nothing: give `@svc/ratelimit`'s limiter with a
 * `RedisStore` instead.
 *
 * @example
 * const budget = new MemoryFailureBudget(10, 15 * 60_000, 10_000);
 * budget.consume("c:192.0.2.1", 1); // { allowed: true, remaining: 9, limit: 10, retryAfterMs: 0 }
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Authentication_Cheat_Sheet.html#protect-against-automated-attacks
 */
export class MemoryFailureBudget implements FailureLimiter {
  readonly limit: number;
  readonly #perMs: number;
  readonly #maxKeys: number;
  readonly #now: () => number;
  readonly #levels = new Map<string, Level>();

  constructor(limit: number, windowMs: number, maxKeys: number, now: () => number = Date.now) {
    this.limit = limit;
    this.#perMs = limit / windowMs;
    this.#maxKeys = maxKeys;
    this.#now = now;
  }

  /** Keys held now, at most `maxKeys`. */
  get size(): number {
    return this.#levels.size;
  }

  consume(key: string, cost: number): FailureDecision {
    const now = this.#now();
    const entry = this.#levels.get(key);
    // A millionth of a unit is float noise from the leak, not a failure.
    const leaked = entry === undefined ? 0 : entry.level - (now - entry.at) * this.#perMs;
    let level = leaked > 1e-6 ? leaked : 0;
    const allowed = level + cost <= this.limit + 1e-6;
    if (allowed) level += cost;
    this.#levels.delete(key);
    if (level > 0) {
      // Re-inserted last: the map's order is least recently counted first.
      this.#levels.set(key, { level, at: now });
      if (this.#levels.size > this.#maxKeys) {
        const oldest = this.#levels.keys().next();
        if (!oldest.done) this.#levels.delete(oldest.value);
      }
    }
    return {
      allowed,
      remaining: Math.max(0, Math.floor(this.limit - level + 1e-6)),
      limit: this.limit,
      retryAfterMs: allowed ? 0 : Math.ceil((level + cost - this.limit) / this.#perMs),
    };
  }
}
