import { decisionChannel, tracedCall } from "@svc/kernel/internal";

/**
 * What the rate limit publishes on the channel `svc:ratelimit` (`subscribeDiagnostics` of
 * `@svc/kernel`), one message per decision; skipped and allowlisted requests publish nothing. The
 * names and members are part of the package's API: a change is a breaking change.
 *
 * - `allowed` / `limited`: a request counted, or refused with a 429 (`retryAfterMs` its wait).
 * - `cost-exceeds-quota`: a request whose cost is more than the policy's whole quota, refused with
 *   a 429 before the store (it could never be accepted, so nothing is counted).
 * - `store-failed`: a request whose decision the store failed, answered by `failMode`; with
 *   `insurance`, only the outage's first failure, when the in-memory limiter takes over
 *   (`failMode: "insurance"`); the requests it decides publish `allowed` / `limited` with
 *   `insured: true`.
 * - `store-recovered`: the first decision the store answered after failures (no request), when
 *   the store takes over again from the insurance limiter.
 *
 * @example
 * subscribeDiagnostics("svc:ratelimit", (message) => {
 *   const m = message as RateLimitDiagnostic;
 *   if (m.decision === "limited") console.warn(m.policy, m.keyKind, m.retryAfterMs);
 * });
 * @see https://nodejs.org/api/diagnostics_channel.html
 */
export type RateLimitDiagnostic =
  | {
      /** The framework's request (Express's `req`, Fastify's `request`, a Fetch `Request`). */
      readonly request: object;
      readonly decision: "allowed" | "limited";
      /** The limiter's `policyName`. */
      readonly policy: string;
      /** What the request counted by: its principal, its client address, or the `key` option. */
      readonly keyKind: "principal" | "address" | "custom";
      readonly limit: number;
      readonly remaining: number;
      /** When the full quota is back, epoch milliseconds. */
      readonly resetAt: number;
      /** `0` when allowed; else the wait until a request of the same cost would be. */
      readonly retryAfterMs: number;
      /** Present (`true`) when the `insurance` limiter decided, the store being down. */
      readonly insured?: true;
    }
  | {
      readonly request: object;
      readonly decision: "cost-exceeds-quota";
      readonly policy: string;
      readonly keyKind: "principal" | "address" | "custom";
      /** The units the request costs. */
      readonly cost: number;
      /** The most units the policy accepts at once (its limit, or a bucket's size). */
      readonly capacity: number;
    }
  | {
      readonly request: object;
      readonly decision: "store-failed";
      /**
       * `"open"`: the request passed uncounted; `"closed"`: it was answered 503; `"insurance"`:
       * the in-memory `insurance` limiter took over (published once per outage).
       */
      readonly failMode: "open" | "closed" | "insurance";
      readonly error: unknown;
    }
  | {
      readonly decision: "store-recovered";
      /** Milliseconds from the first failure to this answer. */
      readonly downMs: number;
      /** With `insurance`: how many decisions the insurance limiter made meanwhile. */
      readonly insured?: number;
    };

/**
 * The context of one asynchronous store call on the tracing channels `svc:ratelimit:store`
 * (`tracing:svc:ratelimit:store:start|end|asyncStart|asyncEnd|error`); the in-memory store is
 * synchronous and not traced.
 * @example
 * diagnostics_channel.tracingChannel("svc:ratelimit:store").subscribe({ asyncEnd: (c) => console.log(c) });
 * @see https://nodejs.org/api/diagnostics_channel.html#class-tracingchannel
 */
export interface RateLimitStoreCall {
  readonly store: "redis" | "durable-object";
  readonly operation: "consume" | "refund" | "reset";
  /** The key as stored (the Redis key, the Durable Object's name). */
  readonly key: string;
}

/** @internal The channel of every decision. */
export const decisions = decisionChannel<RateLimitDiagnostic>("svc:ratelimit");

/** @internal The tracing channels of the asynchronous stores' calls. */
export const storeCalls = tracedCall<RateLimitStoreCall>("svc:ratelimit:store");
