import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { appendVary, fallbackLogger, HttpError } from "@svc/errors";
import { canonicalPath, type RoutingRules, targetPath } from "./canonical-path.js";
import { HEADER_OF } from "./capture.js";
import {
  type IdempotencyConfig,
  type IdempotencyCoreOptions,
  type IdempotencyLogger,
  NEVER_REPLAYED,
  resolveConfig,
} from "./config.js";
import { canonicalJson, requestFingerprint } from "./fingerprint.js";
import { parseIdempotencyKey } from "./parse-key.js";
import { codingsOf, decodeContent, sendsCoded } from "./replay-coding.js";
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
  /** A stored content-coded response the retry does not accept, which could not be decoded. */
  notDecodable: "idempotency_replay_not_decodable",
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
   * The request header fields (`Idempotency-Key`; `Content-Length`/`Transfer-Encoding`;
   * `Accept-Encoding`, to replay a content-coded response in a coding the retry accepts).
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
 * - `replay`: send the stored response (see {@link writeReplay}), do not run it; a content-coded
 *   one comes decoded to identity when the request's `Accept-Encoding` does not accept its coding;
 * - `error`: send this 400, 409, 422 or 503, do not run it.
 *
 * @example if (decision.outcome === "replay") writeReplay(res, decision.response);
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
 * The framework-free claim/replay core of the `idempotency` middleware. Create it with
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
   * the claim. `started`: the endpoint began its work (Stripe's rule; see `markStarted`).
   * Never rejects: store failures and a lost lease are logged. Await it before sending the
   * response (the middleware holds the response's end for it): sent first, a client retrying as
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

/** A claim with what its lease renewal and its warnings need. */
class Claim implements IdempotencyClaim {
  readonly key: string;
  readonly token: string;
  readonly logger: IdempotencyLogger;
  stop: (() => void) | undefined = undefined;

  constructor(key: string, token: string, logger: IdempotencyLogger) {
    this.key = key;
    this.token = token;
    this.logger = logger;
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
 * middleware's (checked here, once); a refused one throws a `TypeError` with `code`
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

  async function begin(attempt: IdempotencyAttempt<Req>): Promise<IdempotencyDecision> {
    const method = (attempt.method ?? "").toUpperCase();
    if (!config.methods.has(method)) return PASS;
    const parsed = parseIdempotencyKey(attempt.headers["idempotency-key"]);
    const rules = attempt.routing ?? config.rules;
    // The path as the router matches it: every spelling that reaches one handler is one key.
    const path = canonicalPath(targetPath(attempt.target), rules);
    if (parsed.kind === "absent") {
      const required = config.isRequired(path, rules, attempt.request);
      if (required !== true && (required === false || !(await required))) return PASS;
      const message = "This operation requires an Idempotency-Key header";
      return failure(config, 400, message, IDEMPOTENCY_ERROR_CODES.missing);
    }
    if (parsed.kind === "invalid")
      return failure(config, 400, parsed.reason, IDEMPOTENCY_ERROR_CODES.invalid);
    const scope = scopeOf(config.scope(attempt.request as Req));
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
    const url = path + queryOf(attempt.target) + caseOfParams(attempt.params, rules);
    const fingerprint = requestFingerprint({ method, url, body: attempt.body });
    const decision = await claimKey(config, key, fingerprint, logger, attempt.signal);
    if (decision.outcome !== "replay") return decision;
    return inAcceptedCoding(config, decision.response, attempt.headers["accept-encoding"], key, logger);
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

/**
 * A stored response in a content coding the retry accepts. The record keeps the bytes a
 * compression wrapper on the route produced (for the first request's `Accept-Encoding`); RFC 9110
 * §12.5.3: a coding the retry does not accept (`identity`, `gzip;q=0`, `*;q=0`) must not be sent,
 * so the body is decoded and replayed as identity, with its own `Content-Length` (set by
 * `writeReplay`). Either way the replay now depends on `Accept-Encoding`: `Vary` says so
 * (RFC 9110 §12.5.5). A body that cannot be decoded within `maxDecodedBytes` (or in a coding
 * node:zlib does not know) is a 406, one that does not decode at all a 500: never the refused bytes.
 */
async function inAcceptedCoding(
  config: IdempotencyConfig<never>,
  stored: StoredResponse,
  acceptEncoding: string | undefined,
  key: string,
  logger: IdempotencyLogger,
): Promise<IdempotencyDecision> {
  const contentEncoding = stored.headers["content-encoding"];
  if (contentEncoding === undefined) return { outcome: "replay", response: stored };
  const codings = codingsOf(contentEncoding);
  const headers: StoredResponse["headers"] = {
    ...stored.headers,
    vary: withAcceptEncoding(stored.headers.vary),
  };
  if (codings.length > 0 && sendsCoded(acceptEncoding, codings)) {
    return { outcome: "replay", response: { ...stored, headers } };
  }
  delete headers["content-encoding"];
  if (stored.body.byteLength === 0) return { outcome: "replay", response: { ...stored, headers } };
  try {
    const body = await decodeContent(stored.body, codings, config.maxDecodedBytes);
    return { outcome: "replay", response: { ...stored, headers, body } };
  } catch (err) {
    const reason = (err as { reason?: unknown }).reason;
    const coding = codings.join(", ");
    logger.warn(
      { err: errInfo(err), key, coding, maxDecodedBytes: config.maxDecodedBytes },
      "idempotency: a stored content-coded response could not be decoded for a retry that does not accept its coding",
    );
    const corrupt = reason === "corrupt";
    const message = corrupt
      ? `The stored response (Content-Encoding: ${coding}) could not be decoded`
      : `The stored response is only available with Content-Encoding: ${coding}; retry with an Accept-Encoding that accepts it`;
    const status = corrupt ? 500 : 406;
    const vary = { Vary: "Accept-Encoding" };
    return failure(config, status, message, IDEMPOTENCY_ERROR_CODES.notDecodable, false, err, vary);
  }
}

/** A stored `Vary` (when `replayHeaders` keeps it) with `Accept-Encoding` added, unless listed or `*`. */
function withAcceptEncoding(vary: string | string[] | undefined): string {
  const value = vary === undefined ? "" : Array.isArray(vary) ? vary.join(", ") : vary;
  const listed = value.split(",").map((v) => v.trim().toLowerCase());
  if (listed.includes("*") || listed.includes("accept-encoding")) return value;
  return value.trim() === "" ? "Accept-Encoding" : `${value}, Accept-Encoding`;
}

/** Claims `key`, or waits (up to `waitMs`) for the execution that holds it. */
async function claimKey(
  config: IdempotencyConfig<never>,
  key: string,
  fingerprint: string,
  logger: IdempotencyLogger,
  signal: AbortSignal | undefined,
): Promise<IdempotencyDecision> {
  const deadline = Date.now() + config.waitMs;
  for (;;) {
    let claim: ClaimResult;
    try {
      claim = await config.store.claim(key, fingerprint, config.leaseMs);
    } catch (err) {
      return storeUnavailable(config, err, key, logger);
    }
    if (claim.outcome === "claimed") return claimed(config, key, claim.token, logger);
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
  logger: IdempotencyLogger,
): IdempotencyDecision {
  if (config.onStoreError === "pass-through") {
    logger.warn({ err: errInfo(err), key }, "idempotency store unavailable; running unprotected");
    return PASS;
  }
  const message = "The idempotency store is unavailable";
  return failure(config, 503, message, IDEMPOTENCY_ERROR_CODES.unavailable, true, err);
}

/** This execution owns the key: its lease is renewed from now on (unless `renewLease: false`). */
function claimed(
  config: IdempotencyConfig<never>,
  key: string,
  token: string,
  logger: IdempotencyLogger,
): IdempotencyDecision {
  const claim = new Claim(key, token, logger);
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
    if (owned || stopped) return;
    // Lost for good (expired and claimed again, or gone): a fencing token never comes back.
    stop();
    logger.warn({ key, token }, "idempotency lease lost while the handler ran; a retry may run it again");
  };
  const failed = (err: unknown): void => {
    if (!stopped)
      logger.warn({ err: errInfo(err), key }, "idempotency store failed to renew a lease; retrying");
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
  timer.unref();
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
  try {
    // An async storeStatus (plain JavaScript, or a cast) answers a promise, which is never `true`:
    // every response would be released, and every retry run the handler again, where draft §2.6
    // wants "the result of the previously completed operation". Its answer is awaited.
    if ((await config.storeStatus(response.status, { started })) !== true) {
      await config.store.release(key, token);
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
    if (!(await config.store.complete(key, token, stored, config.retentionMs))) {
      const message = "idempotency lease lost before the response was stored; a newer execution owns the key";
      logger.warn({ key, token }, message);
    }
  } catch (err) {
    logger.warn({ err: errInfo(err), key }, "idempotency store failed while storing a response");
  }
}

async function release(config: IdempotencyConfig<never>, claim: Claim): Promise<void> {
  try {
    await config.store.release(claim.key, claim.token);
  } catch (err) {
    claim.logger.warn({ err: errInfo(err), key: claim.key }, "idempotency store failed to release a claim");
  }
}

/** The record of a response: its replayed headers, and its body unless it is too large. */
export function toStored(response: IdempotencyResponse, config: IdempotencyConfig<never>): StoredResponse {
  const headers: Record<string, string | string[]> = {};
  // A captured response reads one header at a time instead of copying them all.
  const headerOf = (response as IdempotencyResponse & { [HEADER_OF]?: (name: string) => unknown })[HEADER_OF];
  for (const name of config.replayHeaders) {
    const value = headerOf ? headerOf.call(response, name) : response.headers[name];
    if (value === undefined) continue;
    headers[name] = Array.isArray(value) ? value.map(String) : String(value);
  }
  // RFC 9110 §8.4: Content-Encoding names the codings "applied to the representation" that a
  // recipient has to undo; stored bytes replayed without it would be read as unencoded.
  const coding = headerOf
    ? headerOf.call(response, "content-encoding")
    : response.headers["content-encoding"];
  if (coding !== undefined)
    headers["content-encoding"] = Array.isArray(coding) ? coding.join(", ") : String(coding);
  const { body } = response;
  const stored = { status: response.status, headers, body: body ?? new Uint8Array() };
  return body === undefined || body.byteLength > config.maxStoredBytes ? withoutBody(stored) : stored;
}

/**
 * Sends a stored response again, with `Idempotent-Replayed: true` (and `Idempotent-Body-Omitted:
 * true` for a record kept without its body). A 1xx, 204 or 304 gets no content (RFC 9110 §6.4.1).
 *
 * @example if (decision.outcome === "replay") return writeReplay(res, decision.response);
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2.6
 */
export function writeReplay(res: ServerResponse, stored: StoredResponse): void {
  res.statusCode = stored.status;
  for (const [name, value] of Object.entries(stored.headers)) {
    // A record stored before `replayHeaders` refused them, or by a store of your own: the replay
    // is framed by its own Content-Length (RFC 9112 §6.1), never by a stored Transfer-Encoding.
    if (NEVER_REPLAYED.test(name.toLowerCase())) continue;
    // Added to, not replaced: a middleware before this one may vary on other fields.
    if (name === "vary")
      appendVary(
        res,
        ...[value]
          .flat()
          .join(",")
          .split(",")
          .map((f) => f.trim())
          .filter(Boolean),
      );
    else res.setHeader(name, value);
  }
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
