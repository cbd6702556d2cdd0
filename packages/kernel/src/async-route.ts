import type { IncomingMessage, ServerResponse } from "node:http";
import { refusedOption } from "./option-error.js";

/** Express's `next`, for the adapters: the error goes to the app's error handlers. */
export type NextFunction = (err?: unknown) => void;

/**
 * A route handler (Express 4 or 5, or any `(req, res, next)` router) whose thrown error or
 * rejected promise goes to `next(err)`, so the app's error handler answers it. Express 5 does so
 * for a returned promise itself; Express 4 does not: an `async` handler that throws
 * (`throw HttpError.notFound(...)`) rejects a promise nobody handles, which ends the process
 * (Node's default for an unhandled rejection) or, with a handler for that, leaves the request
 * without a response. A promise rejected without a reason becomes an `Error`, as Express 5 does.
 * A `handler` that is not a function is a `TypeError` (code `ERR_SVC_KERNEL_HANDLER`), at once.
 *
 * @example
 * app.get("/employees/:id", asyncRoute(async (req: Request<{ id: string }>, res: Response) => {
 *   const employee = await repo.get(req.params.id);
 *   if (!employee) throw HttpError.notFound(`Employee ${req.params.id} does not exist`);
 *   res.json(employee);
 * }));
 * @see https://expressjs.com/en/guide/error-handling.html
 */
export function asyncRoute<Req = IncomingMessage, Res = ServerResponse, Next = NextFunction>(
  handler: (req: Req, res: Res, next: Next) => unknown,
): (req: Req, res: Res, next: Next) => void {
  if (typeof handler !== "function") {
    throw refusedOption(
      "kernel",
      "handler",
      handler,
      "a function (req, res, next) => ...",
      "asyncRoute: handler",
    );
  }
  return function asyncRouteHandler(req, res, next): void {
    callCaught(handler, req, res, next, (err) =>
      (next as NextFunction)(err || new Error("The route handler's promise was rejected without a reason")),
    );
  };
}

/**
 * Calls `handler(req, res, next)`; what it throws, or its returned promise's rejection, goes to
 * `fail` (`thrown` telling which), for {@link asyncRoute} and `chain`.
 */
export function callCaught<Req, Res, Next>(
  handler: (req: Req, res: Res, next: Next) => unknown,
  req: Req,
  res: Res,
  next: Next,
  fail: (err: unknown, thrown: boolean) => void,
): void {
  let result: unknown;
  try {
    result = handler(req, res, next);
  } catch (err) {
    fail(err, true);
    return;
  }
  if (typeof (result as PromiseLike<unknown> | null)?.then === "function") {
    (result as PromiseLike<unknown>).then(undefined, (err: unknown) => fail(err, false));
  }
}
