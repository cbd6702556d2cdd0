/**
 * `@svc/errors/fetch`: the error record on the Fetch API (`Request` in, `Response` out): Hono's
 * `app.onError` and `app.notFound`, and a wrapper for any Fetch server (Deno, Bun, workers,
 * `@hono/node-server`). An error response carries the fields the gates in front recorded for the
 * request (`passagesOf`, `@svc/kernel/fetch`): a 429 keeps its `RateLimit` fields.
 *
 * @packageDocumentation
 */
import {
  allowedList,
  type ErrorConfig,
  type ErrorContext,
  type ErrorOptions,
  errorConfig,
  errorValue,
  HttpError,
  malformedBody,
  methodNotAllowedError,
  notFoundError,
  writeErrorLogs,
} from "@svc/errors";
import { isErrorStatus, mergeVary } from "@svc/kernel";
import {
  type FetchHandler,
  fetchView,
  type HonoContextLike,
  passagesOf,
  settleUnreadRequest,
  toResponse,
} from "@svc/kernel/fetch";

export { malformedBody } from "@svc/errors";
export * from "./adapter-exports.js";

/** Options of the Fetch adapters: see `ErrorOptions`; `correlationId` reads the `Request`. */
export type FetchErrorOptions = ErrorOptions<[request: Request]>;

/** The fields the gates in front recorded for `request`, in order, as a `Headers`. */
function passageHeaders(request: Request): Headers {
  const headers = new Headers();
  for (const passage of passagesOf(request)) {
    const fields = passage.fields ?? {};
    for (const name of Object.keys(fields)) {
      const value = fields[name];
      if (value === undefined) continue;
      headers.delete(name);
      if (value === null) continue;
      if (typeof value === "string") headers.set(name, value);
      else for (const line of value) headers.append(name, line);
    }
    if (passage.vary !== undefined && passage.vary.length > 0) {
      const vary = mergeVary(headers.get("vary") ?? undefined, passage.vary);
      if (vary !== undefined) headers.set("vary", vary);
    }
  }
  return headers;
}

/**
 * Hono's `HTTPException` (`hono/http-exception`), read by its shape (`status`, `res`,
 * `getResponse()`), so that this entry needs no Hono: the status the application chose for this
 * response, and the message it wrote for the client, as `http-errors` with `expose` says of its own.
 */
interface HonoException extends Error {
  readonly status: unknown;
  readonly res: unknown;
  getResponse(): unknown;
}

function isHonoException(err: unknown): err is HonoException {
  return (
    err instanceof Error &&
    typeof (err as { getResponse?: unknown }).getResponse === "function" &&
    "status" in err &&
    "res" in err
  );
}

/**
 * A Hono `HTTPException` as the record's `HttpError`: its status, its message as the record's
 * `message` (`detail` in problem details, RFC 9457 §3.1.4) below 500, the reason phrase for a 5xx
 * (logged with the exception as its cause), and the fields of its `res`, the response Hono would
 * have sent (a 401's `WWW-Authenticate` from `bearerAuth`, a `Retry-After`): not its content, nor
 * the fields describing it, which the record replaces (RFC 9457 §3: the problem details are the
 * content). A status that is no error status is left to `toHttpError`, a 500.
 */
function fromHonoException(err: HonoException): unknown {
  const status = err.status;
  if (!isErrorStatus(status)) return err;
  const headers: Record<string, string> = {};
  const fields = (err.res as { headers?: unknown } | undefined)?.headers;
  if (fields instanceof Headers) for (const [name, value] of fields) headers[name] = value;
  const message =
    status < 500 && typeof err.message === "string" && err.message !== "" ? err.message : undefined;
  try {
    return new HttpError(status, message, { cause: err, headers });
  } catch {
    // A 405 without Allow: the server's bug, the 500 toHttpError makes of it.
    return err;
  }
}

function respond(config: ErrorConfig<[request: Request]>, thrown: unknown, request: Request): Response {
  const err = isHonoException(thrown) ? fromHonoException(thrown) : thrown;
  const preset = passageHeaders(request);
  const correlationId = config.correlationId;
  const context: ErrorContext = {
    preset: (name) => preset.get(name) ?? undefined,
    correlationId: correlationId === undefined ? undefined : () => correlationId(request),
    request,
  };
  const { value, logs } = errorValue(err, fetchView(request), config, context);
  writeErrorLogs(config.logger, logs);
  // The error's own fields over the gates' (a 429's Retry-After over a usage field of the same name).
  return settleUnreadRequest(
    request,
    toResponse(value, request.method.toUpperCase(), preset),
    config.unreadBody,
  );
}

/**
 * The error response to `request`: the record (or RFC 9457 problem details, by `Accept`), the
 * error's own fields over those the gates in front recorded, `Cache-Control: no-store`, `Vary:
 * Accept`, no content for HEAD; a 5xx logged once (through `logger`, else one JSON line on
 * stderr) and never shown. Options are checked on every call: for a hot path, make a handler
 * once with {@link onError} or {@link withErrors}.
 *
 * @example
 * try { return await handle(request); } catch (err) { return errorResponse(err, request); }
 * @see https://www.rfc-editor.org/rfc/rfc9457
 */
