import type { IncomingMessage, ServerResponse } from "node:http";
import { fallbackLogger, HttpError, type Logger, type NextFunction } from "@svc/errors";
import { type IpMatcher, ipBucket, ipMatcher } from "./client-key.js";
import { ceilSeconds, type HeaderSettings, type ResetFormat, setRateLimitHeaders } from "./headers.js";
import { createRateLimiter, type RateLimiter, type RateLimiterOptions } from "./limiter.js";
import { optionError } from "./option-error.js";
import type { Decision } from "./types.js";

/**
 * The authenticated principal an authentication middleware leaves on the request.
 * @example
 * req.principal = { id: "user-42" };
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-11
 */
export interface RateLimitPrincipal {
  id: string;
}

/**
 * The parts of an Express (or plain `node:http`) request the middleware reads.
 * @example
 * rateLimit({ limit: 10, key: (req: RateLimitRequest) => req.principal?.id });
 * @see https://expressjs.com/en/guide/behind-proxies.html
 */
export interface RateLimitRequest extends IncomingMessage {
  /** The Express application, read for its `trust proxy` setting. */
  app?: { get(setting: string): unknown } | undefined;
  /** Express's client address, which honours the app's `trust proxy` setting. */
  ip?: string | undefined;
  /** Set by `@svc/auth` for authenticated requests. */
  principal?: RateLimitPrincipal | undefined;
}

/** The part of a `Logger` (from `@svc/errors`) this package calls; pino loggers fit. */
export type RateLimitLogger = Pick<Logger, "warn">;

/**
 * Options of {@link rateLimit}: the limiter's own options (or a ready limiter) plus the HTTP side.
 * @example
 * const options: RateLimitOptions = { limit: 100, windowMs: 60_000, failMode: "closed" };
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10
 */
export interface RateLimitOptions extends Partial<RateLimiterOptions> {
  /**
   * A limiter built with `createRateLimiter`; when given, the limiter options are not allowed.
   * @default a limiter built from this object's `limit`, `windowMs`, `algorithm`, `burst`, `store`, `prefix`
   */
  limiter?: RateLimiter;
  /**
   * The bucket a request counts in; return `undefined` to fall back to the default.
   * @default `u:<principal.id>` when `req.principal` is set, else `ip:<client IP bucket>`
   */
  key?: (req: RateLimitRequest) => string | undefined;
  /**
   * Units a request spends (per-route costs: a search costs 5, a read 1).
   * @default 1
   */
  cost?: number | ((req: RateLimitRequest) => number);
  /**
   * Requests for which the limiter is not consulted at all (no headers either).
   * @default () => false
   */
  skip?: (req: RateLimitRequest) => boolean;
  /**
   * Client IPs or CIDR ranges that are never limited (health checks, internal callers).
   * @default []
   */
  allowlist?: readonly string[];
  /**
   * IPv6 clients are grouped by this prefix length; `false` keys each address on its own.
   * @default 64
   */
  ipv6Subnet?: number | false;
  /**
   * Send `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (the de facto headers
   * that predate the IETF RateLimit draft).
   * @default true
   */
  legacyHeaders?: boolean;
  /**
   * `X-RateLimit-Reset` as the epoch second of the reset (`"epoch-seconds"`, as GitHub's API and
   * most clients of these headers expect) or as seconds from now (`"delta-seconds"`).
   * @default "epoch-seconds"
   */
  resetFormat?: ResetFormat;
  /**
   * Send the IETF draft's `RateLimit-Policy` and `RateLimit` headers (revision 10 syntax).
   * @default true
   */
  standardHeaders?: boolean;
  /**
   * The policy name in `RateLimit-Policy` / `RateLimit`.
   * @default "default"
   */
  policyName?: string;
  /**
   * What happens when the store fails (Redis down or slow, memory store full of limited clients):
   * `"open"` lets the request pass and logs the failure at most once per `logIntervalMs`;
   * `"closed"` answers 503 with `Retry-After`. Either way the next request tries the store again,
   * so service resumes by itself once the store is back.
   * @default "open"
   */
  failMode?: "open" | "closed";
  /**
   * `Retry-After` seconds on the 503 of `failMode: "closed"`.
   * @default 5
   */
  failRetryAfterSeconds?: number;
  /**
   * Where `failMode: "open"` reports store failures.
   * @default one JSON line on stderr
   */
  logger?: RateLimitLogger;
  /**
   * Shortest time between two failure log lines.
   * @default 60_000
   */
  logIntervalMs?: number;
}

const LIMITER_OPTIONS = ["limit", "windowMs", "algorithm", "burst", "store", "prefix", "now"] as const;

/** The options of {@link rateLimit}, checked and resolved once. */
interface Config {
  limiter: RateLimiter;
  ipv6Subnet: number | false;
  cost: number | ((req: RateLimitRequest) => number);
  failMode: "open" | "closed";
  failRetryAfter: number;
  /** The allowlist, compiled; undefined when empty. */
  allowed: IpMatcher | undefined;
  skip: ((req: RateLimitRequest) => boolean) | undefined;
  key: ((req: RateLimitRequest) => string | undefined) | undefined;
  logger: RateLimitLogger;
  logIntervalMs: number;
  headers: HeaderSettings;
}

