import type { Logger } from "@svc/errors";
import { canonicalPath, isToken, type RoutingRules } from "@svc/kernel";
import { checkOptionNames, MAX_TIMER_MS } from "@svc/kernel/internal";
import { type FingerprintOption, type ResolvedFingerprint, resolveFingerprint } from "./fingerprint.js";
import { MemoryStore } from "./memory-store.js";
import { optionError } from "./option-error.js";
import { principalScope } from "./principal-scope.js";
import type { IdempotencyStore } from "./store.js";

/**
 * The part of a `Logger` (from `@svc/errors`) this package calls; pino loggers fit. `info`, when
 * there, takes the line saying the store answers again after an outage (else `warn` does);
 * `debug`, when there, the store failures after an outage's first.
 */
export type IdempotencyLogger = Pick<Logger, "warn" | "info" | "debug">;

/**
 * Says which requests must carry a key: every one (`true`), none (`false`), those whose
 * canonical path is in a list, or those a predicate picks. Lists and predicates see the path the
 * way the router matches it (see {@link canonicalPath}), so `/Transfers/` is `/transfers`. The
 * predicate gets the request the caller handed to `begin` (the Express request, in the pipeline step).
 *
 * @example const rule: IdempotencyRequiredRule<IncomingMessage> = (path) => path.startsWith("/payments/");
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.7
 */
export type IdempotencyRequiredRule<Req> =
  | boolean
  | readonly string[]
  | ((path: string, req: Req) => boolean);

/** What {@link IdempotencyCoreOptions.storeStatus} is told besides the status. */
export interface StoreStatusContext {
  /**
   * The endpoint said it started executing (`claim.markStarted()`) before it answered. A 4xx
   * without it came from validation in front of the work (body parser, auth, a handler's own
   * input checks) and is not stored.
   */
  started: boolean;
}

/**
 * Options of `createIdempotency` (the framework-free core), and of the `idempotency` step,
 * which adds `scope`.
 *
 * @example createIdempotency({ store, required: true, leaseMs: 30_000 })
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header
 */
