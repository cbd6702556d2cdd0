import type { ServerResponse } from "node:http";
import { HttpError } from "@svc/errors";
import {
  exchangeIfAny,
  exchangeOf,
  ipBucket,
  principalFor,
  principalKey,
  type RequestView,
  type TrustHop,
} from "@svc/kernel";
import { publishDecision } from "@svc/kernel/internal";
import { decisions } from "./diagnostics.js";
import { initOf } from "./express-store.js";
import { ceilSeconds, type RateLimitFields, reportDecision, tightestDecision } from "./headers.js";
import { capacityOf } from "./limiter.js";
import { type Config, insuredLimit, type RateLimitInfo, type RateLimitMessage } from "./options.js";
import { isThenable } from "./thenable.js";
import type { Decision, RateLimitPolicy } from "./types.js";

/**
 * @internal For the package's Express adapter.
 *
 * One request as the limiter reads it, whatever framework received it: the view (fields and
 * connection), the framework's own request (handed to the option functions, the key of its
 * exchange, never written), and the client's address.
 */
export interface Asked {
  readonly view: RequestView;
  /** The framework's request object: Express's `req`, Fastify's `request`, a Fetch `Request`. */
  readonly native: object;
  /** Express only: the response, the option functions' second argument (none elsewhere). */
  readonly res?: ServerResponse | undefined;
  /** The client's address after the trusted proxies (Express's `req.ip`), or the peer's. */
  readonly address: string | undefined;
  /**
   * The proxies `address` was resolved behind, when the adapter was given its own (a gate's
   * `trustProxy`; `false`: none); without it, the framework's trust its adapter recorded in the
   * request's exchange (`expressView`, `fastifyView` of `@svc/kernel`).
   */
  readonly trust?: TrustHop | false | undefined;
  /** What the rate limit reports of the request are kept by (every limiter on it adds to them). */
  readonly owner: object;
}

/**
 * @internal For the package's Express adapter.
 *
 * What the limiter decided about one request.
 */
export type Verdict =
  /** Not limited (skipped, allowlisted, or the store failed under `failMode: "open"`): no fields. */
  | { readonly kind: "pass" }
  /** Refused before or without a decision (a 500 of the configuration, a 503, an oversize cost). */
  | { readonly kind: "refuse"; readonly error: unknown }
  /** Counted and allowed: the fields for the response. */
  | {
      readonly kind: "allowed";
      readonly fields: RateLimitFields | undefined;
      readonly info: RateLimitInfo;
      readonly key: string;
      readonly units: number;
      readonly decision: Decision;
      readonly policy: RateLimitPolicy;
    }
  /** Denied: the 429 (with `Retry-After`), the fields, the message it was built from. */
  | {
      readonly kind: "denied";
      readonly fields: RateLimitFields | undefined;
      readonly info: RateLimitInfo;
      readonly error: HttpError;
      readonly message: RateLimitMessage | undefined;
      readonly retryAfterSeconds: number;
    };

/**
 * @internal For the package's Express adapter.
 *
 * What one limiter remembers between requests: warnings already given, failures logged.
 */
export interface State {
  proxyWarned: boolean;
  /** A client address that is not an IP address was reported. */
  addressWarned: boolean;
  /** When a request with no principal and no address was last reported (see {@link unaddressed}). */
  unaddressedLog: number;
  lastLog: number;
  suppressed: number;
  /** When the store's current outage began (its first failed decision); undefined while it answers. */
  downSince: number | undefined;
  /** Decisions the store failed since `downSince`. */
  failures: number;
}

/** One request on its way through the limiter. */
interface Pending {
  asked: Asked;
  done: (verdict: Verdict) => void;
  /** The bucket in the store: the default key, or `key(req)` kept apart from default keys. */
  key: string;
  /** The key as reported in `requestState(req).rateLimit.key`: the default key, or `key(req)` as answered. */
  label: string;
  /** What the key is of: the principal (`u:`), the client's address (`ip:`), or `key(req)`'s answer. */
  keyKind: "principal" | "address" | "custom";
  units: number;
}

/** An option function as the core calls it: the framework's request, and Express's `res`. */
type OptionFunction<T> = (req: unknown, res: unknown) => T | Promise<T>;

