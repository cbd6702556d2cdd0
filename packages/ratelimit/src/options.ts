import type { IncomingMessage, ServerResponse } from "node:http";
import { fallbackLogger, HttpError, type Logger, type NextFunction } from "@svc/errors";
import { checkOptionNames } from "@svc/kernel/internal";
import { type IpMatcher, ipMatcher } from "./client-key.js";
import { maxCostOf } from "./express-store.js";
import {
  type HeaderSettings,
  isPolicyName,
  MAX_POLICY_NAME,
  type RateLimitDraft,
  type ResetFormat,
  standardHeadersOf,
} from "./headers.js";
import {
  capacityOf,
  createRateLimiter,
  LIMITER_OPTIONS,
  type RateLimiter,
  type RateLimiterOptions,
} from "./limiter.js";
import { MemoryStore } from "./memory-store.js";
import { optionError, refused } from "./option-error.js";

/**
 * The authenticated principal `@svc/auth` sets on Express's `req` under its `requestProperty`
 * compatibility option (output only: the limiter reads the principal authentication recorded,
 * `recordAuthentication` of `@svc/kernel`).
 * @example
 * recordAuthentication(req, { id: "user-42" });
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-11
 */
export interface RateLimitPrincipal {
  id: string;
}

/**
 * The decision of the tightest limiter so far, for later handlers: `requestState(req).rateLimit`
 * of `@svc/kernel`, on every framework (and `req.rateLimit` under the `requestPropertyName`
 * compatibility option).
 * @example
 * app.get("/quota", (req, res) => res.json({ remaining: requestState(req).rateLimit?.remaining }));
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10#section-4.1
 */
export interface RateLimitInfo {
  /** The quota (the per-request limit when `limit` is a function). */
  limit: number;
  /** Units spent in the window, this request included (`limit - remaining`). */
  used: number;
  /**
   * The same as `used`, under express-rate-limit's older name; not enumerable (as there), so it
   * is not serialised twice.
   * @deprecated Read `used`.
   */
  readonly current: number;
  remaining: number;
  /** When the full quota is back. */
  resetTime: Date;
  /** The bucket the request counted in (`u:<principal>`, `ip:<address or /64>` or your `key`). */
  key: string;
  /** The policy name in the `RateLimit` header. */
  policy: string;
}

/**
 * The parts of an Express (or plain `node:http`) request the middleware reads.
 * @example
 * rateLimit({ limit: 10, key: (req: RateLimitRequest) => req.headers["x-api-key"] as string | undefined });
 * @see https://expressjs.com/en/guide/behind-proxies.html
 */
export interface RateLimitRequest extends IncomingMessage {
  /** The Express application, read for its `trust proxy` setting. */
  app?: { get(setting: string): unknown } | undefined;
  /** Express's client address, which honours the app's `trust proxy` setting. */
  ip?: string | undefined;
  /**
   * Set by `@svc/auth` under its `requestProperty` compatibility option; the limiter reads the
   * principal recorded with the request (`requestState(req).principal` of `@svc/kernel`).
   */
  principal?: RateLimitPrincipal | undefined;
  /**
   * Copied there by the Express middleware under `requestPropertyName: "rateLimit"` (the limiter
   * records the decision in the request's exchange only); read `requestState(req).rateLimit`.
   */
  rateLimit?: RateLimitInfo | undefined;
}

/**
 * The part of a `Logger` (from `@svc/errors`) this package calls; pino loggers fit. `info`, when
 * there, takes the line saying the store answers again after an outage (else `warn` does).
 */
export type RateLimitLogger = Pick<Logger, "warn" | "info">;

/** A value computed from the request, at once or later. */
export type PerRequest<T> = (req: RateLimitRequest, res: ServerResponse) => T | Promise<T>;

/** The body of the 429: the error record's `message`, or members added to it. */
export type RateLimitMessage = string | Readonly<Record<string, unknown>>;

