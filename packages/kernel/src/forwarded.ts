import { isIP } from "node:net";

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