function call<T>(fn: unknown, asked: Asked): T | Promise<T> {
  return (fn as OptionFunction<T>)(asked.native, asked.res);
}

/**
 * @internal For the package's Express adapter (`@svc/ratelimit/express`).
 *
 * Runs `step` on a value computed by an option function (`skip`, `limit`, `message`...), at once
 * when it is plain, after it settles when it is a promise; a throw or a rejection goes to `failed`.
 */
export function after<T>(
  compute: () => T | Promise<T>,
  step: (value: T) => void,
  failed: (err: unknown) => void,
): void {
  let value: T | Promise<T>;
  try {
    value = compute();
  } catch (err) {
    failed(err);
    return;
  }
  if (isThenable(value)) value.then(step, failed);
  else step(value);
}

/**
 * The 500 for an option function that threw or answered outside its domain: the configuration is
 * at fault, so the request is neither counted nor let through, and the error handler logs the cause.
 */
function misconfigured(option: string, detail: string, cause?: unknown): HttpError {
  return HttpError.internal(`rate limit: ${option}(req) ${detail}`, {
    code: "rate_limit_misconfigured",
    cause,
  });
}

/** What the limiter's refusals of its own configuration, by code, say in the 500. */
const CONFIGURATION_ERRORS: Readonly<Record<string, string>> = {
  // RateLimiterOptions.now: the clock threw or answered no time.
  ERR_SVC_RATELIMIT_NOW: "rate limit: now() did not answer epoch milliseconds",
  // ExpressRateLimitStoreOptions.maxCost: a cost the wrapped store is not to be asked for.
  ERR_SVC_RATELIMIT_MAX_COST: "rate limit: the request's cost is more than the store takes in one decision",
};

/**
 * The 500 for a decision the limiter refused because of its own configuration (a `now` clock
 * that answered no time, a cost over an express-rate-limit store's `maxCost`), or undefined for
 * any other failure (the store's, which `failMode` decides). The server's configuration is at
 * fault, not the client nor the store, so neither a 429 nor `failMode` (whose "open" would let
 * every such request through uncounted) applies. RFC 9110 §15.6.1: 500 means the server
 * "encountered an unexpected condition that prevented it from fulfilling the request". Nothing
 * was counted.
 */
function configurationFailed(err: unknown): HttpError | undefined {
  if (!(err instanceof TypeError)) return undefined;
  const code = (err as { code?: unknown }).code;
  const message = typeof code === "string" ? CONFIGURATION_ERRORS[code] : undefined;
  return message === undefined
    ? undefined
    : HttpError.internal(message, { code: "rate_limit_misconfigured", cause: err });
}

/**
 * The 500 for `key(req)` or `cost(req)` answering a promise (they are synchronous): once it
 * settles, so that a rejection is the cause in the log rather than an unhandled rejection.
 */
function refuseAsync(option: string, answer: Promise<unknown>, done: (verdict: Verdict) => void): void {
  const detail = "answered a promise; it must answer synchronously";
  answer.then(
    () => done({ kind: "refuse", error: misconfigured(option, detail) }),
    (err: unknown) => done({ kind: "refuse", error: misconfigured(option, detail, err) }),
  );
}

/** Addresses no proxy list names (RFC 5737, RFC 3849 documentation ranges), at a hop no proxy chain reaches. */
const ANY_V4 = "198.51.100.77";
const ANY_V6 = "2001:db8::77";
const FAR_HOP = 1_000_000;

/**
 * The two mistakes in the trusted proxies that break IP keying, or undefined, read from the trust
 * the request's address was resolved behind (the adapter's own, else the framework's recorded in
 * the exchange: Express's `trust proxy`, Fastify's `trustProxy`, so the warning is the same on
 * each): a forwarded request while not even the peer is trusted (every client shares the proxy's
 * bucket), and a trust that takes any address at any hop (any client picks its own address, and
 * bucket, with a forged `X-Forwarded-For`).
 * @see https://www.rfc-editor.org/rfc/rfc7239#section-8.1
 */
