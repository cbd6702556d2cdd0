import { checkOptionNames } from "@svc/kernel/internal";
import { optionError, refused } from "./option-error.js";
import { isThenable } from "./thenable.js";
import type { Decision, RateLimitPolicy, RateLimitStore } from "./types.js";

/**
 * What an express-rate-limit `Store` answers to `increment` and `get`.
 * @example
 * const info: ExpressRateLimitHits = { totalHits: 3, resetTime: new Date(Date.now() + 60_000) };
 * @see https://express-rate-limit.mintlify.app/guides/creating-a-store
 */
export interface ExpressRateLimitHits {
  totalHits: number;
  resetTime: Date | undefined;
}

/**
 * An express-rate-limit (v6 and later) `Store`, structurally: `increment`, `decrement` and
 * `resetKey` are used, `init` is called once with `{ windowMs, limit }`, `get` serves `cost: 0`.
 * `rate-limit-redis`, `rate-limit-postgresql`, `@acpr/rate-limit-postgresql`, express-rate-limit's
 * own `MemoryStore` and other community stores have this shape.
 * @example
 * import { MemoryStore as ErlMemoryStore } from "express-rate-limit";
 * const store: ExpressRateLimitStore = new ErlMemoryStore();
 * @see https://express-rate-limit.mintlify.app/guides/creating-a-store
 */
export interface ExpressRateLimitStore {
  // Method signatures (not function-typed properties), so a store whose `init` takes
  // express-rate-limit's whole `Options` type still fits.
  init?(options: { windowMs: number; limit?: unknown }): void | Promise<void>;
  increment(key: string): ExpressRateLimitHits | Promise<ExpressRateLimitHits>;
  decrement(key: string): void | Promise<void>;
  resetKey(key: string): void | Promise<void>;
  get?(key: string): ExpressRateLimitHits | undefined | Promise<ExpressRateLimitHits | undefined>;
}

/**
 * Options of {@link expressRateLimitStore}.
 * @example
 * const options: ExpressRateLimitStoreOptions = { maxCost: 1000 };
 * @see https://express-rate-limit.mintlify.app/guides/creating-a-store
 */
export interface ExpressRateLimitStoreOptions {
  /**
   * The largest `cost` one decision may have on this store. Such a store adds one hit per
   * `increment` call, so a request of cost n is n calls (n round trips for a remote store), and
   * n decrements more when it is refused; a `cost(req)` that grows with the request (its size
   * against a byte quota) would let one client have the server make millions of calls. A request
   * costing more fails with a 500 (code `rate_limit_misconfigured`), whatever `failMode`, before
   * any call: it is neither counted nor passed. A fixed `cost` above it is refused when the
   * middleware is built (`ERR_SVC_RATELIMIT_COST`).
   * @default 100
   */
  maxCost?: number;
}

const OWNER = "expressRateLimitStore";
const DEFAULT_MAX_COST = 100;

/**
 * Stores already wrapped. Two wrappers around one store would each call its `init` and count in
 * its keys, and nothing would tell two limiters on them (one per wrapper, with one prefix) that
 * they share counters (express-rate-limit refuses a store given to two limiters the same way,
 * `ERR_ERL_STORE_REUSE`).
 */
const wrapped = new WeakSet<object>();

/** The `maxCost` of each store {@link expressRateLimitStore} returned. */
const maxCosts = new WeakMap<RateLimitStore, number>();

/** The pending `init` of each store {@link expressRateLimitStore} returned, once it started one. */
const inits = new WeakMap<RateLimitStore, Promise<void>>();

/**
 * The asynchronous `init` of `store` when it is an {@link expressRateLimitStore} wrapper whose
 * store answered `init` with a promise, else undefined: `rateLimit()` reports its rejection
 * through its `logger` when it happens, not only as the failure of each decision after it.
 */
export function initOf(store: RateLimitStore): Promise<void> | undefined {
  return inits.get(store);
}

