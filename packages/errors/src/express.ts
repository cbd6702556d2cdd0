/**
 * `@svc/errors/express`: the error record on Express 4 and 5: the error middleware, the 404 and
 * 405 handlers, `asyncRoute` for Express 4, and `expressServerOptions` (Node.js's server classes).
 * The record itself is built by the framework-free core of `@svc/errors`, imported by its name,
 * so one process holds one copy whichever entries it imports. A `node:http` server's
 * `clientError` listener (`clientErrorHandler`) is `@svc/errors/node`'s: an Express app runs on
 * one.
 *
 * @example
 * import { errorHandler, notFound } from "@svc/errors/express";
 * app.use(notFound());
 * app.use(errorHandler());
 * @packageDocumentation
 */
import type { ServerResponse } from "node:http";
import { allowedList, methodNotAllowedError, type NextFunction, notFoundError } from "@svc/errors";
import {
  correlationHeader,
  type ErrorHandlerOptions,
  type ErrorRequest,
  nodeErrorWriter,
} from "./respond.js";

export type {
  DefaultErrorFormat,
  ErrorLogger,
  ErrorMapper,
  ErrorOptions,
  Logger,
  NextFunction,
} from "@svc/errors";
export { asyncRoute } from "@svc/kernel/express";
export { type ExpressPrototypes, type ExpressServerClasses, expressServerOptions } from "./express-server.js";
export type { ErrorHandlerOptions, ErrorRequest } from "./respond.js";

/** Express's per-response `res.locals.correlationId`, else the `X-Correlation-ID` request field. */
function expressCorrelationId(req: ErrorRequest, res: ServerResponse): string | undefined {
  const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
  const fromLocals = locals?.correlationId;
  return typeof fromLocals === "string" ? fromLocals : correlationHeader(req);
}

/** Express keeps the whole request-target in `originalUrl` when a router strips its mount path. */
function expressTarget(req: ErrorRequest): string | undefined {
  return req.originalUrl ?? req.url;
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
  const write = nodeErrorWriter(options, "errorHandler", {
    target: expressTarget,
    correlationId: expressCorrelationId,
  });
  return function svcErrorHandler(
    err: unknown,
    req: ErrorRequest,
    res: ServerResponse,
    // Unused, but Express takes a handler of four parameters as its error handler.
    _next: NextFunction,
  ): void {
    write(err, req, res);
  };
}

/**
 * Terminal middleware for requests no route matched: a 404 record.
 *
 * @example app.use(notFound());
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.5
 */
export function notFound() {
  return function svcNotFound(req: ErrorRequest, _res: ServerResponse, next: NextFunction): void {
    next(notFoundError(targetOf(req)));
  };
}

/**
 * A handler for the methods a route does not support: 405 with `Allow` (RFC 9110 §15.5.6).
 *
 * @example router.route("/employees").get(list).post(create).all(methodNotAllowed(["GET", "HEAD", "POST"]));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.6
 */
export function methodNotAllowed(allowed: readonly string[]) {
  const methods = allowedList(allowed);
  return function svcMethodNotAllowed(req: ErrorRequest, _res: ServerResponse, next: NextFunction): void {
    next(methodNotAllowedError(targetOf(req), methods));
  };
}

/**
 * The last handler of a route: `OPTIONS` answered with 204 and `Allow` (RFC 9110 §9.3.7: a server
 * SHOULD send the methods it supports for the target resource; §10.2.1 `Allow`), any other method
 * the route lacks with 405 and the same `Allow` (RFC 9110 §15.5.6). One list feeds both, so the
 * two answers cannot disagree; `OPTIONS` is added to it when missing, as it is answered.
 *
 * @example router.route("/employees").get(list).post(create).all(allowedMethods(["GET", "HEAD", "POST", "OPTIONS"]));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-9.3.7
 */
export function allowedMethods(allowed: readonly string[]) {
  // RFC 9110 §10.2.1: Allow lists "the set of methods advertised as supported by the target
  // resource", and this handler answers OPTIONS itself: it is listed even when left out.
  const methods = allowedList(allowed);
  if (!methods.includes("OPTIONS")) methods.push("OPTIONS");
  const allow = methods.join(", ");
  return function svcAllowedMethods(req: ErrorRequest, res: ServerResponse, next: NextFunction): void {
    if (req.method !== "OPTIONS") {
      next(methodNotAllowedError(targetOf(req), methods));
      return;
    }
    res.statusCode = 204;
    res.setHeader("Allow", allow);
    res.end();
  };
}

function targetOf(req: ErrorRequest): { method: string | undefined; url: string | undefined } {
  return { method: req.method, url: expressTarget(req) };
}
