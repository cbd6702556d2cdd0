import type express from "express";
import type { RequestHandler } from "express";

/** The methods a resource module's routes handle (each behind the guard). */
const ROUTE_METHODS = ["get", "post", "put", "patch", "delete", "options"] as const;
export type RouteMethod = (typeof ROUTE_METHODS)[number];

/**
 * The router as the resource modules see it: `route(path)` whose method handlers (`get`, `post`,
 * ...) run after `guard(path, method)`, while `all()`, the 405 fallback, runs without it. So
 * existence and method are decided by routing, before permission: `POST /nonexistent` is a 404 and
 * `TRACE /employees` a 405 with Allow for every user, and the read-only user's 403 only comes for
 * a route and method that exist (RFC 9110 §15.5.5, §15.5.6 before §15.5.4). The guard is chosen
 * by the matched route's path, never by the spelling of the request (`KEY_REQUIRED` in app.ts).
 */
export function guardedRoutes(
  router: express.Router,
  guard: (path: string, method: RouteMethod) => RequestHandler[],
): express.Router {
  const route = (path: string) => {
    const real = router.route(path);
    const proxy: Record<string, (...handlers: RequestHandler[]) => unknown> = {
      all(...handlers) {
        real.all(...handlers);
        return proxy;
      },
    };
    for (const method of ROUTE_METHODS) {
      const stack = guard(path, method);
      proxy[method] = (...handlers) => {
        real[method](...stack, ...handlers);
        return proxy;
      };
    }
    return proxy;
  };
  return { route } as unknown as express.Router;
}
