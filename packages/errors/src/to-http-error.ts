import { HttpError, type HttpErrorOptions, isErrorStatus, isHttpError } from "@svc/kernel";
import { checkedFieldErrors, hasAllow, isProblemCode } from "@svc/kernel/internal";

/**
 * What body-parser (Express 5's `express.json()`, `express.text()`, `express.raw()`,
 * `express.urlencoded()`) raises, by its `type`, mapped to the status and the client message of
 * the record. body-parser's own messages quote the parser's internals, so they are replaced.
 */
const BODY_PARSER_ERRORS: Readonly<Record<string, { status: number; message: string }>> = {
  "entity.parse.failed": { status: 400, message: "The request body is malformed" },
  // body-parser's own status for a `verify` option that throws; see verifyStatus.
  "entity.verify.failed": { status: 403, message: "The request body failed verification" },
  "request.aborted": { status: 400, message: "The request body was not received completely" },
  "request.size.invalid": { status: 400, message: "The request body's length does not match Content-Length" },
  "entity.too.large": { status: 413, message: "The request body is too large" },
  "parameters.too.many": { status: 413, message: "The request body has too many parameters" },
  "charset.unsupported": { status: 415, message: "The request body's charset is not supported" },
  "encoding.unsupported": { status: 415, message: "The request body's Content-Encoding is not supported" },
};

/**
 * What Fastify's body parsing raises before a route runs, by its `code`, as the body-parser
 * `type` of the same failure, so it gets the same record (the same status, message and problem code on every framework). Fastify's own
 * messages name its parser ("content-type is set to 'application/json'"), so they are replaced.
 * A body that is no JSON has no code before Fastify 5.5.0: see {@link isParseFailure}.
 */
const FASTIFY_BODY_ERRORS: Readonly<Record<string, string>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: "entity.parse.failed",
  FST_ERR_CTP_EMPTY_JSON_BODY: "entity.parse.failed",
  FST_ERR_CTP_BODY_TOO_LARGE: "entity.too.large",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "request.size.invalid",
};

/**
 * Whether `err` is a content-type parser's `SyntaxError` handed on as a 400 (`statusCode: 400`):
 * what Fastify's own JSON parser raises before 5.5.0 (no `FST_ERR_CTP_INVALID_JSON_BODY` yet), and
 * what a custom parser written as Fastify's content-type parser reference shows one raises. The
 * application's own `SyntaxError` carries no status and stays a 500.
 *
 * @see https://fastify.dev/docs/latest/Reference/ContentTypeParser/
 */
function isParseFailure(err: object, e: ErrorLike): boolean {
  return err instanceof SyntaxError && (e.statusCode === 400 || e.status === 400);
}

/**
 * The 400 of a request body that is not the JSON it says it is: the record body-parser's
 * `entity.parse.failed` gets, for an adapter that sees the parse fail itself (Hono's
 * `c.req.json()`, a Fetch handler's `request.json()`).
 *
 * @example throw malformedBody(syntaxError);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.1
 */
export function malformedBody(cause?: unknown): HttpError {
  const known = BODY_PARSER_ERRORS["entity.parse.failed"] as { status: number; message: string };
  return new HttpError(known.status, known.message, { cause, code: "entity.parse.failed" });
}

/**
 * Fastify's schema validation error (`FST_ERR_VALIDATION`): a 400 whose field errors are the
 * failed checks, each at its field's dot path within the part that failed (`body`, `querystring`,
 * `params`, `headers`), with the validator's message.
 */
function fastifyValidation(e: { validation: unknown; validationContext?: unknown }, err: unknown): HttpError {
  const part = typeof e.validationContext === "string" ? e.validationContext : "request";
  const errors: { field: string; message: string }[] = [];
  for (const entry of (e.validation as unknown[]).slice(0, 100)) {
    const v = entry as { instancePath?: unknown; message?: unknown; params?: { missingProperty?: unknown } };
    const path = typeof v.instancePath === "string" ? v.instancePath.split("/").filter(Boolean) : [];
    if (typeof v.params?.missingProperty === "string") path.push(v.params.missingProperty);
    errors.push({
      field: path.length > 0 ? path.join(".") : part,
      message: typeof v.message === "string" ? v.message : "is invalid",
    });
  }
  return new HttpError(400, `The request ${part} is invalid`, { cause: err, errors });
}

