import type { IncomingMessage, ServerResponse } from "node:http";
import { fallbackLogger, HttpError, type Logger, type NextFunction } from "@svc/errors";
import { canonicalPath, type RoutingRules, targetPath } from "./canonical-path.js";
import { type CapturedResponse, captureResponse, HEADER_OF } from "./capture.js";
import { requestFingerprint } from "./fingerprint.js";
import { MemoryStore } from "./memory-store.js";
import { optionError } from "./option-error.js";
import { parseIdempotencyKey } from "./parse-key.js";
import { type IdempotencyStore, type StoredResponse, withoutBody } from "./store.js";

/** The part of a `Logger` (from `@svc/errors`) this package calls; pino loggers fit. */
export type IdempotencyLogger = Pick<Logger, "warn">;

/** The authenticated caller, as the auth layer leaves it on the request. */
export interface IdempotencyPrincipal {
  id: string;
}

/** The parts of an Express (or plain `node:http`) request the middleware reads. */
export interface IdempotencyRequest extends IncomingMessage {
  /** The parsed (or raw `Buffer`/string) body a body parser left; see "Order" in the README. */
  body?: unknown;
  /** Set by the auth layer (`@svc/auth`); absent for anonymous requests. */
  principal?: IdempotencyPrincipal | undefined;
  originalUrl?: string;
  /** pino-http's per-request logger, used when no `logger` option is given. */
  log?: IdempotencyLogger;
  /** Express: where the router that runs the route is mounted (the matched spelling). */
  baseUrl?: string;
  /** Express: the route being run, when the middleware is mounted on a route. */
  route?: { path?: unknown } | undefined;
  /** Express: the application, for its `case sensitive routing` and `strict routing` settings. */
  app?: { get(setting: string): unknown } | undefined;
}

/**
 * Says which requests must carry a key: every one (`true`), none (`false`), those whose
 * canonical path is in a list, or those a predicate picks. Lists and predicates see the path the
 * way the router matches it (see {@link canonicalPath}), so `/Transfers/` is `/transfers`.
 */
export type IdempotencyRequired =
  | boolean
  | readonly string[]
  | ((path: string, req: IdempotencyRequest) => boolean);

/** What {@link IdempotencyOptions.storeStatus} is told besides the status. */
export interface StoreStatusContext {
  /**
   * The endpoint said it started executing ({@link markStarted}) before it answered. A 4xx
   * without it came from validation in front of the work (body parser, auth, a handler's own
   * input checks) and is not stored.
   */
  started: boolean;
}

/** What a claimed request's handler can read at `res.locals.idempotency`. */
export interface IdempotencyLocals {
  /** The scoped key the record is stored under. */
  key: string;
  /** The fencing token of this execution; pass it on to guard downstream writes. */
  token: string;
  /** Same as {@link markStarted}`(res)`: the endpoint starts its work now. */
  markStarted(): void;
}

const STARTED = new WeakSet<object>();

/**
 * Tells the idempotency middleware that the endpoint has started executing: call it after the
 * request passed validation and before the first side effect. A 4xx answered after it is stored
 * and replayed; one answered without it (a validation failure) is not, so a retry with a
 * corrected body and the same key runs. A 2xx or 3xx is stored either way. This is Stripe's rule:
 * "results are only saved if an API endpoint started executing".
 *
 * @example
 * app.post("/transfers", express.json(), idempotency(), async (req, res) => {
 *   const input = validate(req.body); // throws HttpError(400): not stored, the key stays free
 *   markStarted(res);
 *   res.status(201).json(await transfer(input)); // stored, whatever its status below 500
 * });
 * @see https://docs.stripe.com/api/idempotent_requests
 */
export function markStarted(res: object): void {
  STARTED.add(res);
}

/**
 * Options of {@link idempotency}.
 *
 * @example idempotency({ store, required: true, leaseMs: 30_000, documentationUrl: "https://api.example/docs/idempotency" })
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header
 */
