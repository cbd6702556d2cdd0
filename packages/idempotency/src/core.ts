import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { fallbackLogger, HttpError } from "@svc/errors";
import {
  canonicalPath,
  exchangeIfAny,
  exchangeOf,
  type RoutingRules,
  routedPath,
  targetPath,
  type VersionDecision,
} from "@svc/kernel";
import { publishDecision } from "@svc/kernel/internal";
import {
  type IdempotencyConfig,
  type IdempotencyCoreOptions,
  type IdempotencyLogger,
  resolveConfig,
} from "./config.js";
import { decisions } from "./diagnostics.js";
import { canonicalJson, type FingerprintKind } from "./fingerprint.js";
import { ScopeFullError } from "./memory-store.js";
import { parseIdempotencyKey } from "./parse-key.js";
import { type ClaimResult, type StoredResponse, withoutBody } from "./store.js";

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

/**
 * One request as {@link IdempotencyCore.begin} reads it: plain values, from any server.
 *
 * @example core.begin({ method: req.method, target: req.url ?? "/", headers: req.headers, body, request: req })
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2
 */
export interface IdempotencyAttempt<Req = unknown> {
  /** The request method; methods the core does not guard pass. */
  method: string | undefined;
  /** The request target as sent (origin form `/a?b`, or absolute form): path and query. */
  target: string;
  /**
   * The request header fields (`Idempotency-Key`; `Content-Length`/`Transfer-Encoding`, to warn
   * of a body no parser read).
   */
  headers: IncomingHttpHeaders;
  /**
   * The body as read: a parsed value (fingerprinted in canonical JSON), raw bytes or a string
   * (byte for byte), or `undefined` when none was read.
   */
  body?: unknown;
  /**
   * What the key is scoped to besides the scope and the method: the route the router runs, for
   * an adapter that knows it (`/orders/:id`).
   * @default the canonical path of `target`
   */
  route?: string | undefined;
  /**
   * The route parameters as the router decoded them (`req.params`), for an adapter that knows
   * them. A case-insensitive router runs `/accounts/ABC` and `/accounts/abc` on one route with
   * different parameters: they are part of the fingerprint, so one key on both is a 422.
   */
  params?: Readonly<Record<string, unknown>> | undefined;
  /** How the router compares paths for this request. @default the `routing` option */
  routing?: RoutingRules | undefined;
  /** A per-request logger, used when the `logger` option is not set. */
  log?: IdempotencyLogger | undefined;
  /** Handed to the `scope` option and to a `required` predicate. */
  request?: Req | undefined;
  /**
   * Aborted when the client went away (the middleware: the response's `close`): a duplicate
   * waiting for an in-flight request (`waitMs`) stops polling the store and gets the 409 at once.
   */
  signal?: AbortSignal | undefined;
}

/** A key this execution owns, from {@link IdempotencyCore.begin}. */
export interface IdempotencyClaim {
  /** The scoped key the record is stored under. */
  readonly key: string;
  /** The fencing token of this execution; pass it on to guard downstream writes. */
  readonly token: string;
}

/**
 * What to do with a request, from {@link IdempotencyCore.begin}:
 * - `pass`: run it unprotected (method not guarded, no key where none is required, or a store
 *   failure with `onStoreError: "pass-through"`);
 * - `claimed`: run it, then {@link IdempotencyCore.complete} (or `release`) the claim;
 * - `replay`: send the stored response (the pipeline step makes it a response value, coded for
 *   the retry), do not run it;
 * - `error`: send this 400, 409, 422 or 503, do not run it.
 *
 * @example if (decision.outcome === "replay") return replayValue(decision.response);
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export type IdempotencyDecision =
  | { readonly outcome: "pass" }
  | { readonly outcome: "claimed"; readonly claim: IdempotencyClaim }
  | { readonly outcome: "replay"; readonly response: StoredResponse }
  | { readonly outcome: "error"; readonly error: HttpError };

/**
 * A handler's response as {@link IdempotencyCore.complete} stores it (a `CapturedResponse` is one).
 *
 * @example core.complete(claim, { status: 201, headers: { location: "/orders/7" }, body }, true)
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15
 */
