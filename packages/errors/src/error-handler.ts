import type { IncomingMessage, ServerResponse } from "node:http";
import { appendVary, fieldValue, HttpError, isChallengeList, isToken, stringifyJson } from "@svc/kernel";
import { checkOptionNames, refusedOption } from "@svc/kernel/internal";
import { clockTime } from "./clock.js";
import { type ErrorFormat, errorRendering } from "./error-format.js";
import { fallbackLogger, type Logger, writeLog } from "./logger.js";
import {
  boundedRecord,
  buildErrorRecord,
  buildProblemDetails,
  type ErrorRecord,
  requestPath,
} from "./record.js";
import { toHttpError } from "./to-http-error.js";
import { errorRecordToXml, problemDetailsToXml } from "./xml.js";

/** The part of a {@link Logger} the error handler calls: `error(obj, msg)`. */
export type ErrorLogger = Pick<Logger, "error">;

/** The parts of an Express (or plain `node:http`) request the handler reads. */
export interface ErrorRequest extends IncomingMessage {
  originalUrl?: string;
  /** pino-http's per-request logger, used when no `logger` option is given. */
  log?: ErrorLogger;
}

/**
 * The `next` callback of a connect-style middleware (Express 4/5, `connect`, `router`), typed
 * without depending on any framework: every `@svc` middleware takes this one type.
 *
 * @example
 * function handler(req: IncomingMessage, res: ServerResponse, next: NextFunction) { next(); }
 * @see https://expressjs.com/en/guide/writing-middleware.html
 */
export type NextFunction = (err?: unknown) => void;

/** Options of {@link errorHandler}. */
export interface ErrorHandlerOptions {
  /**
   * Where 5xx exceptions are logged, once per failed request, with the correlation id.
   * @default the request's pino-http logger (`req.log`) when present, else one JSON line on stderr
   */
  logger?: ErrorLogger;
  /**
   * Reads the request's correlation id for the log line.
   * @default `res.locals.correlationId`, else the `X-Correlation-ID` request header
   */
  correlationId?: (req: ErrorRequest, res: ServerResponse) => string | undefined;
  /**
   * Base URI for problem `type`s: an error with `code: "out_of_stock"` gets
   * `type: <base>out_of_stock`. Without it every problem is `about:blank` (RFC 9457 §4.2.1).
   * @default undefined
   */
  problemTypeBase?: string;
  /**
   * The clock, for tests. When it throws or returns no valid `Date`, the record carries the system
   * clock's time and the failure is logged.
   * @default () => new Date()
   */
  now?: () => Date;
  /**
   * The `WWW-Authenticate` challenge(s) a 401 gets when neither the error nor the response carries
   * one (RFC 9110 §15.5.2: the server MUST send at least one challenge), as one field value:
   * `'Bearer realm="api"'`, or a list, `'Bearer realm="api", Basic realm="api"'`. Checked at
   * construction against §11.6.1. Without it such a 401 goes out as it is, and the handler warns
   * once (`process.emitWarning`, code `SVC_ERRORS_401_WITHOUT_CHALLENGE`): no scheme is invented.
   * @default undefined
   */
  wwwAuthenticate?: string;
}

/**
 * Fields of an error's `headers` that the handler never copies: they describe the framing and
 * coding of a body, and the body is the error record the handler writes and labels itself. An
 * error carrying an upstream response's headers (`Transfer-Encoding: chunked` beside the record's
 * `Content-Length` is a framing a recipient must reject, RFC 9112 §6.1, §6.3) or a
 * `Content-Encoding` (RFC 9110 §8.4) would corrupt it.
 */
const BODY_FIELDS = [
  "content-type",
  "content-length",
  "transfer-encoding",
  "content-encoding",
  "content-digest",
  "repr-digest",
] as const;
/**
 * Fields of an error's `headers` that belong to the connection, which Node manages, and never to
 * an error: RFC 9110 §7.6.1, `Connection` and the connection options it names (`Keep-Alive`,
 * `Proxy-Connection`, `TE`) "apply only to the immediate connection". An error carrying an upstream
 * response's `Connection: keep-alive` would make Node keep open a connection whose client sent
 * `close`, which RFC 9112 §9.6 says the server MUST close after the response; `Trailer` announces
 * trailer fields of a chunked body (RFC 9110 §6.6.2) and Node throws on it beside the record's
 * `Content-Length`. `Upgrade` stays: a 426 MUST carry it (RFC 9110 §15.5.22).
 */
