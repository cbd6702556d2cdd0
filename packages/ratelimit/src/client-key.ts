import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { optionError } from "./option-error.js";

/** A port after an IPv4 address, or after a bracketed IPv6 address. */
const PORT = /^:[0-9]{1,5}$/;

/**
 * The IP address of `ip` in node:net's strict syntax (ipaddr.js alone also takes inet_aton
 * shorthands such as "1.2.3"), or `undefined`. A zone id (`fe80::1%eth0`) names the same host
 * whatever the interface. RFC 7239 §6 forms are read too: a node is an address with an
 * optional port, the IPv6 one in brackets ("192.0.2.43:47011", "[2001:db8:cafe::17]:4711"),
 * and some proxies append the client to X-Forwarded-For that way, so `req.ip` carries it.
 */
function hostOf(ip: string): string | undefined {
  let host = ip;
  let family = 0;
  if (ip.startsWith("[")) {
    const end = ip.indexOf("]");
    if (end === -1 || (end < ip.length - 1 && !PORT.test(ip.slice(end + 1)))) return undefined;
    host = ip.slice(1, end);
    family = 6;
  } else {
    const colon = ip.indexOf(":");
    if (colon > 0 && colon === ip.lastIndexOf(":") && PORT.test(ip.slice(colon))) {
      host = ip.slice(0, colon);
      family = 4;
    }
  }
  if (host.includes("%")) host = host.slice(0, host.indexOf("%"));
  const kind = isIP(host);
  return kind !== 0 && (family === 0 || kind === family) ? host : undefined;
}

/** `64:ff9b::/96`, the IPv4/IPv6 translation Well-Known Prefix (RFC 6052 §2.1). */
const WELL_KNOWN_NAT64 = ipaddr.IPv6.parse("64:ff9b::");
/** `::ffff:0:0:0/96`, the IPv4-translated addresses (RFC 2765 §2.1). */
const TRANSLATED = ipaddr.IPv6.parse("::ffff:0:0:0");
/** `2002::/16`, the 6to4 prefix (RFC 3056 §2). */
const SIX_TO_FOUR = ipaddr.IPv6.parse("2002::");
/** `2001:0000::/32`, the Global Teredo IPv6 Service Prefix (RFC 4380 §2.6). */
const TEREDO = ipaddr.IPv6.parse("2001::");

/** Four bytes as a dotted IPv4 address. */
function ipv4Of(bytes: number[]): string {
  return bytes.join(".");
}

/**
 * The IPv4 client an IPv6 address carries, or `undefined`: the client is that IPv4 host, and
 * whatever bits around the IPv4 address it can choose must not give it another bucket.
 * - RFC 6052 §2.1/§2.2: under the Well-Known Prefix `64:ff9b::/96` a translator (NAT64, SIIT-DC in
 *   RFC 7755 §3) shows each IPv4 client with its address in the last 32 bits. Grouped by /64, every
 *   IPv4 client on the internet would share one bucket.
 * - RFC 2765 §2.1: an "IPv4-translated address" (`0::ffff:0:a.b.c.d`) is how a stateless translator
 *   (SIIT, RFC 6145 since) shows an IPv4 node; grouped by /64, it shared `::/64` with every other one.
 * - RFC 3056 §2: a 6to4 site's prefix is `2002:V4ADDR::/48`, V4ADDR being the site's IPv4 address
 *   (bits 16 to 47). The site numbers its own 2^16 subnets, so grouped by /64 one IPv4 host had
 *   65,536 buckets.
 * - RFC 4380 §4: a Teredo address is `2001:0000:<server IPv4>:<flags>:<port>:<client IPv4>`, the
 *   "external IP address of the Teredo client" in the last 32 bits, "obfuscated" by inverting every
 *   bit (XOR 0xffffffff). The client picks its server and the flags, and its NAT the port, so
 *   grouped by /64 one client had a bucket per server, while every client of one server shared one.
 */
function embeddedIPv4(addr: ipaddr.IPv6): string | undefined {
  const bytes = addr.toByteArray();
  if (WELL_KNOWN_NAT64.match(addr, 96) || TRANSLATED.match(addr, 96)) return ipv4Of(bytes.slice(12));
  if (SIX_TO_FOUR.match(addr, 16)) return ipv4Of(bytes.slice(2, 6));
  if (TEREDO.match(addr, 32)) return ipv4Of(bytes.slice(12).map((b) => b ^ 0xff));
  return undefined;
}

/**
 * The bucket an IP address counts in: IPv4 as is; an IPv6 address that carries an IPv4 client as
 * that IPv4 address: IPv4-mapped (`::ffff:192.0.2.1`), IPv4-translated (`::ffff:0:192.0.2.1`), the
 * translation Well-Known Prefix (`64:ff9b::192.0.2.1`), 6to4 (`2002:c000:201::/48`) and Teredo
 * (`2001:0:4136:e378:8000:63bf:3fff:fdd2` is 192.0.2.45), whatever `ipv6Subnet`; and other IPv6
 * as its network of `ipv6Subnet` bits (`2001:db8:1:2::/64`).
 * Returns `undefined` for a value that is not an IP address.
 *
 * Why group IPv6: an end site usually receives a /64 or shorter (RFC 6177 §2 recommends more than
 * a single /64 per site), so one client can rotate through 2^64 addresses and would otherwise get a
 * fresh quota with each.
 *
 * @example
 * ipBucket("2001:db8::1", 64); // "2001:db8::/64"
 * ipBucket("::ffff:10.0.0.1", 64); // "10.0.0.1"
 * ipBucket("2002:c000:201:7::1", 64); // "192.0.2.1"
 * @see https://www.rfc-editor.org/rfc/rfc6177#section-2
 * @see https://www.rfc-editor.org/rfc/rfc4291#section-2.5.5.2
 * @see https://www.rfc-editor.org/rfc/rfc2765#section-2.1
 * @see https://www.rfc-editor.org/rfc/rfc6052#section-2.1
 * @see https://www.rfc-editor.org/rfc/rfc3056#section-2
 * @see https://www.rfc-editor.org/rfc/rfc4380#section-4
 */
export function ipBucket(ip: string, ipv6Subnet: number | false = 64): string | undefined {
  const bare = hostOf(ip);
  if (bare === undefined) return undefined;
  // RFC 4291 §2.5.5.2: an IPv4-mapped IPv6 address is the IPv4 host itself.
  const addr = ipaddr.process(bare);
  if (addr.kind() === "ipv4") return addr.toString();
  const v4 = embeddedIPv4(addr as ipaddr.IPv6);
  if (v4 !== undefined) return v4;
  if (ipv6Subnet === false || ipv6Subnet >= 128) return addr.toString();
  const bytes = addr.toByteArray();
  for (let bit = ipv6Subnet; bit < 128; bit++) {
    const i = bit >> 3;
    bytes[i] = (bytes[i] as number) & ~(0x80 >> (bit & 7));
  }
  return `${ipaddr.fromByteArray(bytes).toString()}/${ipv6Subnet}`;
}

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
    const bare = hostOf(ip);
    if (bare === undefined) return false;
    const addr = ipaddr.process(bare);
    return ranges.some(
      ([range, bits]) => range.kind() === addr.kind() && addr.match(range as typeof addr, bits),
    );
  };
}
