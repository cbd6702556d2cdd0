import { isIPv4, isIPv6 } from "node:net";

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * The budget an IP address counts in: IPv4 as is, IPv4-mapped IPv6 (`::ffff:192.0.2.1`) as the
 * IPv4 address it carries, any other IPv6 address as its /64 network (`2001:db8:0:1::/64`).
 * `undefined` for anything that is not an IP address.
 *
 * An end site usually gets a /64 or more (RFC 6177 §2), so one client can rotate through 2^64
 * addresses: a budget per address would be a fresh budget per request.
 *
 * @example
 * clientBucket("2001:db8::7"); // "2001:db8:0:0::/64"
 * @see https://www.rfc-editor.org/rfc/rfc6177#section-2
 * @see https://www.rfc-editor.org/rfc/rfc4291#section-2.5.5.2
 */
export function clientBucket(address: string | undefined): string | undefined {
  if (typeof address !== "string") return undefined;
  // A zone id (`fe80::1%eth0`) names the same host whatever the interface.
  const bare = address.includes("%") ? address.slice(0, address.indexOf("%")) : address;
  if (isIPv4(bare)) return bare;
  if (!isIPv6(bare)) return undefined;
  const mapped = MAPPED_V4.exec(bare);
  if (mapped?.[1] !== undefined && isIPv4(mapped[1])) return mapped[1];
  // RFC 4291 §2.2: "::" stands for one or more groups of zeros; a trailing dotted IPv4 part
  // fills the last two groups. Only the first four groups are kept.
  const split = (s: string) => (s === "" ? [] : s.split(":"));
  const width = (groups: string[]) => groups.reduce((n, g) => n + (g.includes(".") ? 2 : 1), 0);
  const gap = bare.indexOf("::");
  let groups: string[];
  if (gap === -1) groups = split(bare);
  else {
    const head = split(bare.slice(0, gap));
    const tail = split(bare.slice(gap + 2));
    groups = [...head, ...Array<string>(8 - width(head) - width(tail)).fill("0"), ...tail];
  }
  const network = groups.slice(0, 4).map((g) => Number.parseInt(g, 16).toString(16));
  return `${network.join(":")}::/64`;
}
