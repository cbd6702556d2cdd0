import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError } from "@svc/errors";
import { type CapturedResponse, captureResponse, HEADER_OF } from "./capture.js";
import { requestFingerprint } from "./fingerprint.js";
import { MemoryStore } from "./memory-store.js";
import { parseIdempotencyKey } from "./parse-key.js";
import type { IdempotencyStore, StoredResponse } from "./store.js";

/** A pino-compatible logger: only `warn(obj, msg)` is used. */
export interface IdempotencyLogger {
  warn(obj: object, msg?: string): void;
}

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
}

/** Express's `next`. */
export type IdempotencyNext = (err?: unknown) => void;

/** What a claimed request's handler can read at `res.locals.idempotency`. */
export interface IdempotencyLocals {
  /** The scoped key the record is stored under. */
  key: string;
  /** The fencing token of this execution; pass it on to guard downstream writes. */
  token: string;
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
   * Answer 400 when a request has no `Idempotency-Key` (draft §2.7).
   * @default false
   */
  required?: boolean;
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
   * Largest response body stored; a larger one is sent but not stored, its claim released and a
   * warning logged.
   * @default 1048576
   */
  maxStoredBytes?: number;
  /**
   * Which handler statuses are stored for replay. Others release the claim so a retry can run.
   * @default (status) => status < 500
   */
  storeStatus?: (status: number) => boolean;
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
const NEVER_REPLAYED = /^(set-cookie|date|retry-after|x-ratelimit-.*|ratelimit(-.*)?|idempotent-replayed)$/;

const stderrLogger: IdempotencyLogger = {
  warn(obj, msg) {
    process.stderr.write(`${JSON.stringify({ level: 40, time: Date.now(), msg, ...obj })}\n`);
  },
};

function positive(name: string, value: number, allowZero = false): number {
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new TypeError(
      `idempotency: ${name} must be a ${allowZero ? "non-negative" : "positive"} number, got ${String(value)}`,
    );
  }
  return value;
}