const CONNECTION_FIELDS: ReadonlySet<string> = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
]);
const IGNORED_FIELD_SET: ReadonlySet<string> = new Set([...BODY_FIELDS, ...CONNECTION_FIELDS]);

/**
 * Headers that describe a representation the failed handler may have started to build: the
 * {@link BODY_FIELDS} (a `Content-Encoding: gzip` set for a precompressed file would label the
 * plain error body as gzip, RFC 9110 §8.4; a digest, RFC 9530 §2, §3, would not match it; and the
 * error body goes with `Content-Length`, which a sender MUST NOT send beside `Transfer-Encoding`,
 * RFC 9112 §6.2), the rest of the failed representation's metadata and validators, and its
 * `Trailer`: RFC 9110 §6.6.2, it announces the trailer fields of the failed content's chunked
 * framing, and the record has none (Node throws ERR_HTTP_TRAILER_INVALID on a Trailer beside
 * Content-Length, inside the error handler: the client would get no answer at all).
 */
const STALE_REPRESENTATION_HEADERS = [
  ...BODY_FIELDS,
  "content-language",
  "content-range",
  "content-disposition",
  "content-location",
  "etag",
  "last-modified",
  "trailer",
] as const;

/** Whether a `Connection` value lists the `close` option (RFC 9110 §7.6.1, case-insensitive). */
function asksToClose(raw: unknown): boolean {
  const value = fieldValue(raw);
  if (value === undefined) return false;
  for (const option of value.split(",")) if (option.trim().toLowerCase() === "close") return true;
  return false;
}

/**
 * Splits an error's own headers into those that can be sent and the names of those that cannot:
 * a name that is not an RFC 9110 §5.1 `token` ("X-Bad\r\n", "Bad Name"), a value with CR, LF,
 * NUL or another character outside §5.5, a value that is not a string or number, and the
 * {@link BODY_FIELDS} and {@link CONNECTION_FIELDS}, which are ignored (but for
 * `Connection: close`, honoured). `res.setHeader` throws
 * on the first two (and Node on `Trailer`), inside the error handler, so the error response would
 * never go out.
 */
function sendableHeaders(headers: Readonly<Record<string, unknown>>): {
  valid: [string, string][];
  dropped: string[];
} {
  const valid: [string, string][] = [];
  const dropped: string[] = [];
  for (const [name, raw] of Object.entries(headers)) {
    if (!isToken(name)) {
      dropped.push(name);
      continue;
    }
    const lower = name.toLowerCase();
    if (IGNORED_FIELD_SET.has(lower)) {
      // RFC 9110 §7.6.1: "close" ends the connection after this response, the one connection
      // option an error may set (a 408 "SHOULD send the 'close' connection option", §15.5.9; a
      // server shedding load on a 503). It only ever closes, so it is honoured; keep-alive is not.
      if (lower === "connection" && asksToClose(raw)) valid.push(["Connection", "close"]);
      continue;
    }
    const value = fieldValue(raw);
    if (value === undefined) dropped.push(name);
    else valid.push([name, value]);
  }
  return { valid, dropped };
}

function defaultCorrelationId(req: ErrorRequest, res: ServerResponse): string | undefined {
  const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
  const fromLocals = locals?.correlationId;
  if (typeof fromLocals === "string") return fromLocals;
  const header = req.headers["x-correlation-id"];
  return typeof header === "string" ? header : undefined;
}

/** The options of {@link errorHandler}, checked and resolved once, at construction. */
interface ErrorHandlerConfig {
  /** The `logger` option; without it, each request's `req.log`, else {@link fallbackLogger}. */
  readonly logger: ErrorLogger | undefined;
  readonly correlationId: (req: ErrorRequest, res: ServerResponse) => string | undefined;
  readonly problemTypeBase: string | undefined;
  readonly now: () => Date;
  readonly wwwAuthenticate: string | undefined;
}

function newDate(): Date {
  return new Date();
}

const ERROR_HANDLER_OPTIONS = ["logger", "correlationId", "problemTypeBase", "now", "wwwAuthenticate"];

