import {
  type FieldValue,
  fieldValue,
  HttpError,
  isToken,
  type RequestView,
  type ResponseValue,
  splitList,
  stringifyJson,
} from "@svc/kernel";
import { emitWarning } from "@svc/kernel/internal";
import { clockTime } from "./clock.js";
import { errorsChannel, publishRecord } from "./diagnostics.js";
import { type ErrorFormat, errorRendering } from "./error-format.js";
import { fallbackLogger, writeInfo, writeLog } from "./logger.js";
import { mappedError } from "./map-error.js";
import type { ErrorLogger, ErrorValueConfig } from "./options.js";
import { boundedRecord, buildErrorRecord, buildProblemDetails, type ErrorRecord } from "./record.js";
import { checkRendering, type ErrorRenderer, type ErrorRendering } from "./renderer.js";
import { toHttpError } from "./to-http-error.js";
import { errorRecordToXml, problemDetailsToXml } from "./xml.js";

/**
 * Fields of an error's `headers` that the handler never copies: they describe the framing and
 * coding of a body, and the body is the error record the handler writes and labels itself. An
 * error carrying an upstream response's headers (`Transfer-Encoding: chunked` beside the record's
 * `Content-Length` is a framing a recipient must reject, RFC 9112 §6.1, §6.3) or a
 * `Content-Encoding` (RFC 9110 §8.4) would corrupt it.
 */
const utf8 = new TextEncoder();

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
 * Content-Length, inside the error handler: the client would get no answer at all). The error
 * value removes them (`null` fields).
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
 * `Connection: close`, honoured). `res.setHeader` throws on the first two (and Node on
 * `Trailer`), inside the error handler, so the error response would never go out.
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
      if (lower === "connection" && asksToClose(raw)) valid.push(["connection", "close"]);
      continue;
    }
    const value = fieldValue(raw);
    if (value === undefined) dropped.push(name);
    else valid.push([lower, value]);
  }
  return { valid, dropped };
}

/**
 * One line for the log: what {@link writeErrorLogs} hands the logger's `error(obj, msg)`, or its
 * `info(obj, msg)` for a 4xx.
 */
export interface ErrorLog {
  readonly entry: Record<string, unknown>;
  readonly msg: string;
  /**
   * `info` for the line of a 4xx (the client's error, with what was thrown and its `cause`),
   * written only through a logger that has `info`, never on stderr.
   * @default "error"
   */
  readonly level?: "error" | "info";
}

/** What an adapter tells {@link errorValue} about the request beyond its {@link RequestView}. */
export interface ErrorContext {
  /**
   * A field already set on the response by what ran in front (a challenge an authentication
   * middleware set), by lower-case name.
   * @default none
   */
  preset?: ((name: string) => unknown) | undefined;
  /**
   * The request's correlation id, read only when a line is logged; a throw is a line without one.
   * @default the `X-Correlation-ID` request header
   */
  correlationId?: (() => string | undefined) | undefined;
  /**
   * The framework's request (Express's `req`, Fastify's `request`, a Fetch `Request`), which the
   * `svc:errors` message of the record carries.
   * @default none: the message has no `request`
   */
  request?: object | undefined;
}

/** What {@link errorValue} decides: the response to send, the lines to log, the error it answers. */
export interface ErrorOutcome {
  /**
   * The error response: its status, the error's own sendable fields, `Cache-Control: no-store`,
   * `Content-Type`, the stale representation fields of a failed handler removed (`null`), `Vary:
   * Accept`, and the rendered record as bytes. A writer sends no content for HEAD (RFC 9110 §9.3.2).
   */
  readonly value: ResponseValue;
  /** Lines for the error log (a 5xx once; unsendable fields of the error; a clock that failed). */
  readonly logs: readonly ErrorLog[];
  /** The error the value answers (`toHttpError` of what was thrown). */
  readonly error: HttpError;
}

function correlationHeader(request: RequestView): string | undefined {
  const header = request.headers["x-correlation-id"];
  return typeof header === "string" ? header : undefined;
}

/**
 * The request's correlation id for a log line. `correlationId` is the application's code, run on
 * the failed request, which may be the very request it did not expect (one reading a header the
 * client left out, `req.headers["x-request-id"].slice(0, 64)`): a throw there is the line without
 * an id, not an exception out of the error handler, which would give the client the framework's
 * page (RFC 9457 §6: problem details must not expose implementation internals) or, on plain
 * `node:http`, escape the request listener and end the process.
 */