export function errorResponse(err: unknown, request: Request, options: FetchErrorOptions = {}): Response {
  return respond(errorConfig(options, "errorResponse"), err, request);
}

/**
 * `JSON.parse` of a request body Hono's `c.req.json()` read: the error of `c.req.json()` is the
 * body's when parsing the text it cached fails the same way. A `SyntaxError` from the
 * application's own parsing is not (a 500, logged).
 */
async function honoBodyError(err: unknown, c: HonoContextLike): Promise<boolean> {
  if (!(err instanceof SyntaxError)) return false;
  const cached = (c.req as { bodyCache?: { text?: unknown } }).bodyCache?.text;
  if (cached === undefined || typeof (cached as Promise<unknown>).then !== "function") return false;
  let text: unknown;
  try {
    text = await cached;
  } catch {
    return false;
  }
  if (typeof text !== "string") return false;
  try {
    JSON.parse(text);
    return false;
  } catch (again) {
    return again instanceof SyntaxError && again.message === err.message;
  }
}

/**
 * Hono's error handler: `app.onError(onError(options))`. What a route or middleware threw (a
 * gate's refusal included) becomes the record, with the fields the gates recorded for the request.
 * A body `c.req.json()` could not parse is the 400 `express.json()` gives on Express. Hono's
 * `HTTPException(status, { message, res })` is the record of its status, its message shown below
 * 500, with the fields of its `res` (not its content).
 *
 * @example
 * const app = new Hono();
 * app.onError(onError({ problemTypeBase: "https://example.com/problems/" }));
 * app.notFound(notFoundHandler());
 * @see https://hono.dev/docs/api/hono#error-handling
 */
export function onError(
  options: FetchErrorOptions = {},
): (err: Error, c: HonoContextLike) => Promise<Response> {
  const config = errorConfig(options, "onError");
  return async function svcOnError(err, c) {
    const answered = (await honoBodyError(err, c)) ? malformedBody(err) : err;
    return respond(config, answered, c.req.raw);
  };
}

/**
 * Hono's not-found handler: `app.notFound(notFoundHandler(options))`, a 404 record for a request
 * no route matched, with the message `notFound()` gives it on Express.
 *
 * @example app.notFound(notFoundHandler());
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.5
 */
export function notFoundHandler(options: FetchErrorOptions = {}): (c: HonoContextLike) => Response {
  const config = errorConfig(options, "notFoundHandler");
  return function svcNotFound(c) {
    const request = c.req.raw;
    return respond(config, notFoundError(fetchView(request)), request);
  };
}

/**
 * The last handler of a path, after its routes: `OPTIONS` answered 204 with `Allow` (RFC 9110
 * §9.3.7, §10.2.1), any other method the path lacks thrown as the 405 record's error with the same
 * `Allow` (RFC 9110 §15.5.6: the origin server MUST send it), for `app.onError` (or
 * {@link withErrors}) to answer, as `allowedMethods` of `@svc/errors/express` does. One list feeds
 * both answers; `OPTIONS` is added to it when missing, as it is answered here. Hono answers `HEAD`
 * with the `GET` route. Takes a Hono context or a `Request`.
 *
 * @example
 * app.get("/reports", list);
 * app.all("/reports", allowedMethods(["GET", "HEAD"]));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.6
 */
export function allowedMethods(allowed: readonly string[]): (target: HonoContextLike | Request) => Response {
  const methods = allowedList(allowed, "allowedMethods");
  if (!methods.includes("OPTIONS")) methods.push("OPTIONS");
  const allow = methods.join(", ");
  return function svcAllowedMethods(target) {
    const request = target instanceof Request ? target : target.req.raw;
    if (request.method === "OPTIONS") return new Response(null, { status: 204, headers: { Allow: allow } });
    throw methodNotAllowedError(fetchView(request), methods);
  };
}

/**
 * A Fetch handler whose thrown error or rejection is answered with the record, for a Fetch server
 * without Hono (`export default { fetch: withErrors(handler) }`, `Deno.serve(withErrors(handler))`).
 * Put it outside the gates (`withErrors(gate.wrap(handler))`), so a gate's refusal is answered too.
 *
 * @example
 * const fetch = withErrors(async (request) => {
 *   if (new URL(request.url).pathname !== "/hello") throw notFoundError({ method: request.method, url: request.url });
 *   return Response.json({ hello: "world" });
 * });
 * @see https://www.rfc-editor.org/rfc/rfc9457
 */
export function withErrors(handler: FetchHandler, options: FetchErrorOptions = {}): FetchHandler {
  const config = errorConfig(options, "withErrors");
  return async function svcWithErrors(request) {
    try {
      return await handler(request);
    } catch (err) {
      return respond(config, err, request);
    }
  };
}

/**
 * The request's content as JSON, or the 400 record's error when it is none (`malformedBody`), as
 * `express.json()` refuses it: for a Fetch handler, where `await request.json()` rejects with a
 * `SyntaxError` no error handler can tell from the application's own.
 *
 * @example const body = await requestJson(request);
 * @see https://www.rfc-editor.org/rfc/rfc8259#section-2
 */
export async function requestJson(request: Request): Promise<unknown> {
  const text = await request.text();
  try {
    return JSON.parse(text);
  } catch (err) {
    throw malformedBody(err);
  }
}
