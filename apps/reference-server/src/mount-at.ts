import { absoluteFormOrigin } from "@svc/errors";
import { chain } from "@svc/kernel/express";
import type { NextFunction, Request, RequestHandler, Response } from "express";

/**
 * `handlers` as a router's `use(prefix, ...handlers)` runs them, without a router: only for
 * request paths equal to `prefix` or continuing with `/` after it (compared in lower case, as
 * Express matches), with the prefix moved from `req.url` to `req.baseUrl` while they run (so
 * `/ws/customer?wsdl` reaches them as `/?wsdl`) and put back when they pass the request on. A
 * router would match each handler's layer against the path again and make a match object per
 * layer; the SOAP endpoints take this path on every call.
 *
 * @example app.use(mountAt("/ws/customer", auth, limiter, endpoint));
 */
export function mountAt(prefix: string, ...handlers: RequestHandler[]): RequestHandler {
  if (!prefix.startsWith("/") || prefix.endsWith("/") || /[?#]/.test(prefix)) {
    throw new TypeError(`mountAt: "${prefix}" must be a path starting with / and not ending with one`);
  }
  const lower = prefix.toLowerCase();
  const run = chain(...handlers);
  return function mounted(req: Request, res: Response, next: NextFunction): void {
    const url = req.url;
    const query = url.indexOf("?");
    const end = query === -1 ? url.length : query;
    // RFC 9112 §3.2.2: an absolute-form target's path follows its scheme and authority, which
    // stay in front of it as the router keeps them.
    const start = absoluteFormOrigin(url).length;
    const at = start + prefix.length;
    if (
      end < at ||
      (end > at && url.charCodeAt(at) !== 47) || // "/"
      url.slice(start, at).toLowerCase() !== lower
    ) {
      next();
      return;
    }
    const baseUrl = req.baseUrl;
    const origin = url.slice(0, start);
    // A path that ends in the prefix and one slash is the mount point itself, as a router takes it.
    const rest = url.startsWith("/?", at) || end === at + 1 ? url.slice(at + 1) : url.slice(at);
    req.baseUrl = baseUrl + url.slice(start, at);
    req.url = origin !== "" || rest.startsWith("/") ? origin + rest : `/${rest}`;
    run(req, res, (err?: unknown) => {
      req.url = url;
      req.baseUrl = baseUrl;
      next(err);
    });
  };
}
