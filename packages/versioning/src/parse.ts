import { type ApiVersion, parseMediaRanges, parseMediaType } from "@svc/kernel";
import { SCHEMES, type SchemeRules, type VersionScheme } from "./scheme.js";

/**
 * Reads a `/v<N>` prefix off a request target, keeping the query. `/v2/employees?x=1` →
 * `{ version: 2, rest: "/employees?x=1" }`; `/v2` → rest `/`; a path without the prefix (`/v01/x` included:
 * no leading zero) → undefined. With `scheme`, the prefix of that scheme: `/v1.2/x`, `/v2026-11-25/x`.
 *
 * @example parseUriVersion("/v2/employees", "v") // { version: 2, rest: "/employees" }
 * @example parseUriVersion("/v2026-11-25/employees", "v", "date") // { version: "2026-11-25", rest: "/employees" }
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-3.3
 */
export function parseUriVersion(url: string, prefix?: string): { version: number; rest: string } | undefined;
/** Reads a version prefix of `scheme` (`/v1.2/x`, `/v2026-11-25/x`) off a request target. */
export function parseUriVersion(
  url: string,
  prefix: string,
  scheme: VersionScheme,
): { version: ApiVersion; rest: string } | undefined;
export function parseUriVersion(
  url: string,
  prefix = "v",
  scheme: VersionScheme = "integer",
): { version: ApiVersion; rest: string } | undefined {
  const rules = SCHEMES[scheme];
  const found = readUriPrefix(url, prefix, rules);
  const version = found === undefined ? undefined : rules.read(found.digits);
  return found === undefined || version === undefined ? undefined : { version, rest: found.rest };
}

/**
 * Reads a `/v<N>` prefix whatever the size of `N` (ASCII digits, no leading zero; for the other
 * schemes, what looks like one of their versions): its spelling as sent and the rest of the
 * target. `/v99999999999999999999/x` → `{ digits: "99999999999999999999", rest: "/x" }`: a number
 * no version can be (the options stop at 999999999) is still spelled as a version, so it is an
 * unknown one, not a path for the router (as `/v2026-02-30/x` with dates). Internal.
 *
 * @example readUriPrefix("/v2/x", "v") // { digits: "2", rest: "/x" }
 */
export function readUriPrefix(
  url: string,
  prefix: string,
  rules: SchemeRules = SCHEMES.integer,
): { digits: string; rest: string } | undefined {
  if (url.charCodeAt(0) !== 0x2f || !url.startsWith(prefix, 1)) return undefined;
  const start = prefix.length + 1;
  let i = start;
  while (i < url.length && url[i] !== "/" && url[i] !== "?") i++;
  const digits = url.slice(start, i);
  if (!rules.shape.test(digits)) return undefined;
  const after = url.slice(i);
  return { digits, rest: after.startsWith("/") ? after : `/${after}` };
}

/**
 * Reads a version header value: `<N>` (no leading zero: `01` is malformed), or with `scheme` one
 * version of that scheme (`1.2`, `2026-11-25`). Several field lines or list members (RFC 9110 §5.3)
 * must agree; empty list members are skipped (RFC 9110 §5.6.1.2); a value with no member, or
 * anything else, is `"malformed"`.
 *
 * @example parseHeaderVersion("2") // 2
 * @example parseHeaderVersion("2, ") // 2
 * @example parseHeaderVersion("2026-11-25", "date") // "2026-11-25"
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-5.6.1.2
 */
export function parseHeaderVersion(value: string | string[] | undefined): number | "malformed" | undefined;
/** Reads a version header value of `scheme` (`1.2`, `2026-11-25`); see the first signature. */
export function parseHeaderVersion(
  value: string | string[] | undefined,
  scheme: VersionScheme,
): ApiVersion | "malformed" | undefined;
export function parseHeaderVersion(
  value: string | string[] | undefined,
  scheme: VersionScheme = "integer",
): ApiVersion | "malformed" | undefined {
  if (value === undefined) return undefined;
  const rules = SCHEMES[scheme];
  const members = (Array.isArray(value) ? value.join(",") : value).split(",").map((v) => v.trim());
  let version: ApiVersion | undefined;
  for (const member of members) {
    // RFC 9110 §5.6.1.2: "A recipient MUST parse and ignore a reasonable number of empty list
    // elements" (`2,` or a second, empty field line combined as `2, `); the value is bounded by
    // the server's header size limit.
    if (member === "") continue;
    const read = rules.read(member);
    if (read === undefined || (version !== undefined && version !== read)) return "malformed";
    version = read;
  }
  // Present with no member at all (`API-Version:` or `,`): names no version, yet was sent.
  return version ?? "malformed";
}

/**
 * Reads one version as spelled in a query parameter or by a custom extractor: `<N>` (or one
 * version of `scheme`), no leading zero, nothing around it; anything else is `"malformed"`.
 *
 * @example parseVersionValue("2") // 2
 * @example parseVersionValue("v2") // "malformed"
 */
export function parseVersionValue(
  value: string,
  rules: SchemeRules = SCHEMES.integer,
): ApiVersion | "malformed" {
  return rules.read(value) ?? "malformed";
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
  version: ApiVersion | undefined;
  /** `json` or `xml`. */
  suffix: string;
  /** The media type to echo as Content-Type: `application/vnd.<vendor>.v<N>+<suffix>`. */
  mediaType: string;
  q: number;
}

/** The version a vendor subtype's name (`v2`, `v1.2`, `v2026-11-25`) names, if any. */
function versionNamed(name: string, rules: SchemeRules): ApiVersion | undefined {
  return name.startsWith("v") ? rules.read(name.slice(1)) : undefined;
}

/**
 * Finds the vendor media ranges (`application/vnd.<vendor>.<name>+json|+xml`) in an `Accept` value,
 * ignoring ranges with `q=0` (RFC 9110 §12.5.1: "not acceptable"), ordered by q, then by position.
 * Parsing is the shared RFC 9110 grammar of `@svc/errors` (invalid ranges are dropped).
 *
 * @example parseVendorMediaTypes("application/vnd.svc.v2+json", "svc")[0]?.version // 2
 * @see https://www.rfc-editor.org/rfc/rfc6838#section-3.2
 */
export function parseVendorMediaTypes(
  accept: string | undefined,
  vendor: string,
  scheme: VersionScheme = "integer",
): VendorMediaType[] {
  const rules = SCHEMES[scheme];
  if (!accept) return [];
  const tree = `vnd.${vendor.toLowerCase()}.`;
  const found: VendorMediaType[] = [];
  for (const range of parseMediaRanges(accept) ?? []) {
    const { suffix, subtype, q } = range;
    if (range.type !== "application" || q === 0 || !subtype.startsWith(tree)) continue;
    if (suffix !== "json" && suffix !== "xml") continue;
    const name = subtype.slice(tree.length, subtype.length - suffix.length - 1);
    const version = versionNamed(name, rules);
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
  rules: SchemeRules = SCHEMES.integer,
): { version: ApiVersion | undefined; mediaType: string } | undefined {
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
  const version = versionNamed(name, rules);
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
