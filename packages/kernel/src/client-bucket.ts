import { isIP, isIPv4 } from "./ip.js";

/** A port after an IPv4 address, or after a bracketed IPv6 address. */
const PORT = /^:[0-9]{1,5}$/;

/**
 * The IP address `ip` names in node:net's strict syntax, or `undefined`. A zone id
 * (`fe80::1%eth0`) names the same host whatever the interface. The RFC 7239 §6 node forms are
 * read too (an address with a port, the IPv6 one in brackets: `192.0.2.43:47011`,
 * `[2001:db8:cafe::17]:4711`): some proxies append the client to `X-Forwarded-For` that way.
 *
 * @example
 * ipAddressOf("[2001:db8::17]:4711"); // "2001:db8::17"
 * ipAddressOf("1.2.3"); // undefined (an inet_aton shorthand, not an address)
 * @see https://www.rfc-editor.org/rfc/rfc7239#section-6
 */
export function ipAddressOf(ip: string): string | undefined {
  if (typeof ip !== "string") return undefined;
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

/** The 16 bytes of an IPv6 address node:net has accepted (RFC 4291 §2.2 text forms). */
function ipv6Bytes(address: string): number[] {
  const groups = (part: string): number[] => {
    if (part === "") return [];
    const out: number[] = [];
    for (const group of part.split(":")) {
      if (group.includes(".")) {
        const [a, b, c, d] = group.split(".").map(Number) as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      } else out.push(Number.parseInt(group, 16));
    }
    return out;
  };
  const gap = address.indexOf("::");
  let words: number[];
  if (gap === -1) words = groups(address);
  else {
    const head = groups(address.slice(0, gap));
    const tail = groups(address.slice(gap + 2));
    words = [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  }
  return words.flatMap((w) => [w >> 8, w & 0xff]);
}

/** RFC 5952 §4: lower case, no leading zeros, the longest run of two or more zero groups as `::` (the first of equals). */
function formatIPv6(bytes: readonly number[]): string {
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push(((bytes[i] as number) << 8) | (bytes[i + 1] as number));
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let end = i;
    while (end < 8 && words[end] === 0) end++;
    if (end - i > bestLength) {
      best = i;
      bestLength = end - i;
    }
    i = end;
  }
  const hex = (from: number, to: number) =>
    words
      .slice(from, to)
      .map((w) => w.toString(16))
      .join(":");
  return best === -1 ? hex(0, 8) : `${hex(0, best)}::${hex(best + bestLength, 8)}`;
}

function startsWith(bytes: readonly number[], prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

/** `::ffff:0:0/96` (RFC 4291 §2.5.5.2), `::ffff:0:0:0/96` (RFC 2765 §2.1), `64:ff9b::/96` (RFC 6052 §2.1). */
const MAPPED = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
const TRANSLATED = [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0];
const NAT64 = [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0];

/**
 * The IPv4 client an IPv6 address carries, or `undefined`: the client is that IPv4 host, and
 * whatever bits around the IPv4 address it can choose must not give it another bucket.
 * - RFC 4291 §2.5.5.2: an IPv4-mapped address (`::ffff:a.b.c.d`) is the IPv4 node itself.
 * - RFC 6052 §2.1/§2.2: under the Well-Known Prefix `64:ff9b::/96` a translator (NAT64, SIIT-DC in
 *   RFC 7755 §3) shows each IPv4 client in the last 32 bits. Grouped by /64, every IPv4 client on
 *   the internet would share one bucket.
 * - RFC 2765 §2.1: an IPv4-translated address (`::ffff:0:a.b.c.d`) is how a stateless translator
 *   shows an IPv4 node; grouped by /64, it shared `::/64` with every other one.
 * - RFC 3056 §2: a 6to4 site's prefix is `2002:V4ADDR::/48`; the site numbers its own 2^16 subnets,
 *   so grouped by /64 one IPv4 host had 65,536 buckets.
 * - RFC 4380 §4: a Teredo address (`2001:0000::/32`) carries the client's external IPv4 address in
 *   its last 32 bits, every bit inverted; the client picks its server and flags, its NAT the port.
 */
function embeddedIPv4(bytes: readonly number[]): string | undefined {
  if (startsWith(bytes, MAPPED) || startsWith(bytes, TRANSLATED) || startsWith(bytes, NAT64)) {
    return bytes.slice(12).join(".");
  }
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return bytes.slice(2, 6).join(".");
  if (startsWith(bytes, [0x20, 0x01, 0, 0]))
    return bytes
      .slice(12)
      .map((b) => b ^ 0xff)
      .join(".");
  return undefined;
}

/**
 * The bucket an IP address counts in, wherever a budget is kept per client (rate limits, failed
 * logins): IPv4 as is; an IPv6 address that carries an IPv4 client as that IPv4 address
 * (IPv4-mapped, IPv4-translated, the translation Well-Known Prefix, 6to4, Teredo) whatever
 * `ipv6Subnet`; any other IPv6 address as its network of `ipv6Subnet` bits, in RFC 5952 form
 * (`2001:db8:1:2::/64`); `false` (or 128) keeps the whole address. `undefined` for a value that is
 * not an IP address (a zone id and the RFC 7239 §6 `address:port` forms are read).
 *
 * Why group IPv6: an end site usually receives a /64 or shorter (RFC 6177 §2), so one client can
 * rotate through 2^64 addresses and would otherwise get a fresh budget with each.
 *
 * @example
 * ipBucket("2001:db8::1"); // "2001:db8::/64"
 * ipBucket("::ffff:10.0.0.1"); // "10.0.0.1"
 * ipBucket("2002:c000:201:7::1"); // "192.0.2.1"
 * @see https://www.rfc-editor.org/rfc/rfc6177#section-2
 * @see https://www.rfc-editor.org/rfc/rfc4291#section-2.5.5.2
 * @see https://www.rfc-editor.org/rfc/rfc6052#section-2.1
 * @see https://www.rfc-editor.org/rfc/rfc3056#section-2
 * @see https://www.rfc-editor.org/rfc/rfc4380#section-4
 * @see https://www.rfc-editor.org/rfc/rfc5952#section-4
 */
export function ipBucket(ip: string, ipv6Subnet: number | false = 64): string | undefined {
  const host = ipAddressOf(ip);
  if (host === undefined) return undefined;
  if (isIPv4(host)) return host;
  const bytes = ipv6Bytes(host);
  const v4 = embeddedIPv4(bytes);
  if (v4 !== undefined) return v4;
  if (ipv6Subnet === false || ipv6Subnet >= 128) return formatIPv6(bytes);
  for (let bit = Math.max(0, ipv6Subnet); bit < 128; bit++) {
    const i = bit >> 3;
    bytes[i] = (bytes[i] as number) & ~(0x80 >> (bit & 7));
  }
  return `${formatIPv6(bytes)}/${ipv6Subnet}`;
}