function correlationIdOf(request: RequestView, context: ErrorContext): string | undefined {
  try {
    return context.correlationId === undefined ? correlationHeader(request) : context.correlationId();
  } catch {
    return undefined;
  }
}

function line(
  request: RequestView,
  context: ErrorContext,
  status: number,
  members: Record<string, unknown>,
  msg: string,
): ErrorLog {
  return {
    entry: {
      ...members,
      status,
      method: request.method,
      path: request.url,
      correlationId: correlationIdOf(request, context),
    },
    msg,
  };
}

/**
 * The log line of a failed request, or `undefined` for one that needs none: a 5xx is logged once,
 * with the error as it was thrown and the correlation id (an `HttpError` itself, its message,
 * status, code and `cause` chain; anything else as it came, not the generic 500 it was wrapped
 * in); a 4xx is the client's and is not logged. For an adapter whose response has already started
 * (it cuts the connection instead of answering, and logs this line).
 *
 * @example const log = failureLog(err, { method: "GET", url: "/x", headers: {} }); // a 500's line
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.6
 */
export function failureLog(
  thrown: unknown,
  request: RequestView,
  context: ErrorContext = {},
  httpError: HttpError = toHttpError(thrown),
): ErrorLog | undefined {
  if (httpError.status < 500) return undefined;
  return line(request, context, httpError.status, { err: thrown }, "request failed");
}

/**
 * The `info` line of a 4xx: the error as it was thrown (an `HttpError` with its `cause`, jose's
 * error behind an authentication middleware's 401), with the status, method, path and correlation
 * id, as Fastify logs each 4xx with its error at `info`.
 *
 * @example const log = refusalLog(err, { method: "GET", url: "/x", headers: {} }); // a 401's line
 * @see https://fastify.dev/docs/latest/Reference/Logging/
 */
export function refusalLog(
  thrown: unknown,
  request: RequestView,
  context: ErrorContext = {},
  httpError: HttpError = toHttpError(thrown),
): ErrorLog | undefined {
  if (httpError.status >= 500) return undefined;
  return { ...line(request, context, httpError.status, { err: thrown }, httpError.message), level: "info" };
}

/**
 * Writes `logs` through `logger` (the `logger` option, the request's own logger or
 * `fallbackLogger`). The response goes out whatever the logger does: one that throws (or whose
 * serializer does, reading a hostile thrown value's getters) has the line written on stderr. An
 * `info` line (a 4xx) goes only to a logger with `info`, and not to stderr: a client's mistakes
 * do not fill the error stream of an application that set no logger.
 *
 * @example writeErrorLogs(request.log, outcome.logs);
 */
export function writeErrorLogs(logger: ErrorLogger | undefined, logs: readonly ErrorLog[]): void {
  for (const { entry, msg, level } of logs)
    if (level === "info") writeInfo(logger, entry, msg);
    else writeLog(logger ?? fallbackLogger, entry, msg);
}

const MISSING_CHALLENGE_WARNING =
  "@svc/errors: a 401 response went out without a WWW-Authenticate challenge, which RFC 9110 " +
  "§15.5.2 requires (the server MUST send at least one challenge applicable to the target resource). " +
  'Give the error its challenge (HttpError.unauthorized(message, { headers: { "WWW-Authenticate": ' +
  "'Bearer realm=\"api\"' } })), or errorHandler({ wwwAuthenticate: 'Bearer realm=\"api\"' }) the " +
  "default for 401s without one. Warned once.";

const MISSING_PROXY_CHALLENGE_WARNING =
  "@svc/errors: a 407 response went out without a Proxy-Authenticate challenge, which RFC 9110 " +
  "§15.5.8 requires (the proxy MUST send a Proxy-Authenticate header field containing a challenge " +
  "applicable to that proxy for the request). A proxy gives the error its challenge " +
  '(new HttpError(407, message, { headers: { "Proxy-Authenticate": \'Basic realm="proxy"\' } })); ' +
  "an origin server asking for credentials sends 401 with WWW-Authenticate (RFC 9110 §15.5.2). Warned once.";

/** Whether a field value holds anything at all: an empty `WWW-Authenticate` is no challenge. */
function isBlank(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(isBlank);
  return value === undefined || value === null || String(value).trim() === "";
}

/** Whether the challenge field `field` (lower-cased) is missing from the error and the response. */
function lacksChallenge(field: string, headers: readonly [string, string][], context: ErrorContext): boolean {
  if (headers.some(([name, value]) => name === field && !isBlank(value))) return false;
  let preset: unknown;
  try {
    preset = context.preset?.(field);
  } catch {
    preset = undefined;
  }
  return isBlank(preset);
}

