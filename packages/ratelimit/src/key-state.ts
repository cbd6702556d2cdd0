import { slidingRetry } from "./memory-store.js";
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
 * (`redis-script.ts`) and of {@link MemoryStore}, as a function of plain values, for a store whose
 * atomicity comes from elsewhere (one Durable Object per key). A state that has nothing left to
 * say after the decision (GCRA with an empty bucket) is dropped, as the script writes nothing.
 *
 * @example const { decision, state } = decideKey(stored, policy, 1, Date.now());
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
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
