/**
 * IP address literals, read as Node.js's `net.isIP` reads them, without `node:net`: the kernel's
 * main and Fetch entries run where there is no Node.js (workerd, Deno, browsers). Each check is
 * one pass over bounded input.
 */

/** Decimal 0..255 without a leading zero ("0", "10", "255"; not "01" or "256"). */
function isOctet(part: string): boolean {
  const length = part.length;
  if (length === 0 || length > 3) return false;
  for (let i = 0; i < length; i++) {
    const code = part.charCodeAt(i);
    if (code < 48 || code > 57) return false;
  }
  if (length > 1 && part.charCodeAt(0) === 48) return false;
  return Number(part) <= 255;
}

/**
 * Whether `value` is an IPv4 address in dotted-decimal form, four octets as RFC 3986's
 * `IPv4address` writes them (no leading zeros, no shorter forms).
 *
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-3.2.2
 * @internal
 */
export function isIPv4(value: string): boolean {
  if (value.length > 15) return false;
  const parts = value.split(".");
  return parts.length === 4 && parts.every(isOctet);
}

/** One to four hexadecimal digits. */
function isHexGroup(group: string): boolean {
  const length = group.length;
  if (length === 0 || length > 4) return false;
  for (let i = 0; i < length; i++) {
    const code = group.charCodeAt(i) | 0x20;
    if (!((code >= 48 && code <= 57) || (code >= 97 && code <= 102))) return false;
  }
  return true;
}

/** Zone identifiers as Node.js takes them after `%`: letters, digits, `-`, `.`, `:`. */
const ZONE = /^[0-9A-Za-z.:-]+$/;

/**
 * Whether `groups` (the colon-separated parts on one side of `::`, or all of them) are hex
 * groups, the last one possibly an IPv4 address (which counts as two). The number of groups, or
 * -1.
 */
function countGroups(groups: string[], last: boolean): number {
  let count = 0;
  for (let i = 0; i < groups.length; i++) {
    const group = groups[i] as string;
    if (last && i === groups.length - 1 && group.includes(".")) {
      if (!isIPv4(group)) return -1;
      count += 2;
    } else if (isHexGroup(group)) count++;
    else return -1;
  }
  return count;
}

/**
 * Whether `value` is an IPv6 address (RFC 4291 §2.2 text forms: eight groups, one `::`, a
 * trailing IPv4 address), with an optional zone after `%` as Node.js's `net.isIPv6` takes it.
 *
 * @see https://www.rfc-editor.org/rfc/rfc4291#section-2.2
 * @internal
 */
export function isIPv6(value: string): boolean {
  // The longest address is 45 characters; a zone may add a name of an interface.
  if (value.length > 45 + 64) return false;
  const percent = value.indexOf("%");
  let address = value;
  if (percent !== -1) {
    if (!ZONE.test(value.slice(percent + 1))) return false;
    address = value.slice(0, percent);
  }
  if (address.length < 2 || address.length > 45) return false;
  const gap = address.indexOf("::");
  if (gap === -1) return countGroups(address.split(":"), true) === 8;
  if (address.indexOf("::", gap + 1) !== -1) return false;
  const head = address.slice(0, gap);
  const tail = address.slice(gap + 2);
  const before = head === "" ? 0 : countGroups(head.split(":"), false);
  const after = tail === "" ? 0 : countGroups(tail.split(":"), true);
  // `::` stands for at least one group of zeros.
  return before !== -1 && after !== -1 && before + after <= 7;
}

/**
 * 4 for an IPv4 address, 6 for an IPv6 address, 0 for anything else, as `net.isIP` answers.
 *
 * @internal
 */
export function isIP(value: string): 0 | 4 | 6 {
  if (isIPv4(value)) return 4;
  if (isIPv6(value)) return 6;
  return 0;
}
