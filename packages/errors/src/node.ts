/**
 * `@svc/errors/node`: the error record on plain `node:http`, where a server has no error
 * middleware to mount: a responder to call with what a request failed with, and the listener of a
 * server's `clientError` event (what Node's parser refuses before any framework sees a request:
 * Express and Fastify run on such a server too).
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  correlationHeader,
  type ErrorHandlerOptions,
  type ErrorRequest,
  nodeErrorWriter,
} from "./respond.js";

export * from "./adapter-exports.js";
export { type ClientErrorListener, type ClientErrorOptions, clientErrorHandler } from "./client-error.js";
export type { ErrorHandlerOptions, ErrorRequest } from "./respond.js";

/** What {@link errorResponder} returns: answers `err` for `req` on `res`. */
export type ErrorResponder = (err: unknown, req: IncomingMessage, res: ServerResponse) => void;

/**
 * The error response to a failed request on `node:http`, as `errorHandler()` writes it on
 * Express: the record (or RFC 9457 problem details, by `Accept`), the error's own fields,
 * `Cache-Control: no-store`, `Vary: Accept`, no content for HEAD; the fields of a representation
 * the failed code had set removed; a 5xx logged once (through `req.log` when there is one) and
 * never shown. When the response has already started, the connection is cut instead (RFC 9112 §8:
 * the client sees an incomplete message, not one that looks complete).
 *
 * @example
 * const sendError = errorResponder();
 * createServer((req, res) => {
 *   route(req, res).catch((err) => sendError(err, req, res));
 * });
 * @see https://www.rfc-editor.org/rfc/rfc9457
 */
export function errorResponder(options: ErrorHandlerOptions = {}): ErrorResponder {
  const write = nodeErrorWriter(options, "errorResponder", {
    target: (req) => req.url,
    correlationId: correlationHeader,
  });
  return function svcErrorResponder(err, req, res) {
    write(err, req as ErrorRequest, res);
  };
}