/**
 * The 4th argument of a custom `handler`.
 * @example
 * rateLimit({ limit: 5, handler: (req, res, next, exceeded) => next(exceeded.error) });
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export interface RateLimitExceeded {
  /** Always 429. */
  statusCode: 429;
  /** `message`, resolved for this request (the function's answer), if given. */
  message: RateLimitMessage | undefined;
  /** The 429 the default handler passes to `next` (error record, `Retry-After`). */
  error: HttpError;
  /** The same object as `requestState(req).rateLimit`. */
  info: RateLimitInfo;
  /** The `Retry-After` seconds, already set on the response. */
  retryAfterSeconds: number;
}

/**
 * Answers a refused request instead of the default `next(error)`.
 * @example
 * const handler: RateLimitHandler = (req, res) => { res.status(429).json({ error: "slow down" }); };
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export type RateLimitHandler = (
  req: RateLimitRequest,
  res: ServerResponse,
  next: NextFunction,
  exceeded: RateLimitExceeded,
) => void | Promise<void>;

/**
 * Options of `rateLimit` (`@svc/ratelimit/express`): the limiter's own options (or a ready limiter) plus the HTTP side.
 * @example
 * const options: RateLimitOptions = { limit: 100, windowMs: 60_000, failMode: "closed" };
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-10
 */
