import { isExtensionName, MAX_EXTENSION_MEMBERS, PROBLEM_MEMBERS, RECORD_MEMBERS } from "./error-members.js";
import { describeValue, optionError, refusedOption } from "./option-error.js";
import { isErrorStatus, reasonPhrase } from "./status.js";

/** One field-level problem of a request that failed validation. */
export interface FieldError {
  /** The field's path in the request, dot separated (`address.city`, `items.0.quantity`). */
  field: string;
  /** What is wrong with it, for the client. */
  message: string;
}

/** Options of {@link HttpError}. */
export interface HttpErrorOptions {
  /**
   * Whether `message` may be shown to the client.
   * @default true for 4xx, false for 5xx (a 5xx body always carries a generic message)
   */
  expose?: boolean;
  /** Response headers that belong to this error (`Retry-After`, `WWW-Authenticate`, `Allow`, ...). */
  headers?: Readonly<Record<string, string>>;
  /**
   * A stable, machine-readable code (`rate_limited`, `employee_not_found`); also the problem `type`
   * suffix. A string without lone surrogates (anything else is a `TypeError`, `ERR_SVC_ERRORS_CODE`).
   */
  code?: string;
  /** The underlying exception; logged for 5xx, never sent to the client. */
  cause?: unknown;
  /** Field-level validation failures; rendered as `errors: [{ field, message }]`. */
  errors?: readonly FieldError[];
  /**
   * RFC 9457 §3.2 extension members, added to the record and to problem details after the
   * standard members (`{ checks: { database: "DOWN" } }`). Unlike `message`, they reach the
   * client whatever the status, so they must hold nothing secret. Names start with a letter and
   * hold only letters, digits and `_` (§3.2, so that the XML forms can carry them), do not start
   * with `xml` in any case (XML 1.0 §2.3 reserves such element names), and may not be one of the
   * record's or the problem's own members (`status`, `message`, `type`, ...).
   */
  extensions?: Readonly<Record<string, unknown>>;
}

/** With the `u` flag a surrogate pair is one code point, so only a lone surrogate matches. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Whether `code` can be the last segment of a problem `type` URI: a string without a lone surrogate.
 * RFC 9457 §3.1.1 makes `type` a URI reference, and the code goes into it UTF-8 percent-encoded
 * (RFC 3986 §2.5); a lone surrogate is no Unicode scalar value and has no UTF-8 form.
 *
 * @internal
 */
export function isProblemCode(code: unknown): code is string {
  return typeof code === "string" && !LONE_SURROGATE.test(code);
}

/** The `code` option checked: `undefined` or a well-formed string ({@link isProblemCode}). */
function checkedCode(code: unknown): string | undefined {
  if (code === undefined || isProblemCode(code)) return code;
  throw refusedOption(
    "errors",
    "code",
    code, // describeValue writes it with JSON.stringify, a lone surrogate as \uXXXX
    "a string of Unicode scalar values (no lone surrogate: it becomes the problem type's last segment, RFC 9457 §3.1.1)",
    "HttpError code",
  );
}

/** Members of the record and of problem details, which an extension may not replace. */
const RESERVED_MEMBERS: ReadonlySet<string> = new Set([...RECORD_MEMBERS, ...PROBLEM_MEMBERS]);

function checkedExtensions(
  extensions: Readonly<Record<string, unknown>> | undefined,
): Readonly<Record<string, unknown>> | undefined {
  if (extensions === undefined) return undefined;
  const names = typeof extensions === "object" && extensions !== null ? Object.keys(extensions) : undefined;
  const bad =
    names === undefined
      ? String(extensions)
      : names.find((n) => !isExtensionName(n) || RESERVED_MEMBERS.has(n));
  // A record carries at most so many (RFC 9457 §3.2 members; @svc/errors cuts no further).
  if (bad === undefined && names !== undefined && names.length > MAX_EXTENSION_MEMBERS) {
    throw optionError(
      "errors",
      "extensions",
      `HttpError options.extensions must have at most ${MAX_EXTENSION_MEMBERS} members, got ${names.length}`,
    );
  }
  if (bad !== undefined) {
    throw Object.assign(
      new TypeError(
        `HttpError options.extensions must be an object whose member names start with a letter, hold only letters, digits and "_", do not start with "xml" in any case (XML 1.0 §2.3) and are none of ${[...RESERVED_MEMBERS].join(", ")}; got "${bad}"`,
      ),
      { code: "ERR_SVC_ERRORS_EXTENSIONS" },
    );
  }
  return names && names.length > 0 ? Object.freeze({ ...extensions }) : undefined;
}