export interface IdempotencyCoreOptions<Req = unknown> {
  /**
   * Where records live. One process: the default. Several instances: a shared `RedisStore`.
   * @default new MemoryStore()
   */
  store?: IdempotencyStore;
  /**
   * Answer 400 when a request has no `Idempotency-Key` (draft §2.7): `true` for every request
   * the step sees, or only for some paths, given as a list or a predicate over the path as
   * the router matches it (lower-cased unless `case sensitive routing`, one trailing slash
   * dropped unless `strict routing`; see {@link canonicalPath}). So a step shared by routes in
   * front of routing cannot be bypassed by spelling `/Transfers/`.
   * @example idempotency({ required: ["/payments", "/transfers"] })
   * @example idempotency({ required: (path) => path.startsWith("/payments") })
   * A promise the predicate answers (an `async` function, from plain JavaScript) is awaited.
   * @default false
   */
  required?: IdempotencyRequiredRule<Req>;
  /**
   * How the router compares paths, when not as the framework's adapter recorded it in the
   * request's exchange (Express's `case sensitive routing` and `strict routing`, recorded by
   * `expressView`; Fastify's `caseSensitive` and `ignoreTrailingSlash`): for plain `node:http` or
   * a router with settings of its own. Keys and `required` use the path in this canonical form.
   * @example idempotency({ routing: { caseSensitive: true } })
   * @default the framework's settings; without any, both false (Express's defaults)
   */
  routing?: Partial<RoutingRules>;
  /**
   * The methods the step acts on; every other method passes straight through.
   * @default ["POST"]
   */
  methods?: readonly string[];
  /**
   * How long a claim lasts while the handler runs; a crashed worker's claim ends with it, so a
   * retry after that re-executes. At most `Number.MAX_SAFE_INTEGER`.
   * @default 60000
   */
  leaseMs?: number;
  /**
   * Renew the claim every `leaseMs / 3` (at most 2147483647 ms apart, the longest timer) while
   * the handler runs, so a handler slower than `leaseMs` still runs once: retries get 409 until
   * its response is stored, then the replay.
   * Renewal goes on until the handler ends its response, also after the client went away (the
   * usual retry: a client times out, disconnects and sends again while the first run goes on),
   * but never past `maxLeaseMs`; a crashed process frees the key one lease later. Needs a store
   * with `renew` (`MemoryStore` and `RedisStore` have it); with a store without it
   * the claim lasts `leaseMs`, as with `false`.
   * @default true
   */
  renewLease?: boolean;
  /**
   * The longest renewal keeps a claim alive. A handler that has not ended its response by then
   * (a hung handler) loses the claim one lease later, and a retry may run it again. At least
   * `leaseMs`.
   * @default 10 × leaseMs
   */
  maxLeaseMs?: number;
  /**
   * How long a completed response is kept for replay (Stripe keeps 24 h). At most
   * `Number.MAX_SAFE_INTEGER`.
   * @default 86400000
   */
  retentionMs?: number;
  /**
   * Largest response body stored. A larger one is sent whole, and stored without its body: a
   * retry gets the status and the replayed headers (`Location`, `ETag`, …) with an empty body,
   * `Idempotent-Replayed: true` and `Idempotent-Body-Omitted: true`, and the handler never runs
   * twice (draft §2.6: a duplicate gets "the result of the previously completed operation").
   * @example idempotency({ maxStoredBytes: 256 * 1024 })
   * @default 65536
   */
  maxStoredBytes?: number;
  /**
   * What makes a retry "the same request" as the one its key first came with (draft §2.2), in
   * place of the method, the target and the whole body: a list of JSON Pointers (RFC 6901) into
   * the parsed JSON body, hashed with the method and the target (a member such as a client
   * timestamp left out may differ between retries); or a function of the request answering the
   * string or bytes to hash. A pointer that selects nothing (absent member, index past the end)
   * counts as absent, which differs from `null`; a body that is bytes or text is hashed whole.
   * See the README, "Choosing the fingerprint", for what leaving parts out risks.
   * @example idempotency({ fingerprint: ["/amount", "/currency", "/to"] })
   * @default the method, the canonical target and the whole body
   */
  fingerprint?: FingerprintOption;
  /**
   * Which handler statuses are stored for replay. Others release the claim so a retry can run.
   * `started` is whether the endpoint called `claim.markStarted()`. A promise it answers (an `async`
   * function, from plain JavaScript) is awaited.
   * @example idempotency({ storeStatus: (status) => status < 500 }) // also 4xx of validation
   * @default (status, { started }) => status < 400 || (started && status < 500)
   */
  storeStatus?: (status: number, context: StoreStatusContext) => boolean;
  /**
   * Response headers stored and replayed. `Set-Cookie`, `Date`, rate-limit headers and the
   * framing and hop-by-hop fields (`Content-Length`, `Transfer-Encoding`, `Connection`, …) are
   * never replayed and are refused here.
   * @default ["content-type", "location", "etag", "content-location", "last-modified"]
   */
  replayHeaders?: readonly string[];
  /**
   * Who the key belongs to; keys of different scopes never meet. It gets the request handed to
   * `begin` as `request`.
   * @default the id of the principal `@svc/auth` recorded for the request (on every framework),
   * else `"anonymous"`; a request that carries credentials (`Authorization`) when nothing recorded
   * its principal is refused with a 500 (logged), never scoped with every other caller's
   */
  scope?: (req: Req) => string;
  /**
   * How long a duplicate of an in-flight request waits for its result before the 409; 0 answers
   * 409 at once.
   * @default 0
   */
  waitMs?: number;
  /**
   * `Retry-After` seconds on the 409 (in flight) and the 503 (store unavailable), rounded up;
   * at most 2147483648 (2^31).
   * @default 1
   */
  retryAfterSeconds?: number;
  /**
   * When the store fails: `"fail"` answers 503 with `Retry-After`; `"pass-through"` runs the
   * handler unprotected and logs a warning.
   * @default "fail"
   */
  onStoreError?: "fail" | "pass-through";
  /**
   * A page that documents the key's use, sent as `Link: <url>; rel="describedby"` on the
   * step's own errors (draft §2.7).
   * @default undefined (no Link header; the errors still carry a `code`)
   */
  documentationUrl?: string;
  /**
   * Where warnings go (oversized response, lost lease, a store outage: at its first failure, its
   * end at `info`).
   * @default the request's pino-http logger (`req.log`) when present, else one JSON line on stderr
   */
  logger?: IdempotencyLogger;
}

