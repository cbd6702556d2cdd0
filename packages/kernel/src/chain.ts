import type { ServerResponse } from "node:http";
import { type Exchange, exchangeOf, isHeadlessMiddleware } from "@svc/kernel";
import { callCaught, type NextFunction } from "./async-route.js";
import { refusedOption } from "./option-error.js";
import { releaseVary } from "./write.js";

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
 * The `Vary` names that the packages' middleware next to each other in a chain add are held and
 * set in one field when the request leaves them: for the next middleware of another kind, for
 * the router (`next()`, `next(err)`), or with the answer one of them writes. Each field set on a
 * `node:http` response is checked by Node.js, and a chain of gates that vary on a field each
 * (the version's, `Origin`) would otherwise set `Vary` once per gate.
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
  // Taken once: which of them write no response head of their own, so may have `Vary` held.
  const headless = list.map(isHeadlessMiddleware);
  return function chained(req: unknown, res: unknown, next: NextFunction): void {
    let index = 0;
    let exchange: Exchange | undefined;
    const pass = (err?: unknown): void => {
      if (exchange !== undefined) releaseVary(res as ServerResponse, exchange);
      next(err);
    };
    // One per request, not per middleware: a throw or a rejection goes on to the error handlers.
    const fail = (err: unknown, thrown: boolean): void =>
      pass(
        err ??
          new Error(
            thrown
              ? "A chained middleware threw without a value"
              : "A chained middleware's promise was rejected without a reason",
          ),
      );
    const step = (err?: unknown): void => {
      if (err !== undefined && err !== null) {
        pass(err);
        return;
      }
      const at = index++;
      const handler = list[at];
      if (handler === undefined) {
        pass();
        return;
      }
      if (headless[at] === true) {
        exchange ??= exchangeOf(req as object);
        exchange.heldVary ??= "";
      } else if (exchange !== undefined) releaseVary(res as ServerResponse, exchange);
      callCaught(handler, req, res, step, fail);
    };
    step();
  };
}