/**
 * RFC 9110 §15.5.2: "The server generating a 401 response MUST send a WWW-Authenticate header
 * field (Section 11.6.1) containing at least one challenge applicable to the target resource."
 * A 401 whose error carries no challenge (one dropped as unsendable or blank counts as none) and
 * whose response has none set by earlier middleware gets `wwwAuthenticate`. Only the application
 * knows its schemes, so without that option none is invented: the 401 goes out as it is and a
 * warning names the omission, once per configuration.
 *
 * RFC 9110 §15.5.8: for a 407, "The proxy MUST send a Proxy-Authenticate header field (Section
 * 11.7.1) containing a challenge applicable to that proxy for the request." An API is rarely a
 * proxy, so there is no option for a default: a 407 without one goes out as it is, with a warning.
 */
function withChallenge(
  config: ErrorValueConfig,
  status: number,
  headers: [string, string][],
  context: ErrorContext,
): [string, string][] {
  if (status === 407) {
    if (lacksChallenge("proxy-authenticate", headers, context) && !config.warned.proxyChallenge) {
      config.warned.proxyChallenge = true;
      emitWarning(MISSING_PROXY_CHALLENGE_WARNING, "SVC_ERRORS_407_WITHOUT_CHALLENGE");
    }
    return headers;
  }
  if (status !== 401 || !lacksChallenge("www-authenticate", headers, context)) return headers;
  if (config.wwwAuthenticate === undefined) {
    if (!config.warned.challenge) {
      config.warned.challenge = true;
      emitWarning(MISSING_CHALLENGE_WARNING, "SVC_ERRORS_401_WITHOUT_CHALLENGE");
    }
    return headers;
  }
  return [
    ...headers.filter(([name]) => name !== "www-authenticate"),
    ["www-authenticate", config.wwwAuthenticate],
  ];
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
 * The error response as a value: replaces whatever the failed handler had set up with the
 * error's status, its own fields, `Cache-Control: no-store` and `Vary: Accept` (the format
 * followed `Accept`).
 */
function responseValue(
  status: number,
  headers: readonly [string, string][],
  contentType: string,
  body: string | Uint8Array,
  vary: readonly string[] = ACCEPT,
): ResponseValue {
  const fields: Record<string, FieldValue | null> = {};
  for (const name of STALE_REPRESENTATION_HEADERS) fields[name] = null;
  fields["cache-control"] = "no-store";
  let names: string[] | undefined;
  for (const [name, value] of headers) {
    // The error's own `Vary` names are added to those set in front (a gate's), as the format's
    // are: sent as a field, they would replace them on a `node:http` response.
    if (name === "vary") names = [...(names ?? []), ...(splitList(value) ?? [value])];
    else fields[name] = value;
  }
  fields["content-type"] = contentType;
  return {
    status,
    fields,
    vary: names === undefined ? [...vary] : [...names, ...vary],
    body: typeof body === "string" ? utf8.encode(body) : body,
  };
}

const ACCEPT: readonly string[] = ["Accept"];

/**
 * The rendering of the first of `renderers` that answers the request, with its name; `undefined`
 * when none does. A renderer that throws or returns no rendering is the application's bug: one
 * log line naming it, and the next renderer (then the record) answers, so the client still gets
 * the error's status and fields.
 */
function rendered(
  renderers: readonly ErrorRenderer[],
  error: HttpError,
  request: RequestView,
  context: ErrorContext,
  logs: ErrorLog[],
): { rendering: ErrorRendering; renderer: string } | undefined {
  for (const renderer of renderers) {
    let value: unknown;
    try {
      value = renderer.render(error, request);
    } catch (err) {
      logs.push(
        line(
          request,
          context,
          error.status,
          { err, renderer: renderer.name },
          "errorHandler: a renderer threw",
        ),
      );
      continue;
    }
    if (value === undefined) continue;
    const rendering = checkRendering(value);
    if (typeof rendering === "string") {
      logs.push(
        line(
          request,
          context,
          error.status,
          { renderer: renderer.name, problem: rendering },
          "errorHandler: a renderer returned no rendering",
        ),
      );
      continue;
    }
    return { rendering, renderer: renderer.name };
  }
  return undefined;
}

