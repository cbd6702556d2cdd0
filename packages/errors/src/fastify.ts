/**
 * `@svc/errors/fastify`: the error record on Fastify 5, as a plugin that sets the application's
 * error and not-found handlers. Fastify's own errors (a body that is no JSON, too large, of a
 * media type no parser takes, a schema's validation) get the same record as on Express.
 *
 * @packageDocumentation
 */
import {
  type ErrorContext,
  type ErrorOptions,
  errorConfig,
  errorValue,
  failureLog,
  mappedError,
  methodNotAllowedError,
  notFoundError,
  writeErrorLogs,
} from "@svc/errors";
import type { RequestView } from "@svc/kernel";
import { appWide, sendValue } from "@svc/kernel/fastify";
import { pluginOptions } from "@svc/kernel/internal";
import { settleUnreadBody } from "@svc/kernel/node";
import type {
  FastifyInstance,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  HTTPMethods,
} from "fastify";

export * from "./adapter-exports.js";

/** Options of {@link errorPlugin}: see `ErrorOptions`; `correlationId` reads `(request, reply)`. */
export type ErrorPluginOptions = ErrorOptions<[request: FastifyRequest, reply: FastifyReply]>;

/** Fastify's error handler signature, as {@link fastifyErrorHandler} returns it. */
export type FastifyErrorHandler = (
  err: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
) => FastifyReply | undefined;

/**
 * The order `Allow` lists methods in: the ones most resources have first, as the Express examples
 * list them, then the others in the order Fastify's `supportedMethods` gives, `OPTIONS` last (the
 * plugin answers it, as `allowedMethods` adds it at the end of its list on Express).
 */
const ALLOW_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

function allowOrder(supported: readonly string[]): string[] {
  const rest = supported.filter((m) => !ALLOW_ORDER.includes(m) && m !== "OPTIONS");
  return [...ALLOW_ORDER.filter((m) => supported.includes(m)), ...rest, "OPTIONS"];
}

/**
 * Whether Fastify's router routes `method` on `url` (the request's own URL: the router applies its
 * own options, trailing slash, case, duplicate slashes, params, as for the request). Constrained
 * routes (host, version) are not seen: no constraint is derived here. A lookup that only reached
 * Fastify's bad-URL or too-long-parameter handler has no `searchParams` and is no route.
 */
function routes(app: FastifyInstance, method: string, url: string): boolean {
  const found = app.findRoute({ method: method as HTTPMethods, url });
  return found !== null && found.searchParams !== undefined;
}

/**
 * The methods other than the request's own that route the request's path, in `order`, or
 * `undefined` when none does or when the request's own does (a route that called
 * `reply.callNotFound()`: its resource is missing, the method is not at fault). One router lookup
 * per method Fastify knows, whatever the number of routes.
 */
function otherMethods(app: FastifyInstance, request: FastifyRequest, order: readonly string[]) {
  const url = request.url;
  if (routes(app, request.method, url)) return undefined;
  let allowed: string[] | undefined;
  for (const method of order) {
    if (method === "OPTIONS" || method === request.method || !routes(app, method, url)) continue;
    allowed ??= [];
    allowed.push(method);
  }
  if (allowed === undefined) return undefined;
  allowed.push("OPTIONS");
  return allowed;
}

/** Whether the application turned Fastify's request logging off (for this request). */
function requestLoggingOff(request: FastifyRequest): boolean {
  const off: unknown = (request.server.initialConfig as { disableRequestLogging?: unknown })
    .disableRequestLogging;
  if (typeof off !== "function") return off === true;
  try {
    return (off as (request: FastifyRequest) => unknown)(request) === true;
  } catch {
    return false;
  }
}

/**
 * Fastify's own line for a 4xx, as its default error handler writes it (`reply.log.info({ res:
 * reply, err }, err.message)`, unless `disableRequestLogging`): setting an error handler must not
 * take it away. The reply's status is the record's when the line is written.
 *
 * @see https://fastify.dev/docs/latest/Reference/Errors/#errors-in-fastify-lifecycle-hooks-and-a-custom-error-handler
 */
function fastifyRefusalLog(err: unknown, request: FastifyRequest, reply: FastifyReply, status: number): void {
  if (requestLoggingOff(request)) return;
  try {
    reply.code(status);
    reply.log.info({ res: reply, err }, (err as { message?: unknown } | null)?.message as string | undefined);
  } catch {
    // A logger that throws costs the line, never the response.
  }
}

/**
 * The error handler {@link errorPlugin} sets, for where Fastify takes one outside a plugin: its
 * `frameworkErrors` server option (a malformed URL, before any route), so that those get the
 * record too. The rules are `errorHandler()`'s (see `errorValue`); logged through
 * `request.log` unless `logger` is given. When the reply has already started, the connection is
 * cut instead (RFC 9112 §8).
 *
 * @example const app = Fastify({ frameworkErrors: fastifyErrorHandler() });
 * @see https://fastify.dev/docs/latest/Reference/Server/#frameworkerrors
 */