function proxyMistake(asked: Asked): [{ trustProxy: boolean }, string] | undefined {
  const trust = asked.trust !== undefined ? asked.trust : exchangeIfAny(asked.native)?.trust;
  if (trust === undefined) return undefined;
  if (trust !== false && trust(ANY_V4, FAR_HOP) && trust(ANY_V6, FAR_HOP)) {
    return [
      { trustProxy: true },
      'rate limit: "trust proxy" is true (every hop trusted), so any client can choose its IP with X-Forwarded-For; trust only your proxies (a hop count or their addresses)',
    ];
  }
  const forwarded = asked.view.headers["x-forwarded-for"] !== undefined;
  if (forwarded && (trust === false || !trust(asked.view.socket?.remoteAddress ?? "", 0))) {
    return [
      { trustProxy: false },
      'rate limit: X-Forwarded-For arrived but "trust proxy" is off (no proxy trusted), so every client behind that proxy shares one bucket; trust your proxies (Express\'s "trust proxy", Fastify\'s trustProxy)',
    ];
  }
  return undefined;
}

/**
 * The bucket of a key `key(req)` answered. The default keys are `u:<principal id>` and
 * `ip:<address bucket>`, and `key(req)` may answer a value the client sent (an API key header
 * before it is checked) or `undefined` for the default, so both kinds share one limiter: an
 * answer spelled like a default key (`X-Api-Key: u:alice`) would count in alice's bucket and spend
 * her quota, or hers would spend its. RFC 6585 §4: 429 "indicates that the user has sent too many
 * requests"; one client's requests count against that client alone. Such an answer, and one
 * starting with the escape `k:` itself (so no two answers meet), is counted under `k:<answer>`;
 * any other answer is its own bucket as before.
 */
function customBucket(key: string): string {
  return key.startsWith("u:") || key.startsWith("ip:") || key.startsWith("k:") ? `k:${key}` : key;
}

function socketGone(asked: Asked): boolean {
  return (asked.view.socket as { destroyed?: boolean } | null | undefined)?.destroyed === true;
}

/**
 * @internal For the package's Express adapter (`@svc/ratelimit/express`), which shares the main
 * entry's reports and store claims.
 *
 * The framework-free decision of one limiter: a request in, a {@link Verdict} out, through `done`
 * (at once when the store answers synchronously, as `MemoryStore` does). `errorFields`: whether
 * the 429 carries the rate limit fields itself (a gate's refusal is rendered by the framework's
 * error handling, which has nothing else to read them from).
 */
