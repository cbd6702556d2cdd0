import { compileTrust as compileKernelTrust, type TrustHop, type TrustOption } from "@svc/kernel";

/** Decides whether the peer at `address`, `hop` proxies away from the server, may be believed. */
export type TrustProxy = TrustHop;

/**
 * Which peers may set forwarded headers, in the forms Express's `trust proxy` setting takes:
 * `true` (every peer: right only when nothing but the proxy can reach the server), `false` (none),
 * a hop count, addresses and CIDR ranges (a comma-separated string or a list; `loopback`,
 * `linklocal` and `uniquelocal` name their ranges), or a function.
 */
export type TrustProxyOption = TrustOption;

/**
 * Compiles a {@link TrustProxyOption} into one trust function, once: the same forms and meaning as
 * Express's `trust proxy` setting, with addresses and ranges compiled by `proxy-addr`
 * (Express's own compiler), as `compileTrust` of `@svc/kernel` does. Anything else is a
 * `TypeError` with `code` `ERR_SVC_HAL_TRUST_PROXY`.
 *
 * @example const trustProxy = compileTrust("loopback, 10.0.0.0/8"); hrefFor(req, "/a", { trustProxy })
 * @see https://expressjs.com/en/guide/behind-proxies.html
 */
export function compileTrust(value: TrustProxyOption): TrustProxy {
  return compileKernelTrust(value, "hal");
}