export interface RateLimitOptions extends Omit<Partial<RateLimiterOptions>, "limit"> {
  /**
   * Units per window: a positive integer, or a function of the request (sync or async) answering
   * one (per plan, per route). A function that throws or answers anything but a positive integer
   * fails the request with a 500 (the configuration is at fault); it is neither counted nor passed.
   */
  limit?: number | PerRequest<number>;
  /**
   * A limiter built with `createRateLimiter`; when given, the limiter options are not allowed.
   * @default a limiter built from this object's `limit`, `windowMs`, `algorithm`, `burst`, `store`, `prefix`
   */
  limiter?: RateLimiter;
  /**
   * The bucket a request counts in; return `undefined` (or `null`, or `""`) to fall back to the
   * default, which counts the request too (an address that is not one in the peer's bucket). An answer
   * spelled like a default key (`u:…`, `ip:…`) or starting with `k:` counts under `k:<answer>`,
   * so a client-chosen value never lands in another client's default bucket.
   *
   * `"client"` counts every request by its client address (`ip:<client IP bucket>`), whoever it
   * authenticates as: the limiter to mount in front of authentication, so that requests whose
   * credentials are missing or refused are limited too (see the README's "Order").
   * @default `u:<principal id>` when `@svc/auth` (or `recordAuthentication` of `@svc/kernel`)
   * recorded a principal for the request, else `ip:<client IP bucket>`; a request that carries
   * credentials (`Authorization`) when nothing recorded its principal is refused with a 500
   * (logged), never counted with every other caller behind its address
   */
  key?: "client" | ((req: RateLimitRequest) => string | undefined);
  /**
   * Units a request spends (per-route costs: a search costs 5, a read 1): a non-negative integer,
   * at most the limit (`burst` for `gcra`). A function answering more refuses that request with a
   * 429 without `Retry-After` (see `handler`); one answering anything but a non-negative integer
   * fails it with a 500.
   * @default 1
   */
  cost?: number | ((req: RateLimitRequest) => number);
  /**
   * Requests for which the limiter is not consulted at all (no headers either); sync or async.
   * A `skip` that throws fails the request with a 500 (it is not skipped).
   * @default () => false
   */
  skip?: PerRequest<boolean>;
  /**
   * Give the units back once the response is sent if it was successful (`requestWasSuccessful`).
   * @default false
   */
  skipSuccessfulRequests?: boolean;
  /**
   * Give the units back once the response is sent if it failed (`requestWasSuccessful` false).
   * A request whose client closed the connection before the response ended stays counted: its
   * handler may still be running, and a client could otherwise run it without limit by hanging up.
   * @default false
   */
  skipFailedRequests?: boolean;
  /**
   * Whether a finished response counts as successful, for the two options above.
   * @default (req, res) => res.statusCode < 400
   */
  requestWasSuccessful?: PerRequest<boolean>;
  /**
   * Answers a refused request (after the headers and `Retry-After` are set). A request whose
   * `cost` is more than the limit (`burst` for `gcra`) is not passed here: no wait would let it
   * through, so it goes to `next` as a 429 with code `rate_limit_cost_exceeds_quota` and no
   * `Retry-After`.
   * @default (req, res, next, exceeded) => next(exceeded.error): the error record of `errorHandler`
   */
  handler?: RateLimitHandler;
  /**
   * The 429's message: a string (the record's `message`), an object (members added to the record,
   * RFC 9457 §3.2 extensions), or a function of the request answering either.
   * @default "Too many requests"
   */
  message?: RateLimitMessage | PerRequest<RateLimitMessage>;
  /**
   * A compatibility option for applications written against 0.1 and 0.2 (and express-rate-limit):
   * the property of Express's `req` or Fastify's `request` the Express middleware and the Fastify
   * plugin and hook copy the decision onto (`"rateLimit"`: `req.rateLimit`). Handlers read it with
   * `requestState(req).rateLimit` of `@svc/kernel`, on every framework, and no package reads the
   * property; `false` writes none.
   * @default false
   */
  requestPropertyName?: string | false;
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
   * that predate the IETF RateLimit draft); with several limiters, the tightest one's.
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
   * Send the IETF draft's headers: `true` in the syntax of its revision 10 (`RateLimit-Policy`
   * and `RateLimit` Lists, every limiter on the request one policy in them), or in the syntax of
   * the revision named, as express-rate-limit writes them: `"draft-6"` (`RateLimit-Limit`,
   * `-Remaining`, `-Reset`, `RateLimit-Policy: 100;w=60`), `"draft-7"` (`RateLimit: limit=100,
   * remaining=99, reset=60`, `RateLimit-Policy: 100;w=60`), `"draft-8"` to `"draft-10"` (as
   * `true`); `false` for none. Draft-6 and draft-7 carry one quota, the tightest limiter's.
   * @default true
   */
  standardHeaders?: boolean | RateLimitDraft;
  /**
   * The policy name in `RateLimit-Policy` / `RateLimit`: 1 to 64 printable ASCII characters.
   * @default "default"
   */
  policyName?: string;
  /**
   * What happens when the store fails (Redis down or slow, memory store full of limited clients):
   * `"open"` lets the request pass; `"closed"` answers 503 with `Retry-After`. Either way the
   * next request tries the store again, so service resumes by itself once the store is back. An
   * outage is logged once, at its first failure (`warn`), and its end once, at the first decision
   * the store answers again (`info`, else `warn`).
   * @default "open"
   */
  failMode?: "open" | "closed";
  /**
   * An in-memory limiter that decides while the store fails (rate-limiter-flexible's
   * `insuranceLimiter`), instead of `failMode`. Each instance counts on its own with the limit
   * (and `burst`) divided by `instances`, the number of instances sharing the store, rounded
   * down, at least 1; so the fleet as a whole admits about the configured limit, as long as the
   * load is spread evenly. Every request still asks the store first, so the store takes over
   * again at its first answer. The switches are logged once each (`warn` when insurance takes
   * over, `info` when the store answers again) and published on `svc:ratelimit` as
   * `store-failed` (`failMode: "insurance"`, once per outage) and `store-recovered`. Counts
   * start from zero at each switch: while insured a client may spend up to its per-instance
   * quota on every instance it reaches, and what it spent meanwhile is not carried back.
   * @default undefined: no insurance; `failMode` answers a failed decision
   */
  insurance?: RateLimitInsurance;
  /**
   * `Retry-After` seconds on the 503 of `failMode: "closed"`.
   * @default 5
   */
  failRetryAfterSeconds?: number;
  /**
   * Where store outages and recoveries, refund failures, `trust proxy` mistakes and (once) a client
   * address that is not an IP address (counted in the connection peer's bucket) are reported.
   * @default one JSON line on stderr
   */
  logger?: RateLimitLogger;
  /**
   * Shortest time between two lines about failed refunds and requests with no client address.
   * @default 60_000
   */
  logIntervalMs?: number;
}

