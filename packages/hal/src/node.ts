/**
 * `@svc/hal/node`: the package on plain `node:http`: the host check as a function of the request
 * (`allowedHosts`, through `nodeGate` of `@svc/kernel/node`) and the base URL from `req`.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type BaseUrlOptions, externalBaseUrl, type HostCheckOptions, hostGate } from "@svc/hal";
import { nodeGate } from "@svc/kernel/node";

export {
  type BaseUrlOptions,
  type HostCheckOptions,
  type HrefOptions,
  hrefFor,
  type TrustProxy,
  type TrustProxyOption,
} from "@svc/hal";

/**
 * The host check on `node:http`: resolves `false` for a host the service answers for (the
 * request goes on), rejects with the 421 `misdirected_request` (or 400 `invalid_host`) for the
 * server's error handling (`@svc/errors/node`).
 *
 * @example
 * const checkHost = allowedHosts(["api.example.com"], { trustProxy: "loopback" });
 * createServer(async (req, res) => {
 *   try {
 *     await checkHost(req, res);
 *     res.end("hello");
 *   } catch (err) {
 *     sendError(req, res, err);
 *   }
 * });
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.20
 */
export function allowedHosts(
  hosts: readonly string[] | "*",
  options: HostCheckOptions = {},
): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  return nodeGate(hostGate(hosts, options));
}

/**
 * The external base URL of the service for `req` (`externalBaseUrl`), behind the proxies
 * `trustProxy` trusts (none by default outside Express).
 *
 * @example pageModel({ ..., url: req.url, origin: baseUrl(req, { trustProxy }) })
 * @see https://www.rfc-editor.org/rfc/rfc7239
 */
export function baseUrl(req: IncomingMessage, options: BaseUrlOptions = {}): string {
  return externalBaseUrl(req, options);
}
