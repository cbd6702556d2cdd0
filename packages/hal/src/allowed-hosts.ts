import type { IncomingMessage, ServerResponse } from "node:http";
import type { NextFunction } from "@svc/errors";
import { createHostCheck, type HostCheckOptions } from "./host-check.js";

/**
 * Express (or Connect) middleware of {@link createHostCheck}: passes a request for a host the
 * service answers for, and hands the error-handling middleware a 421 `misdirected_request` for any
 * other (400 `invalid_host` for a malformed one). Mount it before anything that builds links.
 *
 * @example app.use(allowedHosts(["api.example.com", ".svc.example"]));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.20
 */
export function allowedHosts(hosts: readonly string[] | "*", options: HostCheckOptions = {}) {
  const checkHost = createHostCheck(hosts, options);
  return function svcAllowedHosts(req: IncomingMessage, _res: ServerResponse, next: NextFunction): void {
    const error = checkHost(req);
    if (error === undefined) next();
    else next(error);
  };
}
