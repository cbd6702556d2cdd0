/// <reference path="./proxy-addr.d.ts" />
import proxyaddr from "proxy-addr";
import type { TrustHop } from "./forwarded.js";
import { refusedOption } from "./option-error.js";

/**
 * Which peers may set forwarded fields, in the forms Express's `trust proxy` setting takes:
 * `true` (every peer: right only when nothing but the proxy can reach the server), `false` (none),
 * a hop count, addresses and CIDR ranges (a comma-separated string or a list; `loopback`,
 * `linklocal` and `uniquelocal` name their ranges), or a function.
 */
export type TrustOption = boolean | number | string | readonly string[] | TrustHop;

/** Trusts every hop. */
export const TRUST_ALL: TrustHop = () => true;
const TRUST_NONE: TrustHop = () => false;
const ACCEPTED =
  'true, false, a hop count, addresses or CIDR ranges ("loopback, 10.0.0.0/8" or a list of them) or a function (address, hop) => boolean';

/**
 * Compiles a {@link TrustOption} into one trust function, once: the same forms and meaning as
 * Express's `app.set("trust proxy", value)`, with addresses and ranges compiled by `proxy-addr`
 * (Express's own compiler). Anything else is a `TypeError` with `code`
 * `ERR_SVC_<PKG>_TRUST_PROXY` (`pkg` names the package whose option it is).
 *
 * @example const trust = compileTrust("loopback, 10.0.0.0/8"); requestFacts(req, trust).origin
 * @see https://www.rfc-editor.org/rfc/rfc7239#section-8.1
 */
export function compileTrust(value: TrustOption, pkg = "kernel"): TrustHop {
  const refuse = () => refusedOption(pkg, "trustProxy", value, ACCEPTED, `@svc/${pkg}: trustProxy`);
  if (typeof value === "function") return value;
  if (value === true) return TRUST_ALL;
  if (value === false) return TRUST_NONE;
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value) || value < 0) throw refuse();
    // Express's and proxy-addr's meaning: the peer is hop 0, so N trusts the N nearest proxies.
    return (_address, hop) => hop < value;
  }
  const list = typeof value === "string" ? value.split(",").map((v) => v.trim()) : value;
  if (!Array.isArray(list) || !list.every((v) => typeof v === "string")) throw refuse();
  try {
    return proxyaddr.compile(list);
  } catch {
    throw refuse();
  }
}