/**
 * The `errors` option checked and copied: an array of `{ field, message }` whose members are both
 * strings, each entry copied into a frozen `{ field, message }`, so what the error renders is what
 * was checked (a caller changing an entry later, or a getter, cannot put a `null` in the record).
 * Anything else (`null`, a number, a missing message, from plain JavaScript) is the calling code's
 * bug, refused here with code `ERR_SVC_ERRORS_ERRORS` rather than written as the text "null".
 *
 * @internal
 */
export function checkedFieldErrors(errors: unknown): readonly FieldError[] | undefined {
  if (errors === undefined) return undefined;
  const refuse = (what: string, given: unknown) =>
    optionError(
      "errors",
      "errors",
      `HttpError options.${what} must be ${what === "errors" ? "an array of { field, message }" : "a string"}, got ${describeValue(given)}`,
    );
  if (!Array.isArray(errors)) throw refuse("errors", errors);
  const copies: FieldError[] = [];
  for (let i = 0; i < errors.length; i++) {
    const entry: unknown = errors[i];
    if (typeof entry !== "object" || entry === null) {
      throw optionError(
        "errors",
        "errors",
        `HttpError options.errors[${i}] must be an object { field, message }, got ${describeValue(entry)}`,
      );
    }
    const { field, message } = entry as Record<string, unknown>;
    if (typeof field !== "string") throw refuse(`errors[${i}].field`, field);
    if (typeof message !== "string") throw refuse(`errors[${i}].message`, message);
    copies.push(Object.freeze({ field, message }));
  }
  return Object.freeze(copies);
}

/** RFC 9111 §1.2.2 caps delta-seconds at 2^31 ("the cache MUST consider the value to be 2147483648"). */
const MAX_DELAY_SECONDS = 2_147_483_648;

/**
 * A `Retry-After` value in seconds: RFC 9110 §10.2.3 `delay-seconds = 1*DIGIT`, so whole, not
 * negative, and never `String(n)`'s `NaN`, `Infinity` or `1e+21`: a value past 2^31 is 2^31, as
 * RFC 9111 §1.2.2 reads delta-seconds, and NaN sends no `Retry-After` at all (the field is optional).
 */
function delaySeconds(seconds: number): string | undefined {
  if (typeof seconds !== "number" || Number.isNaN(seconds)) return undefined;
  return String(Math.min(Math.max(0, Math.ceil(seconds)), MAX_DELAY_SECONDS));
}

/**
 * Whether `headers` has an `Allow` field (names are case-insensitive, RFC 9110 §5.1).
 *
 * @internal
 */
export function hasAllow(headers: Readonly<Record<string, unknown>> | undefined): boolean {
  if (typeof headers !== "object" || headers === null) return false;
  for (const name of Object.keys(headers)) {
    if (name.toLowerCase() === "allow" && typeof headers[name] === "string") return true;
  }
  return false;
}

const ERROR_BRAND = Symbol.for("@svc/errors.HttpError");

/**
 * An error that knows the HTTP status it should produce. Every @svc package signals failure
 * with one of these through `next(err)`; {@link errorHandler} renders it as the error record.
 *
 * @example
 * throw HttpError.notFound("Employee 42 does not exist");
 * throw new HttpError(429, "Too many requests", { headers: { "Retry-After": "30" } });
 * throw HttpError.serviceUnavailable(5, undefined, { extensions: { checks: { database: "DOWN" } } });
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5
 */
export class HttpError extends Error {
  /** The HTTP status, 400..599. */
  readonly status: number;
  /** Whether `message` may reach the client. */
  readonly expose: boolean;
  /** Headers to set on the error response. */
  readonly headers: Readonly<Record<string, string>>;
  /** Optional machine-readable code. */
  readonly code: string | undefined;
  /** Optional field-level validation failures. */
  readonly errors: readonly FieldError[] | undefined;
  /** Optional RFC 9457 §3.2 extension members of the error's record. */
  readonly extensions: Readonly<Record<string, unknown>> | undefined;