/**
 * Express middleware for exactly-once unsafe requests with the `Idempotency-Key` header
 * (draft-ietf-httpapi-idempotency-key-header). The first request with a key claims it atomically
 * and runs; its response (status, body, safe headers) is stored; a retry with the same key and
 * payload gets that response again with `Idempotent-Replayed: true`. A duplicate while the first
 * still runs gets 409 with `Retry-After`; the same key with another payload gets 422; a malformed
 * key (or none, when `required`) gets 400. Keys are scoped by principal, method and path.
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
    typeof store.claim !== "function" ||
    typeof store.complete !== "function" ||
    typeof store.release !== "function"
  ) {
    throw new TypeError("idempotency: options.store must implement claim, complete and release");
  }
  const methods = new Set((options.methods ?? ["POST"]).map((m) => m.toUpperCase()));
  if (methods.size === 0) throw new TypeError("idempotency: options.methods must not be empty");
  for (const m of methods) {
    if (m === "GET" || m === "HEAD" || m === "OPTIONS") {
      throw new TypeError(`idempotency: ${m} is already idempotent; list unsafe methods only`);
    }
  }
  const leaseMs = positive("leaseMs", options.leaseMs ?? 60_000);
  const renewLease = options.renewLease ?? true;
  if (typeof renewLease !== "boolean") {
    throw new TypeError(`idempotency: renewLease must be a boolean, got ${String(renewLease)}`);
  }
  const renew = renewLease && typeof store.renew === "function" ? store.renew.bind(store) : undefined;
  const maxLeaseMs = positive("maxLeaseMs", options.maxLeaseMs ?? leaseMs * 10);
  // A third of the lease: two renewals can fail or run late before the lease ends.
  const renewEveryMs = Math.max(1, Math.floor(leaseMs / 3));
  const retentionMs = positive("retentionMs", options.retentionMs ?? 86_400_000);
  const maxStoredBytes = positive("maxStoredBytes", options.maxStoredBytes ?? 1_048_576, true);
  const waitMs = positive("waitMs", options.waitMs ?? 0, true);
  const retryAfterSeconds = positive("retryAfterSeconds", options.retryAfterSeconds ?? 1, true);
  const storeStatus = options.storeStatus ?? ((status: number) => status < 500);
  const replayHeaders = (options.replayHeaders ?? DEFAULT_REPLAY_HEADERS).map((h) => h.toLowerCase());
  for (const h of replayHeaders) {
    if (NEVER_REPLAYED.test(h)) throw new TypeError(`idempotency: ${h} must never be replayed`);
  }
  const scopeOf = options.scope ?? ((req: IdempotencyRequest) => req.principal?.id ?? "anonymous");
  const onStoreError = options.onStoreError ?? "fail";
  if (onStoreError !== "fail" && onStoreError !== "pass-through") {
    throw new TypeError(
      `idempotency: onStoreError must be "fail" or "pass-through", got ${String(onStoreError)}`,
    );
  }
  let link: string | undefined;
  if (options.documentationUrl !== undefined) {
    try {
      link = `<${new URL(options.documentationUrl).href}>; rel="describedby"; type="text/html"`;
    } catch {
      throw new TypeError(
        `idempotency: documentationUrl must be an absolute URL, got "${options.documentationUrl}"`,
      );
    }
  }

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

  async function handle(req: IdempotencyRequest, res: ServerResponse, next: IdempotencyNext): Promise<void> {
    if (!methods.has((req.method ?? "").toUpperCase())) return next();
    const logger = options.logger ?? req.log ?? stderrLogger;
    const parsed = parseIdempotencyKey(req.headers["idempotency-key"]);
    if (parsed.kind === "absent") {
      if (!options.required) return next();
      return next(
        error(400, "This operation requires an Idempotency-Key header", IDEMPOTENCY_ERROR_CODES.missing),
      );
    }
    if (parsed.kind === "invalid") {
      return next(error(400, parsed.reason, IDEMPOTENCY_ERROR_CODES.invalid));
    }
    const method = (req.method ?? "POST").toUpperCase();
    const target = req.originalUrl ?? req.url ?? "/";
    const path = target.replace(/[?#].*$/s, "");
    const scope = scopeOf(req);
    const key = [scope, method, path, parsed.key].map(encodeURIComponent).join(":");
    if (req.body === undefined && !warnedUnparsedBody && hasBody(req)) {
      warnedUnparsedBody = true;
      logger.warn(
        { path },
        "idempotency: a request body arrived but no body parser ran before the middleware; the body is not fingerprinted",
      );
    }
    const fingerprint = requestFingerprint({ method, url: target, body: req.body });

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
      if (locals) locals.idempotency = { key, token } satisfies IdempotencyLocals;
      const stopRenewing = renew ? keepLease(renew, key, token, res, logger) : undefined;
      captureResponse(res, maxStoredBytes, (captured) => {
        stopRenewing?.();
        void settle(key, token, captured, logger);
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

  async function settle(key: string, token: string, captured: CapturedResponse, logger: IdempotencyLogger) {
    try {
      if (captured.body === undefined) {
        logger.warn({ key, maxStoredBytes }, "idempotent response larger than maxStoredBytes; not stored");
        await store.release(key, token);
        return;
      }
      if (!storeStatus(captured.status)) {
        await store.release(key, token);
        return;
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

  return function svcIdempotency(req: IdempotencyRequest, res: ServerResponse, next: IdempotencyNext): void {
    handle(req, res, next).catch(next);
  };
}

function toStored(captured: CapturedResponse, names: readonly string[]): StoredResponse {
  const headers: Record<string, string | string[]> = {};
  const headerOf = (captured as CapturedResponse & { [HEADER_OF]?: (name: string) => unknown })[HEADER_OF];
  for (const name of names) {
    const value = headerOf ? headerOf.call(captured, name) : captured.headers[name];
    if (value === undefined) continue;
    headers[name] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return { status: captured.status, headers, body: captured.body ?? new Uint8Array() };
}

function replay(res: ServerResponse, stored: StoredResponse): void {
  res.statusCode = stored.status;
  for (const [name, value] of Object.entries(stored.headers)) res.setHeader(name, value);
  res.setHeader("Idempotent-Replayed", "true");
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
