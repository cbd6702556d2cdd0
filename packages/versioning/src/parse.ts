import { parseMediaRanges, parseMediaType } from "@svc/kernel";

// One spelling per version: no leading zero. RFC 3986 §6.2: `/v01/x` and `/v1/x` are different
// URIs that no normalisation makes equal, and RFC 6838 §4.2 compares media type names as strings,
// so `vnd.svc.v01+json` is not `vnd.svc.v1+json`; read as version 1, every version had many
// URLs (duplicate cache entries, intermediaries' path rules bypassed by another spelling) and a
// client asking for `v01` got a response labelled with a type it did not list.
const NUMBER = /^(?:0|[1-9]\d{0,8})$/;

/**
 * Reads a `/v<N>` prefix off a request target, keeping the query. `/v2/employees?x=1` →
 * `{ version: 2, rest: "/employees?x=1" }`; `/v2` → rest `/`; a path without the prefix (`/v01/x` included:
 * no leading zero) → undefined.
 *
 * @example parseUriVersion("/v2/employees", "v") // { version: 2, rest: "/employees" }
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-3.3
 */
export function parseUriVersion(url: string, prefix = "v"): { version: number; rest: string } | undefined {
  const found = readUriPrefix(url, prefix);
  if (found === undefined || !NUMBER.test(found.digits)) return undefined;
  return { version: Number(found.digits), rest: found.rest };
}

/**
 * Reads a `/v<N>` prefix whatever the size of `N` (ASCII digits, no leading zero): its digits as
 * sent and the rest of the target. `/v99999999999999999999/x` → `{ digits: "99999999999999999999",
 * rest: "/x" }`: a number no version can be (the options stop at 999999999) is still spelled as a
 * version, so it is an unknown one, not a path for the router. Internal.
 *
 * @example readUriPrefix("/v2/x", "v") // { digits: "2", rest: "/x" }
 */
export function readUriPrefix(url: string, prefix: string): { digits: string; rest: string } | undefined {
  if (url.charCodeAt(0) !== 0x2f || !url.startsWith(prefix, 1)) return undefined;
  let i = prefix.length + 1;
  while (i < url.length && url.charCodeAt(i) >= 48 && url.charCodeAt(i) <= 57) i++;
  const digits = url.slice(prefix.length + 1, i);
  if (!ANY_NUMBER.test(digits)) return undefined;
  const next = url[i];
  if (next !== undefined && next !== "/" && next !== "?") return undefined;
  const after = url.slice(i);
  return { digits, rest: after.startsWith("/") ? after : `/${after}` };
}

const ANY_NUMBER = /^(?:0|[1-9]\d*)$/;

/**
 * Reads a version header value: `<N>` (no leading zero: `01` is malformed). Several field lines or list members (RFC 9110 §5.3) must agree;
 * empty list members are skipped (RFC 9110 §5.6.1.2); a value with no member, or anything else, is
 * `"malformed"`.
 *
 * @example parseHeaderVersion("2") // 2
 * @example parseHeaderVersion("2, ") // 2
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-5.6.1.2
 */
export function parseHeaderVersion(value: string | string[] | undefined): number | "malformed" | undefined {
  if (value === undefined) return undefined;
  const members = (Array.isArray(value) ? value.join(",") : value).split(",").map((v) => v.trim());
  let version: number | undefined;
  for (const member of members) {
    // RFC 9110 §5.6.1.2: "A recipient MUST parse and ignore a reasonable number of empty list
    // elements" (`2,` or a second, empty field line combined as `2, `); the value is bounded by
    // the server's header size limit.
    if (member === "") continue;
    if (!NUMBER.test(member)) return "malformed";
    const n = Number(member);
    if (version !== undefined && version !== n) return "malformed";
    version = n;
  }
  // Present with no member at all (`API-Version:` or `,`): names no version, yet was sent.
  return version ?? "malformed";
}

/**
 * Reads one version as spelled in a query parameter or by a custom extractor: `<N>`, no leading
 * zero, nothing around it; anything else is `"malformed"`.
 *
 * @example parseVersionValue("2") // 2
 * @example parseVersionValue("v2") // "malformed"
 */
export function parseVersionValue(value: string): number | "malformed" {
  return NUMBER.test(value) ? Number(value) : "malformed";
}

/**
 * Reads the values of query parameter `name` off a request target (`/x?api-version=2`), decoded
 * as `application/x-www-form-urlencoded` (WHATWG URL §5.1, what ASP.NET and browsers' forms do):
 * every value, in order, or `[]` when the parameter is absent.
 *
 * @example queryValues("/employees?api-version=2", "api-version") // ["2"]
 * @see https://url.spec.whatwg.org/#urlencoded-parsing
 */
export function queryValues(url: string, name: string): string[] {
  const start = url.indexOf("?");
  if (start === -1) return [];
  // Cheap refusal of the usual request: the name, encoded or not, appears nowhere in the query.
  const query = url.slice(start + 1);
  if (!query.includes(name) && !query.includes("%")) return [];
  return new URLSearchParams(query).getAll(name);
}

/** A vendor media range of the `Accept` header. */
export interface VendorMediaType {
  /**
   * The version it names, or `undefined` for a JSON/XML type in the vendor's tree that names none
   * (`application/vnd.svc.vx+json`, `v99999999999`): an unknown version, never served.
   */
  version: number | undefined;
  /** `json` or `xml`. */
  suffix: string;
  /** The media type to echo as Content-Type: `application/vnd.<vendor>.v<N>+<suffix>`. */
  mediaType: string;
  q: number;
}