function resolveErrorHandlerConfig(options: ErrorHandlerOptions): ErrorHandlerConfig {
  checkOptionNames("errors", options, ERROR_HANDLER_OPTIONS, "errorHandler");
  const { logger, problemTypeBase, correlationId, now, wwwAuthenticate } = options;
  if (logger !== undefined && typeof logger?.error !== "function") {
    throw refusedOption(
      "errors",
      "logger",
      logger,
      "an object with an error(obj, msg) method",
      "errorHandler: logger",
    );
  }
  if (
    problemTypeBase !== undefined &&
    (typeof problemTypeBase !== "string" || !URL.canParse(problemTypeBase))
  ) {
    throw refusedOption(
      "errors",
      "problemTypeBase",
      problemTypeBase,
      "an absolute URI",
      "errorHandler: problemTypeBase",
    );
  }
  if (correlationId !== undefined && typeof correlationId !== "function") {
    throw refusedOption(
      "errors",
      "correlationId",
      correlationId,
      "a function (req, res) => string | undefined",
      "errorHandler: correlationId",
    );
  }
  if (now !== undefined && typeof now !== "function") {
    throw refusedOption("errors", "now", now, "a function () => Date", "errorHandler: now");
  }
  if (wwwAuthenticate !== undefined && !isChallengeList(wwwAuthenticate)) {
    throw refusedOption(
      "errors",
      "wwwAuthenticate",
      wwwAuthenticate,
      'one or more challenges (RFC 9110 §11.6.1, `Bearer realm="api"`, `Basic realm="api", charset="UTF-8"`)',
      "errorHandler: wwwAuthenticate",
    );
  }
  return {
    logger,
    correlationId: correlationId ?? defaultCorrelationId,
    problemTypeBase,
    now: now ?? newDate,
    wwwAuthenticate,
  };
}

/**
 * The request's correlation id for a log line. `correlationId` is the application's code, run on
 * the failed request, which may be the very request it did not expect (one reading a header the
 * client left out, `req.headers["x-request-id"].slice(0, 64)`): a throw there is the line without
 * an id, not an exception out of the error handler, which through Express would give the client the
 * framework's page (with the stack trace outside production; RFC 9457 §6: problem details must not
 * expose implementation internals) and on plain `node:http` would escape the request listener and
 * end the process.
 */
function correlationIdOf(
  config: ErrorHandlerConfig,
  req: ErrorRequest,
  res: ServerResponse,
): string | undefined {
  try {
    return config.correlationId(req, res);
  } catch {
    return undefined;
  }
}

/**
 * A 5xx is logged once, with the error as it was thrown and the correlation id: an `HttpError`
 * itself (its message, status and code, then its `cause` chain), anything else as it came, not
 * the generic 500 it was wrapped in. The fallback logger writes the whole `cause` chain.
 */
function logFailure(
  config: ErrorHandlerConfig,
  thrown: unknown,
  httpError: HttpError,
  req: ErrorRequest,
  res: ServerResponse,
): void {
  const entry = {
    err: thrown,
    status: httpError.status,
    method: req.method,
    path: req.originalUrl ?? req.url,
    correlationId: correlationIdOf(config, req, res),
  };
  writeLog(config.logger ?? req.log ?? fallbackLogger, entry, "request failed");
}

/**
 * An error whose own headers could not be sent is a bug of the code that built it, whatever the
 * status: logged once, with the names (cut to 100 characters each, at most 20 of them), never
 * the values, which may hold what was never meant for a log.
 */
function logDroppedHeaders(
  config: ErrorHandlerConfig,
  dropped: readonly string[],
  httpError: HttpError,
  req: ErrorRequest,
  res: ServerResponse,
): void {
  writeLog(
    config.logger ?? req.log ?? fallbackLogger,
    {
      droppedHeaders: dropped.slice(0, 20).map((name) => name.slice(0, 100)),
      status: httpError.status,
      method: req.method,
      path: req.originalUrl ?? req.url,
      correlationId: correlationIdOf(config, req, res),
    },
    "error response headers dropped: not valid HTTP fields",
  );
}