export interface IdempotencyOptions {
  /**
   * Where records live. One process: the default. Several instances: a shared {@link RedisStore}.
   * @default new MemoryStore()
   */
  store?: IdempotencyStore;
  /**
   * Answer 400 when a request has no `Idempotency-Key` (draft §2.7): `true` for every request
   * the middleware sees, or only for some paths, given as a list or a predicate over the path as
   * the router matches it (lower-cased unless `case sensitive routing`, one trailing slash
   * dropped unless `strict routing`; see {@link canonicalPath}). So an app-level middleware in
   * front of routing cannot be bypassed by spelling `/Transfers/`.
   * @example idempotency({ required: ["/payments", "/transfers"] })
   * @example idempotency({ required: (path) => path.startsWith("/payments") })
   * @default false
   */
  required?: IdempotencyRequired;
  /**
   * How the router compares paths, when not read from the Express app (`req.app.get("case
   * sensitive routing")`, `req.app.get("strict routing")`): for plain `node:http` or a router
   * with settings of its own. Keys and `required` use the path in this canonical form.
   * @example idempotency({ routing: { caseSensitive: true } })
   * @default the app's settings; without an app, both false (Express's defaults)
   */
  routing?: Partial<RoutingRules>;
  /**
   * The methods the middleware acts on; every other method passes straight through.
   * @default ["POST"]
   */
  methods?: readonly string[];
  /**
   * How long a claim lasts while the handler runs; a crashed worker's claim ends with it, so a
   * retry after that re-executes.
   * @default 60000
   */
  leaseMs?: number;
  /**
   * Renew the claim every `leaseMs / 3` while the handler runs, so a handler slower than
   * `leaseMs` still runs once: retries get 409 until its response is stored, then the replay.
   * Renewal goes on until the handler ends its response, also after the client went away (the
   * usual retry: a client times out, disconnects and sends again while the first run goes on),
   * but never past `maxLeaseMs`; a crashed process frees the key one lease later. Needs a store
   * with `renew` ({@link MemoryStore} and {@link RedisStore} have it); with a store without it
   * the claim lasts `leaseMs`, as with `false`.
   * @default true
   */
  renewLease?: boolean;
  /**
   * The longest renewal keeps a claim alive. A handler that has not ended its response by then
   * (a hung handler) loses the claim one lease later, and a retry may run it again.
   * @default 10 × leaseMs
   */
  maxLeaseMs?: number;
  /**
   * How long a completed response is kept for replay (Stripe keeps 24 h).
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
   * Which handler statuses are stored for replay. Others release the claim so a retry can run.
   * `started` is whether the endpoint called {@link markStarted}.
   * @example idempotency({ storeStatus: (status) => status < 500 }) // also 4xx of validation
   * @default (status, { started }) => status < 400 || (started && status < 500)
   */
  storeStatus?: (status: number, context: StoreStatusContext) => boolean;
  /**
   * Response headers stored and replayed. `Set-Cookie`, `Date` and rate-limit headers are never
   * replayed and are refused here.
   * @default ["content-type", "location", "etag", "content-location", "last-modified"]
   */
  replayHeaders?: readonly string[];
  /**
   * Who the key belongs to; keys of different scopes never meet.
   * @default the auth layer's `req.principal.id`, else `"anonymous"`
   */
  scope?: (req: IdempotencyRequest) => string;
  /**
   * How long a duplicate of an in-flight request waits for its result before the 409; 0 answers
   * 409 at once.
   * @default 0
   */
  waitMs?: number;
  /**
   * `Retry-After` seconds on the 409 (in flight) and the 503 (store unavailable).
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
   * middleware's own errors (draft §2.7).
   * @default undefined (no Link header; the errors still carry a `code`)
   */
  documentationUrl?: string;
  /**
   * Where warnings go (oversized response, lost lease, store failure).
   * @default the request's pino-http logger (`req.log`) when present, else one JSON line on stderr
   */
  logger?: IdempotencyLogger;
}

/**
 * The `code` of each error the middleware raises (also the problem `type` suffix).
 *
 * @example if (err.code === IDEMPOTENCY_ERROR_CODES.inFlight) retryLater(err.headers["Retry-After"]);
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.7
 */
