/**
 * `@svc/errors/node`: the error record on plain `node:http`, where a server has no error
 * middleware to mount: a responder to call with what a request failed with.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type ErrorHandlerOptions, type ErrorRequest, errorHandler } from "@svc/errors";

export {
  type ErrorHandlerOptions,
  type ErrorLogger,
  type ErrorOptions,
  type ErrorRequest,
  type Logger,
  methodNotAllowedError,
  notFoundError,
} from "@svc/errors";

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
  const handle = errorHandler(options);
  return function svcErrorResponder(err, req, res) {
    handle(err, req as ErrorRequest, res, () => res.destroy());
  };
}