const MISSING_CHALLENGE_WARNING =
  "@svc/errors: a 401 response went out without a WWW-Authenticate challenge, which RFC 9110 " +
  "§15.5.2 requires (the server MUST send at least one challenge applicable to the target resource). " +
  'Give the error its challenge (HttpError.unauthorized(message, { headers: { "WWW-Authenticate": ' +
  "'Bearer realm=\"api\"' } })), or errorHandler({ wwwAuthenticate: 'Bearer realm=\"api\"' }) the " +
  "default for 401s without one. Warned once.";

/** Whether a field value holds anything at all: an empty `WWW-Authenticate` is no challenge. */
function isBlank(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(isBlank);
  return value === undefined || String(value).trim() === "";
}

const MISSING_PROXY_CHALLENGE_WARNING =
  "@svc/errors: a 407 response went out without a Proxy-Authenticate challenge, which RFC 9110 " +
  "§15.5.8 requires (the proxy MUST send a Proxy-Authenticate header field containing a challenge " +
  "applicable to that proxy for the request). A proxy gives the error its challenge " +
  '(new HttpError(407, message, { headers: { "Proxy-Authenticate": \'Basic realm="proxy"\' } })); ' +
  "an origin server asking for credentials sends 401 with WWW-Authenticate (RFC 9110 §15.5.2). Warned once.";

/** Whether the challenge field `field` (lower-cased) is missing from the error and the response. */
function lacksChallenge(field: string, headers: readonly [string, string][], res: ServerResponse): boolean {
  if (headers.some(([name, value]) => name.toLowerCase() === field && !isBlank(value))) return false;
  return isBlank(res.getHeader(field));
}

/**
 * RFC 9110 §15.5.2: "The server generating a 401 response MUST send a WWW-Authenticate header
 * field (Section 11.6.1) containing at least one challenge applicable to the target resource."
 * A 401 whose error carries no challenge (one dropped as unsendable or blank counts as none) and
 * whose response has none set by earlier middleware gets `wwwAuthenticate`. Only the application
 * knows its schemes, so without that option none is invented: the 401 goes out as it is and
 * `warn` names the omission.
 *
 * RFC 9110 §15.5.8: for a 407, "The proxy MUST send a Proxy-Authenticate header field (Section
 * 11.7.1) containing a challenge applicable to that proxy for the request." An API is rarely a
 * proxy, so there is no option for a default: a 407 without one goes out as it is and `warnProxy`
 * names the omission.
 */
function withChallenge(
  config: ErrorHandlerConfig,
  status: number,
  headers: readonly [string, string][],
  res: ServerResponse,
  warn: () => void,
  warnProxy: () => void,
): readonly [string, string][] {
  if (status === 407) {
    if (lacksChallenge("proxy-authenticate", headers, res)) warnProxy();
    return headers;
  }
  if (status !== 401 || !lacksChallenge("www-authenticate", headers, res)) return headers;
  if (config.wwwAuthenticate === undefined) {
    warn();
    return headers;
  }
  const own = (name: string) => name.toLowerCase() === "www-authenticate";
  return [...headers.filter(([name]) => !own(name)), ["WWW-Authenticate", config.wwwAuthenticate]];
}

/**
 * The error as the body of the chosen format (`errorRendering(accept).format`): the record, or
 * RFC 9457 problem details (§3, §A.1 for XML), with `type` built from `typeBase` and `code` as
 * `errorHandler()`'s `problemTypeBase` does. For middleware that must answer an error itself
 * after the route ran (when `next(err)` is no longer open to it), so its body is the one
 * `errorHandler()` would have written.
 *
 * @example
 * const { format, contentType } = errorRendering(req.headers.accept);
 * const body = renderError(format, buildErrorRecord(err, req.url ?? "/"), err.code, undefined);
 * @see https://www.rfc-editor.org/rfc/rfc9457#section-3
 */
export function renderError(
  format: ErrorFormat,
  record: ErrorRecord,
  code: string | undefined,
  typeBase: string | undefined,
): string {
  // Extension members as plain data, within the same limits in every format (bounds.ts), as
  // buildErrorRecord makes them.
  return renderBounded(format, boundedRecord(record), code, typeBase);
}

