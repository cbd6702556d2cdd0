import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type ErrorContext,
  type ErrorLogger,
  type ErrorOptions,
  errorConfig,
  errorValue,
  failureLog,
  mappedError,
  writeErrorLogs,
} from "@svc/errors";
import type { RequestView } from "@svc/kernel";
import { settleUnreadBody, writeResponse } from "@svc/kernel/node";

/** The parts of a `node:http` request (Express's is one) the error writers read. */
export interface ErrorRequest extends IncomingMessage {
  /** Express: the whole request-target, kept when a router strips a mount path from `url`. */
  originalUrl?: string;
  /** pino-http's per-request logger, used when no `logger` option is given. */
  log?: ErrorLogger;
}

/**
 * Options of `errorHandler` (`@svc/errors/express`) and `errorResponder` (`@svc/errors/node`):
 * see {@link ErrorOptions}; `correlationId` reads `(req, res)`.
 */
export type ErrorHandlerOptions = ErrorOptions<[req: ErrorRequest, res: ServerResponse]>;

/** What the two `node:http` adapters differ in: how they read the target and the correlation id. */
export interface NodeErrorReading {
  /** The request-target the record's `path` comes from. */
  target(req: ErrorRequest): string | undefined;
  /** The correlation id without a `correlationId` option. */
  correlationId(req: ErrorRequest, res: ServerResponse): string | undefined;
}

/**
 * The error response to a failed request on a `node:http` response (Express's included): the
 * record, its fields, one write; when the response has already started, the connection is cut
 * (RFC 9112 §8: the client sees an incomplete message, not one that looks complete).
 *
 * @see https://www.rfc-editor.org/rfc/rfc9457
 */
export function nodeErrorWriter(
  options: ErrorHandlerOptions,
  name: string,
  reading: NodeErrorReading,
): (err: unknown, req: ErrorRequest, res: ServerResponse) => void {
  const config = errorConfig(options, name);
  const correlationId = config.correlationId ?? reading.correlationId;
  return function writeError(err, req, res) {
    const request: RequestView = { method: req.method, url: reading.target(req), headers: req.headers };
    const context: ErrorContext = {
      preset: (field) => res.getHeader(field),
      correlationId: () => correlationId(req, res),
      request: req,
    };
    const logger = config.logger ?? req.log;
    if (res.headersSent) {
      // A second response cannot follow a started one. Express's default handler would close the
      // connection but also print the error on console.error (twice for a 5xx, and a 4xx the rules
      // above keep out of the log), so the connection is closed here: cut before the message's
      // end (Content-Length short, or no last chunk), the client sees an incomplete message
      // (RFC 9112 §8) instead of one that looks complete. An ended response stands.
      const mapped = mappedError(err, config.mappers);
      const log = failureLog(mapped.logged, request, context, mapped.error);
      if (log !== undefined) writeErrorLogs(logger, [log]);
      if (!res.writableEnded) res.destroy();
      return;
    }
    const { value, logs } = errorValue(err, request, config, context);
    writeErrorLogs(logger, logs);
    // RFC 9112 §4: the reason-phrase describes the status code. One the failed handler set for the
    // status it meant to send ("Created") would give "500 Created": "" lets Node write the status's own.
    res.statusMessage = "";
    settleUnreadBody(req, res, config.unreadBody);
    writeResponse(res, value, (req.method ?? "GET").toUpperCase()).catch(() => res.destroy());
  };
}

/** The `X-Correlation-ID` request field, when it is one line. */
export function correlationHeader(req: IncomingMessage): string | undefined {
  const header = req.headers["x-correlation-id"];
  return typeof header === "string" ? header : undefined;
}
