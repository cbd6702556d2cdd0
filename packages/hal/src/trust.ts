import type { IncomingMessage } from "node:http";
import proxyaddr from "proxy-addr";
import { optionError } from "./option-error.js";

/** Decides whether the peer at `address`, `hop` proxies away from the server, may be believed. */
export type TrustProxy = (address: string, hop: number) => boolean;

/**
 * Which peers may set forwarded headers, in the forms Express's `trust proxy` setting takes:
 * `true` (every peer: right only when nothing but the proxy can reach the server), `false` (none),
 * a hop count, addresses and CIDR ranges (a comma-separated string or a list; `loopback`,
 * `linklocal` and `uniquelocal` name their ranges), or a function.
 */
export type TrustProxyOption = boolean | number | string | readonly string[] | TrustProxy;

const TRUST_ALL: TrustProxy = () => true;
const TRUST_NONE: TrustProxy = () => false;
const ACCEPTED =
  'true, false, a hop count, addresses or CIDR ranges ("loopback, 10.0.0.0/8" or a list of them) or a function (address, hop) => boolean';

/**
 * Compiles a {@link TrustProxyOption} into one trust function, once: the same forms and meaning as
 * Express's `app.set("trust proxy", value)`, with addresses and ranges compiled by `proxy-addr`
 * (Express's own compiler). Anything else is a `TypeError` with `code` `ERR_SVC_HAL_TRUST_PROXY`.
 *
 * @example const trustProxy = compileTrust("loopback, 10.0.0.0/8"); hrefFor(req, "/a", { trustProxy })
 * @see https://expressjs.com/en/guide/behind-proxies.html
 */
export function compileTrust(value: TrustProxyOption): TrustProxy {
  if (typeof value === "function") return value;
  if (value === true) return TRUST_ALL;
  if (value === false) return TRUST_NONE;
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value) || value < 0)
      throw optionError("@svc/hal", "trustProxy", value, ACCEPTED);
    return (_address, hop) => hop < value;
  }
  const list = typeof value === "string" ? value.split(",").map((v) => v.trim()) : value;
  if (!Array.isArray(list) || !list.every((v) => typeof v === "string")) {
    throw optionError("@svc/hal", "trustProxy", value, ACCEPTED);
  }
  try {
    return proxyaddr.compile(list);
  } catch {
    throw optionError("@svc/hal", "trustProxy", value, ACCEPTED);
  }
}

/** A request as the trust decision reads it: its peer, and Express's app when there is one. */
export interface TrustRequest extends IncomingMessage {
  /** Express's app, read for its `trust proxy fn` setting when no trust is given. */
  app?: { get(setting: string): unknown };
  /** Express's whole request-target, read for an absolute-form authority (RFC 9112 §3.2.2). */
  originalUrl?: string;
}

/**
 * Whether the request's peer (hop 0, the connection's other end) may be believed about the
 * client's URL. With `trust` undefined, the Express adapter's fallback applies: the app's own
 * `trust proxy` setting (`req.app.get("trust proxy fn")`, the function Express compiles it into),
 * and nothing is trusted outside Express.
 */
export function isTrusted(req: TrustRequest, trust: boolean | TrustProxy | undefined): boolean {
  if (typeof trust === "boolean") return trust;
  const address = req.socket?.remoteAddress ?? "";
  if (typeof trust === "function") return Boolean(trust(address, 0));
  const fromApp = typeof req.app?.get === "function" ? req.app.get("trust proxy fn") : undefined;
  return typeof fromApp === "function" ? Boolean((fromApp as TrustProxy)(address, 0)) : false;
}

/**
 * The trust function for the hops before the peer, when the peer is trusted: `true` trusts every
 * hop, a function is itself, and with `trust` undefined the Express app's `trust proxy fn`;
 * undefined when none is known (only the peer is then believed).
 */
export function trustFunction(
  req: TrustRequest,
  trust: boolean | TrustProxy | undefined,
): TrustProxy | undefined {
  if (trust === true) return TRUST_ALL;
  if (typeof trust === "function") return trust;
  if (trust === false) return undefined;
  const fromApp = typeof req.app?.get === "function" ? req.app.get("trust proxy fn") : undefined;
  return typeof fromApp === "function" ? (fromApp as TrustProxy) : undefined;
}