export function fastifyErrorHandler(options: ErrorPluginOptions = {}): FastifyErrorHandler {
  const config = errorConfig(options, "errorPlugin");
  const correlationId = config.correlationId;
  return function svcErrorHandler(err, request, reply) {
    const view: RequestView = {
      method: request.method,
      url: request.originalUrl ?? request.url,
      headers: request.headers,
    };
    const context: ErrorContext = {
      preset: (name) => reply.getHeader(name),
      correlationId: correlationId === undefined ? undefined : () => correlationId(request, reply),
      request,
    };
    const logger = config.logger ?? request.log;
    if (reply.sent || reply.raw.headersSent) {
      const mapped = mappedError(err, config.mappers);
      const log = failureLog(mapped.logged, view, context, mapped.error);
      if (log !== undefined) writeErrorLogs(logger, [log]);
      if (!reply.raw.writableEnded) reply.raw.destroy();
      return undefined;
    }
    const { value, logs, error } = errorValue(err, view, config, context);
    if (config.logger !== undefined) {
      // The application's logger gets every line, as on the other frameworks: a 4xx's `info`
      // line only when it has `info`, so one without it keeps 4xx out of the log.
      writeErrorLogs(logger, logs);
    } else {
      // A 4xx gets Fastify's own line, not the core's: the one its default error handler writes.
      writeErrorLogs(
        logger,
        logs.filter((log) => log.level !== "info"),
      );
      if (error.status < 500) fastifyRefusalLog(err, request, reply, error.status);
    }
    settleUnreadBody(request.raw, reply.raw, config.unreadBody);
    return sendValue(reply, value, request.method.toUpperCase());
  };
}

/**
 * The error record on Fastify 5: `app.register(errorPlugin, options)` sets the application's error
 * handler and not-found handler. The not-found handler answers as `allowedMethods` does on
 * Express, with no list to keep: a path that Fastify's router routes for other methods (a
 * `GET /reports` route and a `PUT /reports` request, params included) gets 405 with `Allow`
 * naming them and `OPTIONS`, and `OPTIONS` on it 204 with the same `Allow`; a path no route
 * matches gets the 404 record. It applies to the whole application, not only to
 * what is registered inside it (`appWide`: Fastify's `skip-override`), so register it on the
 * root instance, once; a child context may still set a handler of its own. What was thrown,
 * by a route or a hook (a gate's refusal), is answered as on Express: the record, or RFC 9457
 * problem details by `Accept`, the error's own fields, `Cache-Control: no-store`, `Vary: Accept`;
 * the fields set in front (a gate's `RateLimit`) stay. Fastify's own errors are mapped
 * (`toHttpError`): no client sees Fastify's JSON shape.
 *
 * @example
 * const app = Fastify();
 * await app.register(errorPlugin, { problemTypeBase: "https://example.com/problems/" });
 * @see https://www.rfc-editor.org/rfc/rfc9457
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.6 (405: the origin server MUST send `Allow`)
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-9.3.7 (OPTIONS: the target resource's methods)
 */
export const errorPlugin: FastifyPluginCallback<ErrorPluginOptions> = appWide(
  "@svc/errors",
  function svcErrors(app: FastifyInstance, options: ErrorPluginOptions, done: (err?: Error) => void) {
    let handler: FastifyErrorHandler;
    try {
      handler = fastifyErrorHandler(pluginOptions(options ?? {}));
    } catch (refused) {
      // A refused option fails `register` (and so `ready`/`listen`), with its coded TypeError.
      done(refused as Error);
      return;
    }
    // Read once requests arrive: `addHttpMethod` may still add methods while plugins register.
    let order: string[] | undefined;
    const notFound = function svcNotFound(request: FastifyRequest, reply: FastifyReply) {
      const target = { method: request.method, url: request.originalUrl ?? request.url };
      order ??= allowOrder(app.supportedMethods);
      const allowed = otherMethods(app, request, order);
      if (allowed === undefined) return handler(notFoundError(target), request, reply);
      if (request.method === "OPTIONS") return reply.code(204).header("Allow", allowed.join(", ")).send();
      return handler(methodNotAllowedError(target, allowed), request, reply);
    };
    app.setErrorHandler(function svcErrorsOrNotFound(err, request, reply) {
      // Fastify refuses a QUERY without Content-Type (RFC 10008 §2) before its not-found route
      // runs; a target with no QUERY route is a 404 or 405 first (RFC 9110 §15.5.5, §15.5.6).
      if (isCode(err, "FST_ERR_ROUTE_MISSING_CONTENT_TYPE") && request.is404) return notFound(request, reply);
      return handler(err, request, reply);
    });
    app.setNotFoundHandler(notFound);
    done();
  },
);

function isCode(err: unknown, code: string): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === code;
}
