import { parseHost } from "@svc/kernel";
import { optionError } from "./option-error.js";

// WHATWG URL "ends in a number": a host whose last label is digits or 0x-hex is an IPv4 address.
const ENDS_IN_NUMBER = /(?:^|\.)(?:\d+|0x[0-9a-f]*)\.?$/i;

/**
 * The form two hosts are compared in: without the root's trailing dot (`api.example.com.` is the
 * fully qualified spelling of `api.example.com`, RFC 1034 §3.1), and IP addresses in their
 * canonical text (`[2001:db8:0::1]` → `[2001:db8::1]`, as the WHATWG URL host parser writes them);
 * undefined for a host ending in a number that is no IPv4 address. Names are already lower case.
 */
function comparable(host: string): string | undefined {
  if (host.startsWith("[") || ENDS_IN_NUMBER.test(host)) {
    try {
      return new URL(`http://${host}`).hostname;
    } catch {
      return undefined;
    }
  }
  return host.endsWith(".") ? host.slice(0, -1) : host;
}

/** The hosts a service answers for, compiled once by {@link compileHostList}. */
export interface HostList {
  /** Whether a host (as {@link parseHost} returns it) is one the service answers for. */
  matches(host: string): boolean;
}

const ACCEPTED =
  '"*" or a non-empty list of host names (api.example.com), domains with their subdomains (.example.com), IPv4 addresses or [IPv6] literals, without a port';

/**
 * Compiles an allowlist of hosts: exact names, `.example.com` for a domain and every subdomain,
 * IPv4 addresses and `[IPv6]` literals, without ports; `"*"` answers for any host (undefined).
 * Hosts compare case-insensitively (RFC 9110 §4.2.3) and without a trailing root dot. Anything
 * else is a `TypeError` with `code` `ERR_SVC_HAL_ALLOWED_HOSTS`.
 */
export function compileHostList(hosts: readonly string[] | "*"): HostList | undefined {
  if (hosts === "*") return undefined;
  const refuse = () => optionError("@svc/hal", "allowedHosts", hosts, ACCEPTED);
  if (!Array.isArray(hosts) || hosts.length === 0) throw refuse();
  const exact = new Set<string>();
  const domains: string[] = [];
  for (const entry of hosts as readonly unknown[]) {
    if (typeof entry !== "string") throw refuse();
    const domain = entry.startsWith(".");
    // "api.example.com:" is a valid authority with an empty port (RFC 3986 §3.2.3), but in a
    // configured list a trailing colon is a port left out by mistake: refused like a port.
    if (entry.endsWith(":")) throw refuse();
    const authority = parseHost(domain ? entry.slice(1) : entry);
    if (authority === undefined || authority.port !== undefined) throw refuse();
    const host = comparable(authority.host);
    if (host === undefined) throw refuse();
    // A domain's subdomains are names: an address has none.
    if (domain && (host.startsWith("[") || ENDS_IN_NUMBER.test(host))) throw refuse();
    exact.add(host);
    if (domain) domains.push(`.${host}`);
  }
  return {
    matches(host: string): boolean {
      const name = comparable(host);
      if (name === undefined) return false;
      if (exact.has(name)) return true;
      for (const suffix of domains) if (name.endsWith(suffix)) return true;
      return false;
    },
  };
}