/**
 * `insurance` of {@link RateLimitOptions}: how the in-memory stand-in for a failed store counts.
 * @example
 * rateLimit({ limit: 600, store: new RedisStore({ client }), insurance: { instances: 3 } });
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4
 */
export interface RateLimitInsurance {
  /**
   * How many instances share the store: each one's insured limit is `limit / instances`
   * (rounded down, at least 1). A positive integer.
   */
  instances: number;
  /**
   * The most keys the in-memory stand-in holds (`MemoryStore`'s `maxKeys`).
   * @default 100_000
   */
  maxKeys?: number;
}

/** @internal The in-memory stand-in of `insurance`, resolved. */
export interface Insurance {
  limiter: RateLimiter;
  instances: number;
}

/** @internal The options of `rateLimit`, checked and resolved once. */
export interface Config {
  limiter: RateLimiter;
  /** The per-request limit, when `limit` is a function. */
  limit: PerRequest<number> | undefined;
  ipv6Subnet: number | false;
  cost: number | ((req: RateLimitRequest) => number);
  failMode: "open" | "closed";
  failRetryAfter: number;
  /** `insurance`: the in-memory limiter that decides while the store fails. */
  insurance: Insurance | undefined;
  /** The allowlist, compiled; undefined when empty. */
  allowed: IpMatcher | undefined;
  skip: PerRequest<boolean> | undefined;
  key: ((req: RateLimitRequest) => string | undefined) | undefined;
  /** `key: "client"`: the default key without the principal. */
  byClient: boolean;
  /** Give units back after the response: when successful, when failed. */
  refundSuccessful: boolean;
  refundFailed: boolean;
  requestWasSuccessful: PerRequest<boolean>;
  handler: RateLimitHandler | undefined;
  message: RateLimitMessage | PerRequest<RateLimitMessage> | undefined;
  requestProperty: string | undefined;
  logger: RateLimitLogger;
  logIntervalMs: number;
  headers: HeaderSettings;
}

/** Every option `rateLimit` takes; anything else is refused by name. */
const KNOWN = new Set<string>([
  ...LIMITER_OPTIONS,
  "limiter",
  "key",
  "cost",
  "skip",
  "skipSuccessfulRequests",
  "skipFailedRequests",
  "requestWasSuccessful",
  "handler",
  "message",
  "requestPropertyName",
  "allowlist",
  "ipv6Subnet",
  "legacyHeaders",
  "resetFormat",
  "standardHeaders",
  "policyName",
  "failMode",
  "failRetryAfterSeconds",
  "insurance",
  "logger",
  "logIntervalMs",
]);

/** express-rate-limit options with another name or shape here. */
const RENAMED: Readonly<Record<string, string>> = {
  max: "limit",
  keyGenerator: "key: (req) => string | undefined",
  statusCode: "handler: the status is always 429",
  passOnStoreError: 'failMode: "open"',
  identifier: "policyName",
  headers: "legacyHeaders",
  draft_polli_ratelimit_headers: "standardHeaders",
  onLimitReached: "handler",
  retryAfter: "nothing: Retry-After is the time until the limiter allows the request again",
  validate: "nothing: every option is checked at construction",
};

const DEFAULT_SUCCESS: PerRequest<boolean> = (_req, res) => res.statusCode < 400;

/** Names Express or Node.js already use on a request, and prototype keys. */
const RESERVED_PROPERTIES = new Set([
  "__proto__",
  "constructor",
  "prototype",
  "ip",
  "app",
  "res",
  "body",
  "params",
  "query",
  "headers",
  "socket",
]);

