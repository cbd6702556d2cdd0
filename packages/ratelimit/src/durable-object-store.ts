import { callDurableObject, type DurableObjectNamespaceLike, StoreOptions } from "@svc/kernel/internal";
import type { Decision, RateLimitPolicy, RateLimitStore } from "@svc/ratelimit";
import { storeCalls } from "./diagnostics.js";
import type { RateLimitObjectCall } from "./rate-limit-object.js";

/**
 * Options of {@link DurableObjectStore}.
 * @example new DurableObjectStore({ namespace: env.RATE_LIMIT, prefix: "api:", timeoutMs: 500 })
 * @see https://developers.cloudflare.com/durable-objects/api/namespace/
 */
export interface DurableObjectStoreOptions {
  /**
   * The Durable Object namespace binding whose class is {@link RateLimitObject} (`env.RATE_LIMIT`
   * with `[[durable_objects.bindings]] name = "RATE_LIMIT", class_name = "RateLimitObject"`).
   */
  namespace: DurableObjectNamespaceLike;
  /**
   * Prepended to the limiter key to name its object: two limiters on one namespace with different
   * prefixes count apart.
   * @default "rl:"
   */
  prefix?: string;
  /**
   * The longest a decision may wait for its object before it fails (and `failMode` applies), at
   * most 2147483647 (the longest `setTimeout`). The call is never sent again, so nothing is
   * counted twice; it may still be counted after the timeout.
   * @default 500
   */
  timeoutMs?: number;
}

/** A decision as JSON carries it (`Infinity` becomes `null`). */
function decisionOf(value: unknown): Decision | undefined {
  const d = value as { [K in keyof Decision]?: unknown } | null;
  if (typeof d !== "object" || d === null || typeof d.allowed !== "boolean") return undefined;
  const numbers = [d.limit, d.remaining, d.resetAt, d.now];
  if (!numbers.every((n) => typeof n === "number")) return undefined;
  const retry = d.retryAfterMs === null ? Number.POSITIVE_INFINITY : d.retryAfterMs;
  if (typeof retry !== "number") return undefined;
  return {
    allowed: d.allowed,
    limit: d.limit as number,
    remaining: d.remaining as number,
    resetAt: d.resetAt as number,
    retryAfterMs: retry,
    now: d.now as number,
  };
}

/**
 * The store for Cloudflare Workers: each limiter key is counted by a Durable Object of its own
 * ({@link RateLimitObject}, named `prefix + key`), which decides with the arithmetic of the Redis
 * script, so every Worker instance, in every location, counts in the one place. Exact: an object
 * runs its decisions one at a time, and each reads and writes the count with nothing in between.
 *
 * One object per key rather than per shard of keys: an object handles one request at a time, so
 * a shard would make every client in it wait for the busiest; per key, a client only waits for
 * its own requests, objects need no eviction (each holds one small state, deleted by its alarm
 * once its window is over), and the count needs no key inside the object.
 *
 * A decision that fails (the object unreachable, overloaded or reset, a storage error, no answer
 * within `timeoutMs`) rejects, and the limiter's `failMode` decides, as for a Redis outage. A
 * failed call is never sent again: Cloudflare marks some errors `retryable`, but a call that
 * reached the object may have counted, and a retry would count it twice.
 *
 * @example
 * export { RateLimitObject } from "@svc/ratelimit/durable-object";
 * const limit = rateLimit({ limit: 100, windowMs: 60_000, store: new DurableObjectStore({ namespace: env.RATE_LIMIT }) });
 * @see https://developers.cloudflare.com/durable-objects/examples/build-a-rate-limiter/
 * @see https://developers.cloudflare.com/durable-objects/best-practices/error-handling/
 */
export class DurableObjectStore implements RateLimitStore {
  /** Prepended to each limiter key to name its object. */
  readonly prefix: string;
  /** The longest a call to an object is waited for, in milliseconds. */
  readonly timeoutMs: number;
  readonly #namespace: DurableObjectNamespaceLike;

  constructor(options: DurableObjectStoreOptions) {
    const o = new StoreOptions("ratelimit", "DurableObjectStore", options, [
      "namespace",
      "prefix",
      "timeoutMs",
    ]);
    this.#namespace = o.namespace("env.RATE_LIMIT, bound to the class RateLimitObject in wrangler.toml");
    this.prefix = o.prefix("rl:");
    this.timeoutMs = o.timeoutMs(500);
  }

  /** The name of the object that counts `key`. */
  objectName(key: string): string {
    return `${this.prefix}${key}`;
  }

  /** One decision, by the object of `key` on its clock (the caller's `now` is not used). */
  async consume(key: string, cost: number, policy: RateLimitPolicy): Promise<Decision> {
    const reply = await this.#call(key, { op: "consume", policy: plain(policy), cost });
    const decision = decisionOf(reply);
    if (decision === undefined)
      throw new Error(`DurableObjectStore: unexpected answer ${JSON.stringify(reply)}`);
    return decision;
  }

  /** Gives back what an allowed `decision` spent, in the window (or bucket) that counted it. */
  async refund(key: string, cost: number, policy: RateLimitPolicy, decision: Decision): Promise<void> {
    if (!decision.allowed || cost === 0) return;
    await this.#call(key, { op: "refund", policy: plain(policy), cost, at: decision.now });
  }

  /** Forgets the state of `key`: its object deletes its storage. */
  async reset(key: string): Promise<void> {
    await this.#call(key, { op: "reset" });
  }

  /** One call to the object of `key`, traced (`svc:ratelimit:store`). */
  #call(key: string, call: RateLimitObjectCall): Promise<unknown> {
    return storeCalls.traced({ store: "durable-object", operation: call.op, key: this.objectName(key) }, () =>
      this.#untraced(key, call),
    );
  }

  /** One call to the object of `key`, answered within `timeoutMs`, never sent twice. */
  #untraced(key: string, call: RateLimitObjectCall): Promise<unknown> {
    return callDurableObject(this.#namespace, this.objectName(key), call, {
      url: "https://rate-limit.invalid/",
      timeoutMs: this.timeoutMs,
      timedOut: () => new Error(`DurableObjectStore: the object did not answer within ${this.timeoutMs} ms`),
      label: "DurableObjectStore: ",
    });
  }
}

/** The policy's four fields alone (a limiter's policy object may carry more). */
function plain(policy: RateLimitPolicy): RateLimitPolicy {
  return {
    algorithm: policy.algorithm,
    limit: policy.limit,
    windowMs: policy.windowMs,
    burst: policy.burst,
  };
}