export const IDEMPOTENCY_ERROR_CODES = {
  missing: "idempotency_key_missing",
  invalid: "idempotency_key_invalid",
  mismatch: "idempotency_key_reused",
  inFlight: "idempotency_request_in_progress",
  unavailable: "idempotency_store_unavailable",
} as const;

const DEFAULT_REPLAY_HEADERS = ["content-type", "location", "etag", "content-location", "last-modified"];
const NEVER_REPLAYED =
  /^(set-cookie|date|retry-after|x-ratelimit-.*|ratelimit(-.*)?|idempotent-replayed|idempotent-body-omitted)$/;

function positive(name: string, value: number, allowZero = false): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw optionError(
      "idempotency",
      name,
      value,
      `a ${allowZero ? "non-negative" : "positive"} finite number`,
    );
  }
  return value;
}

function booleanOption(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw optionError("idempotency", name, value, "a boolean");
  return value;
}

const defaultStoreStatus = (status: number, { started }: StoreStatusContext): boolean =>
  status < 400 || (started && status < 500);

/** Resolves `required` once into a predicate over the canonical path. */
function resolveRequired(
  required: IdempotencyRequired | undefined,
): (path: string, rules: RoutingRules, req: IdempotencyRequest) => boolean {
  if (required === undefined || typeof required === "boolean") {
    const all = required ?? false;
    return () => all;
  }
  if (typeof required === "function") return (path, _rules, req) => required(path, req) === true;
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
  const out: Partial<RoutingRules> = {};
  if (routing.caseSensitive !== undefined)
    out.caseSensitive = booleanOption("routing", routing.caseSensitive, false);
  if (routing.strict !== undefined) out.strict = booleanOption("routing", routing.strict, false);
  return out;
}

/**
 * Express middleware for exactly-once unsafe requests with the `Idempotency-Key` header
 * (draft-ietf-httpapi-idempotency-key-header). The first request with a key claims it atomically
 * and runs; its response (status, body, safe headers) is stored; a retry with the same key and
 * payload gets that response again with `Idempotent-Replayed: true`. A duplicate while the first
 * still runs gets 409 with `Retry-After`; the same key with another payload gets 422; a malformed
 * key (or none, when `required`) gets 400. Keys are scoped by principal, method and the route the
 * router runs (in front of routing: the canonical path, see {@link canonicalPath}), so no other
 * spelling of the URL reaches the handler under a fresh key. A 4xx is stored only after
 * {@link markStarted}.
 *
 * Mount it after the body parser (the payload fingerprint reads `req.body`) and after
 * authentication (the scope reads `req.principal`).
 *
 * @example
 * app.post("/orders", express.json(), authenticate(), idempotency({ required: true }), createOrder);
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header
 */
