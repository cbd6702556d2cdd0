import { ipAddressOf } from "@svc/kernel";
import { isIP } from "@svc/kernel/internal";
import ipaddr from "ipaddr.js";
import { optionError } from "./option-error.js";

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** `::ffff:0:0/96`, the IPv4-mapped addresses (RFC 4291 §2.5.5.2). */
const MAPPED = ipaddr.IPv6.parse("::ffff:0:0");

/**
 * An allowlist range, plus the IPv4 hosts it holds as IPv4-mapped addresses. A client's
 * `::ffff:192.0.2.1` is matched as the IPv4 host `192.0.2.1` (RFC 4291 §2.5.5.2: the mapped form
 * "is used to represent the addresses of IPv4 nodes as IPv6 addresses"), so a range written in
 * that form (`::ffff:10.0.0.0/104`, as a dual-stack server reports IPv4 clients) is its IPv4
 * range (`10.0.0.0/8`); a shorter IPv6 range that holds all of `::ffff:0:0/96` holds every IPv4
 * host.
 */
function withMappedHosts([range, bits]: Range): Range[] {
  if (range.kind() === "ipv4") return [[range, bits]];
  const v6 = range as ipaddr.IPv6;
  if (bits >= 96 && v6.isIPv4MappedAddress()) return [[v6.toIPv4Address(), bits - 96]];
  if (bits < 96 && MAPPED.match(v6, bits))
    return [
      [v6, bits],
      [ipaddr.IPv4.parse("0.0.0.0"), 0],
    ];
  return [[range, bits]];
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
  const ranges = entries.flatMap((entry): Range[] => {
    const slash = entry.indexOf("/");
    if (slash > 0 && isIP(entry.slice(0, slash)) !== 0 && ipaddr.isValidCIDR(entry))
      return withMappedHosts(ipaddr.parseCIDR(entry));
    if (isIP(entry) !== 0) {
      const addr = ipaddr.process(entry);
      return [[addr, addr.kind() === "ipv4" ? 32 : 128]];
    }
    throw optionError(
      "rate limit",
      "allowlist",
      `allowlist entry ${JSON.stringify(entry)} is not an IP address or CIDR`,
    );
  });
  return (ip) => {
    const bare = ipAddressOf(ip);
    if (bare === undefined) return false;
    const addr = ipaddr.process(bare);
    return ranges.some(
      ([range, bits]) => range.kind() === addr.kind() && addr.match(range as typeof addr, bits),
    );
  };
}
