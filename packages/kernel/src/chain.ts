import { callCaught, type NextFunction } from "./async-route.js";
import { refusedOption } from "./option-error.js";

/**
 * A request middleware of Express (4 or 5) or any `(req, res, next)` router, whatever request and
 * response types it declares (each package's middleware declares its own).
 */
export type ChainedHandler = (req: never, res: never, next: NextFunction) => unknown;

/** What every one of a union's members is: the request a chain of middleware declares. */
type Every<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
/** A middleware's declared request (`unknown` for a parameter without a type). */
type RequestOf<H> = H extends (req: infer R, res: never, next: NextFunction) => unknown
  ? [R] extends [never]
    ? unknown
    : R
  : never;
/** A middleware's declared response (`unknown` for a parameter without a type). */
type ResponseOf<H> = H extends (req: never, res: infer R, next: NextFunction) => unknown
  ? [R] extends [never]
    ? unknown
    : R
  : never;

/**
 * Several middleware functions as one router layer, run in order. Express walks every layer of a
 * router for every request, and each layer it enters costs a path match, a match object and the
 * restoring of `req.url`: the middleware that every request passes (hosts, version, CORS,
 * authentication, rate limit) costs less mounted once, as one layer.
 *
 * As in a router: the first `next(err)`, thrown error or rejected promise (Express 5 takes a
 * returned promise's rejection; so does the chain, on Express 4 too) skips the rest and goes to
 * the router's error handlers; `next("route")` and `next("router")` are passed on to the router.
 * An error handler (four parameters) has no place in a chain and is refused, as is a handler
 * that is not a function: a `TypeError` (code `ERR_SVC_KERNEL_HANDLER`), at once.
 *
 * @example
 * app.use(chain(allowedHosts(["api.example.com"]), svc.prepare, authenticate(auth), rateLimit(limit)));
 * @see https://expressjs.com/en/guide/writing-middleware.html
 */
export function chain<const H extends readonly ChainedHandler[]>(
  ...handlers: H
): (req: Every<RequestOf<H[number]>>, res: Every<ResponseOf<H[number]>>, next: NextFunction) => void {
  if (handlers.length === 0) {
    throw refusedOption("kernel", "handler", handlers, "at least one middleware function", "chain: handlers");
  }
  handlers.forEach((handler, index) => {
    if (typeof handler !== "function" || handler.length > 3) {
      throw refusedOption(
        "kernel",
        "handler",
        handler,
        "a middleware function (req, res, next) => ...; an error handler (err, req, res, next) goes after the chain",
        `chain: handlers[${index}]`,
      );
    }
  });
  // Each is called with the request and response the router passes; their declared types are
  // what the returned middleware's own parameters claim.
  const list = [...handlers] as unknown as readonly ((
    req: unknown,
    res: unknown,
    next: NextFunction,
  ) => unknown)[];
  return function chained(req: unknown, res: unknown, next: NextFunction): void {
    let index = 0;
    // One per request, not per middleware: a throw or a rejection goes on to the error handlers.
    const fail = (err: unknown, thrown: boolean): void =>
      next(
        err ??
          new Error(
            thrown
              ? "A chained middleware threw without a value"
              : "A chained middleware's promise was rejected without a reason",
          ),
      );
    const step = (err?: unknown): void => {
      if (err !== undefined && err !== null) {
        next(err);
        return;
      }
      const handler = list[index++];
      if (handler === undefined) {
        next();
        return;
      }
      callCaught(handler, req, res, step, fail);
    };
    step();
  };
}
