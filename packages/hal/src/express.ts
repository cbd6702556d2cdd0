/**
 * `@svc/hal/express`: the package on Express 4 and 5: the host check as middleware
 * (`allowedHosts`) and the base URL and links from `req`, behind the proxies the app's
 * `trust proxy` setting trusts (recorded by `expressView` of `@svc/kernel/express`) unless a
 * `trustProxy` option names others.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { NextFunction } from "@svc/errors";
import {
  type BaseUrlOptions,
  createHostCheck,
  externalBaseUrl as externalBaseUrlOf,
  externalFacts as externalFactsOf,
  externalOrigin as externalOriginOf,
  type HostCheckOptions,
  type HrefOptions,
  hrefFor as hrefOf,
} from "@svc/hal";
import { headlessMiddleware, type RequestFacts, type RequestView } from "@svc/kernel";
import { type ExpressSettingsRequest, expressView } from "@svc/kernel/express";

export type {
  BaseUrlOptions,
  HostCheckOptions,
  HrefOptions,
  TrustProxy,
  TrustProxyOption,
} from "@svc/hal";

/** An Express request as the functions of this entry read it: its view and its app's settings. */
export type ExpressBaseUrlRequest = RequestView & ExpressSettingsRequest;

/**
 * Express (or Connect) middleware of `createHostCheck`: passes a request for a host the service
 * answers for, and hands the error-handling middleware a 421 `misdirected_request` for any other
 * (400 `invalid_host` for a malformed one). Behind the proxies the app's `trust proxy` setting
 * trusts (unless `trustProxy` names others), the forwarded host is the one checked. Mount it
 * before anything that builds links.
 *
 * @example app.use(allowedHosts(["api.example.com", ".svc.example"]));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.20
 */
export function allowedHosts(hosts: readonly string[] | "*", options: HostCheckOptions = {}) {
  const checkHost = createHostCheck(hosts, options);
  // It writes no response of its own: a `chain` may hold the `Vary` of the gates around it.
  return headlessMiddleware(function svcAllowedHosts(
    req: IncomingMessage,
    _res: ServerResponse,
    next: NextFunction,
  ): void {
    const error = checkHost(expressView(req));
    if (error === undefined) next();
    else next(error);
  });
}

/**
 * The externally visible origin of the service for `req` (`externalOrigin` of `@svc/hal`), behind
 * the proxies the app's `trust proxy` setting trusts unless `trustProxy` is given.
 *
 * @example
 * app.set("trust proxy", "loopback");
 * externalOrigin(req) // "https://api.example.com" behind the proxy
 * @see https://expressjs.com/en/guide/behind-proxies.html
 */
export function externalOrigin(req: ExpressBaseUrlRequest, options: BaseUrlOptions = {}): string {
  return externalOriginOf(expressView(req), options);
}

/**
 * The facts of `req` behind the proxies trusted (`externalFacts` of `@svc/hal`: origin, prefix,
 * client, and the forwarded fields read, for `Vary`), the app's `trust proxy` setting unless
 * `trustProxy` is given.
 *
 * @example appendVary(res, ...externalFacts(req).vary);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.5
 */
export function externalFacts(req: ExpressBaseUrlRequest, options: BaseUrlOptions = {}): RequestFacts {
  return externalFactsOf(expressView(req), options);
}

/**
 * The external base URL of the service for `req` (`externalBaseUrl` of `@svc/hal`): the origin the
 * client used behind the proxies trusted (the app's `trust proxy` setting unless `trustProxy` is
 * given), and a trusted `X-Forwarded-Prefix`.
 *
 * @example pageModel({ ..., url: req.originalUrl, origin: externalBaseUrl(req) })
 * @see https://www.rfc-editor.org/rfc/rfc7239
 */
export function externalBaseUrl(req: ExpressBaseUrlRequest, options: BaseUrlOptions = {}): string {
  return externalBaseUrlOf(expressView(req), options);
}

/**
 * The external base URL of the service for `req`: {@link externalBaseUrl}, by its short name.
 *
 * @example pageModel({ ..., url: req.originalUrl, origin: baseUrl(req) })
 * @see https://www.rfc-editor.org/rfc/rfc7239
 */
export function baseUrl(req: ExpressBaseUrlRequest, options: BaseUrlOptions = {}): string {
  return externalBaseUrlOf(expressView(req), options);
}

/**
 * The href for a path of this service (`hrefFor` of `@svc/hal`) from `req`, behind the proxies
 * the app's `trust proxy` setting trusts unless `trustProxy` is given.
 *
 * @example res.location(hrefFor(req, `/employees/${id}`)).status(201).json(employee);
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-10.2.2
 */
export function hrefFor(req: ExpressBaseUrlRequest, path: string, options?: HrefOptions): string {
  return hrefOf(expressView(req), path, options);
}