export function createDecider(
  config: Config,
  errorFields: boolean,
): { state: State; decide(asked: Asked, done: (verdict: Verdict) => void): void } {
  const { limiter, cost } = config;
  const state: State = {
    proxyWarned: false,
    addressWarned: false,
    unaddressedLog: Number.NEGATIVE_INFINITY,
    lastLog: Number.NEGATIVE_INFINITY,
    suppressed: 0,
    downSince: undefined,
    failures: 0,
  };
  reportInit(config);

  /** After the key and cost: the per-request limit, then the decision. */
  function withLimit(p: Pending): void {
    const { limit } = config;
    if (!limit) {
      consume(p, limiter.policy);
      return;
    }
    after(
      () => call<number>(limit, p.asked),
      (n) => {
        if (typeof n !== "number" || !Number.isSafeInteger(n) || n <= 0)
          p.done({
            kind: "refuse",
            error: misconfigured("limit", `must answer a positive integer, answered ${String(n)}`),
          });
        else consume(p, limiter.policyFor(n));
      },
      (err) => p.done({ kind: "refuse", error: misconfigured("limit", "threw", err) }),
    );
  }

  function consume(p: Pending, policy: RateLimitPolicy): void {
    const capacity = capacityOf(policy);
    if (p.units > capacity) {
      // Refused before the store: nothing to count, and no store outage can let it through.
      if (decisions.hasSubscribers)
        publishDecision(decisions, {
          request: p.asked.native,
          decision: "cost-exceeds-quota",
          policy: config.headers.policyName,
          keyKind: p.keyKind,
          cost: p.units,
          capacity,
        });
      p.done({ kind: "refuse", error: costExceedsQuota(p.units, capacity, config.headers.policyName) });
      return;
    }
    let outcome: Decision | Promise<Decision>;
    try {
      outcome = limiter.decide(p.key, p.units, policy);
    } catch (err) {
      failed(p, policy, err);
      return;
    }
    // A synchronous store (memory) answers without a promise or a microtask.
    if (isThenable(outcome))
      outcome.then(
        (decision) => settle(p, policy, decision, false),
        (err: unknown) => failed(p, policy, err),
      );
    else settle(p, policy, outcome, false);
  }

  /**
   * A decision that failed: the configuration's fault (500), else the store's: the `insurance`
   * limiter decides, or without one `failMode` answers.
   */
  function failed(p: Pending, policy: RateLimitPolicy, err: unknown): void {
    const misconfiguration = configurationFailed(err);
    if (misconfiguration) p.done({ kind: "refuse", error: misconfiguration });
    else if (config.insurance) insure(p, policy, err);
    else p.done(storeFailed(config, state, err, p.asked.native));
  }

  /**
   * The store failed and `insurance` is on: the in-memory limiter decides, at the request's
   * limit divided by the instances sharing the store. Should it fail too (its memory full of
   * limited clients), `failMode` answers.
   */
  function insure(p: Pending, policy: RateLimitPolicy, err: unknown): void {
    const insurance = config.insurance as NonNullable<Config["insurance"]>;
    insuranceEngaged(config, state, err, p.asked.native);
    const applied =
      policy === limiter.policy
        ? insurance.limiter.policy
        : insurance.limiter.policyFor(insuredLimit(policy.limit, insurance.instances));
    let decision: Decision;
    try {
      decision = insurance.limiter.decide(p.key, p.units, applied) as Decision;
    } catch (memoryFailed) {
      p.done(storeFailed(config, state, memoryFailed, p.asked.native));
      return;
    }
    insuredDecisions.add(decision);
    settle(p, applied, decision, true);
  }

  /** The decision is in: the fields, the request's info, then allowed or the 429. */
  function settle(p: Pending, policy: RateLimitPolicy, decision: Decision, insured: boolean): void {
    const { asked } = p;
    if (!insured && state.downSince !== undefined) storeRecovered(config, state);
    if (decisions.hasSubscribers)
      publishDecision(decisions, {
        request: asked.native,
        decision: decision.allowed ? "allowed" : "limited",
        policy: config.headers.policyName,
        keyKind: p.keyKind,
        limit: decision.limit,
        remaining: decision.remaining,
        resetAt: decision.resetAt,
        retryAfterMs: decision.retryAfterMs,
        ...(insured ? { insured } : undefined),
      });
    const fields =
      asked.res?.headersSent === true
        ? undefined
        : reportDecision(asked.owner, decision, policy, config.headers);
    const info = requestInfo(config, p, decision);
    if (decision.allowed) {
      p.done({ kind: "allowed", fields, info, key: p.key, units: p.units, decision, policy });
      return;
    }
    const retryAfterSeconds = Math.max(1, ceilSeconds(decision.retryAfterMs));
    const { message } = config;
    after(
      () => (typeof message === "function" ? call<RateLimitMessage>(message, asked) : message),
      (resolved) => {
        let error: HttpError;
        try {
          error = tooManyRequests(retryAfterSeconds, resolved, errorFields ? fields : undefined);
        } catch (err) {
          p.done({
            kind: "refuse",
            error: misconfigured("message", "answered an object that cannot extend the error record", err),
          });
          return;
        }
        p.done({ kind: "denied", fields, info, error, message: resolved, retryAfterSeconds });
      },
      (err) => p.done({ kind: "refuse", error: misconfigured("message", "threw", err) }),
    );
  }

  /** After `skip`: the allowlist, the key, the cost, then the decision. */
  function proceed(asked: Asked, done: (verdict: Verdict) => void): void {
    // The client's own address only: a junk one (counted in the peer's bucket) is never allowed
    // because the peer is.
    const ip = config.allowed ? asked.address : undefined;
    if (ip !== undefined && config.allowed?.(ip)) {
      done(PASS);
      return;
    }
    let key: string | undefined;
    let custom: string | undefined;
    try {
      // An answer of nothing (undefined, null, "": an API key header absent or sent empty) is the
      // default key, so it is counted per client. As a bucket of its own, "" put every client
      // answering it in one: RFC 6585 §4 counts the requests of "the user", not of everyone.
      custom =
        config.key === undefined ? undefined : ((call(config.key, asked) as string | undefined) ?? undefined);
      if (custom === "") custom = undefined;
    } catch (err) {
      done({ kind: "refuse", error: misconfigured("key", "threw", err) });
      return;
    }
    try {
      key = custom ?? defaultKey(config, state, asked);
    } catch (err) {
      // A credentialed request nobody authenticated (principalFor): refused as it is, not counted
      // in an address bucket it shares with every other caller behind that address.
      done({ kind: "refuse", error: err });
      return;
    }
    if (isThenable(key as unknown)) {
      // An async key generator (express-rate-limit's keyGenerator may be one): refused as any
      // other non-string answer, and its rejection handled here, since nobody else will await
      // it and Node ends the process on an unhandled rejection.
      refuseAsync("key", key as unknown as Promise<unknown>, done);
      return;
    }
    if (key === undefined) {
      if (socketGone(asked)) {
        // The client reset the connection while an earlier step ran, taking its address with it.
        // Not a store failure: under failMode "open" it would pass uncounted, so any client could
        // skip the limit by resetting each request after sending it (its side effects still run).
        // RFC 6585 §4 limits the requests a client sends, whether or not it waits for the answers.
        done({ kind: "refuse", error: clientGone() });
        return;
      }
      // No principal and no address on a live connection: a Fetch server that gives no
      // connection, a Unix socket with no proxy trusted.
      done({ kind: "refuse", error: unaddressed(config, state) });
      return;
    }
    if (typeof key !== "string") {
      done({
        kind: "refuse",
        error: misconfigured("key", `must answer a string or undefined, answered ${typeof key}`),
      });
      return;
    }
    let units: number;
    try {
      units = typeof cost === "number" ? cost : (call(cost, asked) as number);
    } catch (err) {
      done({ kind: "refuse", error: misconfigured("cost", "threw", err) });
      return;
    }
    if (isThenable(units as unknown)) {
      refuseAsync("cost", units as unknown as Promise<unknown>, done);
      return;
    }
    if (!Number.isSafeInteger(units) || units < 0) {
      done({
        kind: "refuse",
        error: misconfigured("cost", `must answer a non-negative integer, answered ${String(units)}`),
      });
      return;
    }
    const keyKind = key === custom ? "custom" : key.startsWith("u:") ? "principal" : "address";
    withLimit({
      asked,
      done,
      key: keyKind === "custom" ? customBucket(key) : key,
      label: key,
      keyKind,
      units,
    });
  }

  return {
    state,
    decide(asked, done) {
      const { skip } = config;
      if (!skip) {
        proceed(asked, done);
        return;
      }
      after(
        () => call<boolean>(skip, asked),
        (skipped) => (skipped ? done(PASS) : proceed(asked, done)),
        // Not skipped on error: a skip that throws must not become a way around the limit.
        (err) => done({ kind: "refuse", error: misconfigured("skip", "threw", err) }),
      );
    },
  };
}