function functionOr<T>(name: string, value: unknown, accepted: string): T | undefined {
  if (value === undefined || typeof value === "function") return value as T | undefined;
  throw refused("rate limit", name, value, accepted);
}

function booleanOption(options: RateLimitOptions, name: keyof RateLimitOptions, fallback: boolean): boolean {
  const value = options[name] ?? fallback;
  if (typeof value !== "boolean") throw refused("rate limit", name, value, "true or false");
  return value;
}

/**
 * An unknown option is refused with the code every @svc package uses for one
 * (`ERR_SVC_RATELIMIT_UNKNOWN_OPTION`), naming express-rate-limit's counterpart when the name is
 * theirs and the closest known name when it looks like a typo.
 */
function checkKnown(options: RateLimitOptions): void {
  for (const name of Object.keys(options)) {
    if (KNOWN.has(name)) continue;
    const hint = RENAMED[name];
    if (hint === undefined) checkOptionNames("ratelimit", { [name]: true }, [...KNOWN], "rate limit");
    throw optionError(
      "rate limit",
      "unknownOption",
      `unknown option ${JSON.stringify(name)}; express-rate-limit's ${name} is ${hint} here`,
    );
  }
}

/** `limiter`, or one built from the limiter options (never both). */
function resolveLimiter(options: RateLimitOptions): Pick<Config, "limiter" | "limit"> {
  if (options.limiter !== undefined) {
    const { limiter } = options;
    if (typeof limiter !== "object" || limiter === null || typeof limiter.decide !== "function")
      throw refused("rate limit", "limiter", limiter, "a limiter from createRateLimiter(...)");
    const clash = LIMITER_OPTIONS.filter((name) => options[name] !== undefined);
    if (clash.length > 0)
      throw optionError("rate limit", "limiter", `pass either limiter or ${clash.join(", ")}, not both`);
    return { limiter, limit: undefined };
  }
  const { limit } = options;
  if (limit === undefined) throw optionError("rate limit", "limit", "limit is required");
  if (typeof limit !== "number" && typeof limit !== "function")
    throw refused(
      "rate limit",
      "limit",
      limit,
      "a positive integer or a function (req, res) => positive integer",
    );
  // A per-request limit: the limiter is built with a stand-in, each request applies policyFor(n).
  const limiterOptions: RateLimiterOptions = { limit: typeof limit === "number" ? limit : 1 };
  if (options.windowMs !== undefined) limiterOptions.windowMs = options.windowMs;
  if (options.algorithm !== undefined) limiterOptions.algorithm = options.algorithm;
  if (options.burst !== undefined) limiterOptions.burst = options.burst;
  if (options.store !== undefined) limiterOptions.store = options.store;
  if (options.prefix !== undefined) limiterOptions.prefix = options.prefix;
  if (options.now !== undefined) limiterOptions.now = options.now;
  if (options.blockDurationMs !== undefined) limiterOptions.blockDurationMs = options.blockDurationMs;
  return {
    limiter: createRateLimiter(limiterOptions),
    limit: typeof limit === "function" ? limit : undefined,
  };
}

/** A share of `n` for one of `instances` instances: rounded down, at least 1. */
export function insuredLimit(n: number, instances: number): number {
  return Math.max(1, Math.floor(n / instances));
}

/** `insurance`: a limiter of the same policy, divided by `instances`, in a memory store of its own. */
function resolveInsurance(
  value: unknown,
  limiter: RateLimiter,
  now: (() => number) | undefined,
): Insurance | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw refused("rate limit", "insurance", value, "an object { instances, maxKeys? }");
  checkOptionNames("ratelimit", value, ["instances", "maxKeys"], "rate limit: insurance");
  const { instances, maxKeys } = value as RateLimitInsurance;
  if (typeof instances !== "number" || !Number.isSafeInteger(instances) || instances < 1)
    throw refused("rate limit", "insurance", instances, "insurance.instances: a positive integer");
  const store = new MemoryStore({ maxKeys: maxKeys ?? 100_000 });
  const { policy } = limiter;
  const options: RateLimiterOptions = {
    limit: insuredLimit(policy.limit, instances),
    windowMs: policy.windowMs,
    algorithm: policy.algorithm,
    store,
    prefix: limiter.prefix,
    blockDurationMs: limiter.blockDurationMs,
  };
  if (policy.algorithm === "gcra") options.burst = insuredLimit(policy.burst, instances);
  if (now !== undefined) options.now = now;
  return { limiter: createRateLimiter(options), instances };
}