/** The options, checked and resolved once at construction. */
export interface IdempotencyConfig<Req> {
  store: IdempotencyStore;
  methods: ReadonlySet<string>;
  /** Whether the request must carry a key; a promise when an async predicate answered one. */
  isRequired: (path: string, rules: RoutingRules, req: Req | undefined) => boolean | Promise<boolean>;
  /** The `routing` option as given: the step fills the rest in from the framework's recorded rules. */
  routing: Partial<RoutingRules>;
  /** The routing rules of a request that names none. */
  rules: RoutingRules;
  leaseMs: number;
  /** The store's `renew`, bound, when the lease is renewed at all. */
  renew: ((key: string, token: string, leaseMs: number) => Promise<boolean>) | undefined;
  maxLeaseMs: number;
  renewEveryMs: number;
  retentionMs: number;
  maxStoredBytes: number;
  waitMs: number;
  /** `Retry-After` of the 409 and the 503, whole seconds. */
  retryAfter: string;
  storeStatus: (status: number, context: StoreStatusContext) => boolean;
  replayHeaders: readonly string[];
  /** The `fingerprint` option, resolved. */
  fingerprint: ResolvedFingerprint;
  scope: (req: Req) => string;
  /** Whether `scope` is the application's: the default reads the principal `@svc/auth` recorded. */
  scopeGiven: boolean;
  onStoreError: "fail" | "pass-through";
  /** `Link: <documentationUrl>; rel="describedby"`, or undefined. */
  link: string | undefined;
  logger: IdempotencyLogger | undefined;
}

const DEFAULT_REPLAY_HEADERS = ["content-type", "location", "etag", "content-location", "last-modified"];
/**
 * Fields a replay never sends from the record. Besides those of the first exchange alone
 * (cookies, dates, rate limits), the message's framing and hop-by-hop fields: the replay is
 * framed by its own `Content-Length`, and RFC 9112 §6.1 says "A sender MUST NOT send a
 * Content-Length header field in any message that contains a Transfer-Encoding header field"
 * (with both, an intermediary may frame the message differently from the client: response
 * splitting); RFC 9110 §7.6.1 makes Connection and the fields it names (Keep-Alive, TE,
 * Upgrade, Proxy-Connection) and §6.6.2 Trailer describe one connection or one message only.
 */
export const NEVER_REPLAYED =
  /^(set-cookie|date|retry-after|x-ratelimit-.*|ratelimit(-.*)?|idempotent-replayed|idempotent-body-omitted|content-length|transfer-encoding|connection|keep-alive|proxy-connection|te|trailer|upgrade)$/;

function positive(
  name: string,
  value: number,
  allowZero = false,
  max?: { value: number; text: string },
): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw optionError(
      "idempotency",
      name,
      value,
      `a ${allowZero ? "non-negative" : "positive"} finite number`,
    );
  }
  if (max !== undefined && value > max.value)
    throw optionError("idempotency", name, value, `at most ${max.text}`);
  return value;
}

/**
 * Store lifetimes go to Redis as PEXPIRE milliseconds, which Redis refuses once now + ms passes a
 * signed 64-bit integer (about 9.2e18) or String() writes it with an exponent (1e21): past it
 * every claim (after its HSET, leaving a record that never expires) or completion fails. The
 * largest integer a number keeps exactly is far below, and still about 285,000 years.
 */