const PASS: Verdict = Object.freeze({ kind: "pass" });

/** Decisions the `insurance` limiter made (their refunds go back to it, not to the store). */
const insuredDecisions = new WeakSet<Decision>();

/**
 * @internal For the package's Express adapter.
 *
 * What an allowed request spent, for giving it back after the response.
 */
export interface Counted {
  readonly key: string;
  readonly units: number;
  readonly decision: Decision;
  readonly policy: RateLimitPolicy;
}

/**
 * @internal For the package's Express adapter (`@svc/ratelimit/express`).
 *
 * `skipSuccessfulRequests` / `skipFailedRequests`, once the response to a counted request has been
 * written whole: gives its units back if its outcome (`successful`, the `requestWasSuccessful`
 * answer on the response's final status) is one to skip. `successful` throwing or rejecting
 * leaves the request counted, logged. The adapters call this only for a response written whole:
 * one whose write failed, or whose client went away before it ended, stays counted, whatever its
 * status. The handler is usually still running then (its side effects too), and nothing says it
 * failed; were the units given back, a client sending requests and hanging up at once would run
 * the handler without limit. RFC 6585 §4 limits the requests a client sends, whether or not it
 * waits for the answers.
 */
export function afterResponse(
  config: Config,
  state: State,
  counted: Counted,
  successful: () => boolean | Promise<boolean>,
  label: string,
): void {
  after(
    successful,
    (success) => {
      if (!(success ? config.refundSuccessful : config.refundFailed)) return;
      // An insured decision's units went to the insurance limiter's memory, not to the store.
      const limiter =
        config.insurance && insuredDecisions.has(counted.decision)
          ? config.insurance.limiter
          : config.limiter;
      limiter
        .refund(counted.key, counted.units, counted.decision, counted.policy)
        .catch((err: unknown) =>
          logFailure(config, state, err, "rate limit store failed to give units back"),
        );
    },
    (err) => logFailure(config, state, err, `rate limit: ${label} threw; the request stays counted`),
  );
}

