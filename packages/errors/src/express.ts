/**
 * `@svc/errors/express`: the error record on Express 4 and 5, the API the main entry has always
 * had, under the framework's name, and `expressServerOptions` (Node.js's server classes, which
 * the main entry leaves out: it runs where there is no Node.js). Everything else comes from
 * `@svc/errors` itself, so one process holds one copy whichever entry it imports.
 *
 * @example
 * import { errorHandler, notFound } from "@svc/errors/express";
 * app.use(notFound());
 * app.use(errorHandler());
 * @packageDocumentation
 */
export {
  allowedMethods,
  asyncRoute,
  type ClientErrorListener,
  type ClientErrorOptions,
  clientErrorHandler,
  type ErrorHandlerOptions,
  type ErrorLogger,
  type ErrorOptions,
  type ErrorRequest,
  errorHandler,
  type Logger,
  methodNotAllowed,
  type NextFunction,
  notFound,
} from "@svc/errors";
export { type ExpressPrototypes, type ExpressServerClasses, expressServerOptions } from "./express-server.js";