/** The response headers: which families, how `X-RateLimit-Reset` is written, the policy name. */
function resolveHeaders(options: RateLimitOptions): HeaderSettings {
  const resetFormat = options.resetFormat ?? "epoch-seconds";
  if (resetFormat !== "epoch-seconds" && resetFormat !== "delta-seconds")
    throw refused("rate limit", "resetFormat", resetFormat, '"epoch-seconds" or "delta-seconds"');
  const policyName = options.policyName ?? "default";
  if (!isPolicyName(policyName))
    throw refused(
      "rate limit",
      "policyName",
      policyName,
      `1 to ${MAX_POLICY_NAME} printable ASCII characters`,
    );
  const standard = standardHeadersOf(options.standardHeaders, "rate limit");
  return { legacy: booleanOption(options, "legacyHeaders", true), standard, resetFormat, policyName };
}

/** `message`: a string, an object whose members may extend the error record, or a function. */
function resolveMessage(value: unknown): Config["message"] {
  if (value === undefined || typeof value === "string" || typeof value === "function")
    return value as Config["message"];
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    try {
      HttpError.tooManyRequests(1, undefined, { extensions: value as Record<string, unknown> });
    } catch (err) {
      throw refused(
        "rate limit",
        "message",
        value,
        `a string, a function, or an object whose member names are RFC 9457 extension names (${(err as Error).message})`,
      );
    }
    return value as RateLimitMessage;
  }
  throw refused(
    "rate limit",
    "message",
    value,
    "a string, an object of extension members, or a function (req, res) => either",
  );
}

function resolveRefunds(
  options: RateLimitOptions,
  limiter: RateLimiter,
): Pick<Config, "refundSuccessful" | "refundFailed"> {
  const refundSuccessful = booleanOption(options, "skipSuccessfulRequests", false);
  const refundFailed = booleanOption(options, "skipFailedRequests", false);
  if ((refundSuccessful || refundFailed) && typeof limiter.store.refund !== "function")
    throw refused(
      "rate limit",
      refundSuccessful ? "skipSuccessfulRequests" : "skipFailedRequests",
      true,
      "false with a store that cannot give units back (no refund method; MemoryStore, RedisStore and expressRateLimitStore have one)",
    );
  return { refundSuccessful, refundFailed };
}

function resolveRequestProperty(value: unknown): string | undefined {
  if (value === false || value === undefined) return undefined;
  if (typeof value !== "string" || !/^[A-Za-z_$][\w$]{0,63}$/.test(value) || RESERVED_PROPERTIES.has(value))
    throw refused(
      "rate limit",
      "requestPropertyName",
      value,
      "false or an identifier of up to 64 characters that Express and Node.js do not use on the request",
    );
  return value;
}

function resolveAllowlist(value: unknown): IpMatcher | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((entry) => typeof entry !== "string"))
    throw refused("rate limit", "allowlist", value, "an array of IP addresses and CIDR ranges (strings)");
  return value.length > 0 ? ipMatcher(value) : undefined;
}

/**
 * @internal For the package's Express adapter (`@svc/ratelimit/express`).
 *
 * Checks every option once; a refused one throws a `TypeError` with `code` `ERR_SVC_RATELIMIT_<OPTION>`.
 */