/**
 * Another copy's `HttpError` (recognised by its registered brand, which anything can carry) made
 * again with this copy's constructor, so its status (400..599, RFC 9110 §15.5, §15.6), headers,
 * field errors and extension members pass the same checks as this copy's own; a value that fails
 * them is a 500. Sent as it came, a status of 200, 302 or NaN would go out as the error response's.
 */
function fromOtherCopy(err: HttpError): HttpError {
  const e = err as unknown as Record<string, unknown>;
  const options: HttpErrorOptions = { cause: err };
  if (typeof e.expose === "boolean") options.expose = e.expose;
  const headers = stringHeaders(e.headers);
  if (headers) options.headers = headers;
  // A code that cannot be a problem type's segment (RFC 9457 §3.1.1) is left out, as buildProblemDetails
  // leaves one set after construction: the error keeps its status in every format.
  if (isProblemCode(e.code)) options.code = e.code;
  if (Array.isArray(e.errors)) options.errors = e.errors as HttpErrorOptions["errors"] & object;
  if (e.extensions !== undefined) options.extensions = e.extensions as Record<string, unknown>;
  if (!isErrorStatus(e.status) || headers === undefined) return HttpError.internal(undefined, { cause: err });
  return new HttpError(e.status, typeof e.message === "string" ? e.message : undefined, options);
}

/**
 * Fields whose meaning is the error status's own, lower-cased: the challenges of a 401 and a 407
 * (RFC 9110 §11.6.1, §11.7.1), `Allow` of a 405 (§10.2.1), `Retry-After` of a 413, 429 or 503
 * (§10.2.3), what a 415 accepts (§15.5.16; `Accept-Patch`, RFC 5789 §3.1; `Accept-Post`) and
 * `Upgrade` of a 426 (§15.5.22).
 */
const ERROR_STATUS_FIELDS: ReadonlySet<string> = new Set([
  "www-authenticate",
  "proxy-authenticate",
  "allow",
  "retry-after",
  "accept",
  "accept-encoding",
  "accept-patch",
  "accept-post",
  "upgrade",
]);

function errorStatusFields(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  if (headers === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (ERROR_STATUS_FIELDS.has(name.toLowerCase())) out[name] = value;
  return out;
}

/**
 * A body-parser `verify` option that threw: body-parser gives the error 403, or keeps the status
 * the thrown error carries (`createError(403, err)`). That is the app's own decision about the
 * request (a webhook signature that does not match: RFC 9110 §15.5.4, "understood the request but
 * refuses to fulfill it"; a 401 with its challenge, §15.5.2), not a malformed body (§15.5.1), so the
 * status is kept, with the fields that belong to it. The thrown message is not shown: it may quote
 * the signature that was expected.
 */
function verifyFailure(e: ErrorLike, message: string, err: unknown): HttpError {
  const status = isErrorStatus(e.status) ? e.status : 403;
  const headers = errorStatusFields(stringHeaders(e.headers));
  return new HttpError(status, message, {
    cause: err,
    code: "entity.verify.failed",
    ...(headers ? { headers } : {}),
  });
}

interface ErrorLike {
  status?: unknown;
  statusCode?: unknown;
  expose?: unknown;
  type?: unknown;
  headers?: unknown;
  message?: unknown;
  charset?: unknown;
  encoding?: unknown;
  limit?: unknown;
}

/**
 * Whether an error reports the response of an outbound call rather than a decision made for this
 * request: it carries that response (`response`: axios, Octokit, gaxios, superagent, got, ky), the
 * upstream's request id (`request_id`, `requestID`: OpenAI, Anthropic; `requestId`: Stripe, a member
 * these SDKs define even when the upstream sent none), AWS SDK v3's `$metadata`, or is undici's
 * status-code error. An auth middleware's own errors (express-oauth2-jwt-bearer, express-jwt,
 * http-errors) carry none of these.
 */
function fromUpstream(e: ErrorLike): boolean {
  const response = (e as { response?: unknown }).response;
  const metadata = (e as { $metadata?: unknown }).$metadata;
  return (
    (typeof response === "object" && response !== null) ||
    "request_id" in e ||
    "requestID" in e ||
    "requestId" in e ||
    (typeof metadata === "object" && metadata !== null) ||
    (e as { code?: unknown }).code === "UND_ERR_RESPONSE_STATUS_CODE"
  );
}

function stringHeaders(value: unknown): Record<string, string> | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) {
    if (typeof v === "string" || typeof v === "number") out[name] = String(v);
  }
  return out;
}

