import { absoluteOrigin, type FieldError, type HttpError, reasonPhrase } from "@svc/kernel";
import { isProblemCode, RECORD_MEMBERS } from "@svc/kernel/internal";
import { CUT_MARK, cutText, ERROR_RECORD_LIMITS, extensionBudget, hasNoJson, jsonData } from "./bounds.js";

/**
 * The error record. Every error response of the resource API carries exactly these fields, plus
 * `errors` for validation failures (RFC 9457 problem details are the alternative `errorHandler`
 * renders for clients that ask for them).
 */
export interface ErrorRecord {
  /** ISO 8601 UTC date-time with `Z`. */
  timestamp: string;
  /** The HTTP status code. */
  status: number;
  /** The reason phrase of the status. */
  error: string;
  /** Human-readable; never an exception's text for a 5xx. */
  message: string;
  /** The request path, without the query string. */
  path: string;
  /** Field-level validation failures, when there are any. */
  errors?: FieldError[];
  /** RFC 9457 §3.2 extension members of the error (`HttpError` option `extensions`). */
  [extension: string]: unknown;
}

/**
 * The same error as an RFC 9457 problem details object, plus the record's `timestamp`.
 * @see https://www.rfc-editor.org/rfc/rfc9457#section-3.1
 */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  timestamp: string;
  code?: string;
  errors?: FieldError[];
  /** RFC 9457 §3.2 extension members of the error (`HttpError` option `extensions`). */
  [extension: string]: unknown;
}

/** The message a client may see: the error's own for exposable errors, else the reason phrase. */
export function clientMessage(err: HttpError): string {
  return err.expose && err.status < 500 ? err.message : genericMessage(err.status);
}

function genericMessage(status: number): string {
  if (status === 503) return "The service is temporarily unavailable; try again later";
  if (status >= 500) return "An unexpected error occurred";
  return reasonPhrase(status);
}

/** Builds the error record for `err` at `path` (query string stripped) and time `now`. */
export function buildErrorRecord(err: HttpError, path: string, now: Date = new Date()): ErrorRecord {
  const record: ErrorRecord = {
    timestamp: now.toISOString(),
    status: err.status,
    error: reasonPhrase(err.status),
    message: boundedMessage(clientMessage(err)),
    path: requestPath(path),
  };
  if (err.errors && err.errors.length > 0 && err.status < 500) record.errors = boundedFieldErrors(err.errors);
  // RFC 9457 §3.2: extension members follow the standard ones; HttpError refuses clashing names.
  if (err.extensions) copyExtensions(err.extensions, record);
  return record;
}

/**
 * Copies the extension members of `from` (those `own` does not name) onto `to`, each as the plain
 * data JSON would write ({@link jsonData}), so that the JSON and the XML forms (RFC 9457 Appendix
 * B) carry the same value, cut at the same depth. A member JSON has no text for (a function, a
 * symbol, undefined) is left out, as every format leaves it out: on the record, a function named
 * `toJSON` would be called by JSON.stringify (ECMA-262 SerializeJSONProperty) and its result
 * written instead of the record.
 */
function copyExtensions(
  from: Readonly<Record<string, unknown>>,
  to: Record<string, unknown>,
  own: ReadonlySet<string> = RECORD_MEMBERS,
): void {
  // One budget for all of a record's members (ERROR_RECORD_LIMITS); HttpError refuses more than
  // `extensionMembers` of them, so only a record built elsewhere loses any here.
  const budget = extensionBudget();
  let count = 0;
  for (const name of Object.keys(from)) {
    if (own.has(name)) continue;
    if (count++ === ERROR_RECORD_LIMITS.extensionMembers) break;
    const value = jsonData(name, from[name], budget);
    if (!hasNoJson(value)) to[name] = value;
  }
}

/**
 * The record's `message` (the problem's `detail`) cut to `ERROR_RECORD_LIMITS.message` code points:
 * RFC 9457 §3.1.4 makes `detail` a human-readable explanation of this occurrence, and nothing
 * bounds what a handler puts in a 4xx message (a request body echoed back); the client gets a
 * marked cut, the error (and so the logger) the whole text.
 */
function boundedMessage(message: string): string {
  return cutText(message, ERROR_RECORD_LIMITS.message).text;
}

/**
 * At most `ERROR_RECORD_LIMITS.fieldErrors` entries, each `field` and `message` cut to
 * `fieldErrorText` code points; a longer list ends with one `{ field: "…", message: "…" }`.
 */
function boundedFieldErrors(errors: readonly FieldError[]): FieldError[] {
  const limit = ERROR_RECORD_LIMITS.fieldErrorText;
  const kept = errors.slice(0, ERROR_RECORD_LIMITS.fieldErrors).map((e) => ({
    field: cutText(e.field, limit).text,
    message: cutText(e.message, limit).text,
  }));
  if (errors.length > ERROR_RECORD_LIMITS.fieldErrors) kept.push({ field: CUT_MARK, message: CUT_MARK });
  return kept;
}

/**
 * `record` with its message, field errors and extension members bounded as {@link buildErrorRecord}
 * bounds them: for a record built by other code and handed to `renderError`, so that every format
 * renders it the same way, within the same limits.
 */
export function boundedRecord(record: ErrorRecord): ErrorRecord {
  const bounded: ErrorRecord = {
    timestamp: record.timestamp,
    status: record.status,
    error: record.error,
    message: boundedMessage(record.message),
    path: record.path,
  };
  if (record.errors !== undefined) bounded.errors = boundedFieldErrors(record.errors);
  copyExtensions(record, bounded);
  return bounded;
}