export function resolveConfig(options: RateLimitOptions): Config {
  if (typeof options !== "object" || options === null)
    throw refused("rate limit", "options", options, "an object with at least limit");
  checkKnown(options);
  const { limiter, limit } = resolveLimiter(options);
  const ipv6Subnet = options.ipv6Subnet ?? 64;
  if (ipv6Subnet !== false && (!Number.isInteger(ipv6Subnet) || ipv6Subnet < 1 || ipv6Subnet > 128))
    throw refused("rate limit", "ipv6Subnet", ipv6Subnet, "an integer 1..128 or false");
  const cost = options.cost ?? 1;
  if (typeof cost !== "function" && (typeof cost !== "number" || !Number.isSafeInteger(cost) || cost < 0))
    throw refused(
      "rate limit",
      "cost",
      cost,
      "a non-negative integer or a function (req) => non-negative integer",
    );
  // A fixed cost above the quota would refuse every request, whatever the client does.
  if (typeof cost === "number" && limit === undefined && cost > capacityOf(limiter.policy))
    throw refused(
      "rate limit",
      "cost",
      cost,
      `at most ${capacityOf(limiter.policy)} (the ${limiter.policy.algorithm === "gcra" ? "burst" : "limit"}): a request costing more can never be allowed`,
    );
  // A fixed cost above an express-rate-limit store's maxCost would fail every request with a 500
  // (the store adds one hit per increment call, and maxCost bounds the calls of one decision).
  const maxCost = typeof cost === "number" ? maxCostOf(limiter.store) : undefined;
  if (typeof cost === "number" && maxCost !== undefined && cost > maxCost)
    throw refused(
      "rate limit",
      "cost",
      cost,
      `at most maxCost ${maxCost} of its expressRateLimitStore (one increment call per unit): every request costing more would fail with a 500; raise expressRateLimitStore(store, { maxCost })`,
    );
  const failMode = options.failMode ?? "open";
  if (failMode !== "open" && failMode !== "closed")
    throw refused("rate limit", "failMode", failMode, '"open" or "closed"');
  const failRetryAfter = options.failRetryAfterSeconds ?? 5;
  if (typeof failRetryAfter !== "number" || !Number.isFinite(failRetryAfter) || failRetryAfter < 0)
    throw refused("rate limit", "failRetryAfterSeconds", failRetryAfter, "a non-negative number of seconds");
  const insurance = resolveInsurance(options.insurance, limiter, options.now);
  const logger = options.logger ?? fallbackLogger;
  if (typeof logger !== "object" || logger === null || typeof logger.warn !== "function")
    throw refused("rate limit", "logger", logger, "an object with warn(obj, msg) (a pino logger fits)");
  const logIntervalMs = options.logIntervalMs ?? 60_000;
  if (typeof logIntervalMs !== "number" || !Number.isFinite(logIntervalMs) || logIntervalMs < 0)
    throw refused("rate limit", "logIntervalMs", logIntervalMs, "a non-negative number of milliseconds");
  return {
    limiter,
    limit,
    ipv6Subnet,
    cost,
    failMode,
    failRetryAfter,
    insurance,
    allowed: resolveAllowlist(options.allowlist),
    skip: functionOr("skip", options.skip, "a function (req, res) => boolean | Promise<boolean>"),
    key:
      options.key === "client"
        ? undefined
        : functionOr("key", options.key, '"client" or a function (req) => string | undefined'),
    byClient: options.key === "client",
    ...resolveRefunds(options, limiter),
    requestWasSuccessful:
      functionOr(
        "requestWasSuccessful",
        options.requestWasSuccessful,
        "a function (req, res) => boolean | Promise<boolean>",
      ) ?? DEFAULT_SUCCESS,
    handler: functionOr("handler", options.handler, "a function (req, res, next, exceeded) => void"),
    message: resolveMessage(options.message),
    requestProperty: resolveRequestProperty(options.requestPropertyName),
    logger,
    logIntervalMs,
    headers: resolveHeaders(options),
  };
}