/**
 * A request's {@link RateLimitInfo}: its fields own and enumerable, `current` (express-rate-limit's
 * name for `used` before v7, still read by code moving from it) on the prototype, not enumerable,
 * as there. A class rather than `Object.defineProperty` on each request's object: the same fields,
 * without a property definition per request.
 */
class Info implements RateLimitInfo {
  limit: number;
  used: number;
  remaining: number;
  resetTime: Date;
  key: string;
  policy: string;

  constructor(decision: Decision, key: string, policy: string) {
    this.limit = decision.limit;
    this.used = decision.limit - decision.remaining;
    this.remaining = decision.remaining;
    this.resetTime = new Date(decision.resetAt);
    this.key = key;
    this.policy = policy;
  }

  get current(): number {
    return this.used;
  }
}

/**
 * The request's exchange's `rateLimit` (`requestState(req).rateLimit` for the application's
 * handlers, and what the adapters copy onto the framework's request under `requestPropertyName`):
 * this decision, unless another limiter's on the same request is tighter, the same one
 * X-RateLimit-* shows. The framework's request itself is left untouched.
 */
function requestInfo(config: Config, p: Pending, decision: Decision): RateLimitInfo {
  const info = new Info(decision, p.label, config.headers.policyName);
  const native = p.asked.native;
  if (typeof native === "object" && native !== null) {
    const exchange = exchangeOf(native);
    if (exchange.rateLimit === undefined || tightestDecision(p.asked.owner) === decision)
      exchange.rateLimit = info;
  }
  return info;
}

const KEY_FIX =
  'mount the limiter after authenticate() of @svc/auth (or record the principal with recordAuthentication of @svc/kernel), or give key: "client" to count every request by its client address';

/**
 * `u:<principal key>` (`principalKey` of `@svc/kernel`: the principal `@svc/auth` recorded for the
 * request, on every framework, qualified by its issuer, so two issuers' `alice` count apart; none
 * with `key: "client"`), else `ip:<bucket of the client address>` (warning once about Express's `trust proxy`), else,
 * for an address that is not one, the peer's bucket ({@link peerKey}).
 */
function defaultKey(config: Config, state: State, asked: Asked): string | undefined {
  if (!config.byClient) {
    const principal = principalFor(asked.native, "rate limit", KEY_FIX);
    if (typeof principal?.id === "string" && principal.id !== "") return `u:${principalKey(principal)}`;
  }
  if (!state.proxyWarned) {
    const mistake = proxyMistake(asked);
    if (mistake) {
      config.logger.warn(...mistake);
      state.proxyWarned = true;
    }
  }
  const ip = asked.address;
  if (ip === undefined) return undefined;
  const bucket = ipBucket(ip, config.ipv6Subnet);
  return bucket === undefined ? peerKey(config, state, asked, ip) : `ip:${bucket}`;
}

/**
 * The key of a request whose client address is not an IP address: the bucket of the connection's
 * peer, warning once. With `trust proxy` wider than the proxies (`true`: every hop), `req.ip` is the
 * first X-Forwarded-For entry, whatever the client wrote there ("garbage", "010.0.0.1", "1.2.3").
 * Express takes it as is, and RFC 7239 §6.2/§6.3 let a proxy name a client it hides as "unknown" or
 * an obfuscated "_hidden". Without a key the request went to `failMode` (under "open", passed
 * uncounted): any client could skip the limit by sending junk. RFC 6585 §4 limits the requests "the
 * user has sent", so they are counted where they came from, the peer (every such client then shares
 * its bucket), or, on a connection without a peer address (a Unix socket), in one bucket
 * `ip:unknown`. Undefined only when the client reset the connection, taking its address with it.
 */