export interface IdempotencyResponse {
  status: number;
  /** Response headers, lower-case names; those in `replayHeaders` are stored. */
  headers: OutgoingHttpHeaders;
  /** The body bytes; `undefined` (or more than `maxStoredBytes`) stores the record without it. */
  body: Uint8Array | undefined;
}

/**
 * The framework-free claim/replay core of the `idempotency` pipeline step. Create it with
 * {@link createIdempotency}.
 *
 * @example
 * const decision = await core.begin({ method: "POST", target: "/orders", headers, body });
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header
 */
export interface IdempotencyCore<Req = unknown> {
  /** Whether `method` is one the core acts on (`methods`); the others always pass. */
  guards(method: string | undefined): boolean;
  /**
   * Reads the key, checks it, and claims it atomically in the store (waiting up to `waitMs`
   * for a duplicate in flight). A claimed key's lease is renewed until `complete`, `release`
   * or `abandon`, at most `maxLeaseMs`. Never rejects for a store failure: that is an `error`
   * (503) or a `pass` decision.
   */
  begin(attempt: IdempotencyAttempt<Req>): Promise<IdempotencyDecision>;
  /**
   * Stores the response for replay when `storeStatus(status, { started })` says so, else releases
   * the claim. `started`: the endpoint began its work (Stripe's rule; the step's `claim.markStarted()`).
   * Never rejects: store failures and a lost lease are logged. Await it before sending the
   * response (the pipeline step does): sent first, a client retrying as
   * soon as it has read the response would still meet the claim in flight (409, or 422 with a
   * corrected body).
   */
  complete(claim: IdempotencyClaim, response: IdempotencyResponse, started?: boolean): Promise<void>;
  /** Drops the claim so a retry runs. Never rejects: store failures are logged. (Each method throws a `TypeError` for a claim that did not come from `begin`.) */
  release(claim: IdempotencyClaim): Promise<void>;
  /**
   * Stops renewing the claim and leaves it in flight: it ends one lease later (a response someone
   * else already sent, which cannot be stored).
   */
  abandon(claim: IdempotencyClaim): void;
}

const PASS: IdempotencyDecision = Object.freeze({ outcome: "pass" });

/** Where a claim came from: what its lease renewal, its warnings and its end's message need. */
interface ClaimOrigin {
  readonly logger: IdempotencyLogger;
  readonly health: StoreHealth;
  /** The framework's request, for the channel. */
  readonly request: object | undefined;
  readonly scope: string;
}

/** A claim with what its lease renewal and its warnings need. */
class Claim implements IdempotencyClaim {
  readonly key: string;
  readonly token: string;
  readonly origin: ClaimOrigin;
  /** The store took the key over from an execution whose lease ran out. */
  readonly leaseExpired: boolean;
  stop: (() => void) | undefined = undefined;

  constructor(key: string, token: string, origin: ClaimOrigin, leaseExpired: boolean) {
    this.key = key;
    this.token = token;
    this.origin = origin;
    this.leaseExpired = leaseExpired;
  }

  get logger(): IdempotencyLogger {
    return this.origin.logger;
  }
}

/**
 * The store's outage, across the core's calls: logged once at its first failure (at `warn`, with
 * what it means for keyed requests), its end once when the store answers again (at `info`, and
 * `store-recovered` on the channel); the failures between go to `debug`, where the logger has it.
 * One line per failed call would bury everything else in a log while a store is down.
 */
class StoreHealth {
  readonly #consequence: string;
  #downSince: number | undefined = undefined;
  #failed = 0;

