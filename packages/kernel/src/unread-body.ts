import { checkOptionNames, refusedOption } from "./option-error.js";
import { isTimerDelay } from "./timer.js";

/**
 * What becomes of a request's content that was refused before it was read (a 413, a 415, a 401,
 * 403 or 429 answered in front of the body, an early SOAP fault, a malformed body). One policy for
 * every @svc package and every adapter:
 *
 * - A remainder of at most `maxBytes` (by `Content-Length`) is read and discarded, so the
 *   connection stays open for the client's next request (RFC 9112 §9.3: a persistent connection
 *   needs each message read to its end). A client still sending it `timeoutMs` after the refusal
 *   is disconnected.
 * - A larger remainder, or one of unknown length (`Transfer-Encoding: chunked`), is not read: the
 *   response says `Connection: close` and the connection closes once it is written (RFC 9110
 *   §15.5.14, RFC 9112 §9.6). No byte of an unread body is ever taken for a next request.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-9.6 — a server that will close says
 *   `close`; reading the rest of an unbounded body first would let a client hold the connection.
 */
export interface UnreadBodyOptions {
  /**
   * The largest declared `Content-Length` of a refused request whose content is read and
   * discarded to keep the connection; a larger one, or a chunked body, closes it instead. 0
   * closes every connection whose request content was not read. At most 16 MiB.
   * @default 65536
   */
  maxBytes?: number | undefined;
  /**
   * How long, in ms from the refusal, the discarded content may take to arrive; a client still
   * sending then is disconnected.
   * @default 1000
   */
  timeoutMs?: number | undefined;
}

/** {@link UnreadBodyOptions} resolved: both bounds given. */
export interface UnreadBodyBounds {
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

/** The bounds when none are given: 64 KiB within one second. */
export const UNREAD_BODY_DEFAULTS: UnreadBodyBounds = Object.freeze({ maxBytes: 65_536, timeoutMs: 1000 });

/** The highest `maxBytes` accepted: discarding more than this is reading a body, not a remainder. */
export const MAX_UNREAD_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Resolves and refuses once, at construction, a package's `unreadBody` option (`option` names it
 * in the codes: `ERR_SVC_<PACKAGE>_UNREAD_BODY_MAX_BYTES`, `..._TIMEOUT_MS`, `..._UNKNOWN_OPTION`).
 *
 * @example const unreadBody = resolveUnreadBody("errors", options.unreadBody, "errorHandler");
 *
 * @internal
 */
export function resolveUnreadBody(
  pkg: string,
  value: UnreadBodyOptions | undefined,
  label: string,
  option = "unreadBody",
): UnreadBodyBounds {
  if (value === undefined) return UNREAD_BODY_DEFAULTS;
  checkOptionNames(pkg, value, ["maxBytes", "timeoutMs"], label, option);
  const { maxBytes = UNREAD_BODY_DEFAULTS.maxBytes, timeoutMs = UNREAD_BODY_DEFAULTS.timeoutMs } = value;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0 || maxBytes > MAX_UNREAD_BODY_BYTES) {
    throw refusedOption(
      pkg,
      `${option}.maxBytes`,
      maxBytes,
      `a whole number of bytes from 0 to ${MAX_UNREAD_BODY_BYTES}`,
      `${label}: ${option}.maxBytes`,
    );
  }
  if (!isTimerDelay(timeoutMs)) {
    throw refusedOption(
      pkg,
      `${option}.timeoutMs`,
      timeoutMs,
      "a number of milliseconds above 0 and at most 2147483647",
      `${label}: ${option}.timeoutMs`,
    );
  }
  return Object.freeze({ maxBytes, timeoutMs });
}

/**
 * The policy's decision for a request whose content is refused unread, from its framing fields
 * alone: `"discard"` (read the rest, keep the connection) or `"close"`. A request without content
 * (no `Content-Length`, no `Transfer-Encoding`, or a length of 0) has nothing left: `"keep"`.
 *
 * @example unreadBodyAction("2000000", undefined, UNREAD_BODY_DEFAULTS) // "close"
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-6.3 — the framing that says how much is left.
 * @internal
 */
export function unreadBodyAction(
  contentLength: string | undefined,
  transferEncoding: string | undefined,
  bounds: UnreadBodyBounds,
): "keep" | "discard" | "close" {
  if (transferEncoding !== undefined) return "close";
  if (contentLength === undefined) return "keep";
  const length = Number(contentLength);
  if (!Number.isSafeInteger(length) || length < 0) return "close";
  if (length === 0) return "keep";
  return length <= bounds.maxBytes ? "discard" : "close";
}