  constructor(status: number, message?: string, options: HttpErrorOptions = {}) {
    // RFC 9110 §15.5, §15.6: only a 4xx or 5xx status reports an error; an error record with a
    // 2xx or 3xx status (or none) would tell the client the request succeeded or was redirected.
    if (!isErrorStatus(status)) {
      throw refusedOption("errors", "status", status, "an integer from 400 to 599", "HttpError status");
    }
    // RFC 9110 §15.5.6: "The origin server MUST generate an Allow header field in a 405 response
    // containing a list of the target resource's currently supported methods." Without one the
    // error cannot be sent as a valid 405; HttpError.methodNotAllowed(allowed) writes it.
    if (status === 405 && !hasAllow(options.headers)) {
      throw refusedOption(
        "errors",
        "headers",
        options.headers,
        "an object with an Allow field for a 405 (RFC 9110 §15.5.6; HttpError.methodNotAllowed(allowed) sets it)",
        "HttpError headers",
      );
    }
    super(
      message ?? reasonPhrase(status),
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "HttpError";
    this.status = status;
    this.expose = options.expose ?? status < 500;
    this.headers = Object.freeze({ ...options.headers });
    this.code = checkedCode(options.code);
    this.errors = checkedFieldErrors(options.errors);
    this.extensions = checkedExtensions(options.extensions);
    Object.defineProperty(this, ERROR_BRAND, { value: true });
  }

  /** The status's reason phrase (`"Not Found"`). */
  get reason(): string {
    return reasonPhrase(this.status);
  }

  /** 400: malformed syntax, a wrong parameter, or a validation failure (with `errors`). */
  static badRequest(message?: string, options?: HttpErrorOptions): HttpError {
    return new HttpError(400, message, options);
  }
  /** 401: no or bad credentials; pass the `WWW-Authenticate` challenge in `headers`. */
  static unauthorized(message?: string, options?: HttpErrorOptions): HttpError {
    return new HttpError(401, message, options);
  }
  /** 403: authenticated, but not permitted. */
  static forbidden(message?: string, options?: HttpErrorOptions): HttpError {
    return new HttpError(403, message, options);
  }
  /** 404: the resource does not exist. */
  static notFound(message?: string, options?: HttpErrorOptions): HttpError {
    return new HttpError(404, message, options);
  }
  /** 405 with `Allow` listing `allowed` (RFC 9110 §15.5.6: the origin server MUST send Allow). */
  static methodNotAllowed(
    allowed: readonly string[],
    message?: string,
    options?: HttpErrorOptions,
  ): HttpError {
    return new HttpError(405, message, {
      ...options,
      headers: { ...options?.headers, Allow: allowed.join(", ") },
    });
  }
  /** 406: no representation the client accepts. */
  static notAcceptable(message?: string, options?: HttpErrorOptions): HttpError {
    return new HttpError(406, message, options);
  }
  /** 409: conflict with the current state (a duplicate unique value). */
  static conflict(message?: string, options?: HttpErrorOptions): HttpError {
    return new HttpError(409, message, options);
  }
  /** 412: a precondition (`If-Match`, `If-Unmodified-Since`) failed. */
  static preconditionFailed(message?: string, options?: HttpErrorOptions): HttpError {
    return new HttpError(412, message, options);
  }
  /** 413: the request body is larger than the server accepts. */
  static contentTooLarge(message?: string, options?: HttpErrorOptions): HttpError {
    return new HttpError(413, message, options);
  }
  /** 415: the request body's media type or content coding is not supported. */
  static unsupportedMediaType(message?: string, options?: HttpErrorOptions): HttpError {
    return new HttpError(415, message, options);
  }
  /** 422: well-formed, but breaks a business rule. */
  static unprocessable(message?: string, options?: HttpErrorOptions): HttpError {
    return new HttpError(422, message, options);
  }
  /** 428: the route requires a conditional request (RFC 6585 §3). */
  static preconditionRequired(message?: string, options?: HttpErrorOptions): HttpError {
    return new HttpError(428, message, options);
  }
  /** 429 with `Retry-After` in whole seconds (RFC 6585 §4, RFC 9110 §10.2.3). */
  static tooManyRequests(retryAfterSeconds: number, message?: string, options?: HttpErrorOptions): HttpError {
    const headers: Record<string, string> = { ...options?.headers };
    const retryAfter = delaySeconds(retryAfterSeconds);
    if (retryAfter !== undefined) headers["Retry-After"] = retryAfter;
    return new HttpError(429, message, { ...options, headers });
  }
  /** 500: something really broke on the server; the message never reaches the client. */
  static internal(message?: string, options?: HttpErrorOptions): HttpError {
    return new HttpError(500, message, options);
  }
  /** 503, with `Retry-After` when `retryAfterSeconds` is given. */
  static serviceUnavailable(
    retryAfterSeconds?: number,
    message?: string,
    options?: HttpErrorOptions,
  ): HttpError {
    const headers: Record<string, string> = { ...options?.headers };
    const retryAfter = retryAfterSeconds === undefined ? undefined : delaySeconds(retryAfterSeconds);
    if (retryAfter !== undefined) headers["Retry-After"] = retryAfter;
    return new HttpError(503, message, { ...options, headers });
  }
}

/**
 * True for an {@link HttpError}, also one created by another copy of this package
 * (two versions installed side by side still recognise each other's errors).
 */
export function isHttpError(value: unknown): value is HttpError {
  return (
    value instanceof HttpError ||
    (typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[ERROR_BRAND] === true)
  );
}
