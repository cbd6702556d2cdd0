/**
 * Media-type selection over header strings (RFC 9110 §12.5.1), with no Express in sight.
 *
 * Differences from `negotiator`, on purpose:
 * - parameters that do not change the bytes we send (`charset=utf-8`, `profile`) do not stop a
 *   range from matching; parameters that do (`version=2`) must match;
 * - equal q-values are broken by specificity, then by the server's order of offers (not the
 *   client's order of ranges);
 * - a structured-suffix range (`application/vnd.svc.v2+json`, RFC 6838 §4.2.8) is satisfied by the
 *   offer named by its suffix (`application/json`), and the caller learns which type to echo.
 */

/** One parsed media range of an `Accept` header. */
interface MediaRange {
  type: string;
  subtype: string;
  /** `json` for `application/vnd.x+json`. */
  suffix: string | undefined;
  params: ReadonlyArray<readonly [string, string]>;
  q: number;
  /** The range as the client wrote it, without `q` and extension parameters, lower-cased. */
  essence: string;
}

interface ParsedOffer {
  type: string;
  subtype: string;
  params: ReadonlyMap<string, string>;
}

/** The outcome of {@link matchMediaType}. */
export interface MediaTypeMatch {
  /** The offer that was selected, exactly as passed in. */
  offer: string;
  /**
   * The media type to put in `Content-Type` (without charset): the offer itself, or the
   * client's structured-suffix type (`application/vnd.svc.v2+json`) the offer satisfied.
   */
  mediaType: string;
  /** The quality the client gave it, 0 < q ≤ 1. */
  q: number;
}

/** Parameters whose value does not change a UTF-8 representation's bytes for our purposes. */
const INSIGNIFICANT_PARAMS = new Set(["profile"]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;
const CACHE_LIMIT = 500;

const rangeCache = new Map<string, readonly MediaRange[] | null>();
const offerCache = new Map<string, ParsedOffer | null>();

function remember<V>(cache: Map<string, V>, key: string, value: V): V {
  // A bounded cache: an attacker sending a fresh Accept per request only ever costs a clear().
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, value);
  return value;
}

function splitParams(parts: string[]): Array<[string, string]> | null {
  const params: Array<[string, string]> = [];
  for (const raw of parts) {
    const part = raw.trim();
    if (part === "") continue;
    const eq = part.indexOf("=");
    if (eq <= 0) return null;
    const name = part.slice(0, eq).trim().toLowerCase();
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1).replace(/\\(.)/g, "$1");
    }
    if (!TOKEN.test(name)) return null;
    params.push([name, value]);
  }
  return params;
}

/** Splits on commas that are not inside a quoted string. */
function splitList(header: string): string[] {
  if (!header.includes('"')) return header.split(",");
  const out: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < header.length; i++) {
    const c = header[i];
    if (c === "\\" && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (c === "," && !quoted) {
      out.push(header.slice(start, i));
      start = i + 1;
    }
  }
  out.push(header.slice(start));
  return out;
}

function parseRange(element: string): MediaRange | null {
  const parts = element.split(";");
  const full = (parts[0] ?? "").trim().toLowerCase();
  const slash = full.indexOf("/");
  if (slash <= 0) return null;
  const type = full.slice(0, slash);
  const subtype = full.slice(slash + 1);
  if (!TOKEN.test(type) || !TOKEN.test(subtype)) return null;
  if (type === "*" && subtype !== "*") return null;
  const all = splitParams(parts.slice(1));
  if (all === null) return null;
  let q = 1;
  const params: Array<[string, string]> = [];
  for (const [name, value] of all) {
    // RFC 9110 §12.4.2: "q" separates media-type parameters from (ignored) accept extensions.
    if (name === "q") {
      if (!QVALUE.test(value)) return null;
      q = Number(value);
      break;
    }
    params.push([name, value.toLowerCase()]);
  }
  const plus = subtype.lastIndexOf("+");
  return {
    type,
    subtype,
    suffix: plus > 0 ? subtype.slice(plus + 1) : undefined,
    params,
    q,
    essence: full,
  };
}

/**
 * Parses an `Accept` value into its valid media ranges. Invalid elements are dropped (a bad
 * `q=2` range is ignored, never a 500); `null` means no valid range was left, which callers treat
 * as an absent header (RFC 9110 §12.5.1 lets a server disregard a field it cannot use).
 */
