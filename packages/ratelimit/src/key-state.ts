import type { Decision, RateLimitPolicy } from "./types.js";

/**
 * One key's counting state as a plain value, as the Redis script keeps it in a hash: `t` the
 * window start (window algorithms) or the theoretical arrival time (GCRA), epoch ms; `c` the
 * count in the current window; `p` the previous window's count (sliding window only).
 * @see https://blog.cloudflare.com/counting-things-a-lot-of-different-things/
 */
export interface KeyState {
  readonly t: number;
  readonly c: number;
  readonly p: number;
}

/** What {@link decideKey} answers: the decision, and the state to keep until `expiresAt` (none when undefined). */
export interface KeyStep {
  readonly decision: Decision;
  readonly state: KeyState | undefined;
  /** Epoch ms after which `state` no longer matters (the Redis script's `PEXPIRE`). */
  readonly expiresAt: number;
}

/** Floating point slack for the sliding window and GCRA arithmetic, as the other stores have it. */
const EPS = 1e-6;

/**
 * One decision over a key's state at `now`: the arithmetic of the Redis script
 * (`redis-script.ts`) as a function of plain values, the one every in-process store runs
 * (`MemoryStore` over its typed arrays, the Durable Object over its storage). A state that has
 * nothing left to say after the decision (GCRA with an empty bucket) is dropped, as the script
 * writes nothing. The window algorithms count per clock-aligned window, so every process (and
 * Redis) agrees on where a window starts.
 *
 * @example const { decision, state } = decideKey(stored, policy, 1, Date.now());
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4 429 is "too many requests in a given amount of time"
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10#section-4.1.1 `r` is a non-negative integer
 */
export function decideKey(
  stored: KeyState | undefined,
  policy: RateLimitPolicy,
  cost: number,
  now: number,
): KeyStep {
  const { algorithm, limit, windowMs: w, burst } = policy;
  if (algorithm === "fixed-window") {
    const start = Math.floor(now / w) * w;
    const used = stored?.t === start ? stored.c : 0;
    const resetAt = start + w;
    const allowed = used + cost <= limit;
    const c = allowed ? used + cost : used;
    return {
      decision: {
        allowed,
        limit,
        // A count above the limit (a per-request limit lowered within the window, or a smaller
        // limit deployed over a shared store) leaves nothing, not less than nothing.
        remaining: Math.max(0, limit - c),
        resetAt,
        retryAfterMs: allowed ? 0 : resetAt - now,
        now,
      },
      state: { t: start, c, p: 0 },
      expiresAt: resetAt,
    };
  }
  if (algorithm === "sliding-window") {
    const start = Math.floor(now / w) * w;
    let c = 0;
    let p = 0;
    if (stored?.t === start) {
      c = stored.c;
      p = stored.p;
    } else if (stored?.t === start - w) p = stored.c;
    const estimate = (p * (w - (now - start))) / w + c;
    const allowed = estimate + cost <= limit + EPS;
    if (allowed) c += cost;
    const used = allowed ? estimate + cost : estimate;
    return {
      decision: {
        allowed,
        limit,
        remaining: Math.max(0, Math.floor(limit - used + EPS)),
        resetAt: c > 0 ? start + 2 * w : p > 0 ? start + w : now,
        retryAfterMs: allowed ? 0 : slidingRetry(limit, w, start, p, c, cost, now),
        now,
      },
      state: { t: start, c, p },
      expiresAt: start + 2 * w,
    };
  }
  const interval = w / limit;
  const tolerance = interval * burst;
  const tat = Math.max(stored?.t ?? now, now);
  const next = tat + cost * interval;
  const allowed = next - now <= tolerance + EPS;
  const kept = allowed ? next : tat;
  return {
    decision: {
      allowed,
      limit: burst,
      remaining: Math.max(0, Math.floor((tolerance - (kept - now)) / interval + EPS)),
      resetAt: Math.ceil(kept),
      retryAfterMs: allowed ? 0 : Math.ceil(next - tolerance - now),
      now,
    },
    state: kept > now ? { t: kept, c: 0, p: 0 } : undefined,
    expiresAt: kept,
  };
}

/**
 * Gives back `cost` units an allowed decision taken at `at` spent, as the Redis refund script
 * does: the window it was counted in (for the sliding window also once it has become the previous
 * one), or the GCRA bucket. A state that is gone (expired, reset) stays gone: `undefined`.
 *
 * @example const back = refundKey(stored, policy, 1, decision.now);
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export function refundKey(
  stored: KeyState | undefined,
  policy: RateLimitPolicy,
  cost: number,
  at: number,
): KeyState | undefined {
  if (stored === undefined) return undefined;
  const { windowMs: w } = policy;
  if (policy.algorithm === "gcra") return { ...stored, t: stored.t - cost * (w / policy.limit) };
  const start = Math.floor(at / w) * w;
  if (stored.t === start) return { ...stored, c: Math.max(0, stored.c - cost) };
  if (policy.algorithm === "sliding-window" && stored.t === start + w)
    return { ...stored, p: Math.max(0, stored.p - cost) };
  return stored;
}

/**
 * Milliseconds until the weighted estimate leaves room for `cost` more units. Before the window
 * rolls, only the previous window's weight decays; after it rolls, the current count becomes the
 * previous one and decays over the next window.
 */
export function slidingRetry(
  limit: number,
  windowMs: number,
  start: number,
  prev: number,
  count: number,
  cost: number,
  now: number,
): number {
  if (cost > limit) return start + 2 * windowMs - now;
  let at: number;
  if (count + cost <= limit && prev > 0) {
    at = start + windowMs * (1 - (limit - count - cost) / prev);
  } else {
    const decay = count > 0 ? windowMs * (1 - (limit - cost) / count) : 0;
    at = start + windowMs + Math.max(0, decay);
  }
  return Math.max(1, Math.ceil(at - now));
}