function peerKey(config: Config, state: State, asked: Asked, ip: string): string | undefined {
  const peer = asked.view.socket?.remoteAddress;
  const bucket = peer === undefined ? undefined : ipBucket(peer, config.ipv6Subnet);
  if (bucket === undefined && socketGone(asked)) return undefined;
  if (!state.addressWarned) {
    config.logger.warn(
      { clientIp: ip.slice(0, 100), peer },
      'rate limit: the client address is not an IP address (is "trust proxy" wider than your proxies?); such requests count in the bucket of the connection\'s peer',
    );
    state.addressWarned = true;
  }
  return `ip:${bucket ?? "unknown"}`;
}

/**
 * An express-rate-limit store whose asynchronous `init` rejects fails every decision after it,
 * which `failMode` answers: under "open" every request would pass unlimited with only the periodic
 * store-failure line to say why. The rejection itself is logged once, when it happens.
 */
function reportInit(config: Config): void {
  initOf(config.limiter.store)?.catch((err: unknown) => {
    config.logger.warn(
      { err, failMode: config.failMode },
      config.failMode === "open"
        ? "rate limit: the store failed to initialise; its decisions fail, so requests pass unlimited (failMode open)"
        : "rate limit: the store failed to initialise; its decisions fail, so requests are answered 503 (failMode closed)",
    );
  });
}

/** A store failure in the log, at most once per `logIntervalMs` (the line counts the ones left out). */
export function logFailure(config: Config, state: State, err: unknown, message: string): void {
  const now = Date.now();
  if (now - state.lastLog >= config.logIntervalMs) {
    const { suppressed } = state;
    config.logger.warn({ err, suppressed }, message);
    state.lastLog = now;
    state.suppressed = 0;
  } else {
    state.suppressed++;
  }
}

/**
 * `failMode`: a 503, or the request passes unlimited. The outage is logged once, at its first
 * failure, whatever the interval since the last line; {@link storeRecovered} logs its end.
 */
function storeFailed(config: Config, state: State, err: unknown, request: object): Verdict {
  const { failMode } = config;
  if (decisions.hasSubscribers)
    publishDecision(decisions, { request, decision: "store-failed", failMode, error: err });
  state.failures++;
  if (state.downSince === undefined) {
    state.downSince = Date.now();
    config.logger.warn(
      { err, failMode },
      failMode === "open"
        ? "rate limit store failed; requests pass unlimited until it answers again"
        : "rate limit store failed; requests are answered 503 until it answers again",
    );
  }
  if (failMode === "closed") {
    return {
      kind: "refuse",
      error: HttpError.serviceUnavailable(config.failRetryAfter, "Rate limiting is temporarily unavailable", {
        code: "rate_limit_unavailable",
        cause: err,
      }),
    };
  }
  return PASS;
}

/**
 * The store failed with `insurance` on: at the outage's first failure, the switch to the
 * in-memory limiter is logged and published once (`store-failed` with `failMode: "insurance"`);
 * later failures of the same outage are only counted, their requests' decisions published as
 * `allowed` / `limited` with `insured: true`.
 */
function insuranceEngaged(config: Config, state: State, err: unknown, request: object): void {
  state.failures++;
  if (state.downSince !== undefined) return;
  state.downSince = Date.now();
  const insurance = config.insurance as NonNullable<Config["insurance"]>;
  const { policy } = insurance.limiter;
  config.logger.warn(
    { err, failMode: "insurance", instances: insurance.instances, insuredLimit: policy.limit },
    `rate limit store failed; each instance limits in memory at ${policy.limit} per ${policy.windowMs} ms (the limit divided by ${insurance.instances} instances) until it answers again`,
  );
  if (decisions.hasSubscribers)
    publishDecision(decisions, { request, decision: "store-failed", failMode: "insurance", error: err });
}