/** {@link renderError} of a record {@link buildErrorRecord} made, so already bounded. */
function renderBounded(
  format: ErrorFormat,
  bounded: ErrorRecord,
  code: string | undefined,
  typeBase: string | undefined,
): string {
  switch (format) {
    // stringifyJson: a BigInt extension member is a number with every digit (RFC 8259 §6), where
    // JSON.stringify would throw.
    case "problem+json":
      return stringifyJson(buildProblemDetails(bounded, code, typeBase));
    case "problem+xml":
      return problemDetailsToXml(buildProblemDetails(bounded, code, typeBase));
    case "xml":
      return errorRecordToXml(bounded);
    default:
      return stringifyJson(bounded);
  }
}

/**
 * Replaces whatever the failed handler had set up with the error response: its status, its own
 * headers, `Cache-Control: no-store` and `Vary: Accept` (the format followed `Accept`), no body
 * for HEAD (RFC 9110 §9.3.2).
 */
function writeError(
  req: ErrorRequest,
  res: ServerResponse,
  httpError: HttpError,
  headers: readonly (readonly [string, string])[],
  contentType: string,
  body: string,
): void {
  for (const name of STALE_REPRESENTATION_HEADERS) res.removeHeader(name);
  res.statusCode = httpError.status;
  // RFC 9112 §4: the reason-phrase describes the status code. One the failed handler set for the
  // status it meant to send ("Created") would give "500 Created": "" lets Node write the status's own.
  res.statusMessage = "";
  res.setHeader("Cache-Control", "no-store");
  for (const [name, value] of headers) res.setHeader(name, value);
  appendVary(res, "Accept");
  res.setHeader("Content-Type", contentType);
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(req.method === "HEAD" ? undefined : body);
}

/**
 * Express error middleware that renders every error as the service's error record
 * `{ timestamp, status, error, message, path }`.
 *
 * - Follows `Accept` where it can: RFC 9457 `application/problem+json` or `+xml` when the client
 *   prefers it, the record as XML for XML clients, JSON otherwise; never a 406.
 * - A 5xx never reveals the exception: the body says only that something went wrong, and the
 *   exception is logged once with the correlation id. 4xx are not logged.
 * - Sets the error's own headers (`Retry-After`, `WWW-Authenticate`, `Allow`, ...), `Vary: Accept`
 *   and `Cache-Control: no-store`, and drops representation headers a handler had set.
 * - When the response has already started, closes the connection instead of writing a second
 *   response (logged by the rules above; an ended response is left as it is).
 *
 * @example
 * app.use(notFound());
 * app.use(errorHandler({ logger: pino() }));
 * @see https://www.rfc-editor.org/rfc/rfc9457
 */
export function errorHandler(options: ErrorHandlerOptions = {}) {
  const config = resolveErrorHandlerConfig(options);
  let warned = false;
  const warnMissingChallenge = () => {
    if (warned) return;
    warned = true;
    process.emitWarning(MISSING_CHALLENGE_WARNING, { code: "SVC_ERRORS_401_WITHOUT_CHALLENGE" });
  };
  let warnedProxy = false;
  const warnMissingProxyChallenge = () => {
    if (warnedProxy) return;
    warnedProxy = true;
    process.emitWarning(MISSING_PROXY_CHALLENGE_WARNING, { code: "SVC_ERRORS_407_WITHOUT_CHALLENGE" });
  };
  return function svcErrorHandler(
    err: unknown,
    req: ErrorRequest,
    res: ServerResponse,
    // Unused, but Express takes a handler of four parameters as its error handler.
    _next: NextFunction,
  ): void {
    const httpError = toHttpError(err);
    if (httpError.status >= 500) logFailure(config, err, httpError, req, res);
    if (res.headersSent) {
      // A second response cannot follow a started one. Express's default handler would close the
      // connection but also print the error on console.error (twice for a 5xx, and a 4xx the rules
      // above keep out of the log), so the connection is closed here: cut before the message's
      // end (Content-Length short, or no last chunk), the client sees an incomplete message
      // (RFC 9112 §8) instead of one that looks complete. An ended response stands.
      if (!res.writableEnded) res.destroy();
      return;
    }
    const path = req.originalUrl ?? req.url ?? "/";
    const now = clockTime(config.now, (failure) =>
      writeLog(
        config.logger ?? req.log ?? fallbackLogger,
        {
          err: failure,
          status: httpError.status,
          method: req.method,
          path,
          correlationId: correlationIdOf(config, req, res),
        },
        "errorHandler: the now option threw or gave no valid Date; the record carries the system clock's time",
      ),
    );
    const { format, contentType } = errorRendering(req.headers.accept);
    let body: string;
    try {
      body = renderBounded(
        format,
        buildErrorRecord(httpError, path, now),
        httpError.code,
        config.problemTypeBase,
      );
    } catch (renderFailure) {
      // An extension member with no JSON text (a cycle, a toJSON that throws) is the server's bug:
      // a 500 record, logged, rather than a throw that leaves the client Express's page.
      const internal = HttpError.internal(undefined, { cause: renderFailure });
      logFailure(config, renderFailure, internal, req, res);
      writeError(
        req,
        res,
        internal,
        [],
        contentType,
        renderBounded(format, buildErrorRecord(internal, path, now), undefined, undefined),
      );
      return;
    }
    const { valid, dropped } = sendableHeaders(httpError.headers);
    if (dropped.length > 0) logDroppedHeaders(config, dropped, httpError, req, res);
    const headers = withChallenge(
      config,
      httpError.status,
      valid,
      res,
      warnMissingChallenge,
      warnMissingProxyChallenge,
    );
    writeError(req, res, httpError, headers, contentType, body);
  };
}

