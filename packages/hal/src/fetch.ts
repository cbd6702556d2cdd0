/**
 * `@svc/hal/fetch`: the package on the Fetch API: the host check as Hono middleware and around
 * any Fetch handler, and the base URL and links from a `Request` (its view, `fetchView`).
 *
 * @packageDocumentation
 */

import {
  type BaseUrlOptions,
  externalBaseUrl,
  type HostCheckOptions,
  type HrefOptions,
  hostGate,
  hrefFor as hrefOf,
} from "@svc/hal";
import { type ConnectionInfo, type FetchMiddleware, fetchGate, fetchView } from "@svc/kernel/fetch";

export type { BaseUrlOptions, HostCheckOptions, HrefOptions, TrustProxy, TrustProxyOption } from "@svc/hal";

/**
 * The host check on the Fetch API: Hono middleware (`app.use(allowedHosts(hosts, options))`,
 * the peer's address read from `@hono/node-server` for `trustProxy`), or around any Fetch handler
 * (`allowedHosts(hosts, options).wrap(handler)`). Another host is the 421 `misdirected_request`
 * (400 `invalid_host` for a malformed one), thrown for `app.onError` or `@svc/errors/fetch`.
 *
 * @example app.use(allowedHosts(["api.example.com"], { trustProxy: "loopback" }));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.20
 */
export function allowedHosts(
  hosts: readonly string[] | "*",
  options: HostCheckOptions = {},
): FetchMiddleware {
  return fetchGate(hostGate(hosts, options));
}

/** Options of {@link baseUrl} and {@link hrefFor} on the Fetch API. */
export interface FetchBaseUrlOptions extends BaseUrlOptions {
  /**
   * What the server knows of the connection: the peer's address, for `trustProxy`, and the
   * request-target as received, whose authority an absolute-form target names in place of `Host`
   * (`honoConnection(c)` of `@svc/kernel/fetch` under `@hono/node-server`).
   * @default none: no peer is trusted but by `trustProxy: true`
   */
  info?: ConnectionInfo | undefined;
}

function split<T extends FetchBaseUrlOptions>(options: T): [ConnectionInfo | undefined, Omit<T, "info">] {
  const { info, ...rest } = options;
  return [info, rest];
}

/**
 * The external base URL of the service for a `Request` (`externalBaseUrl` of its view).
 *
 * @example pageModel({ ..., url: c.req.url, origin: baseUrl(c.req.raw, { info: honoConnection(c), trustProxy }) })
 * @see https://www.rfc-editor.org/rfc/rfc7239
 */
export function baseUrl(request: Request, options: FetchBaseUrlOptions = {}): string {
  const [info, rest] = split(options);
  return externalBaseUrl(fetchView(request, info), rest);
}

/**
 * The href for a path of this service (`hrefFor` of `@svc/hal`) from a `Request`.
 *
 * @example hal(employee).link("self", hrefFor(c.req.raw, `/employees/${id}`, { info: honoConnection(c), trustProxy }))
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-10.2.2
 */
export function hrefFor(
  request: Request,
  path: string,
  options: FetchBaseUrlOptions & HrefOptions = {},
): string {
  const [info, rest] = split(options);
  return hrefOf(fetchView(request, info), path, rest);
}