/** `limiter`, or one built from the limiter options (never both). */
function resolveLimiter(options: RateLimitOptions): RateLimiter {
  if (options.limiter) {
    const clash = LIMITER_OPTIONS.filter((name) => options[name] !== undefined);
    if (clash.length > 0)
      throw optionError("rate limit", "limiter", `pass either limiter or ${clash.join(", ")}, not both`);
    return options.limiter;
  }
  const { limit } = options;
  if (limit === undefined) throw optionError("rate limit", "limit", "limit is required");
  const limiterOptions: RateLimiterOptions = { limit };
  if (options.windowMs !== undefined) limiterOptions.windowMs = options.windowMs;
  if (options.algorithm !== undefined) limiterOptions.algorithm = options.algorithm;
  if (options.burst !== undefined) limiterOptions.burst = options.burst;
  if (options.store !== undefined) limiterOptions.store = options.store;
  if (options.prefix !== undefined) limiterOptions.prefix = options.prefix;
  if (options.now !== undefined) limiterOptions.now = options.now;
  return createRateLimiter(limiterOptions);
}

/** The response headers: which families, how `X-RateLimit-Reset` is written, the policy name. */
function resolveHeaders(options: RateLimitOptions): HeaderSettings {
  const resetFormat = options.resetFormat ?? "epoch-seconds";
  if (resetFormat !== "epoch-seconds" && resetFormat !== "delta-seconds")
    throw optionError(
      "rate limit",
      "resetFormat",
      `resetFormat must be "epoch-seconds" or "delta-seconds", got ${String(resetFormat)}`,
    );
  return {
    legacy: options.legacyHeaders ?? true,
    standard: options.standardHeaders ?? true,
    resetFormat,
    policyName: options.policyName ?? "default",
  };
}

/** Checks every option once; a refused one throws a `TypeError` with `code` `ERR_SVC_RATELIMIT_<OPTION>`. */
function resolveConfig(options: RateLimitOptions): Config {
  const limiter = resolveLimiter(options);
  const ipv6Subnet = options.ipv6Subnet ?? 64;
  if (ipv6Subnet !== false && (!Number.isInteger(ipv6Subnet) || ipv6Subnet < 1 || ipv6Subnet > 128))
    throw optionError(
      "rate limit",
      "ipv6Subnet",
      `ipv6Subnet must be 1..128 or false, got ${String(ipv6Subnet)}`,
    );
  const cost = options.cost ?? 1;
  if (typeof cost === "number" && (!Number.isSafeInteger(cost) || cost < 0))
    throw optionError("rate limit", "cost", `cost must be a non-negative integer, got ${String(cost)}`);
  const failMode = options.failMode ?? "open";
  if (failMode !== "open" && failMode !== "closed")
    throw optionError(
      "rate limit",
      "failMode",
      `failMode must be "open" or "closed", got ${String(failMode)}`,
    );
  const headers = resolveHeaders(options);
  const failRetryAfter = options.failRetryAfterSeconds ?? 5;
  if (!Number.isFinite(failRetryAfter) || failRetryAfter < 0)
    throw optionError(
      "rate limit",
      "failRetryAfterSeconds",
      `failRetryAfterSeconds must be a non-negative number, got ${String(failRetryAfter)}`,
    );
  return {
    limiter,
    ipv6Subnet,
    cost,
    failMode,
    failRetryAfter,
    allowed: options.allowlist?.length ? ipMatcher(options.allowlist) : undefined,
    skip: options.skip,
    key: options.key,
    logger: options.logger ?? fallbackLogger,
    logIntervalMs: options.logIntervalMs ?? 60_000,
    headers,
  };
}

/** The client's IP address: Express's `req.ip` (trust proxy applied), else the socket peer. */
function clientIp(req: RateLimitRequest): string | undefined {
  return req.ip ?? req.socket?.remoteAddress;
}

/**
 * The two `trust proxy` mistakes that break IP keying, or undefined: a forwarded request while
 * nothing is trusted (every client shares the proxy's bucket), and trusting every hop (any client
 * picks its own address, and bucket, with a forged `X-Forwarded-For`).
 */
function proxyMistake(req: RateLimitRequest): [{ trustProxy: boolean }, string] | undefined {
  const trust = typeof req.app?.get === "function" ? req.app.get("trust proxy") : undefined;
  if (trust === true) {
    return [
      { trustProxy: true },
      'rate limit: "trust proxy" is true, so any client can choose its IP with X-Forwarded-For; trust only your proxies (a hop count or their addresses)',
    ];
  }
  if (trust === false && req.headers["x-forwarded-for"] !== undefined) {
    return [
      { trustProxy: false },
      'rate limit: X-Forwarded-For arrived but "trust proxy" is off, so every client behind that proxy shares one bucket; set "trust proxy" to your proxies',
    ];
  }
  return undefined;
}