  constructor(onStoreError: IdempotencyConfig<never>["onStoreError"]) {
    this.#consequence =
      onStoreError === "pass-through"
        ? "keyed requests run unprotected until it answers again"
        : "keyed requests are answered 503 until it answers again";
  }

  /** A store call failed: `message` says which, and what became of its request. */
  failed(logger: IdempotencyLogger, err: unknown, key: string, message: string): void {
    this.#failed++;
    if (this.#downSince === undefined) {
      this.#downSince = Date.now();
      logger.warn({ err: errInfo(err), key }, `${message}; ${this.#consequence}`);
    } else logger.debug?.({ err: errInfo(err), key }, message);
  }

  /** A store call answered: the end of an outage, if one was under way. */
  answered(logger: IdempotencyLogger): void {
    if (this.#downSince === undefined) return;
    const downMs = Math.max(0, Date.now() - this.#downSince);
    const failed = this.#failed;
    this.#downSince = undefined;
    this.#failed = 0;
    (logger.info ?? logger.warn).call(
      logger,
      { downMs, failed },
      `idempotency store answered again after ${downMs} ms; ${failed} call(s) failed meanwhile`,
    );
    if (decisions.hasSubscribers) publishDecision(decisions, { decision: "store-recovered", downMs });
  }
}

function own(claim: IdempotencyClaim): Claim {
  if (!(claim instanceof Claim)) throw new TypeError("idempotency: the claim must come from begin()");
  claim.stop?.();
  return claim;
}

/**
 * Creates the claim/replay core of draft-ietf-httpapi-idempotency-key-header, with no framework:
 * `begin` a request, run it when claimed, then `complete` it with its response. Options are the
 * step's (checked here, once); a refused one throws a `TypeError` with `code`
 * `ERR_SVC_IDEMPOTENCY_<OPTION>`.
 *
 * @example
 * const core = createIdempotency({ required: true });
 * const decision = await core.begin({ method: req.method, target: req.url ?? "/", headers: req.headers, body });
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header
 */
export function createIdempotency<Req = unknown>(
  options: IdempotencyCoreOptions<Req> = {},
): IdempotencyCore<Req> {
  return coreOf(resolveConfig(options));
}

/** The core over a resolved config (the middleware resolves it first, for its own settings). */
export function coreOf<Req>(config: IdempotencyConfig<Req>): IdempotencyCore<Req> {
  let warnedUnparsedBody = false;
  const health = new StoreHealth(config.onStoreError);

  async function begin(attempt: IdempotencyAttempt<Req>): Promise<IdempotencyDecision> {
    const method = (attempt.method ?? "").toUpperCase();
    if (!config.methods.has(method)) return PASS;
    const parsed = parseIdempotencyKey(attempt.headers["idempotency-key"]);
    const rules = attempt.routing ?? config.rules;
    const version = versionOf(attempt.request);
    // The path as the router matches it, without the version prefix the pipeline removed: every
    // spelling that reaches one handler is one key, and `required` sees the route as routed.
    const path = canonicalPath(routedPath(targetPath(attempt.target), version), rules);
    if (parsed.kind === "absent") {
      const required = config.isRequired(path, rules, attempt.request);
      if (required !== true && (required === false || !(await required))) return PASS;
      const message = "This operation requires an Idempotency-Key header";
      return failure(config, 400, message, IDEMPOTENCY_ERROR_CODES.missing);
    }
    if (parsed.kind === "invalid")
      return failure(config, 400, parsed.reason, IDEMPOTENCY_ERROR_CODES.invalid);
    // Without the request, the default scope cannot see a principal: a credentialed request
    // would share the anonymous scope with every caller.
    if (attempt.request === undefined && !config.scopeGiven && attempt.headers.authorization !== undefined)
      throw new HttpError(
        500,
        "idempotency: the request carries credentials (Authorization) but begin() was given no `request` to read its principal from; pass `request`, or give the `scope` option",
        { code: "unauthenticated_credentials" },
      );
    const scope = scopeOf(config.scope(attempt.request as Req));
    if (typeof attempt.request === "object" && attempt.request !== null)
      exchangeOf(attempt.request).idempotencyScope = scope;
    const key = [scope, method, attempt.route ?? path, parsed.key].map(encodeURIComponent).join(":");
    const logger = config.logger ?? attempt.log ?? fallbackLogger;
    if (attempt.body === undefined && !warnedUnparsedBody && hasContent(attempt.headers)) {
      warnedUnparsedBody = true;
      logger.warn(
        { path },
        "idempotency: a request body arrived but no body parser ran before the middleware; the body is not fingerprinted",
      );
    }
    // The canonical path and the query as sent: another spelling of the same request replays.
    // The version chosen is part of the request: the same key for another version is a 422.
    const url = path + queryOf(attempt.target) + caseOfParams(attempt.params, rules) + versionMark(version);
    const fingerprint = config.fingerprint.of({
      method,
      target: url,
      fields: attempt.headers,
      body: attempt.body,
    });
    const native =
      typeof attempt.request === "object" && attempt.request !== null ? attempt.request : undefined;
    const origin: ClaimOrigin = { logger, health, request: native, scope };
    const decision = await claimKey(config, key, fingerprint, origin, attempt.signal);
    if (decisions.hasSubscribers) publishLookup(native, scope, decision, config.fingerprint.kind);
    return decision;
  }

  return {
    guards: (method) => config.methods.has((method ?? "").toUpperCase()),
    begin,
    complete: (claim, response, started = false) => settle(config, own(claim), response, started),
    release: (claim) => release(config, own(claim)),
    abandon(claim) {
      own(claim);
    },
  };
}

/** The decision on the `svc:idempotency` channel: only called with a subscriber. */
function publishLookup(
  native: object | undefined,
  scope: string,
  decision: IdempotencyDecision,
  fingerprint: FingerprintKind,
): void {
  if (decision.outcome === "claimed") {
    const taken = (decision.claim as Claim).leaseExpired;
    publishDecision(decisions, { request: native, decision: taken ? "lease-expired" : "claimed", scope });
    return;
  }
  if (decision.outcome === "replay") {
    publishDecision(decisions, { request: native, decision: "replayed", scope });
    return;
  }
  const failed = decision.outcome === "pass" ? STORE_PASSED.get(decision) : undefined;
  if (failed !== undefined) {
    publishDecision(decisions, {
      request: native,
      decision: "store-failed",
      scope,
      passed: true,
      error: failed,
    });
    return;
  }
  if (decision.outcome !== "error") return;
  const { status } = decision.error;
  if (status === 409) publishDecision(decisions, { request: native, decision: "in-progress", scope });
  else if (status === 422)
    publishDecision(decisions, { request: native, decision: "mismatch", scope, fingerprint });
  else if (status === 503)
    publishDecision(decisions, {
      request: native,
      decision: "store-failed",
      scope,
      passed: false,
      error: decision.error.cause,
    });
}

/** The store failures behind a pass-through decision, for the channel. */
const STORE_PASSED = new WeakMap<IdempotencyDecision, unknown>();

/** Claims `key`, or waits (up to `waitMs`) for the execution that holds it. */
async function claimKey(
  config: IdempotencyConfig<never>,
  key: string,
  fingerprint: string,
  origin: ClaimOrigin,
  signal: AbortSignal | undefined,
): Promise<IdempotencyDecision> {
  const deadline = Date.now() + config.waitMs;
  for (;;) {
    let claim: ClaimResult;
    try {
      claim = await config.store.claim(key, fingerprint, config.leaseMs);
    } catch (err) {
      return storeUnavailable(config, err, key, origin);
    }
    origin.health.answered(origin.logger);
    if (claim.outcome === "claimed")
      return claimed(config, new Claim(key, claim.token, origin, claim.leaseExpired === true));
    if (claim.fingerprint !== fingerprint) {
      // draft §2.7: "If there is an attempt to reuse an idempotency key with a different
      // request payload, the resource server SHOULD reply with a HTTP 422 status code".
      const message = "This Idempotency-Key was already used with a different request";
      return failure(config, 422, message, IDEMPOTENCY_ERROR_CODES.mismatch);
    }
    if (claim.outcome === "completed") return { outcome: "replay", response: claim.response };
    const left = deadline - Date.now();
    // A client that went away reads no answer: stop polling the store for it.
    if (left <= 0 || signal?.aborted) {
      // draft §2.7: "If the request is retried, while the original request is still being
      // processed, the resource server SHOULD reply with an HTTP 409 status code".
      const message = "A request with this Idempotency-Key is still being processed";
      return failure(config, 409, message, IDEMPOTENCY_ERROR_CODES.inFlight, true);
    }
    await pause(Math.min(left, 25, claim.leaseRemainingMs + 1), signal);
  }
}

/** Waits `ms`, or less when `signal` aborts; leaves neither the timer nor the listener behind. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal === undefined) {
      setTimeout(resolve, ms);
      return;
    }
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** `onStoreError`: a 503 with `Retry-After`, or a warning and an unprotected run. */
function storeUnavailable(
  config: IdempotencyConfig<never>,
  err: unknown,
  key: string,
  origin: ClaimOrigin,
): IdempotencyDecision {
  // A client past its share of a MemoryStore is refused by a store that works: no outage.
  const refused = err instanceof ScopeFullError;
  if (config.onStoreError === "pass-through") {
    const message = "idempotency store failed to claim a key; running unprotected";
    if (refused) origin.logger.warn({ err: errInfo(err), key }, message);
    else origin.health.failed(origin.logger, err, key, message);
    if (!decisions.hasSubscribers) return PASS;
    const passed: IdempotencyDecision = { outcome: "pass" };
    STORE_PASSED.set(passed, err);
    return passed;
  }
  if (!refused)
    origin.health.failed(origin.logger, err, key, "idempotency store failed to claim a key; answered 503");
  const message = "The idempotency store is unavailable";
  return failure(config, 503, message, IDEMPOTENCY_ERROR_CODES.unavailable, true, err);
}

/** This execution owns the key: its lease is renewed from now on (unless `renewLease: false`). */
function claimed(config: IdempotencyConfig<never>, claim: Claim): IdempotencyDecision {
  if (config.renew) claim.stop = keepLease(config, claim);
  return { outcome: "claimed", claim };
}

/** One of the core's own errors, with `Retry-After` on the 409 and the 503 (draft §2.7). */
function failure(
  config: IdempotencyConfig<never>,
  status: number,
  message: string,
  code: string,
  retry = false,
  cause?: unknown,
  extra: Record<string, string> = {},
): IdempotencyDecision {
  const headers: Record<string, string> = retry
    ? { "Retry-After": config.retryAfter, ...extra }
    : { ...extra };
  if (config.link) headers.Link = config.link;
  const error = new HttpError(status, message, { code, headers, ...(cause === undefined ? {} : { cause }) });
  return { outcome: "error", error };
}

/**
 * Renews the claim every third of the lease until it is settled, or `maxLeaseMs` has passed;
 * returns the function that stops it. draft §2.7: "If the request is retried, while the original
 * request is still being processed, the resource server SHOULD reply with an HTTP 409 status
 * code": the record must stay in flight for as long as the handler runs, however long that is,
 * not only for `leaseMs`.
 */
function keepLease(config: IdempotencyConfig<never>, claim: Claim): () => void {
  const renew = config.renew as NonNullable<IdempotencyConfig<never>["renew"]>;
  const { key, token, logger } = claim;
  const { health } = claim.origin;
  const { leaseMs, maxLeaseMs } = config;
  const until = Date.now() + maxLeaseMs;
  let stopped = false;
  let pending = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
  };
  const renewed = (owned: boolean): void => {
    health.answered(logger);
    if (owned || stopped) return;
    // Lost for good (expired and claimed again, or gone): a fencing token never comes back.
    stop();
    logger.warn({ key, token }, "idempotency lease lost while the handler ran; a retry may run it again");
  };
  const failed = (err: unknown): void => {
    if (!stopped) health.failed(logger, err, key, "idempotency store failed to renew a lease; retrying");
  };
  const timer = setInterval(() => {
    if (Date.now() >= until) {
      stop();
      const message =
        "idempotency lease no longer renewed: the handler ran past maxLeaseMs; a retry may run it again";
      logger.warn({ key, maxLeaseMs }, message);
      return;
    }
    // A slow store: skip this tick rather than stack renewals up behind it.
    if (pending) return;
    pending = true;
    Promise.resolve()
      .then(() => renew(key, token, leaseMs))
      .then(renewed, failed)
      .finally(() => {
        pending = false;
      });
  }, config.renewEveryMs);
  // A timer is a plain number on some Fetch runtimes (Cloudflare Workers): nothing to unref there.
  timer.unref?.();
  return stop;
}

/** Stores the response (or releases the claim when its status is not stored). */
async function settle(
  config: IdempotencyConfig<never>,
  claim: Claim,
  response: IdempotencyResponse,
  started: boolean,
): Promise<void> {
  const { key, token, logger } = claim;
  const { health } = claim.origin;
  try {
    // An async storeStatus (plain JavaScript, or a cast) answers a promise, which is never `true`:
    // every response would be released, and every retry run the handler again, where draft §2.6
    // wants "the result of the previously completed operation". Its answer is awaited.
    const { status } = response;
    if ((await config.storeStatus(status, { started })) !== true) {
      const released = await config.store.release(key, token);
      health.answered(logger);
      if (released && decisions.hasSubscribers)
        publishDecision(decisions, { ...about(claim), decision: "released", reason: "not-stored", status });
      return;
    }
    const stored = toStored(response, config);
    if (stored.bodyOmitted === true) {
      // Releasing would let a retry run the handler again; the status and headers are kept.
      const { maxStoredBytes } = config;
      logger.warn(
        { key, maxStoredBytes },
        "idempotent response larger than maxStoredBytes; stored without its body",
      );
    }
    const completed = await config.store.complete(key, token, stored, config.retentionMs);
    health.answered(logger);
    if (!completed) {
      const message = "idempotency lease lost before the response was stored; a newer execution owns the key";
      logger.warn({ key, token }, message);
    } else if (decisions.hasSubscribers)
      publishDecision(decisions, { ...about(claim), decision: "completed", status: stored.status });
  } catch (err) {
    health.failed(logger, err, key, "idempotency store failed while storing a response");
  }
}

async function release(config: IdempotencyConfig<never>, claim: Claim): Promise<void> {
  const { health } = claim.origin;
  try {
    const released = await config.store.release(claim.key, claim.token);
    health.answered(claim.logger);
    if (released && decisions.hasSubscribers)
      publishDecision(decisions, { ...about(claim), decision: "released", reason: "failed" });
  } catch (err) {
    health.failed(claim.logger, err, claim.key, "idempotency store failed to release a claim");
  }
}

/** The request and scope of a claim's messages. */
function about(claim: Claim): { request: object | undefined; scope: string } {
  return { request: claim.origin.request, scope: claim.origin.scope };
}

/** The record of a response: its replayed headers, and its body unless it is too large. */
export function toStored(response: IdempotencyResponse, config: IdempotencyConfig<never>): StoredResponse {
  const headers: Record<string, string | string[]> = {};
  for (const name of config.replayHeaders) {
    const value = response.headers[name];
    if (value === undefined) continue;
    headers[name] = Array.isArray(value) ? value.map(String) : String(value);
  }
  // RFC 9110 §8.4: Content-Encoding names the codings "applied to the representation" that a
  // recipient has to undo; stored bytes replayed without it would be read as unencoded.
  const coding = response.headers["content-encoding"];
  if (coding !== undefined)
    headers["content-encoding"] = Array.isArray(coding) ? coding.join(", ") : String(coding);
  const { body } = response;
  const stored = { status: response.status, headers, body: body ?? new Uint8Array() };
  return body === undefined || body.byteLength > config.maxStoredBytes ? withoutBody(stored) : stored;
}

/**
 * The scope `scope(req)` answered, as the string the key is stored under. draft §2: the key is
 * one a client generated, so records must be kept per client; an answer that is not a string
 * (a promise from an async scope, `undefined` from `req.user?.id`, an object) would become the
 * same text for every caller ("[object Promise]", "undefined"), and one principal's retry would
 * get another's stored response. A number (a numeric user id) is its decimal text. Anything else
 * throws (a 500 from the middleware); a promise is settled first, so its rejection is not left
 * unhandled.
 */
function scopeOf(scope: unknown): string {
  if (typeof scope === "string") return scope;
  if (typeof scope === "number" && Number.isFinite(scope)) return String(scope);
  const thenable = typeof (scope as { then?: unknown } | null | undefined)?.then === "function";
  if (thenable) (scope as PromiseLike<unknown>).then(undefined, () => {});
  throw new TypeError(
    `idempotency: scope(req) must answer a string (synchronously), answered ${thenable ? "a promise" : String(scope)}; every caller's keys would share one scope`,
  );
}

/**
 * What the lower-cased path lost of the route parameters, for the fingerprint. A router that is
 * not case-sensitive (Express's default) runs `/accounts/ABC/charges` and `/accounts/abc/charges`
 * on one route, but its handler gets `ABC` and `abc`: two resources. draft §2.7: "If there is an
 * attempt to reuse an idempotency key with a different request payload, the resource server SHOULD
 * reply with a HTTP 422 status code"; a replay of one account's charge for the other would tell
 * the client an operation ran that never did. Parameters the lower-cased path already holds as
 * they are add nothing, so those fingerprints are the ones stored before.
 */
function caseOfParams(params: Readonly<Record<string, unknown>> | undefined, rules: RoutingRules): string {
  if (rules.caseSensitive || params === undefined || params === null || typeof params !== "object") return "";
  const values = Object.values(params);
  if (!values.some((v) => String(v) !== String(v).toLowerCase())) return "";
  // `#` never appears in the path and query (the fragment is not part of the target).
  return `#${canonicalJson({ ...params })}`;
}

/** The versioning decision the pipeline recorded for the request, if it versions requests. */
function versionOf(request: unknown): VersionDecision | undefined {
  return typeof request === "object" && request !== null ? exchangeIfAny(request)?.version : undefined;
}

/**
 * The version a request was served as, for the fingerprint: ` v2` (a space never appears in a
 * request-target, RFC 9112 §3.2), `""` without one, so the fingerprints of an API that does not
 * version its requests are the ones stored before.
 */
function versionMark(version: VersionDecision | undefined): string {
  return version?.version === undefined ? "" : ` v${String(version.version)}`;
}

/** The query of a target as sent (`?a=1`), without a fragment; `""` for none. */
function queryOf(target: string): string {
  const start = target.search(/[?#]/);
  return start === -1 ? "" : target.slice(start).replace(/#.*$/s, "");
}

/** RFC 9112 §6.3: a request has content when it carries Transfer-Encoding or a non-zero Content-Length. */
function hasContent(headers: IncomingHttpHeaders): boolean {
  if (headers["transfer-encoding"] !== undefined) return true;
  const length = headers["content-length"];
  return length !== undefined && length !== "0";
}

function errInfo(err: unknown): object {
  return err instanceof Error ? { type: err.name, message: err.message } : { message: String(err) };
}
