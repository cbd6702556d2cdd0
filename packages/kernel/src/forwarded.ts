import { isIP } from "./ip.js";
import { refusedOption } from "./option-error.js";

/**
 * Whether a proxy at `address`, `hop` steps before this server (0: the peer itself), may be
 * believed: the shape of Express's compiled `trust proxy` setting (`app.get("trust proxy fn")`).
 */
export type TrustHop = (address: string, hop: number) => boolean;

/**
 * How many hops before the trusted peer the chain vouches for: the peer's client (the last
 * `X-Forwarded-For` address), then the one before, while `trust` trusts each at its hop (as
 * proxy-addr walks the list). 0 when only the peer is trusted.
 *
 * @example trustedHops("203.0.113.9, 198.51.100.7", (a) => a === "198.51.100.7") // 1
 */
export function trustedHops(forwardedFor: string | undefined, trust: TrustHop | undefined): number {
  if (trust === undefined || forwardedFor === undefined) return 0;
  const addresses = forwardedFor.split(",");
  let hops = 0;
  for (let i = addresses.length - 1; i >= 0; i--) {
    const address = addresses[i]?.trim() ?? "";
    if (isIP(address) === 0 || !trust(address, hops + 1)) break;
    hops++;
  }
  return hops;
}

/**
 * The value of a de facto `X-Forwarded-Host` / `-Proto` / `-Prefix` list that the trusted chain
 * vouches for, once the peer itself is trusted. A proxy that adds to such a header appends, as
 * every proxy does to `X-Forwarded-For` (Apache's mod_proxy does to X-Forwarded-Host), so a value
 * the client sent itself comes first: the last value is the trusted peer's, and one before it only
 * counts for a hop {@link trustedHops} vouches for. A proxy that replaces the header leaves one
 * value, which is read. `hops` is called only for a list. RFC 7239 §8.1: a forwarded value is only
 * as trustworthy as the proxy that set it.
 *
 * @example trustedListValue("evil.example, shop.example", () => 0) // "shop.example"
 * @see https://www.rfc-editor.org/rfc/rfc7239#section-8.1
 */
export function trustedListValue(value: string | undefined, hops: () => number): string | undefined {
  if (value === undefined) return undefined;
  const list = value.split(",");
  const chosen = list.length === 1 ? list[0] : list[Math.max(0, list.length - 1 - hops())];
  const trimmed = chosen?.trim();
  return trimmed ? trimmed : undefined;
}

/**
 * Which family of forwarded fields the proxies in front set, and so the only one read:
 * `"x-forwarded"` (the de facto `X-Forwarded-For`, `-Proto`, `-Host`, `-Prefix`, which Express and
 * Fastify read) or `"forwarded"` (RFC 7239 `Forwarded`: `for`, `proto`, `host`). Never both: a
 * proxy that sets one family passes the other through from the client, so reading both would let
 * the client fill in what the proxy left out.
 */
export type ForwardedHeaders = "x-forwarded" | "forwarded";

/**
 * A `forwardedHeaders` option checked once: `"x-forwarded"` when not given (as Express and Fastify
 * read), else `"x-forwarded"` or `"forwarded"`; anything else is a `TypeError` with `code`
 * `ERR_SVC_<PKG>_FORWARDED_HEADERS`.
 *
 * @example const family = checkForwardedHeaders(options.forwardedHeaders, "hal");
 * @see https://www.rfc-editor.org/rfc/rfc7239#section-8.1
 * @internal
 */
export function checkForwardedHeaders(value: unknown, pkg = "kernel"): ForwardedHeaders {
  if (value === undefined || value === "x-forwarded") return "x-forwarded";
  if (value === "forwarded") return value;
  throw refusedOption(
    pkg,
    "forwardedHeaders",
    value,
    '"x-forwarded" (X-Forwarded-For, -Proto, -Host, -Prefix) or "forwarded" (RFC 7239 Forwarded)',
    `@svc/${pkg}: forwardedHeaders`,
  );
}