/**
 * Turns anything thrown or passed to `next(err)` into an {@link HttpError}:
 * - an `HttpError` is returned as is (one of another copy of the package is made again with this
 *   copy's constructor, so it passes the same checks; a status outside 400..599, a message that
 *   is no string or headers that cannot be read, set after construction, are a 500);
 * - a 405 without an `Allow` header is a 500 (RFC 9110 §15.5.6: a 405 MUST carry Allow);
 * - a value whose properties cannot be read (a getter or Proxy trap that throws) is a 500;
 * - body-parser errors by their `type` (malformed JSON → 400, too large → 413, unsupported
 *   charset or content coding → 415, a `verify` option that threw → 403 or its error's status),
 *   and Fastify's by their `code` onto the same records (`FST_ERR_CTP_INVALID_JSON_BODY`, or a
 *   content-type parser's `SyntaxError` with `statusCode: 400` as Fastify before 5.5.0 raises → 400,
 *   `FST_ERR_CTP_BODY_TOO_LARGE` → 413, `FST_ERR_CTP_INVALID_MEDIA_TYPE` → 415; a schema's
 *   `FST_ERR_VALIDATION` → 400 with its field errors);
 * - `http-errors`-style errors (`status`/`statusCode` 400..599) keep their status, their message
 *   only when they say it may be exposed (`expose: true`, as `http-errors` sets below 500), and
 *   their `headers` when they carry that `expose` flag, else only the error status's own fields
 *   (`WWW-Authenticate`, `Allow`, `Retry-After`, ...): an SDK error's are its upstream's;
 * - a 407 on an error without that `expose` flag (an SDK's: the app's outbound proxy asking the
 *   app for credentials) is a 502 without its `Proxy-Authenticate` (RFC 9110 §15.5.8, §15.6.3);
 *   so is a 401 on such an error that carries its upstream's response or request id (the
 *   upstream refusing the app's credentials), without the upstream's `WWW-Authenticate` (§15.5.2);
 * - everything else is a 500 whose `cause` is the original (logged, never shown).
 *
 * @example
 * toHttpError(new SyntaxError("Unexpected token")).status // 500
 */
export function toHttpError(err: unknown): HttpError {
  // Reading a thrown value runs its code: a getter or a Proxy trap that throws would otherwise
  // throw out of the error handler, and the client would get the framework's page (with a stack
  // trace in development) instead of the record. Such a value is a 500 like any other unknown.
  try {
    return mapError(err);
  } catch {
    return HttpError.internal(undefined, { cause: err });
  }
}