/**
 * Builds RFC 9457 problem details. `type` is `about:blank` (§4.2.1: the title is then the
 * status's reason phrase) unless a `typeBase` is given and the error has a `code`.
 *
 * A `code` that cannot be the type URI's last segment (not a string, or one holding a lone
 * surrogate, which has no UTF-8 form to percent-encode: set after construction, or passed from
 * plain JavaScript) is left out, type and member alike. RFC 9457 §3.1.1: "type" is "a JSON string
 * containing a URI reference"; §3.1: a member whose value does not have its type "MUST be ignored",
 * and an absent "type" is "about:blank". So the problem keeps the error's status, as the plain
 * record does: the status never depends on the format the client asked for.
 */
export function buildProblemDetails(
  record: ErrorRecord,
  given: string | undefined,
  typeBase?: string,
): ProblemDetails {
  const code = isProblemCode(given) ? given : undefined;
  const problem: ProblemDetails = {
    type: typeBase && code ? problemType(typeBase, code) : "about:blank",
    title: record.error,
    status: record.status,
    detail: record.message,
    instance: instanceReference(record.path),
    timestamp: record.timestamp,
  };
  if (code && record.status < 500) problem.code = code;
  if (record.errors) problem.errors = record.errors;
  for (const name of Object.keys(record)) if (!RECORD_MEMBERS.has(name)) problem[name] = record[name];
  return problem;
}

// RFC 3986 §3.3: pchar = unreserved / pct-encoded / sub-delims / ":" / "@", and the "/" between
// segments. One character at a time, so linear in the path.
const PATH_CHAR = /[A-Za-z0-9\-._~!$&'()*+,;=:@/]/;
const HEX = /^[0-9A-Fa-f]{2}$/;

/**
 * The record's path as the problem's `instance`, which RFC 9457 §3.1.5 makes a URI reference,
 * resolved against the document's URI (RFC 3986 §5.2), so it must name this server's path and
 * nothing else. A character no URI may hold (`"`, `<`, `\`, a `%` not starting a percent-encoding)
 * is percent-encoded; `\` must be, since WHATWG URL parsers resolve `/\host/x` like `//host/x`.
 * A path starting with `//` would be a network-path reference (RFC 3986 §4.2), another host: it
 * gets `/.` in front, the same path once dot-segments are removed (§5.2.4), as §3.3 writes a path
 * that must not start with `//`.
 */
export function instanceReference(path: string): string {
  let out = "";
  for (let i = 0; i < path.length; i++) {
    const c = path[i] as string;
    if (PATH_CHAR.test(c) || (c === "%" && HEX.test(path.slice(i + 1, i + 3)))) {
      out += c;
      continue;
    }
    // A character outside the BMP is two code units: encoded together, as UTF-8 (RFC 3986 §2.5).
    const wide = (path.codePointAt(i) ?? 0) > 0xffff;
    out += percentEncode(wide ? path.slice(i, i + 2) : c);
    if (wide) i++;
  }
  return out.startsWith("//") ? `/.${out}` : out;
}

function percentEncode(c: string): string {
  try {
    return encodeURIComponent(c);
  } catch {
    return "%EF%BF%BD"; // a lone surrogate: U+FFFD, as TextEncoder writes it
  }
}

/**
 * The problem `type` URI (RFC 9457 §3.1.1) of `code` under `typeBase`: the base (in its normal form,
 * `https://api.example.com` → `https://api.example.com/`) followed by the code, as documented, so
 * every kind of absolute URI works: `https://x/problems/` gives `https://x/problems/<code>`,
 * `https://x/problems#` an anchor on one page, `urn:example:problems:` a URN (RFC 8141).
 * Resolving the code as a relative reference instead (RFC 3986 §5.2) would drop a base's last
 * segment, query and fragment, and throws for a base without a hierarchical path such as a URN.
 */
function problemType(typeBase: string, code: string): string {
  return `${new URL(typeBase).href}${encodeURIComponent(code)}`;
}

/**
 * The path of a request-target, without query or fragment: `/a/b?x=1` → `/a/b`, and for an
 * absolute-form target (RFC 9112 §3.2.2, which a server MUST accept and routes by its path)
 * `http://host/a/b?x=1` → `/a/b`, an empty path being `/` (RFC 9112 §3.2.1). The record's `path`
 * (and the problem's `instance`) is where the problem occurred on this server, not a URI carrying
 * whatever authority the client wrote.
 */
export function requestPath(url: string): string {
  const origin = absoluteFormOrigin(url);
  if (origin === "") return stripQuery(url);
  const path = stripQuery(url.slice(origin.length));
  return path.startsWith("/") ? path : `/${path}`;
}

/**
 * The scheme and authority of a request-target in absolute-form (RFC 9112 §3.2.2, which "a server
 * MUST accept"): `http://api.example/v2/x?y` → `http://api.example`; `""` for the origin-form
 * (`/v2/x`) and the other forms: the kernel's `absoluteOrigin`, the rule every adapter routes by.
 *
 * @example absoluteFormOrigin("http://api.example/v2/employees") // "http://api.example"
 * @example absoluteFormOrigin("/v2/employees") // ""
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-3.2.2
 */
export function absoluteFormOrigin(url: string): string {
  return absoluteOrigin(url);
}

/** `/a/b?x=1` → `/a/b`; also drops a fragment a broken client may send. */
export function stripQuery(url: string): string {
  const cut = url.search(/[?#]/);
  return cut === -1 ? url : url.slice(0, cut);
}
