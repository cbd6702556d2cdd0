import type { Duplex } from "node:stream";
import { fieldValue, HttpError, isToken, reasonPhrase } from "@svc/kernel";
import { checkOptionNames } from "@svc/kernel/internal";
import { clockTime } from "./clock.js";
import { errorsChannel, publishRecord } from "./diagnostics.js";
import { fallbackLogger, type Logger, writeLog } from "./logger.js";
import { checkLogger, checkNow, refusedErrorOption } from "./options.js";
import { buildErrorRecord } from "./record.js";

/** Options of {@link clientErrorHandler}. */
export interface ClientErrorOptions {
  /**
   * Header fields to send besides the ones the handler always sends, read once per refused
   * request: security headers, a correlation id. The socket is the one the request came on (a
   * `tls.TLSSocket`, with `encrypted: true`, over TLS), so headers such as
   * `Strict-Transport-Security` can be sent over TLS only (RFC 6797 §7.2).
   *
   * Fields the handler writes itself, or that would frame the response or keep the connection
   * (`Content-Length`, `Transfer-Encoding`, `Connection`, `Keep-Alive`, `Proxy-Connection`,
   * `Upgrade`, `TE`, `Trailer`, `Content-Type`, `Content-Encoding`, `Content-Digest`,
   * `Repr-Digest`, `Cache-Control`; RFC 9112 §6.3, RFC 9110 §7.6.1), and fields that are no valid
   * HTTP fields (CR or LF in a value) are left out and logged by name. When the function
   * throws (or returns something that is not a list of pairs), none of its fields is sent: the
   * record goes out with the handler's own, and the exception is logged.
   * @default no other headers
   */
  headers?: (socket: Duplex) => Iterable<readonly [string, string]>;
  /**
   * Where a `headers` function that threw, or fields it returned that had to be left out, are
   * logged (`error(obj, msg)`).
   * @default one JSON line on stderr
   */
  logger?: Pick<Logger, "error">;
  /**
   * The clock, for tests. When it throws or returns no valid `Date`, the record carries the system
   * clock's time and the failure is logged through `logger`.
   * @default () => new Date()
   */
  now?: () => Date;
}

/**
 * The `'clientError'` listener's signature (`http.Server`, `https.Server`). Node's parser errors
 * carry the bytes it was given (`rawPacket`) and where it stopped (`bytesParsed`).
 */
export type ClientErrorListener = (
  err: Error & { code?: string; rawPacket?: unknown; bytesParsed?: unknown },
  socket: Duplex,
) => void;

/**
 * RFC 9112 §3: `request-line = method SP request-target SP HTTP-version`, with RFC 9110 §9.1
 * `method = token`; the target is anything up to the next SP. Run on one line of bounded input.
 */
const REQUEST_LINE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+ [^\s]+ HTTP\/\d\.\d\r?$/;

/**
 * Whether the request Node refused with `HPE_INVALID_METHOD` is a well-formed request line whose
 * method Node does not know (`BREW /pot HTTP/1.1`, a lower-case `get`: methods are
 * case-sensitive), rather than bytes that are no HTTP at all: the line holding the point where the
 * parser stopped, read from the packet it was parsing.
 */
function isUnknownMethod(rawPacket: unknown, bytesParsed: unknown): boolean {
  if (!Buffer.isBuffer(rawPacket) || typeof bytesParsed !== "number") return false;
  const at = Math.min(Math.max(0, bytesParsed), rawPacket.length);
  // A negative offset would search from the end of the packet.
  const start = at === 0 ? 0 : rawPacket.lastIndexOf(0x0a, at - 1) + 1;
  const end = rawPacket.indexOf(0x0a, at);
  if (end === -1 || end - start > 8192) return false;
  return REQUEST_LINE.test(rawPacket.toString("latin1", start, end));
}

/**
 * The error a parser failure of Node's HTTP server stands for, by the failure's `code`: the same
 * statuses Node's own default answer uses, with the error record's messages.
 */
/** A method (a token) and the space after it: the start of a request line (RFC 9112 §3). */
const REQUEST_LINE_START = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+ /;

/**
 * Whether the parser stopped inside the request line: the packet starts with one (after the empty
 * lines RFC 9112 §2.2 lets a server ignore) and no line ended before the point of the error. The
 * method is a known one (an unknown one fails first) and the version is eight bytes: what overflowed
 * is the request-target.
 */