function mapError(err: unknown): HttpError {
  if (err instanceof HttpError) {
    // Its fields are readonly to TypeScript only: one set to a status no error can have after
    // construction is the server's bug, like any other unknown error.
    // `errors` is checked again for the same reason (checkedFieldErrors throws, and the catch in
    // toHttpError makes that the 500 it is).
    checkedFieldErrors(err.errors);
    // So are `message` and `headers`: a message that is no string would be the record's `message`
    // (RFC 9457 §3.1.4: `detail` is a string), an object or nothing at all; headers whose keys
    // cannot be read (a Proxy trap that throws) would throw out of the handler.
    if (
      typeof err.message !== "string" ||
      !isErrorStatus(err.status) ||
      typeof err.headers !== "object" ||
      err.headers === null
    ) {
      return HttpError.internal(undefined, { cause: err });
    }
    Object.keys(err.headers); // throws for unreadable headers, inside toHttpError's catch: a 500
    return err;
  }
  if (isHttpError(err)) return fromOtherCopy(err);
  if (typeof err !== "object" || err === null) {
    return HttpError.internal(undefined, { cause: err });
  }
  const e = err as ErrorLike;
  const code = (e as { code?: unknown }).code;
  let type =
    typeof e.type === "string" ? e.type : typeof code === "string" ? FASTIFY_BODY_ERRORS[code] : undefined;
  if (type === undefined && isParseFailure(err, e)) type = "entity.parse.failed";
  const known = type === undefined ? undefined : BODY_PARSER_ERRORS[type];
  if (known) {
    let message = known.message;
    if (type === "charset.unsupported" && typeof e.charset === "string") {
      message = `The request body's charset "${e.charset.slice(0, 40)}" is not supported`;
    } else if (type === "encoding.unsupported" && typeof e.encoding === "string") {
      message = `The request body's Content-Encoding "${e.encoding.slice(0, 40)}" is not supported`;
    } else if (type === "entity.too.large" && typeof e.limit === "number") {
      message = `The request body is larger than the limit of ${e.limit} bytes`;
    }
    if (type === "entity.verify.failed") return verifyFailure(e, message, err);
    return new HttpError(known.status, message, { cause: err, code: type as string });
  }
  if (code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
    return new HttpError(415, "The request body's media type is not supported", { cause: err });
  }
  if (code === "FST_ERR_VALIDATION" && Array.isArray((e as { validation?: unknown }).validation)) {
    return fastifyValidation(e as { validation: unknown }, err);
  }
  const status = isErrorStatus(e.status) ? e.status : isErrorStatus(e.statusCode) ? e.statusCode : undefined;
  if (status === undefined) return HttpError.internal(undefined, { cause: err });
  // RFC 9110 §15.5.8: a 407 "indicates that the client needs to authenticate itself in order to
  // use a proxy". Carried by an error not made for this response (no http-errors `expose` flag: an
  // SDK's or HTTP client's), it is the app's own outbound proxy asking the app: this server's
  // client uses no such proxy and cannot answer it, and its Proxy-Authenticate names that proxy's
  // realm. To the client, the server "while acting as a gateway or proxy, received an invalid
  // response from an inbound server it accessed" (§15.6.3): a 502, without the challenge, logged
  // with the 407 as its cause.
  // RFC 9110 §15.5.2: a 401's challenge is "applicable to the target resource". An upstream's 401
  // refused the app's credentials (an API key) for the upstream's resource: this server's client
  // can neither see nor fix them, and the challenge names the upstream's realm. It is the same 502,
  // when the error shows it came from an outbound exchange (fromUpstream); without that mark a 401
  // keeps its status and challenge: an auth middleware's own 401 (express-oauth2-jwt-bearer's
  // `status`, `statusCode`, `headers` and no `expose`) MUST reach the client with its challenge.
  if (typeof e.expose !== "boolean" && (status === 407 || (status === 401 && fromUpstream(e)))) {
    return new HttpError(502, undefined, { cause: err });
  }
  // Only an error that says its message is for the client (http-errors sets `expose: true` below
  // 500) shows it: an SDK's error carrying its upstream's status (`statusCode: 401` with "Invalid
  // API Key provided: sk_live_…") says nothing of the kind, and gets the reason phrase.
  const exposable = status < 500 && e.expose === true && typeof e.message === "string" && e.message !== "";
  const options: HttpErrorOptions = { cause: err };
  // All its headers only from an error made for this response: http-errors sets `expose` on every
  // error it makes. Another error may be an SDK's (Stripe's `statusCode`, OpenAI's `status`)
  // carrying its upstream response's headers: that origin's Set-Cookie (RFC 6265 §4.1), Alt-Svc
  // (RFC 7838 §3: an alternative for *this* origin), HSTS with includeSubDomains (RFC 6797 §6.1.2),
  // CORS grants, account ids. From such an error only the fields that belong to the error status
  // itself are taken (a middleware's 401 challenge, say).
  const headers =
    typeof e.expose === "boolean" ? stringHeaders(e.headers) : errorStatusFields(stringHeaders(e.headers));
  // RFC 9110 §15.5.6: a 405 MUST carry Allow, and only the code that raised it knows the methods;
  // without them the error is the server's bug, not a 405 the client could act on.
  if (status === 405 && !hasAllow(headers)) return HttpError.internal(undefined, { cause: err });
  if (headers) options.headers = headers;
  return new HttpError(status, exposable ? (e.message as string) : undefined, options);
}