/**
 * Terminal middleware for requests no route matched: a 404 record.
 *
 * @example app.use(notFound());
 */
export function notFound() {
  return function svcNotFound(req: ErrorRequest, _res: ServerResponse, next: NextFunction): void {
    next(HttpError.notFound(`No resource matches ${req.method ?? "GET"} ${pathOf(req)}`));
  };
}

/**
 * A handler for the methods a route does not support: 405 with `Allow` (RFC 9110 §15.5.6).
 *
 * @example router.route("/employees").get(list).post(create).all(methodNotAllowed(["GET", "HEAD", "POST"]));
 */
export function methodNotAllowed(allowed: readonly string[]) {
  if (
    !Array.isArray(allowed) ||
    allowed.length === 0 ||
    allowed.some((m) => typeof m !== "string" || !isToken(m))
  ) {
    throw refusedOption(
      "errors",
      "allowed",
      allowed,
      "a non-empty array of method names (RFC 9110 §9.1 tokens)",
      "methodNotAllowed: allowed",
    );
  }
  const methods = allowed.map((m) => m.toUpperCase());
  return function svcMethodNotAllowed(req: ErrorRequest, _res: ServerResponse, next: NextFunction): void {
    next(HttpError.methodNotAllowed(methods, `Method ${req.method ?? ""} is not allowed on ${pathOf(req)}`));
  };
}

/**
 * The last handler of a route: `OPTIONS` answered with 204 and `Allow` (RFC 9110 §9.3.7: a server
 * SHOULD send the methods it supports for the target resource; §10.2.1 `Allow`), any other method
 * the route lacks with 405 and the same `Allow` (RFC 9110 §15.5.6). One list feeds both, so the
 * two answers cannot disagree; `OPTIONS` is added to it when missing, as it is answered.
 *
 * @example router.route("/employees").get(list).post(create).all(allowedMethods(["GET", "HEAD", "POST", "OPTIONS"]));
 */
export function allowedMethods(allowed: readonly string[]) {
  methodNotAllowed(allowed); // checks the list
  // RFC 9110 §10.2.1: Allow lists "the set of methods advertised as supported by the target
  // resource", and this handler answers OPTIONS itself: it is listed even when left out.
  const methods = allowed.map((m) => m.toUpperCase());
  if (!methods.includes("OPTIONS")) methods.push("OPTIONS");
  const refuse = methodNotAllowed(methods);
  const allow = methods.join(", ");
  return function svcAllowedMethods(req: ErrorRequest, res: ServerResponse, next: NextFunction): void {
    if (req.method !== "OPTIONS") {
      refuse(req, res, next);
      return;
    }
    res.statusCode = 204;
    res.setHeader("Allow", allow);
    res.end();
  };
}

function pathOf(req: ErrorRequest): string {
  const path = requestPath(req.originalUrl ?? req.url ?? "/");
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}