function parseAccept(accept: string): readonly MediaRange[] | null {
  const cached = rangeCache.get(accept);
  if (cached !== undefined) return cached;
  const ranges: MediaRange[] = [];
  for (const element of splitList(accept)) {
    if (element.trim() === "") continue;
    const range = parseRange(element);
    if (range) ranges.push(range);
  }
  return remember(rangeCache, accept, ranges.length > 0 ? ranges : null);
}

function parseOffer(offer: string): ParsedOffer | null {
  const cached = offerCache.get(offer);
  if (cached !== undefined) return cached;
  const range = parseRange(offer);
  const parsed =
    range && range.type !== "*" && range.subtype !== "*"
      ? { type: range.type, subtype: range.subtype, params: new Map(range.params) }
      : null;
  return remember(offerCache, offer, parsed);
}

function paramsMatch(range: MediaRange, offer: ParsedOffer): boolean {
  for (const [name, value] of range.params) {
    if (INSIGNIFICANT_PARAMS.has(name)) continue;
    if (name === "charset") {
      // Every text representation here is UTF-8 unless the offer says otherwise.
      const offered = offer.params.get("charset") ?? "utf-8";
      const wanted = value === "utf8" ? "utf-8" : value;
      if (wanted !== offered && !(wanted === "us-ascii" && offered === "utf-8")) return false;
      continue;
    }
    if (offer.params.get(name) !== value) return false;
  }
  return true;
}

/**
 * How specifically `range` names `offer`: 4 exact, 3 structured suffix, 1 `type/*`, 0 `*\/*`,
 * -1 no match. Parameters add a little, so `text/html;level=1` beats `text/html`.
 */
function specificity(range: MediaRange, offer: ParsedOffer): number {
  let s: number;
  if (range.type === "*") s = 0;
  else if (range.type !== offer.type) return -1;
  else if (range.subtype === "*") s = 1;
  else if (range.subtype === offer.subtype) s = 4;
  else if (range.suffix !== undefined && range.suffix === offer.subtype) s = 3;
  else return -1;
  if (!paramsMatch(range, offer)) return -1;
  return s + range.params.length / 100;
}

/**
 * Like {@link selectMediaType}, and also says which media type to send: for
 * `Accept: application/vnd.svc.v2+json` and the offer `application/json`, `mediaType` is
 * `application/vnd.svc.v2+json`.
 *
 * @example
 * matchMediaType("application/vnd.svc.v2+json", ["application/json", "application/xml"]);
 * // → { offer: "application/json", mediaType: "application/vnd.svc.v2+json", q: 1 }
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.1
 */
export function matchMediaType(
  accept: string | undefined,
  offers: readonly string[],
): MediaTypeMatch | undefined {
  const first = offers[0];
  if (first === undefined) return undefined;
  // RFC 9110 §12.5.1: "A request without any Accept header field implies that the user agent
  // will accept any media type in response" — the server's first choice.
  const ranges = accept === undefined ? null : parseAccept(accept);
  if (ranges === null) return { offer: first, mediaType: first.split(";")[0]?.trim() ?? first, q: 1 };

  let best: MediaTypeMatch | undefined;
  let bestS = -1;
  for (const offer of offers) {
    const parsed = parseOffer(offer);
    if (!parsed) continue;
    // "Media ranges can be overridden by more specific media ranges or specific media types":
    // the most specific range that matches decides the offer's quality.
    let q = 0;
    let s = -1;
    let echo: MediaRange | undefined;
    for (const range of ranges) {
      const rs = specificity(range, parsed);
      if (rs > s) {
        s = rs;
        q = range.q;
        echo = range;
      }
    }
    if (s < 0 || q <= 0) continue;
    // Ties on q go to the more specific match, then to the server's order (first offer wins).
    if (best === undefined || q > best.q || (q === best.q && s > bestS)) {
      bestS = s;
      best = {
        offer,
        mediaType: echo !== undefined && s >= 3 && s < 4 ? echo.essence : `${parsed.type}/${parsed.subtype}`,
        q,
      };
    }
  }
  return best;
}

/**
 * Picks the offer the client prefers according to `Accept` (RFC 9110 §12.5.1), or `undefined`
 * when none is acceptable (→ 406). An absent or wholly invalid header selects the first offer.
 *
 * @param accept the `Accept` field value, or `undefined` when the request has none
 * @param offers media types the server can produce, in the server's order of preference
 * @example
 * selectMediaType("application/xml;q=0.9, application/json", ["application/json", "application/xml"]);
 * // → "application/json"
 * selectMediaType("application/json;charset=utf-8", ["application/json"]); // → "application/json"
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.1
 */
export function selectMediaType(accept: string | undefined, offers: readonly string[]): string | undefined {
  return matchMediaType(accept, offers)?.offer;
}