/**
 * The error response to a request, and what to log, whatever the framework: the framework-free
 * core of every `@svc/errors` adapter (`errorHandler` on Express, `errorResponder` on
 * `node:http`, `errorPlugin` on Fastify, `onError` and `withErrors` on Fetch).
 *
 * - Anything thrown becomes an `HttpError` (the `mapError` mappers, then `toHttpError`); its body
 *   is the record `{ timestamp, status, error, message, path }` as JSON, XML or RFC 9457 problem
 *   details, by `Accept` (`defaultFormat` where it does not choose), never a 406.
 * - A 5xx never reveals the exception: the body says only that something went wrong, and the
 *   exception is one log line with the correlation id. 4xx are not logged.
 * - The error's own fields (`Retry-After`, `WWW-Authenticate`, `Allow`, ...) that can be sent,
 *   `Vary: Accept`, `Cache-Control: no-store`; the fields of a representation a failed handler
 *   had set are removed. A 401 without a challenge gets `wwwAuthenticate`, or a warning. Whether
 *   the connection stays is not the record's to say: the adapter that writes it applies the
 *   kernel's refused-body policy to content left unread.
 * - A renderer of `renderers` that answers the request (a SOAP endpoint's faults) renders the
 *   content instead of the record, with the same status, fields and log lines.
 *
 * `request.url` is the request-target as received (Express's `originalUrl`): the record's `path`
 * is it without the query.
 *
 * @example
 * const config = errorConfig({}, "myAdapter");
 * const { value, logs } = errorValue(err, { method: "GET", url: "/x", headers: { accept: "application/xml" } }, config);
 * @see https://www.rfc-editor.org/rfc/rfc9457
 */
export function errorValue(
  thrown: unknown,
  request: RequestView,
  config: ErrorValueConfig,
  context: ErrorContext = {},
): ErrorOutcome {
  const mapped = mappedError(thrown, config.mappers);
  const httpError = mapped.error;
  const logs: ErrorLog[] = [];
  const failure =
    failureLog(mapped.logged, request, context, httpError) ??
    refusalLog(mapped.logged, request, context, httpError);
  if (failure !== undefined) logs.push(failure);
  const renderers = config.renderers;
  const custom =
    renderers !== undefined && renderers.length > 0
      ? rendered(renderers, httpError, request, context, logs)
      : undefined;
  let contentType: string;
  let body: string | Uint8Array;
  if (custom !== undefined) {
    contentType = custom.rendering.contentType;
    body = custom.rendering.body;
  } else {
    const path = request.url ?? "/";
    const now = clockTime(config.now, (err) =>
      logs.push(
        line(
          request,
          context,
          httpError.status,
          { err },
          "errorHandler: the now option threw or gave no valid Date; the record carries the system clock's time",
        ),
      ),
    );
    const accept = request.headers.accept;
    const chosen = errorRendering(typeof accept === "string" ? accept : undefined, config.defaultFormat);
    contentType = chosen.contentType;
    try {
      body = renderBounded(
        chosen.format,
        buildErrorRecord(httpError, path, now),
        httpError.code,
        config.problemTypeBase,
      );
    } catch (renderFailure) {
      // An extension member with no JSON text (a cycle, a toJSON that throws) is the server's bug:
      // a 500 record, logged, rather than a throw that leaves the client the framework's page.
      const internal = HttpError.internal(undefined, { cause: renderFailure });
      logs.push(line(request, context, internal.status, { err: renderFailure }, "request failed"));
      const fallback = renderBounded(
        chosen.format,
        buildErrorRecord(internal, path, now),
        undefined,
        undefined,
      );
      if (errorsChannel.hasSubscribers)
        publishRecord(context.request, internal.status, undefined, thrown, mapped.mapper);
      return { value: responseValue(internal.status, [], contentType, fallback), logs, error: internal };
    }
  }
  const { valid, dropped } = sendableHeaders(httpError.headers);
  if (dropped.length > 0) {
    // An error whose own headers could not be sent is a bug of the code that built it, whatever
    // the status: logged once, with the names (cut to 100 characters each, at most 20 of them),
    // never the values, which may hold what was never meant for a log.
    logs.push(
      line(
        request,
        context,
        httpError.status,
        { droppedHeaders: dropped.slice(0, 20).map((name) => name.slice(0, 100)) },
        "error response headers dropped: not valid HTTP fields",
      ),
    );
  }
  const headers = withChallenge(config, httpError.status, valid, context);
  if (errorsChannel.hasSubscribers)
    publishRecord(context.request, httpError.status, httpError.code, thrown, mapped.mapper, custom?.renderer);
  return {
    value: responseValue(httpError.status, headers, contentType, body, custom?.rendering.vary),
    logs,
    error: httpError,
  };
}
