const NUMBER = /^\d{1,9}$/;

/**
 * Reads a `/v<N>` prefix off a request target, keeping the query. `/v2/employees?x=1` →
 * `{ version: 2, rest: "/employees?x=1" }`; `/v2` → rest `/`; a path without the prefix → undefined.
 *
 * @example parseUriVersion("/v2/employees", "v") // { version: 2, rest: "/employees" }
 * @see https://www.rfc-editor.org/rfc/rfc3986#section-3.3
 */
export function parseUriVersion(url: string, prefix = "v"): { version: number; rest: string } | undefined {
  if (!url.startsWith(`/${prefix}`)) return undefined;
  let i = prefix.length + 1;
  while (i < url.length && url.charCodeAt(i) >= 48 && url.charCodeAt(i) <= 57) i++;
  const digits = url.slice(prefix.length + 1, i);
  if (!NUMBER.test(digits)) return undefined;
  const next = url[i];
  if (next !== undefined && next !== "/" && next !== "?") return undefined;
  const after = url.slice(i);
  return { version: Number(digits), rest: after.startsWith("/") ? after : `/${after}` };
}

/**
 * Reads a version header value: `<N>`. Several field lines or list members (RFC 9110 §5.3) must agree;
 * anything else is `"malformed"`.
 *
 * @example parseHeaderVersion("2") // 2
 */
export function parseHeaderVersion(value: string | string[] | undefined): number | "malformed" | undefined {
  if (value === undefined) return undefined;
  const members = (Array.isArray(value) ? value.join(",") : value).split(",").map((v) => v.trim());
  let version: number | undefined;
  for (const member of members) {
    if (!NUMBER.test(member)) return "malformed";
    const n = Number(member);
    if (version !== undefined && version !== n) return "malformed";
    version = n;
  }
  return version;
}

/** A vendor media range of the `Accept` header. */
export interface VendorMediaType {
  version: number;
  /** `json` or `xml`. */
  suffix: string;
  /** The media type to echo as Content-Type: `application/vnd.<vendor>.v<N>+<suffix>`. */
  mediaType: string;
  q: number;
}

/**
 * Finds the vendor media ranges (`application/vnd.<vendor>.v<N>+json|+xml`) in an `Accept` value,
 * ignoring ranges with `q=0` (RFC 9110 §12.5.1: "not acceptable"), ordered by q, then by position.
 *
 * @example parseVendorMediaTypes("application/vnd.svc.v2+json", "svc")[0]?.version // 2
 * @see https://www.rfc-editor.org/rfc/rfc6838#section-3.2
 */
export function parseVendorMediaTypes(accept: string | undefined, vendor: string): VendorMediaType[] {
  if (!accept) return [];
  const found: (VendorMediaType & { index: number })[] = [];
  const prefix = `application/vnd.${vendor.toLowerCase()}.v`;
  accept.split(",").forEach((range, index) => {
    const [type = "", ...params] = range.split(";").map((p) => p.trim());
    const lower = type.toLowerCase();
    if (!lower.startsWith(prefix)) return;
    const m = /^(\d{1,9})\+(json|xml)$/.exec(lower.slice(prefix.length));
    if (!m) return;
    let q = 1;
    for (const param of params) {
      const [name = "", raw = ""] = param.split("=").map((s) => s.trim());
      if (name.toLowerCase() === "q") {
        // RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
        q = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(raw) ? Number(raw) : 0;
      }
    }
    if (q === 0) return;
    const version = Number(m[1]);
    const suffix = m[2] as string;
    found.push({ version, suffix, mediaType: `application/vnd.${vendor}.v${version}+${suffix}`, q, index });
  });
  found.sort((a, b) => b.q - a.q || a.index - b.index);
  return found.map(({ index: _index, ...rest }) => rest);
}