/** Whether the request is not limited at all: `skip`, or a client on the allowlist. */
function exempt(config: Config, req: RateLimitRequest): boolean {
  if (config.skip?.(req)) return true;
  if (!config.allowed) return false;
  const ip = clientIp(req);
  return ip !== undefined && config.allowed(ip);
}

/**
 * Express middleware that limits each client (the authenticated principal, else its IP bucket)
 * and reports usage on every response. Over the limit it calls `next(HttpError 429)` with
 * `Retry-After`; the rate limit headers are already set, so the error response keeps them.
 *
 * It never reads `X-Forwarded-For` itself: the client IP is Express's `req.ip`, so set
 * `app.set("trust proxy", ...)` to exactly the proxies in front of the app. Trusting too much lets
 * clients spoof their address; trusting too little puts every client in the proxy's bucket.
 *
 * @example
 * app.set("trust proxy", 1); // one load balancer in front
 * app.use(rateLimit({ limit: 100, windowMs: 60_000 }));
 * app.post("/search", rateLimit({ limit: 10, windowMs: 60_000, cost: 2 }), search);
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10
 */
export function rateLimit(options: RateLimitOptions) {
  const config = resolveConfig(options);
  const { limiter, cost, headers } = config;
  const state: State = { proxyWarned: false, lastLog: Number.NEGATIVE_INFINITY, suppressed: 0 };

  return function rateLimitMiddleware(req: RateLimitRequest, res: ServerResponse, next: NextFunction): void {
    if (exempt(config, req)) {
      next();
      return;
    }
    const key = config.key?.(req) ?? defaultKey(config, state, req);
    if (key === undefined) {
      // No principal and no IP (a socket already gone): nothing to count against.
      storeFailed(
        config,
        state,
        new Error("rate limit: request has neither a principal nor a client IP"),
        next,
      );
      return;
    }
    const units = typeof cost === "number" ? cost : cost(req);
    if (!Number.isSafeInteger(units) || units < 0) {
      next(new TypeError(`rate limit: cost(req) must be a non-negative integer, got ${String(units)}`));
      return;
    }
    const settle = (decision: Decision): void => {
      setRateLimitHeaders(res, decision, limiter.policy, headers);
      if (decision.allowed) next();
      else next(tooManyRequests(decision));
    };
    let outcome: Decision | Promise<Decision>;
    try {
      outcome = limiter.decide(key, units);
    } catch (err) {
      storeFailed(config, state, err, next);
      return;
    }
    // A synchronous store (memory) answers without a promise or a microtask.
    if ("then" in outcome && typeof outcome.then === "function")
      outcome.then(settle, (err: unknown) => storeFailed(config, state, err, next));
    else settle(outcome as Decision);
  };
}

/** What one middleware remembers between requests: warnings already given, failures logged. */
interface State {
  proxyWarned: boolean;
  lastLog: number;
  suppressed: number;
}

/** `u:<principal id>`, else `ip:<bucket of the client address>` (warning once about `trust proxy`). */
function defaultKey(config: Config, state: State, req: RateLimitRequest): string | undefined {
  const id = req.principal?.id;
  if (typeof id === "string" && id !== "") return `u:${id}`;
  if (!state.proxyWarned) {
    const mistake = proxyMistake(req);
    if (mistake) {
      config.logger.warn(...mistake);
      state.proxyWarned = true;
    }
  }
  const ip = clientIp(req);
  const bucket = ip === undefined ? undefined : ipBucket(ip, config.ipv6Subnet);
  return bucket === undefined ? undefined : `ip:${bucket}`;
}

/** `failMode`: a 503, or the request passes unlimited (logged at most once per interval). */
function storeFailed(config: Config, state: State, err: unknown, next: NextFunction): void {
  if (config.failMode === "closed") {
    next(
      HttpError.serviceUnavailable(config.failRetryAfter, "Rate limiting is temporarily unavailable", {
        code: "rate_limit_unavailable",
        cause: err,
      }),
    );
    return;
  }
  const now = Date.now();
  if (now - state.lastLog >= config.logIntervalMs) {
    const { suppressed } = state;
    config.logger.warn(
      { err, suppressed },
      "rate limit store failed; requests pass unlimited until it answers again",
    );
    state.lastLog = now;
    state.suppressed = 0;
  } else {
    state.suppressed++;
  }
  next();
}

/**
 * The 429 of a denied decision. RFC 6585 §4: it "MAY include a Retry-After header indicating how
 * long to wait"; rounded up so a client that obeys it never arrives before its quota is back.
 */
function tooManyRequests(decision: Decision): HttpError {
  const retryAfter = Math.max(1, ceilSeconds(decision.retryAfterMs));
  return HttpError.tooManyRequests(retryAfter, "Too many requests", { code: "rate_limited" });
}