const VERSION_NAME = /^v(?:0|[1-9]\d{0,8})$/;

/**
 * Finds the vendor media ranges (`application/vnd.<vendor>.<name>+json|+xml`) in an `Accept` value,
 * ignoring ranges with `q=0` (RFC 9110 §12.5.1: "not acceptable"), ordered by q, then by position.
 * Parsing is the shared RFC 9110 grammar of `@svc/errors` (invalid ranges are dropped).
 *
 * @example parseVendorMediaTypes("application/vnd.svc.v2+json", "svc")[0]?.version // 2
 * @see https://www.rfc-editor.org/rfc/rfc6838#section-3.2
 */
export function parseVendorMediaTypes(accept: string | undefined, vendor: string): VendorMediaType[] {
  if (!accept) return [];
  const tree = `vnd.${vendor.toLowerCase()}.`;
  const found: VendorMediaType[] = [];
  for (const range of parseMediaRanges(accept) ?? []) {
    const { suffix, subtype, q } = range;
    if (range.type !== "application" || q === 0 || !subtype.startsWith(tree)) continue;
    if (suffix !== "json" && suffix !== "xml") continue;
    const name = subtype.slice(tree.length, subtype.length - suffix.length - 1);
    const version = VERSION_NAME.test(name) ? Number(name.slice(1)) : undefined;
    const mediaType =
      version === undefined ? range.essence : `application/vnd.${vendor}.v${version}+${suffix}`;
    found.push({ version, suffix, mediaType, q });
  }
  // Array.prototype.sort is stable: equal q keeps the client's order.
  return found.sort((a, b) => b.q - a.q);
}

/**
 * Whether `Accept` lists, with q > 0, a range other than the vendor's `+json`/`+xml` types
 * (`application/json`, `*\/*`, ...): a type that names no version, which the default version's
 * representation can have. RFC 9110 §12.5.1: such a client accepts a response that is not in the
 * vendor tree, so a vendor range naming an unknown version leaves it an acceptable representation
 * and is no reason for a 406 (§15.5.7).
 *
 * @example acceptsUnversioned("application/vnd.svc.v9+json, application/json", "svc") // → true (internal)
 */
export function acceptsUnversioned(accept: string | undefined, vendor: string): boolean {
  if (!accept) return false;
  const tree = `vnd.${vendor.toLowerCase()}.`;
  return (parseMediaRanges(accept) ?? []).some(
    (range) =>
      range.q > 0 &&
      !(
        range.type === "application" &&
        range.subtype.startsWith(tree) &&
        (range.suffix === "json" || range.suffix === "xml")
      ),
  );
}

/**
 * Reads the vendor media type of a request's `Content-Type` (`application/vnd.<vendor>.<name>+json|+xml`,
 * parameters allowed, well-formed or not), or `undefined` for any other type or a malformed
 * `type/subtype`. RFC 9110 §8.3: Content-Type names the media type of the enclosed representation,
 * so a vendor type naming a version says which version the content is in; `version` is `undefined`
 * for a type in the tree naming none (`vx`, `v01`).
 *
 * @example parseVendorContentType("application/vnd.svc.v2+json; charset=utf-8", "svc")?.version // 2
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.3
 */
export function parseVendorContentType(
  contentType: string | undefined,
  vendor: string,
): { version: number | undefined; mediaType: string } | undefined {
  if (!contentType) return undefined;
  // RFC 9110 §8.3.1: `media-type = type "/" subtype parameters`; the type and subtype name the
  // format (here the version), the parameters only modify it. So the version is read off the part
  // before the first ";" whatever follows: body parsers read `vnd.svc.v2+json; charset = utf-8`
  // (whitespace around "=", which §5.6.6 does not allow) or an unterminated quoted string as that
  // type, and a v2 body was read as the default version when a malformed parameter hid the type.
  const semi = contentType.indexOf(";");
  const mt = parseMediaType(semi === -1 ? contentType : contentType.slice(0, semi));
  if (mt === undefined || mt.type !== "application") return undefined;
  const tree = `vnd.${vendor.toLowerCase()}.`;
  const plus = mt.subtype.lastIndexOf("+");
  const suffix = plus === -1 ? "" : mt.subtype.slice(plus + 1);
  if (!mt.subtype.startsWith(tree) || (suffix !== "json" && suffix !== "xml")) return undefined;
  const name = mt.subtype.slice(tree.length, plus);
  const version = VERSION_NAME.test(name) ? Number(name.slice(1)) : undefined;
  return { version, mediaType: `application/${mt.subtype}` };
}

/**
 * Whether a request has content: RFC 9112 §6.1 and §6.3, its framing is `Transfer-Encoding` or a
 * `Content-Length` (here: other than 0; an empty body has no representation to read).
 *
 * @example hasContent({ "content-length": "2" }) // true
 * @see https://www.rfc-editor.org/rfc/rfc9112#section-6.3
 */
export function hasContent(headers: {
  "content-length"?: string | undefined;
  "transfer-encoding"?: string | undefined;
}): boolean {
  if (headers["transfer-encoding"] !== undefined) return true;
  const length = headers["content-length"];
  return length !== undefined && !/^0*$/.test(length);
}