export function idempotency(options: IdempotencyOptions = {}) {
  const store = options.store ?? new MemoryStore();
  if (
    typeof store !== "object" ||
    store === null ||
    typeof store.claim !== "function" ||
    typeof store.complete !== "function" ||
    typeof store.release !== "function"
  ) {
    throw optionError("idempotency", "store", store, "an object with claim, complete and release methods");
  }
  const methodList = options.methods ?? ["POST"];
  if (!Array.isArray(methodList) || methodList.some((m) => typeof m !== "string")) {
    throw optionError("idempotency", "methods", methodList, "an array of method names");
  }
  const methods = new Set(methodList.map((m) => m.toUpperCase()));
  if (methods.size === 0)
    throw optionError("idempotency", "methods", "[]", "a non-empty array of method names");
  for (const m of methods) {
    if (m === "GET" || m === "HEAD" || m === "OPTIONS") {
      throw optionError(
        "idempotency",
        "methods",
        m,
        "unsafe methods only (GET, HEAD, OPTIONS are already idempotent)",
      );
    }
  }
  const isRequired = resolveRequired(options.required);
  const routing = resolveRouting(options.routing);
  const leaseMs = positive("leaseMs", options.leaseMs ?? 60_000);
  const renewLease = booleanOption("renewLease", options.renewLease, true);
  const renew = renewLease && typeof store.renew === "function" ? store.renew.bind(store) : undefined;
  const maxLeaseMs = positive("maxLeaseMs", options.maxLeaseMs ?? leaseMs * 10);
  // A third of the lease: two renewals can fail or run late before the lease ends.
  const renewEveryMs = Math.max(1, Math.floor(leaseMs / 3));
  const retentionMs = positive("retentionMs", options.retentionMs ?? 86_400_000);
  const maxStoredBytes = positive("maxStoredBytes", options.maxStoredBytes ?? 65_536, true);
  const waitMs = positive("waitMs", options.waitMs ?? 0, true);
  const retryAfterSeconds = positive("retryAfterSeconds", options.retryAfterSeconds ?? 1, true);
  const storeStatus = options.storeStatus ?? defaultStoreStatus;
  if (typeof storeStatus !== "function") {
    throw optionError(
      "idempotency",
      "storeStatus",
      storeStatus,
      "a function (status, { started }) => boolean",
    );
  }
  const replayHeaders = (options.replayHeaders ?? DEFAULT_REPLAY_HEADERS).map((h) => h.toLowerCase());
  for (const h of replayHeaders) {
    if (NEVER_REPLAYED.test(h))
      throw optionError("idempotency", "replayHeaders", h, "headers that are safe to replay");
  }
  if (options.scope !== undefined && typeof options.scope !== "function") {
    throw optionError("idempotency", "scope", options.scope, "a function (req) => string");
  }
  const scopeOf = options.scope ?? ((req: IdempotencyRequest) => req.principal?.id ?? "anonymous");
  const onStoreError = options.onStoreError ?? "fail";
  if (onStoreError !== "fail" && onStoreError !== "pass-through") {
    throw optionError("idempotency", "onStoreError", onStoreError, '"fail" or "pass-through"');
  }
  let link: string | undefined;
  if (options.documentationUrl !== undefined) {
    try {
      link = `<${new URL(options.documentationUrl).href}>; rel="describedby"; type="text/html"`;
    } catch {
      throw optionError("idempotency", "documentationUrl", options.documentationUrl, "an absolute URL");
    }
  }

  /** The app's routing rules unless the `routing` option overrides them. */
  const rulesOf = (req: IdempotencyRequest): RoutingRules => ({
    caseSensitive: routing.caseSensitive ?? req.app?.get("case sensitive routing") === true,
    strict: routing.strict ?? req.app?.get("strict routing") === true,
  });

  const error = (
    status: number,
    message: string,
    code: string,
    extra: Record<string, string> = {},
    cause?: unknown,
  ) =>
    new HttpError(status, message, {
      code,
      headers: link ? { ...extra, Link: link } : extra,
      ...(cause === undefined ? {} : { cause }),
    });

  let warnedUnparsedBody = false;

  async function handle(req: IdempotencyRequest, res: ServerResponse, next: NextFunction): Promise<void> {
    if (!methods.has((req.method ?? "").toUpperCase())) return next();
    const logger = options.logger ?? req.log ?? fallbackLogger;
    const parsed = parseIdempotencyKey(req.headers["idempotency-key"]);
    const target = req.originalUrl ?? req.url ?? "/";
    const rules = rulesOf(req);
    // The path as the router matches it: every spelling that reaches one handler is one key.
    const path = canonicalPath(targetPath(target), rules);
    if (parsed.kind === "absent") {
      if (!isRequired(path, rules, req)) return next();
      return next(
        error(400, "This operation requires an Idempotency-Key header", IDEMPOTENCY_ERROR_CODES.missing),
      );
    }
    if (parsed.kind === "invalid") {
      return next(error(400, parsed.reason, IDEMPOTENCY_ERROR_CODES.invalid));
    }
    const method = (req.method ?? "POST").toUpperCase();
    const scope = scopeOf(req);
    const key = [scope, method, resourceOf(req, rules, path), parsed.key].map(encodeURIComponent).join(":");
    if (req.body === undefined && !warnedUnparsedBody && hasBody(req)) {
      warnedUnparsedBody = true;
      logger.warn(
        { path },
        "idempotency: a request body arrived but no body parser ran before the middleware; the body is not fingerprinted",
      );
    }
    // The canonical path and the query as sent: another spelling of the same request replays.
    const query =
      target.search(/[?#]/) === -1 ? "" : target.slice(target.search(/[?#]/)).replace(/#.*$/s, "");
    const fingerprint = requestFingerprint({ method, url: path + query, body: req.body });

    const deadline = Date.now() + waitMs;
    for (;;) {
      let claim: Awaited<ReturnType<IdempotencyStore["claim"]>>;
      try {
        claim = await store.claim(key, fingerprint, leaseMs);
      } catch (err) {
        if (onStoreError === "pass-through") {
          logger.warn({ err: errInfo(err), key }, "idempotency store unavailable; running unprotected");
          return next();
        }
        return next(
          error(
            503,
            "The idempotency store is unavailable",
            IDEMPOTENCY_ERROR_CODES.unavailable,
            { "Retry-After": String(Math.ceil(retryAfterSeconds)) },
            err,
          ),
        );
      }
      if (claim.outcome !== "claimed" && claim.fingerprint !== fingerprint) {
        // draft §2.7: "If there is an attempt to reuse an idempotency key with a different
        // request payload, the resource server SHOULD reply with a HTTP 422 status code".
        return next(
          error(
            422,
            "This Idempotency-Key was already used with a different request",
            IDEMPOTENCY_ERROR_CODES.mismatch,
          ),
        );
      }
      if (claim.outcome === "completed") return replay(res, claim.response);
      if (claim.outcome === "in-flight") {
        const left = deadline - Date.now();
        if (left > 0) {
          await new Promise((r) => setTimeout(r, Math.min(left, 25, claim.leaseRemainingMs + 1)));
          continue;
        }
        // draft §2.7: "If the request is retried, while the original request is still being
        // processed, the resource server SHOULD reply with an HTTP 409 status code".
        return next(
          error(
            409,
            "A request with this Idempotency-Key is still being processed",
            IDEMPOTENCY_ERROR_CODES.inFlight,
            {
              "Retry-After": String(Math.ceil(retryAfterSeconds)),
            },
          ),
        );
      }
      const token = claim.token;
      const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
      if (locals) {
        locals.idempotency = { key, token, markStarted: () => markStarted(res) } satisfies IdempotencyLocals;
      }
      const stopRenewing = renew ? keepLease(renew, key, token, res, logger) : undefined;
      captureResponse(res, maxStoredBytes, (captured) => {
        stopRenewing?.();
        void settle(key, token, captured, STARTED.has(res), logger);
      });
      return next();
    }
  }

  /**
   * Renews the claim until the handler ends the response (the client may have gone away before:
   * the handler still runs, and a retry must not run it again), or `maxLeaseMs` has passed;
   * returns the function that stops it. draft §2.7: "If the request is retried, while the
   * original request is still being processed, the resource server SHOULD reply with an HTTP 409
   * status code": the record must stay in flight for as long as the handler runs, however long
   * that is, not only for `leaseMs`.
   */
  function keepLease(
    renewFn: NonNullable<IdempotencyStore["renew"]>,
    key: string,
    token: string,
    res: ServerResponse,
    logger: IdempotencyLogger,
  ): (() => void) | undefined {
    if (res.writableEnded) return undefined;
    const until = Date.now() + maxLeaseMs;
    let stopped = false;
    let pending = false;
    const timer = setInterval(() => {
      if (Date.now() >= until) {
        stop();
        logger.warn(
          { key, maxLeaseMs },
          "idempotency lease no longer renewed: the handler ran past maxLeaseMs; a retry may run it again",
        );
        return;
      }
      // A slow store: skip this tick rather than stack renewals up behind it.
      if (pending) return;
      pending = true;
      Promise.resolve()
        .then(() => renewFn(key, token, leaseMs))
        .then(
          (owned) => {
            if (owned || stopped) return;
            // Lost for good (expired and claimed again, or gone): a fencing token never comes back.
            stop();
            logger.warn(
              { key, token },
              "idempotency lease lost while the handler ran; a retry may run it again",
            );
          },
          (err: unknown) => {
            if (!stopped) {
              logger.warn({ err: errInfo(err), key }, "idempotency store failed to renew a lease; retrying");
            }
          },
        )
        .finally(() => {
          pending = false;
        });
    }, renewEveryMs);
    timer.unref();
    const stop = (): void => {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
    };
    return stop;
  }

  async function settle(
    key: string,
    token: string,
    captured: CapturedResponse,
    started: boolean,
    logger: IdempotencyLogger,
  ) {
    try {
      if (storeStatus(captured.status, { started }) !== true) {
        await store.release(key, token);
        return;
      }
      if (captured.body === undefined) {
        // Releasing would let a retry run the handler again; the status and headers are kept.
        logger.warn(
          { key, maxStoredBytes },
          "idempotent response larger than maxStoredBytes; stored without its body",
        );
      }
      const stored = await store.complete(key, token, toStored(captured, replayHeaders), retentionMs);
      if (!stored) {
        logger.warn(
          { key, token },
          "idempotency lease lost before the response was stored; a newer execution owns the key",
        );
      }
    } catch (err) {
      logger.warn({ err: errInfo(err), key }, "idempotency store failed while storing a response");
    }
  }

  return function svcIdempotency(req: IdempotencyRequest, res: ServerResponse, next: NextFunction): void {
    handle(req, res, next).catch(next);
  };
}

/**
 * What the key is scoped to. Mounted on a route, the route the router runs (its mount path in
 * canonical form and its pattern, `/orders/:id`): no spelling of the URL reaches the handler
 * under another key, and the fingerprint tells the targets apart. In front of routing, the
 * canonical path.
 */
function resourceOf(req: IdempotencyRequest, rules: RoutingRules, path: string): string {
  const route = req.route?.path;
  if (route === undefined || typeof req.baseUrl !== "string") return path;
  const pattern =
    typeof route === "string" ? route : route instanceof RegExp ? route.toString() : JSON.stringify(route);
  return `${canonicalPath(req.baseUrl, { ...rules, strict: true })}${pattern}`;
}

function toStored(captured: CapturedResponse, names: readonly string[]): StoredResponse {
  const headers: Record<string, string | string[]> = {};
  const headerOf = (captured as CapturedResponse & { [HEADER_OF]?: (name: string) => unknown })[HEADER_OF];
  for (const name of names) {
    const value = headerOf ? headerOf.call(captured, name) : captured.headers[name];
    if (value === undefined) continue;
    headers[name] = Array.isArray(value) ? value.map(String) : String(value);
  }
  const stored = { status: captured.status, headers, body: captured.body ?? new Uint8Array() };
  return captured.body === undefined ? withoutBody(stored) : stored;
}

function replay(res: ServerResponse, stored: StoredResponse): void {
  res.statusCode = stored.status;
  for (const [name, value] of Object.entries(stored.headers)) res.setHeader(name, value);
  res.setHeader("Idempotent-Replayed", "true");
  if (stored.bodyOmitted === true) res.setHeader("Idempotent-Body-Omitted", "true");
  const bodyless =
    stored.status === 204 || stored.status === 304 || (stored.status >= 100 && stored.status < 200);
  if (bodyless) {
    res.end();
    return;
  }
  res.setHeader("Content-Length", stored.body.byteLength);
  res.end(stored.body);
}

/** RFC 9112 §6.3: a request has content when it carries Transfer-Encoding or a non-zero Content-Length. */
function hasBody(req: IncomingMessage): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  const length = req.headers["content-length"];
  return length !== undefined && length !== "0";
}

function errInfo(err: unknown): object {
  return err instanceof Error ? { type: err.name, message: err.message } : { message: String(err) };
}
