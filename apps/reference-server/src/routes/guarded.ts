import { allowedMethods } from "@svc/errors/express";
import { requestState } from "@svc/kernel";
import type express from "express";
import type { Request, RequestHandler } from "express";
import { expressHrefs } from "../links.js";
import type { Svc } from "../pipeline.js";
import { type Href, type RequestView, ROUTE_METHODS, type RouteMethod, type Routes } from "../view.js";

/** The request view (view.ts) of an Express request, for a handler under `svc`. */
export function expressView(req: Request, svc: Svc): RequestView {
  let href: Href | undefined;
  return {
    method: req.method,
    params: req.params as Record<string, string | undefined>,
    query: req.query as Record<string, unknown>,
    body: req.body,
    headers: req.headers,
    originalUrl: req.originalUrl,
    state: requestState(req),
    hrefs: () => {
      href ??= expressHrefs(req);
      return href;
    },
    preconditions: (current) => svc.preconditions(req, current),
  };
}

/** A handler that sets an OPTIONS answer's own header fields before `allowedMethods` answers it. */
function optionsFields(fields: Readonly<Record<string, string>>): RequestHandler {
  return (_req, res, next) => {
    for (const [name, value] of Object.entries(fields)) res.setHeader(name, value);
    next();
  };
}

/**
 * The resource modules' {@link Routes} on an Express router: each route's method handlers (`get`,
 * `post`, ..., and OPTIONS) run after `guard(path, method)`, while `all()`, the 405 fallback, runs
 * without it. So existence and method are decided by routing, before permission: `POST
 * /nonexistent` is a 404 and `TRACE /employees` a 405 with Allow for every user, and the read-only
 * user's 403 only comes for a route and method that exist (RFC 9110 §15.5.5, §15.5.6 before
 * §15.5.4). The guard is chosen by the matched route's path, never by the spelling of the request
 * (`KEY_REQUIRED` in app.ts).
 */
export function expressRoutes(
  router: express.Router,
  svc: Svc,
  guard: (path: string, method: RouteMethod | "options") => RequestHandler[],
): Routes {
  return (spec) => {
    const route = router.route(spec.path);
    const allowed = allowedMethods(spec.allow);
    for (const method of ROUTE_METHODS) {
      const handler = spec.handlers[method];
      if (handler === undefined) continue;
      const handle = handler.handle;
      route[method](
        ...guard(spec.path, method),
        svc.handle((req: Request, context) => handle(expressView(req, svc), context), handler.options),
      );
    }
    const fields = spec.optionsFields === undefined ? [] : [optionsFields(spec.optionsFields)];
    route.options(...guard(spec.path, "options"), ...fields, allowed);
    route.all(allowed);
  };
}