/** The store answered a decision after failing: the outage's end, logged and published once. */
function storeRecovered(config: Config, state: State): void {
  const downMs = Math.max(0, Date.now() - (state.downSince as number));
  const failed = state.failures;
  state.downSince = undefined;
  state.failures = 0;
  const { logger } = config;
  (logger.info ?? logger.warn).call(
    logger,
    { downMs, failed },
    `rate limit store answered again after ${downMs} ms; ${failed} decision(s) failed meanwhile`,
  );
  if (decisions.hasSubscribers)
    publishDecision(decisions, {
      decision: "store-recovered",
      downMs,
      ...(config.insurance ? { insured: failed } : undefined),
    });
}

/** Why {@link unaddressed} refuses, and what to give the limiter so that it does not. */
const UNADDRESSED =
  "rate limit: a request has neither a principal nor a client address, so it cannot be counted, and is refused (500) rather than passed unlimited. Give the limiter a `key`, or the client's address: on the Fetch API its `connection` option (Deno.serve's info.remoteAddr, Bun's server.requestIP), or `clientAddressHeader` behind a proxy that sets one; behind a proxy on a Unix socket, `trustProxy`";

/**
 * The refusal of a request with neither a principal nor a client address on a live connection:
 * nothing to count it by. Not a store failure for `failMode` to decide: under "open" every such
 * request passed unlimited, with a warning that blamed the store. RFC 6585 §4 limits the requests
 * "the user" sends; a limiter that cannot tell users apart is misconfigured, so a 500 (its cause
 * names the options), and the limiter's `logger` says so at most once per `logIntervalMs`.
 */
function unaddressed(config: Config, state: State): HttpError {
  const cause = new Error(UNADDRESSED);
  const now = Date.now();
  if (now - state.unaddressedLog >= config.logIntervalMs) {
    config.logger.warn({ err: cause }, UNADDRESSED);
    state.unaddressedLog = now;
  }
  return HttpError.internal("The request could not be rate limited", {
    code: "rate_limit_no_client_address",
    cause,
  });
}

/**
 * The refusal of a request whose client reset the connection before it could be keyed: nobody
 * reads it (the error handler logs it); what matters is that the route does not run uncounted.
 */
function clientGone(): HttpError {
  return new HttpError(400, "The client closed the connection before the request could be rate limited", {
    code: "rate_limit_client_gone",
  });
}

/**
 * The 429 of a request that costs more than its policy ever allows (`limit`, `burst` for `gcra`).
 * RFC 6585 §4: 429 "indicates that the user has sent too many requests in a given amount of
 * time", and it "MAY include a Retry-After header indicating how long to wait before making a new
 * request". RFC 9110 §10.2.3: Retry-After says "how long the user agent ought to wait before
 * making a follow-up request". No wait makes this request fit, so it carries no Retry-After, and
 * none of the RateLimit fields (draft-ietf-httpapi-ratelimit-headers-10 §4.1.2: `t` is when
 * "additional quota" is available, which would again read as a time to retry); a distinct `code`
 * and a message that says to make the request smaller.
 */
function costExceedsQuota(units: number, capacity: number, policyName: string): HttpError {
  return new HttpError(
    429,
    `This request costs ${units} units; the ${JSON.stringify(policyName)} rate limit allows at most ${capacity} at once, so it can never be accepted: send a smaller request`,
    { code: "rate_limit_cost_exceeds_quota" },
  );
}

/**
 * The 429 of a denied decision. RFC 6585 §4: it "MAY include a Retry-After header indicating how
 * long to wait"; rounded up so a client that obeys it never arrives before its quota is back.
 * `message` is the record's message (a string) or extension members added to it (an object);
 * `fields`, the rate limit fields the error response carries.
 */
function tooManyRequests(
  retryAfter: number,
  message: RateLimitMessage | undefined,
  fields: RateLimitFields | undefined,
): HttpError {
  const headers = fields === undefined ? {} : { headers: fields };
  if (typeof message === "string")
    return HttpError.tooManyRequests(retryAfter, message, { code: "rate_limited", ...headers });
  return HttpError.tooManyRequests(retryAfter, "Too many requests", {
    code: "rate_limited",
    ...headers,
    ...(message === undefined ? {} : { extensions: message }),
  });
}