function isRequestLineOverflow(rawPacket: unknown, bytesParsed: unknown): boolean {
  if (!Buffer.isBuffer(rawPacket) || typeof bytesParsed !== "number") return false;
  let start = 0;
  while (rawPacket[start] === 0x0d || rawPacket[start] === 0x0a) start++;
  const at = Math.min(Math.max(0, bytesParsed), rawPacket.length);
  if (at <= start) return false;
  const newline = rawPacket.indexOf(0x0a, start);
  if (newline !== -1 && newline < at) return false;
  return REQUEST_LINE_START.test(rawPacket.toString("latin1", start, Math.min(at, start + 64)));
}

function parserError(err: Parameters<ClientErrorListener>[0]): HttpError {
  switch (err.code) {
    // RFC 9110 §9.1: "An origin server that receives a request method that is unrecognized or not
    // implemented SHOULD respond with the 501 (Not Implemented) status code" (§15.6.2); a request
    // line that is no request line at all stays a 400.
    case "HPE_INVALID_METHOD":
      return isUnknownMethod(err.rawPacket, err.bytesParsed)
        ? new HttpError(501, "The request method is not implemented")
        : HttpError.badRequest("The request is not valid HTTP/1.1");
    // Node counts the request line into maxHeaderSize. RFC 9112 §3: "A server that receives a
    // request-target longer than any URI it wishes to parse MUST respond with a 414 (URI Too Long)
    // status code"; RFC 6585 §5: otherwise the header section, or one field, is too large.
    case "HPE_HEADER_OVERFLOW":
      return isRequestLineOverflow(err.rawPacket, err.bytesParsed)
        ? new HttpError(414, "The request target is too long")
        : new HttpError(431, "The request header fields are too large");
    // RFC 9110 §15.5.14: chunk extensions beyond Node's limit are content larger than accepted.
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return HttpError.contentTooLarge("The request's chunk extensions are too large");
    // RFC 9110 §15.5.9: the complete request was not received within the server's time.
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new HttpError(408, "The request was not received in time");
    // RFC 9110 §15.5.1: anything else the parser refuses is malformed syntax.
    default:
      return HttpError.badRequest("The request is not valid HTTP/1.1");
  }
}

/**
 * Whether the refused request is a HEAD: the packet the parser stopped in starts (after the empty
 * lines RFC 9112 §2.2 lets a server ignore) with a `HEAD` request line, and holds no end of an
 * earlier message's header section before the point where the parser stopped, so that line is the
 * refused request's own. RFC 9110 §9.3.2: "the server MUST NOT send content in the response" to it.
 */
function isHeadRequest(rawPacket: unknown, bytesParsed: unknown): boolean {
  if (!Buffer.isBuffer(rawPacket)) return false;
  let start = 0;
  while (rawPacket[start] === 0x0d || rawPacket[start] === 0x0a) start++;
  if (rawPacket.toString("latin1", start, start + 5) !== "HEAD ") return false;
  const stop =
    typeof bytesParsed === "number" ? Math.min(Math.max(0, bytesParsed), rawPacket.length) : rawPacket.length;
  const headEnd = rawPacket.indexOf("\r\n\r\n", start, "latin1");
  return headEnd === -1 || headEnd + 4 > stop;
}

/**
 * Fields of the `headers` option that are never sent, compared case-insensitively. The handler
 * frames the response itself (`Content-Length`) and closes the connection (`Connection: close`):
 * RFC 9112 §6.3 makes a response with both `Transfer-Encoding` and `Content-Length`, or with two
 * `Content-Length` values, one a recipient may frame differently from the sender (response
 * splitting, request smuggling through a proxy that reuses the connection), and RFC 9110 §7.6.1
 * makes `Connection` and the fields it names (`Keep-Alive`, `Upgrade`, `Proxy-Connection`, `TE`)
 * options of the connection, which is closing. A second `Content-Type`, `Content-Encoding`
 * (RFC 9110 §8.4) or digest would mislabel the JSON record, and a second `Cache-Control` dilute
 * `no-store`.
 */
const CLIENT_ERROR_OWN_FIELDS: ReadonlySet<string> = new Set([
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "proxy-connection",
  "upgrade",
  "te",
  "trailer",
  "content-type",
  "content-encoding",
  "content-digest",
  "repr-digest",
  "cache-control",
]);

/**
 * `name: value` and CRLF, or `undefined` for a field `setHeader` would refuse (a name that is not a
 * token, a value with CR, LF or NUL, which would split the response), for one of
 * {@link CLIENT_ERROR_OWN_FIELDS}, and for a value that is neither a string nor a finite number.
 * The bytes go on the socket as written here, so the text checked is the text written: RFC 9110
 * §5.5 field values hold no CR or LF, and an object's `toString()` (or an array's members) could
 * give one text to the check and another to the line, a field (or a response) of its own making.
 */
