import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestView } from "@svc/kernel";
import { writeResponse } from "@svc/kernel/node";
import { type ErrorContext, errorValue, failureLog, writeErrorLogs } from "./core.js";
import { type ErrorLogger, type ErrorOptions, errorConfig } from "./options.js";
import { allowedList, methodNotAllowedError, notFoundError } from "./route-errors.js";

export type { ErrorLogger } from "./options.js";

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

/**
 * Options of {@link errorHandler} (and of `errorResponder` on `node:http`): see {@link ErrorOptions};
 * `correlationId` reads `(req, res)`.
 */
export type ErrorHandlerOptions = ErrorOptions<[req: ErrorRequest, res: ServerResponse]>;

function defaultCorrelationId(req: ErrorRequest, res: ServerResponse): string | undefined {
  const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
  const fromLocals = locals?.correlationId;
  if (typeof fromLocals === "string") return fromLocals;
  const header = req.headers["x-correlation-id"];
  return typeof header === "string" ? header : undefined;
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
  const config = errorConfig(options, "errorHandler");
  const correlationId = config.correlationId ?? defaultCorrelationId;
  return function svcErrorHandler(
    err: unknown,
    req: ErrorRequest,
    res: ServerResponse,
    // Unused, but Express takes a handler of four parameters as its error handler.
    _next: NextFunction,
  ): void {
    const request: RequestView = {
      method: req.method,
      url: req.originalUrl ?? req.url,
      headers: req.headers,
    };
    const context: ErrorContext = {
      preset: (name) => res.getHeader(name),
      correlationId: () => correlationId(req, res),
    };
    const logger = config.logger ?? req.log;
    if (res.headersSent) {
      // A second response cannot follow a started one. Express's default handler would close the
      // connection but also print the error on console.error (twice for a 5xx, and a 4xx the rules
      // above keep out of the log), so the connection is closed here: cut before the message's
      // end (Content-Length short, or no last chunk), the client sees an incomplete message
      // (RFC 9112 §8) instead of one that looks complete. An ended response stands.
      const log = failureLog(err, request, context);
      if (log !== undefined) writeErrorLogs(logger, [log]);
      if (!res.writableEnded) res.destroy();
      return;
    }
    const { value, logs } = errorValue(err, request, config, context);
    writeErrorLogs(logger, logs);
    // RFC 9112 §4: the reason-phrase describes the status code. One the failed handler set for the
    // status it meant to send ("Created") would give "500 Created": "" lets Node write the status's own.
    res.statusMessage = "";
    writeResponse(res, value, (req.method ?? "GET").toUpperCase()).catch(() => res.destroy());
  };
}

/**
 * Terminal middleware for requests no route matched: a 404 record.
 *
 * @example app.use(notFound());
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
  return { method: req.method, url: req.originalUrl ?? req.url };
}