const MAX_STORE_MS = { value: Number.MAX_SAFE_INTEGER, text: "9007199254740991 (Number.MAX_SAFE_INTEGER)" };

/**
 * RFC 9110 §10.2.3: delay-seconds = 1*DIGIT, which String() stops writing from 1e21 on
 * ("1e+21"); RFC 9111 §1.2.2 takes 2^31 as the greatest delta-seconds worth keeping.
 */
const MAX_RETRY_AFTER = { value: 2 ** 31, text: "2147483648 (2^31)" };

function booleanOption(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw optionError("idempotency", name, value, "a boolean");
  return value;
}

const defaultStoreStatus = (status: number, { started }: StoreStatusContext): boolean =>
  status < 400 || (started && status < 500);

function resolveStore(store: IdempotencyStore | undefined): IdempotencyStore {
  const resolved = store ?? new MemoryStore();
  if (
    typeof resolved !== "object" ||
    resolved === null ||
    typeof resolved.claim !== "function" ||
    typeof resolved.complete !== "function" ||
    typeof resolved.release !== "function"
  ) {
    throw optionError("idempotency", "store", resolved, "an object with claim, complete and release methods");
  }
  return resolved;
}

/** RFC 9110 §5.6.2 token: 1*tchar. */
const METHOD_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Z]+$/;

function resolveMethods(methods: readonly string[] | undefined): ReadonlySet<string> {
  const list = methods ?? ["POST"];
  if (!Array.isArray(list) || list.some((m) => typeof m !== "string")) {
    throw optionError("idempotency", "methods", list, "an array of method names");
  }
  const set = new Set(list.map((m: string) => m.toUpperCase()));
  if (set.size === 0) throw optionError("idempotency", "methods", "[]", "a non-empty array of method names");
  for (const m of set) {
    // RFC 9110 §9.1: "method = token". Anything else ("POST, PUT", "POST ") never equals a
    // request's method, so it would leave every request unguarded without a word.
    if (!METHOD_TOKEN.test(m)) {
      throw optionError(
        "idempotency",
        "methods",
        m,
        "method names, one per element (an RFC 9110 token: no spaces or commas)",
      );
    }
    if (m === "GET" || m === "HEAD" || m === "OPTIONS") {
      throw optionError(
        "idempotency",
        "methods",
        m,
        "unsafe methods only (GET, HEAD, OPTIONS are already idempotent)",
      );
    }
  }
  return set;
}