function headerLine(name: unknown, value: unknown): string | undefined {
  if (typeof name !== "string" || !isToken(name)) return undefined;
  const text = fieldValue(value);
  if (text === undefined) return undefined;
  if (CLIENT_ERROR_OWN_FIELDS.has(name.toLowerCase())) return undefined;
  return `${name}: ${text}\r\n`;
}

/**
 * The lines of the `headers` option's fields and the names of those left out, or the exception
 * when the function (or the iteration of what it returned) threw: the application's code, run for
 * a request the client made malformed, must not throw out of a `'clientError'` listener, where the
 * exception is uncaught and ends the process. All or nothing: a list cut short could send some
 * security fields and not others without anyone noticing.
 */
function appFields(
  headers: NonNullable<ClientErrorOptions["headers"]>,
  socket: Duplex,
): { lines: string; dropped: string[] } | { failure: unknown } {
  try {
    let lines = "";
    const dropped: string[] = [];
    for (const [name, value] of headers(socket)) {
      const line = headerLine(name, value);
      if (line !== undefined) lines += line;
      else if (dropped.length < 20) dropped.push(String(name).slice(0, 100));
    }
    return { lines, dropped };
  } catch (failure) {
    return { failure };
  }
}

/**
 * A listener for Node's `'clientError'` event: a request the HTTP parser refuses (a malformed
 * header line, a bare CR, headers over `maxHeaderSize`, a request that did not arrive within
 * `headersTimeout`/`requestTimeout`) never reaches the app, and Node's default answer is a bare
 * status line. This one answers with the same status (400, 408, 413, 414 or 431, by `err.code`; 501
 * for a well-formed request line with a method Node does not know, RFC 9110 §9.1), the
 * JSON error record (path `/`: the parser gave up before the target was known), `Cache-Control:
 * no-store`, the `headers` option's fields and `Connection: close`, then closes the connection.
 *
 * Nothing is written when the connection was reset, is no longer writable, or already carries a
 * response (a pipelined request's answer is being sent): the socket is destroyed instead, as a
 * second status line inside a started response would corrupt it.
 *
 * @example
 * const server = http.createServer(app);
 * server.on("clientError", clientErrorHandler());
 * @see https://nodejs.org/api/http.html#event-clienterror
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.1
 */
export function clientErrorHandler(options: ClientErrorOptions = {}): ClientErrorListener {
  const name = "clientErrorHandler";
  checkOptionNames("errors", options, ["headers", "logger", "now"], name);
  if (options.headers !== undefined && typeof options.headers !== "function") {
    throw refusedErrorOption(name, "headers", options.headers, "a function (socket) => [name, value] pairs");
  }
  checkNow(options.now, name);
  checkLogger(options.logger, name);
  const extraHeaders = options.headers;
  const logger = options.logger ?? fallbackLogger;
  const now = options.now ?? (() => new Date());
  return function svcClientError(err, socket) {
    if (
      err.code === "ECONNRESET" ||
      !socket.writable ||
      (socket as { _httpMessage?: unknown })._httpMessage
    ) {
      socket.destroy();
      return;
    }
    const error = parserError(err);
    const time = clockTime(now, (failure) =>
      writeLog(
        logger,
        { err: failure, status: error.status },
        "clientErrorHandler: the now option threw or gave no valid Date; the record carries the system clock's time",
      ),
    );
    const body = JSON.stringify(buildErrorRecord(error, "/", time));
    if (errorsChannel.hasSubscribers) publishRecord(undefined, error.status, error.code, err);
    let head = `HTTP/1.1 ${error.status} ${reasonPhrase(error.status)}\r\n`;
    if (extraHeaders) {
      const fields = appFields(extraHeaders, socket);
      if ("failure" in fields) {
        writeLog(
          logger,
          { err: fields.failure, status: error.status },
          "clientErrorHandler: the headers option threw; the response went out without its fields",
        );
      } else {
        head += fields.lines;
        if (fields.dropped.length > 0) {
          writeLog(
            logger,
            { droppedHeaders: fields.dropped, status: error.status },
            "client error response headers dropped: not valid HTTP fields, or fields the handler writes itself",
          );
        }
      }
    }
    socket.end(
      `${head}Cache-Control: no-store\r\n` +
        "Content-Type: application/json; charset=utf-8\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        "Connection: close\r\n\r\n" +
        // RFC 9110 §9.3.2: no content for HEAD; the fields are those a GET would get (§9.3.2, §8.6).
        (isHeadRequest(err.rawPacket, err.bytesParsed) ? "" : body),
    );
  };
}
