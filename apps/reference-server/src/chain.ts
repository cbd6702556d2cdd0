import type { NextFunction, Request, RequestHandler, Response } from "express";

/**
 * Several middleware functions as one router layer, run in order: Express tries every layer of
 * a router against every request, and each layer it enters costs a match object and closures,
 * so the middleware every request goes through is mounted as one layer.
 *
 * As in a router, the first `next(err)` (or a thrown error, or a rejected promise of an async
 * handler) skips the rest and goes on to the router's error handlers; `next("route")` and
 * `next("router")` are passed on to the router.
 *
 * @example app.use(chain(helmet(), cors(), negotiate()));
 */
export function chain(...handlers: RequestHandler[]): RequestHandler {
  return function chained(req: Request, res: Response, next: NextFunction): void {
    let index = 0;
    const step = (err?: unknown): void => {
      if (err !== undefined && err !== null) {
        next(err);
        return;
      }
      const handler = handlers[index++];
      if (handler === undefined) {
        next();
        return;
      }
      try {
        const result: unknown = handler(req, res, step);
        if (typeof (result as Promise<unknown> | undefined)?.then === "function") {
          (result as Promise<unknown>).then(undefined, (reason: unknown) =>
            step(reason ?? new Error("Rejected promise")),
          );
        }
      } catch (thrown) {
        step(thrown ?? new Error("Thrown without a value"));
      }
    };
    step();
  };
}
