import { isIPv6 } from "./ip.js";

/** A checked `uri-host [ ":" port ]`: the host lower-cased, the port when one was given. */
export interface Authority {
  readonly host: string;
  readonly port: number | undefined;
}

// WHATWG URL "ends in a number": a host whose last label is digits or 0x-hex is an IPv4 address.
const ENDS_IN_NUMBER = /(?:^|\.)(?:\d+|0x[0-9a-f]*)\.?$/i;
// RFC 3986 §3.2.2 IPv4address: four dec-octets, 0 to 255, without leading zeros.
const DEC_OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const DOTTED_DECIMAL = new RegExp(`^${DEC_OCTET}(?:\\.${DEC_OCTET}){3}$`);

// RFC 1035 §2.3.1 / RFC 1123 §2.1: letters, digits and hyphens, 1 to 63 characters a label.
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
// RFC 1035 §2.3.4: 255 octets on the wire, 253 characters as text without the root's dot.
const MAX_NAME = 253;
// The longest valid authority: a bracketed IPv6 literal or a 253-character name with its root
// dot, then ":65535". Longer input is refused before any other work is done on it.
const MAX_AUTHORITY = MAX_NAME + 1 + 6;

// One-entry memo: a client (or the proxy in front) sends the same Host on request after request,
// so the last value checked is kept with its frozen result and a repeat costs a string compare.
let lastValue: string | undefined;
let lastAuthority: Authority | undefined;

/**
 * Splits and checks a `Host` (or forwarded host) value: RFC 9110 §7.2 `uri-host [ ":" port ]`,
 * where RFC 3986 §3.2.2 `host` is an IP-literal (IPv6 only here; RFC 3986 IPvFuture and
 * RFC 6874 zone identifiers are refused), a dotted-decimal IPv4 address, or a reg-name held to DNS
 * syntax, labels of at most 63 characters and a name of at most 253 (RFC 1035 §2.3.4), whose last
 * label is no number (`2130706433`, `127.1`, `0x7f.0.0.1`, `0177.0.0.1` are other spellings of
 * addresses, read differently by different software, and refused); and §3.2.3 `port` is 1 to
 * 65535 or empty (`api.example:`, read as no port).
 * Returns the host in its canonical form (lower case, without a trailing root dot, an IPv6 literal
 * as RFC 5952 writes it) and the port (a frozen object: the same one for a repeated value), or
 * undefined when the value is not a valid authority.
 *
 * @example parseHost("API.example.com.:8443") // { host: "api.example.com", port: 8443 }
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-7.2
 */
export function parseHost(value: string): Authority | undefined {
  if (value.length === 0 || value.length > MAX_AUTHORITY) return undefined;
  if (value === lastValue) return lastAuthority;
  const authority = checkAuthority(value);
  lastValue = value;
  lastAuthority = authority;
  return authority;
}

function checkAuthority(value: string): Authority | undefined {
  let host: string;
  let rest: string;
  if (value.startsWith("[")) {
    const close = value.indexOf("]");
    if (close === -1) return undefined;
    host = value.slice(0, close + 1);
    rest = value.slice(close + 1);
    const address = host.slice(1, -1);
    // Hex digits, colons and dots only: no RFC 6874 zone ("%25eth0"), which isIPv6 would take.
    if (!/^[0-9A-Fa-f:.]+$/.test(address) || !isIPv6(address)) return undefined;
    // RFC 5952 §4: one text form per address (`[2001:DB8:0::1]` → `[2001:db8::1]`), the one
    // links are written in and lists compare.
    host = new URL(`http://${host}`).hostname;
  } else {
    const colon = value.lastIndexOf(":");
    host = colon === -1 ? value : value.slice(0, colon);
    rest = colon === -1 ? "" : value.slice(colon);
    // RFC 1034 §3.1: `api.example.com.` is the absolute spelling of `api.example.com`, one name:
    // kept and written without the root's dot.
    if (host.endsWith(".")) host = host.slice(0, -1);
    if (host.length === 0 || host.length > MAX_NAME) return undefined;
    for (const label of host.split(".")) if (!LABEL.test(label)) return undefined;
    // A name whose last label is a number is an IPv4 address to a browser (WHATWG URL "ends in a
    // number"), which also reads `2130706433`, `127.1`, `0x7f.1` and `0177.0.0.1` as addresses,
    // the last as 127.0.0.1 where other parsers (inet_aton or not) read 177.0.0.1. Only RFC 3986
    // §3.2.2's dotted-decimal IPv4address names one address for every reader; other forms are
    // refused rather than matched against an allowlist, or echoed into links, in a reading the
    // client's software may not share.
    if (ENDS_IN_NUMBER.test(host) && !DOTTED_DECIMAL.test(host)) return undefined;
  }
  let port: number | undefined;
  // RFC 3986 §3.2.3: `port = *DIGIT`, so "api.example:" is a valid authority, and "URI producers
  // and normalizers should omit the port component and its ':' delimiter if port is empty".
  // RFC 9110 §7.2 takes `Host = uri-host [ ":" port ]` from it: no port, like no colon at all.
  if (rest !== "" && rest !== ":") {
    if (!/^:\d{1,5}$/.test(rest)) return undefined;
    port = Number(rest.slice(1));
    if (port < 1 || port > 65_535) return undefined;
  }
  return Object.freeze({ host: host.toLowerCase(), port });
}
