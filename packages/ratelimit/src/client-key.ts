import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { optionError } from "./option-error.js";

/**
 * The bucket an IP address counts in: IPv4 as is, IPv4-mapped IPv6 (`::ffff:192.0.2.1`) as the
 * IPv4 address it carries, and IPv6 as its network of `ipv6Subnet` bits (`2001:db8:1:2::/64`).
 * Returns `undefined` for a value that is not an IP address.
 *
 * Why group IPv6: an end site usually receives a /64 or shorter (RFC 6177 §2 recommends more than
 * a single /64 per site), so one client can rotate through 2^64 addresses and would otherwise get a
 * fresh quota with each.
 *
 * @example
 * ipBucket("2001:db8::1", 64); // "2001:db8::/64"
 * ipBucket("::ffff:10.0.0.1", 64); // "10.0.0.1"
 * @see https://www.rfc-editor.org/rfc/rfc6177#section-2
 * @see https://www.rfc-editor.org/rfc/rfc4291#section-2.5.5.2
 */
export function ipBucket(ip: string, ipv6Subnet: number | false = 64): string | undefined {
  // Zone ids (`fe80::1%eth0`) name the same host whatever the interface.
  const bare = ip.includes("%") ? ip.slice(0, ip.indexOf("%")) : ip;
  // node:net's strict syntax: ipaddr.js alone also takes inet_aton shorthands such as "1.2.3".
  if (isIP(bare) === 0) return undefined;
  // RFC 4291 §2.5.5.2: an IPv4-mapped IPv6 address is the IPv4 host itself.
  const addr = ipaddr.process(bare);
  if (addr.kind() === "ipv4") return addr.toString();
  if (ipv6Subnet === false || ipv6Subnet >= 128) return addr.toString();
  const bytes = addr.toByteArray();
  for (let bit = ipv6Subnet; bit < 128; bit++) {
    const i = bit >> 3;
    bytes[i] = (bytes[i] as number) & ~(0x80 >> (bit & 7));
  }
  return `${ipaddr.fromByteArray(bytes).toString()}/${ipv6Subnet}`;
}

/**
 * A parsed allowlist: single addresses and CIDR ranges, IPv4 and IPv6.
 * @example
 * const internal: IpMatcher = ipMatcher(["10.0.0.0/8"]);
 * @see https://www.rfc-editor.org/rfc/rfc4632#section-3.1
 */
export type IpMatcher = (ip: string) => boolean;

/**
 * Compiles IP addresses and CIDR ranges (`10.0.0.0/8`, `2001:db8::/32`, `127.0.0.1`) into a
 * matcher. Throws a `TypeError` for an entry that is neither.
 *
 * @example
 * const internal = ipMatcher(["10.0.0.0/8", "::1"]);
 * internal("10.1.2.3"); // true
 * @see https://www.rfc-editor.org/rfc/rfc4632#section-3.1
 */
export function ipMatcher(entries: readonly string[]): IpMatcher {
  const ranges = entries.map((entry) => {
    const slash = entry.indexOf("/");
    if (slash > 0 && isIP(entry.slice(0, slash)) !== 0 && ipaddr.isValidCIDR(entry))
      return ipaddr.parseCIDR(entry);
    if (isIP(entry) !== 0) {
      const addr = ipaddr.process(entry);
      return [addr, addr.kind() === "ipv4" ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number];
    }
    throw optionError(
      "rate limit",
      "allowlist",
      `allowlist entry ${JSON.stringify(entry)} is not an IP address or CIDR`,
    );
  });
  return (ip) => {
    const bare = ip.includes("%") ? ip.slice(0, ip.indexOf("%")) : ip;
    if (isIP(bare) === 0) return false;
    const addr = ipaddr.process(bare);
    return ranges.some(
      ([range, bits]) => range.kind() === addr.kind() && addr.match(range as typeof addr, bits),
    );
  };
}