/** What a rejected or throwing `init` is reported as: what failed, with the store's error as `cause`. */
function initFailed(cause: unknown, verb: string): Error {
  return new Error(`${OWNER}: the store's init({ windowMs, limit }) ${verb}: ${describe(cause)}`, { cause });
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The largest cost one decision may have on `store`, when it is an {@link expressRateLimitStore}
 * wrapper; undefined for any other store. `rateLimit()` checks a fixed `cost` against it at
 * construction.
 */
export function maxCostOf(store: RateLimitStore): number | undefined {
  return maxCosts.get(store);
}

/** `totalHits` as the store gave it, refused unless it is a positive integer. */
function hitsOf(reply: ExpressRateLimitHits | undefined, allowZero: boolean): number {
  const hits = reply?.totalHits ?? (allowZero ? 0 : undefined);
  if (typeof hits !== "number" || !Number.isSafeInteger(hits) || hits < (allowZero ? 0 : 1))
    throw new Error(`${OWNER}: the store answered totalHits ${String(hits)}, not a positive integer`);
  return hits;
}

/**
 * The end of the store's window in ms, `unknown` (a full window from now) when it gave none.
 * An Invalid Date is refused as totalHits 0 is: it would put NaN into `RateLimit` and
 * `Retry-After`, whose values are non-negative integers (RFC 9110 §10.2.3 delay-seconds), so it
 * is a store failure, which `failMode` decides.
 */
function resetOf(reply: ExpressRateLimitHits | undefined, unknown: number): number {
  const resetTime = reply?.resetTime;
  if (!(resetTime instanceof Date)) return unknown;
  const ms = resetTime.getTime();
  if (!Number.isFinite(ms))
    throw new Error(`${OWNER}: the store answered resetTime ${String(resetTime)}, not a valid Date`);
  return ms;
}

/**
 * Wraps an express-rate-limit store as a {@link RateLimitStore}, so a team keeps the store it
 * runs (`rate-limit-redis`, a database store) when moving to `rateLimit()`.
 *
 * What the store can do decides what the limiter may ask of it, checked at construction:
 * - such a store counts clock windows of its own, so the limiter's algorithm must be
 *   `"fixed-window"`, and every limiter on one wrapped store must use the same `windowMs` (it is
 *   handed to the store's `init` once);
 * - a request of `cost` n is n `increment` calls (the store's interface adds one hit per call), at
 *   most `maxCost` (default 100) of them; if one fails, those already made are taken back with
 *   `decrement` before the failure is reported, so a failed request does not stay partly counted
 *   (other requests may see its hits meanwhile: it is not atomic);
 * - a denied request is given back with `decrement`, so, as with the built-in stores, a refused
 *   request spends nothing (express-rate-limit itself keeps counting refused requests); if the
 *   give-back fails, the request is still refused (429, whatever `failMode`) and the hits not
 *   given back stay counted;
 * - `skipSuccessfulRequests` / `skipFailedRequests` give a request back with `decrement`, unless
 *   its window has ended (the store's `resetTime`).
 *
 * @example
 * import { RedisStore as ErlRedisStore } from "rate-limit-redis";
 * const store = expressRateLimitStore(new ErlRedisStore({ sendCommand: (...args) => client.sendCommand(args) }));
 * app.use(rateLimit({ limit: 100, windowMs: 60_000, algorithm: "fixed-window", store }));
 * @see https://express-rate-limit.mintlify.app/guides/creating-a-store
 */
export function expressRateLimitStore(
  store: ExpressRateLimitStore,
  options: ExpressRateLimitStoreOptions = {},
): RateLimitStore {
  const accepted = "an express-rate-limit Store (increment, decrement and resetKey methods)";
  if (typeof options !== "object" || options === null)
    throw refused(OWNER, "options", options, "an object such as { maxCost: 100 }");
  checkOptionNames("ratelimit", options, ["maxCost"], OWNER);
  const maxCost = options.maxCost ?? DEFAULT_MAX_COST;
  if (typeof maxCost !== "number" || !Number.isSafeInteger(maxCost) || maxCost < 1)
    throw refused(OWNER, "maxCost", maxCost, "a positive integer (increment calls one decision may make)");
  if (typeof store !== "object" || store === null) throw refused(OWNER, "store", store, accepted);
  for (const method of ["increment", "decrement", "resetKey"] as const)
    if (typeof store[method] !== "function")
      throw refused(OWNER, `store.${method}`, store[method], "a function");
  if (store.init !== undefined && typeof store.init !== "function")
    throw refused(OWNER, "store.init", store.init, "a function or undefined");
  if (store.get !== undefined && typeof store.get !== "function")
    throw refused(OWNER, "store.get", store.get, "a function or undefined");
  if (wrapped.has(store))
    throw refused(
      OWNER,
      "store",
      store,
      "a store not already wrapped (wrap it once and pass that to every limiter, each with its own prefix, or create one store per limiter)",
    );
  wrapped.add(store);

  let windowMs: number | undefined;
  /** The store's `init` while it runs (or its failure, which every decision then reports). */
  let ready: Promise<void> | undefined;

  /**
   * `cost` increments; the last reply is the request's count. All or nothing: when one fails (or
   * the store's answer is malformed), the ones made are taken back before the failure goes on to
   * `failMode`. RFC 6585 §4: 429 means "the user has sent too many requests"; a request the
   * limiter failed to count (passed by `failMode: "open"`, or answered 503) is not one of them,
   * and must not keep part of its cost in the client's window. The take-back is best effort: if
   * it fails too, the increment's failure is the one reported.
   */
  async function increment(key: string, cost: number): Promise<ExpressRateLimitHits> {
    let reply: ExpressRateLimitHits | undefined;
    let made = 0;
    try {
      for (let i = 0; i < cost; i++) {
        reply = await store.increment(key);
        made++;
      }
      return { totalHits: hitsOf(reply, false), resetTime: reply?.resetTime };
    } catch (err) {
      await decrement(key, made).catch(() => {});
      throw err;
    }
  }

  async function decrement(key: string, cost: number): Promise<void> {
    for (let i = 0; i < cost; i++) await store.decrement(key);
  }

  /**
   * Gives back a refused request's `cost` hits as far as the store lets it: how many it took
   * back. Never fails: the request was counted past the limit, and RFC 6585 §4's 429 ("the user
   * has sent too many requests") is the answer whether or not the give-back works. It only keeps
   * the store's count right; were its failure a store failure, failMode "open" would pass the
   * request. Hits it could not take back stay counted, as express-rate-limit counts every refused
   * request.
   */
  async function giveBack(key: string, cost: number): Promise<number> {
    let given = 0;
    try {
      for (; given < cost; given++) await store.decrement(key);
    } catch {
      // the store keeps the rest; the decision reports what it holds
    }
    return given;
  }

  async function hitsNow(key: string): Promise<ExpressRateLimitHits | undefined> {
    if (!store.get) throw new Error(`${OWNER}: cost 0 (report without spending) needs a store with get(key)`);
    return store.get(key);
  }

  const adapter: RateLimitStore = {
    attach(policy: RateLimitPolicy): void {
      if (policy.algorithm !== "fixed-window")
        throw refused(
          "rate limit",
          "algorithm",
          policy.algorithm,
          '"fixed-window" with an express-rate-limit store (it counts fixed windows of its own)',
        );
      if (windowMs !== undefined) {
        if (policy.windowMs !== windowMs)
          throw refused(
            "rate limit",
            "windowMs",
            policy.windowMs,
            `${windowMs}, the windowMs this express-rate-limit store was initialised with (give each window its own store)`,
          );
        return;
      }
      windowMs = policy.windowMs;
      let init: void | Promise<void>;
      try {
        init = store.init?.({ windowMs: policy.windowMs, limit: policy.limit });
      } catch (err) {
        // A store that cannot start fails the limiter's construction, with the option at fault
        // named, rather than every request later.
        const error = optionError("rate limit", "store", initFailed(err, "threw").message);
        error.cause = err;
        throw error;
      }
      if (init !== undefined && isThenable(init)) {
        // Every decision waits for it, and fails with it once it has failed (then `failMode`
        // decides); `rateLimit()` also reports the rejection through its `logger` when it happens.
        ready = Promise.resolve(init).then(undefined, (err: unknown) => {
          throw initFailed(err, "rejected");
        });
        ready.catch(() => {});
        inits.set(adapter, ready);
      }
    },
    async consume(key: string, cost: number, policy: RateLimitPolicy, now: number): Promise<Decision> {
      // Before any call: a cost over the bound is the configuration's (cost, maxCost) fault, not
      // the store's, so it is refused with the option's code rather than as a store failure.
      if (cost > maxCost)
        throw optionError(
          OWNER,
          "maxCost",
          `cost ${cost} is more than maxCost ${maxCost}, the increment calls one decision may make on this store`,
        );
      if (ready) await ready;
      const reply = cost === 0 ? await hitsNow(key) : await increment(key, cost);
      let hits = hitsOf(reply, true);
      const allowed = hits <= policy.limit;
      if (!allowed) {
        // A refused request spends nothing here, as in the other stores, when the store takes
        // the hits back; it is refused either way.
        hits -= await giveBack(key, cost);
      }
      const resetAt = resetOf(reply, now + policy.windowMs);
      return {
        allowed,
        limit: policy.limit,
        remaining: Math.max(0, policy.limit - hits),
        resetAt,
        retryAfterMs: allowed ? 0 : Math.max(0, resetAt - now),
        now,
      };
    },
    async refund(key: string, cost: number, _policy: RateLimitPolicy, decision: Decision): Promise<void> {
      // The window that counted the request has ended: there is nothing left to give back.
      if (!decision.allowed || Date.now() >= decision.resetAt) return;
      await decrement(key, cost);
    },
    async reset(key: string): Promise<void> {
      await store.resetKey(key);
    },
  };
  maxCosts.set(adapter, maxCost);
  return adapter;
}