function checkRequiredPaths(required: unknown): asserts required is readonly string[] {
  if (!Array.isArray(required) || required.length === 0) {
    throw optionError(
      "idempotency",
      "required",
      required,
      "a boolean, a non-empty array of paths or a function (path, req) => boolean",
    );
  }
  for (const p of required) {
    if (typeof p !== "string" || !p.startsWith("/") || /[?#\s]/.test(p)) {
      throw optionError(
        "idempotency",
        "required",
        p,
        'paths that start with "/" without query, fragment or spaces',
      );
    }
  }
}

/** Resolves `required` once into a predicate over the canonical path. */
function resolveRequired<Req>(
  required: IdempotencyRequiredRule<Req> | undefined,
): IdempotencyConfig<Req>["isRequired"] {
  if (required === undefined || typeof required === "boolean") {
    const all = required ?? false;
    return () => all;
  }
  if (typeof required === "function")
    return (path, _rules, req) => {
      // An async predicate (plain JavaScript, or a cast) answers a promise, which is never `true`:
      // draft §2.7's 400 for a missing key would never be sent. Its answer is awaited instead.
      const answer: unknown = required(path, req as Req);
      if (typeof (answer as PromiseLike<unknown> | null)?.then === "function")
        return Promise.resolve(answer).then((value) => value === true);
      return answer === true;
    };
  checkRequiredPaths(required);
  // Each entry in the four canonical forms, so a request only looks up its own.
  const sets = new Map<string, Set<string>>();
  for (const caseSensitive of [false, true]) {
    for (const strict of [false, true]) {
      const rules = { caseSensitive, strict };
      sets.set(`${caseSensitive}:${strict}`, new Set(required.map((p) => canonicalPath(p, rules))));
    }
  }
  return (path, rules) => sets.get(`${rules.caseSensitive}:${rules.strict}`)?.has(path) === true;
}

function resolveRouting(routing: Partial<RoutingRules> | undefined): Partial<RoutingRules> {
  if (routing === undefined) return {};
  if (typeof routing !== "object" || routing === null) {
    throw optionError("idempotency", "routing", routing, "an object { caseSensitive?, strict? }");
  }
  for (const name of Object.keys(routing)) {
    if (name !== "caseSensitive" && name !== "strict") {
      throw optionError("idempotency", "routing", name, "only the fields caseSensitive and strict");
    }
  }
  const out: { caseSensitive?: boolean; strict?: boolean } = {};
  if (routing.caseSensitive !== undefined)
    out.caseSensitive = booleanOption("routing", routing.caseSensitive, false);
  if (routing.strict !== undefined) out.strict = booleanOption("routing", routing.strict, false);
  return out;
}

function resolveStoreStatus(
  storeStatus: IdempotencyCoreOptions["storeStatus"],
): IdempotencyConfig<unknown>["storeStatus"] {
  const resolved = storeStatus ?? defaultStoreStatus;
  if (typeof resolved !== "function") {
    throw optionError("idempotency", "storeStatus", resolved, "a function (status, { started }) => boolean");
  }
  return resolved;
}

function resolveReplayHeaders(names: readonly string[] | undefined): readonly string[] {
  const list: unknown = names ?? DEFAULT_REPLAY_HEADERS;
  if (!Array.isArray(list) || !list.every((h) => typeof h === "string" && isToken(h))) {
    throw optionError("idempotency", "replayHeaders", list, "an array of header field names (RFC 9110 §5.1)");
  }
  const lower = list.map((h: string) => h.toLowerCase());
  for (const h of lower) {
    if (NEVER_REPLAYED.test(h))
      throw optionError("idempotency", "replayHeaders", h, "headers that are safe to replay");
  }
  return lower;
}

function resolveScope<Req>(
  scope: ((req: Req) => string) | undefined,
  fallback: (req: Req) => string,
): (req: Req) => string {
  if (scope !== undefined && typeof scope !== "function") {
    throw optionError("idempotency", "scope", scope, "a function (req) => string");
  }
  return scope ?? fallback;
}

function resolveOnStoreError(value: IdempotencyCoreOptions["onStoreError"]): "fail" | "pass-through" {
  const resolved = value ?? "fail";
  if (resolved !== "fail" && resolved !== "pass-through") {
    throw optionError("idempotency", "onStoreError", resolved, '"fail" or "pass-through"');
  }
  return resolved;
}

/** draft §2.7: the error "MAY include a link to further documentation" (RFC 8288 `describedby`). */
function resolveLink(documentationUrl: string | undefined): string | undefined {
  if (documentationUrl === undefined) return undefined;
  if (typeof documentationUrl !== "string") {
    throw optionError("idempotency", "documentationUrl", documentationUrl, "an absolute URL");
  }
  try {
    return `<${new URL(documentationUrl).href}>; rel="describedby"; type="text/html"`;
  } catch {
    throw optionError("idempotency", "documentationUrl", documentationUrl, "an absolute URL");
  }
}

const IDEMPOTENCY_OPTIONS = [
  "store",
  "required",
  "routing",
  "methods",
  "leaseMs",
  "renewLease",
  "maxLeaseMs",
  "retentionMs",
  "maxStoredBytes",
  "fingerprint",
  "storeStatus",
  "replayHeaders",
  "scope",
  "waitMs",
  "retryAfterSeconds",
  "onStoreError",
  "documentationUrl",
  "logger",
];

function resolveLogger(logger: IdempotencyLogger | undefined): IdempotencyLogger | undefined {
  if (logger !== undefined && typeof (logger as Partial<IdempotencyLogger> | null)?.warn !== "function") {
    throw optionError("idempotency", "logger", logger, "an object with a warn(obj, msg) method");
  }
  return logger;
}

/** The lease settings: its length, its renewal (a third of it) and the longest renewal. */
function resolveLease(
  options: Pick<IdempotencyCoreOptions, "leaseMs" | "renewLease" | "maxLeaseMs">,
  store: IdempotencyStore,
): Pick<IdempotencyConfig<unknown>, "leaseMs" | "renew" | "maxLeaseMs" | "renewEveryMs"> {
  const leaseMs = positive("leaseMs", options.leaseMs ?? 60_000, false, MAX_STORE_MS);
  const renewLease = booleanOption("renewLease", options.renewLease, true);
  const renew = renewLease && typeof store.renew === "function" ? store.renew.bind(store) : undefined;
  const maxLeaseMs = positive("maxLeaseMs", options.maxLeaseMs ?? leaseMs * 10);
  // A renewal limit below one lease could never be reached: the first claim already outlasts it.
  if (maxLeaseMs < leaseMs)
    throw optionError("idempotency", "maxLeaseMs", maxLeaseMs, `at least leaseMs (${leaseMs})`);
  // A third of the lease: two renewals can fail or run late before the lease ends. At most the
  // longest setTimeout (2^31 - 1 ms): Node.js runs a longer interval every 1 ms instead, which
  // would renew every in-flight claim a thousand times a second.
  const renewEveryMs = Math.min(MAX_TIMER_MS, Math.max(1, Math.floor(leaseMs / 3)));
  return { leaseMs, renew, maxLeaseMs, renewEveryMs };
}

/**
 * Checks every option once, in the order the README lists them, and resolves it: a refused one
 * throws the `TypeError` of {@link optionError} (`code` `ERR_SVC_IDEMPOTENCY_<OPTION>`).
 */
export function resolveConfig<Req>(
  options: IdempotencyCoreOptions<Req>,
  defaultScope: (req: Req) => string = principalScope as (req: Req) => string,
): IdempotencyConfig<Req> {
  checkOptionNames("idempotency", options, IDEMPOTENCY_OPTIONS, "idempotency");
  const store = resolveStore(options.store);
  const methods = resolveMethods(options.methods);
  const isRequired = resolveRequired(options.required);
  const routing = resolveRouting(options.routing);
  const lease = resolveLease(options, store);
  const retentionMs = positive("retentionMs", options.retentionMs ?? 86_400_000, false, MAX_STORE_MS);
  const maxStoredBytes = positive("maxStoredBytes", options.maxStoredBytes ?? 65_536, true);
  const waitMs = positive("waitMs", options.waitMs ?? 0, true);
  const retryAfterSeconds = positive(
    "retryAfterSeconds",
    options.retryAfterSeconds ?? 1,
    true,
    MAX_RETRY_AFTER,
  );
  return {
    store,
    methods,
    isRequired,
    routing,
    rules: { caseSensitive: routing.caseSensitive ?? false, strict: routing.strict ?? false },
    ...lease,
    retentionMs,
    maxStoredBytes,
    waitMs,
    retryAfter: String(Math.ceil(retryAfterSeconds)),
    fingerprint: resolveFingerprint(options.fingerprint),
    storeStatus: resolveStoreStatus(options.storeStatus),
    replayHeaders: resolveReplayHeaders(options.replayHeaders),
    scope: resolveScope(options.scope, defaultScope),
    scopeGiven: options.scope !== undefined,
    onStoreError: resolveOnStoreError(options.onStoreError),
    link: resolveLink(options.documentationUrl),
    logger: resolveLogger(options.logger),
  };
}
