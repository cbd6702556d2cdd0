/**
 * The header grammar of RFC 9110 §5.6 (tokens, quoted strings, parameters, lists), q-values
 * (§12.4.2) and media-range selection (§12.5.1), written once for every @svc package.
 *
 * Every parser here is a single left-to-right scan: no regular expression with nested or
 * overlapping repetition sees client input, and a field value longer than
 * {@link MAX_FIELD_LENGTH} or a list of more than {@link MAX_LIST_MEMBERS} members is disregarded
 * as a whole (RFC 9110 §12.5.1 lets a server disregard a field it cannot use), so the work per
 * header is bounded whatever the client sends.
 */

/** Field values longer than this many characters are disregarded. */
export const MAX_FIELD_LENGTH = 8192;
/** Lists with more members than this are disregarded. */
export const MAX_LIST_MEMBERS = 128;

// RFC 9110 §5.6.2: token = 1*tchar (a character class under one `+`: linear).
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// RFC 9110 §11.2: token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;
// RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * True when `value` is an RFC 9110 `token` (`1*tchar`).
 *
 * @example isToken("gzip") // true
 * @example isToken("a b") // false
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-5.6.2
 */
export function isToken(value: string): boolean {
  return TOKEN.test(value);
}

/**
 * RFC 9110 §5.5: `field-value = *field-content`, of `field-vchar` (VCHAR / obs-text), SP and HTAB;
 * "a recipient of CR, LF, or NUL within a field value MUST either reject the message or replace
 * each of those characters with SP". Node's `setHeader` throws on them (and on anything above
 * U+00FF); one bounded character class, linear in the value.
 */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * A header value as it goes on the wire: a string or a finite number, of field-value characters
 * only; `undefined` for anything else (an object, whose `toString()` could give one text to a check
 * and another to the line, NaN, a value with CR, LF or NUL).
 */
export function fieldValue(value: unknown): string | undefined {
  const text =
    typeof value === "string"
      ? value
      : typeof value === "number" && Number.isFinite(value)
        ? String(value)
        : undefined;
  return text !== undefined && FIELD_VALUE.test(text) ? text : undefined;
}

/**
 * `value` without its leading and trailing OWS (SP and HTAB, RFC 9110 §5.6.3), and nothing else:
 * not `String.prototype.trim()`, which also strips U+00A0, a byte (A0, obs-text, §5.5) a field
 * value may hold. The value itself when there is nothing to strip.
 *
 * @example trimOws(" \t\"v1\" ") // "\"v1\""
 * @example trimOws("\u00a0*") // "\u00a0*", not "*"
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-5.6.3
 */
export function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isOwsCode(value.charCodeAt(start))) start++;
  while (end > start && isOwsCode(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

function isOwsCode(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

/**
 * True when `value` matches RFC 9110's `token68`, the syntax of Bearer and Basic credentials.
 *
 * @example isToken68("eyJhbGciOi.eyJzdWIi.c2ln") // true
 * @example isToken68("a b") // false
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-11.2
 */
export function isToken68(value: string): boolean {
  return TOKEN68.test(value);
}

/**
 * Reads a q-value (`0.5`, `1`, `0.000`), or `undefined` when it is not one (`2`, `0.1234`, `abc`).
 *
 * @example parseQValue("0.8") // 0.8
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.4.2
 */
export function parseQValue(value: string): number | undefined {
  return QVALUE.test(value) ? Number(value) : undefined;
}

/**
 * Writes `value` as a quoted-string, `\` and `"` escaped; control characters, which no field may
 * carry, are dropped.
 *
 * @example quoteString('say "hi"') // '"say \\"hi\\""'
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-5.6.4
 */
export function quoteString(value: string): string {
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) continue;
    if (c === 0x22 || c === 0x5c) out += "\\";
    out += value[i];
  }
  return `${out}"`;
}

const isOws = (c: string | undefined) => c === " " || c === "\t";

/**
 * Splits a list field (`#element`, RFC 9110 §5.6.1) on the commas that are not inside a
 * quoted-string, trimming whitespace and dropping empty members. `undefined` when the value is
 * over {@link MAX_FIELD_LENGTH}, has more than {@link MAX_LIST_MEMBERS} members, or leaves a
 * quoted-string open.
 *
 * @example splitList('a, "b,c" , ,d') // ['a', '"b,c"', 'd']
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-5.6.1
 */
export function splitList(value: string): string[] | undefined {
  if (value.length > MAX_FIELD_LENGTH) return undefined;
  const out: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i <= value.length; i++) {
    const c = value[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
      else if (c === undefined) return undefined;
    } else if (c === '"') quoted = true;
    else if (c === "," || c === undefined) {
      const member = value.slice(start, i).trim();
      if (member !== "") {
        if (out.length === MAX_LIST_MEMBERS) return undefined;
        out.push(member);
      }
      start = i + 1;
    }
  }
  return out;
}

// RFC 9110 §5.5: field-value characters (field-vchar, SP, HTAB); no CR, LF, NUL or other CTL.
const FIELD_CHARS = /^[\t\x20-\x7e\x80-\xff]*$/;
const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;

/** The end of the token starting at `i` in `text` (`i` itself when there is none). */
function tokenEnd(text: string, i: number): number {
  while (i < text.length && TCHAR.test(text[i] as string)) i++;
  return i;
}

/**
 * Whether `text` (a trimmed list member) is exactly an `auth-param`, RFC 9110 §11.2:
 * `token BWS "=" BWS ( token / quoted-string )`.
 */
function isAuthParam(text: string): boolean {
  let i = tokenEnd(text, 0);
  if (i === 0) return false;
  while (isOws(text[i])) i++;
  if (text[i] !== "=") return false;
  i++;
  while (isOws(text[i])) i++;
  if (text[i] !== '"') return i < text.length && tokenEnd(text, i) === text.length;
  // quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE (§5.6.4): ends at the last character.
  for (i++; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i === text.length - 1;
  }
  return false;
}

/**
 * True when `value` is a `WWW-Authenticate` (or `Proxy-Authenticate`) field value holding at least
 * one challenge, RFC 9110 §11.6.1 `WWW-Authenticate = #challenge` and §11.3
 * `challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ]`: each challenge's parameters follow
 * it as list members of their own, and a token68 challenge has none. One pass over
 * {@link splitList}'s members, so bounded by {@link MAX_FIELD_LENGTH}.
 *
 * @example isChallengeList('Bearer realm="api", Basic realm="api", charset="UTF-8"') // true
 * @example isChallengeList("realm=api") // false: a parameter without a scheme
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-11.6.1
 */
export function isChallengeList(value: string): boolean {
  if (typeof value !== "string" || !FIELD_CHARS.test(value)) return false;
  const members = splitList(value);
  if (members === undefined) return false;
  let challenges = 0;
  // Whether the member before may be followed by more auth-params of the same challenge.
  let takesParams = false;
  for (const member of members) {
    const scheme = tokenEnd(member, 0);
    if (scheme === 0) return false;
    if (scheme === member.length) {
      challenges++;
      takesParams = false;
      continue;
    }
    if (member[scheme] === " " && !isAuthParam(member)) {
      // A new challenge: auth-scheme 1*SP ( token68 / auth-param ).
      let i = scheme;
      while (member[i] === " ") i++;
      const rest = member.slice(i);
      challenges++;
      takesParams = !isToken68(rest);
      if (takesParams && !isAuthParam(rest)) return false;
    } else if (!takesParams || !isAuthParam(member)) {
      return false;
    }
  }
  return challenges > 0;
}

/** One `name=value` parameter: name lower-cased (§5.6.6 "case-insensitive"), value unquoted. */
export type Parameter = readonly [name: string, value: string];

/**
 * Parses `*( OWS ";" OWS [ parameter ] )` (RFC 9110 §5.6.6), where a value is a token or a
 * quoted-string whose `\` escapes are removed. Empty parameters (`;;`) are allowed, as the
 * grammar says; `undefined` when anything else is malformed (a name that is not a token, a
 * missing `=`, an unterminated quoted-string, text after a closing quote).
 *
 * @example parseParameters('; charset=UTF-8; action="urn:a\\"b"') // [["charset","UTF-8"],["action",'urn:a"b']]
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-5.6.6
 */
export function parseParameters(text: string): Parameter[] | undefined {
  if (text.length > MAX_FIELD_LENGTH) return undefined;
  const params: Parameter[] = [];
  let i = 0;
  const n = text.length;
  while (true) {
    while (isOws(text[i])) i++;
    if (i >= n) return params;
    if (text[i] !== ";") return undefined;
    i++;
    while (isOws(text[i])) i++;
    if (i >= n) return params;
    if (text[i] === ";") continue;
    const eq = text.indexOf("=", i);
    if (eq === -1) return undefined;
    const name = text.slice(i, eq);
    if (!TOKEN.test(name)) return undefined;
    i = eq + 1;
    let value: string;
    if (text[i] === '"') {
      value = "";
      i++;
      let segment = i;
      while (i < n && text[i] !== '"') {
        if (text[i] === "\\") {
          value += text.slice(segment, i);
          i++;
          segment = i;
        }
        i++;
      }
      if (i >= n) return undefined;
      value += text.slice(segment, i);
      i++;
    } else {
      const start = i;
      while (i < n && text[i] !== ";" && !isOws(text[i])) i++;
      value = text.slice(start, i);
      // The grammar says token; a bare URI (`profile=https://x`), as clients send it, is kept.
      if (value === "" || value.includes('"')) return undefined;
    }
    params.push([name.toLowerCase(), value]);
  }
}

/** A parsed `type/subtype *( OWS ";" OWS parameter )`. */
export interface MediaType {
  /** Lower-cased (§8.3.1: "type and subtype tokens are case-insensitive"). */
  type: string;
  /** Lower-cased. */
  subtype: string;
  /** The parameters in order, names lower-cased, values as sent (unquoted). */
  parameters: readonly Parameter[];
}

/**
 * Parses a media type (`Content-Type`, RFC 9110 §8.3.1), or `undefined` when malformed. `type` or
 * `subtype` may be `*` (a media range); callers that need a concrete type check for it.
 *
 * @example parseMediaType('application/soap+xml; action="urn:x"') // { type: "application", subtype: "soap+xml", parameters: [["action","urn:x"]] }
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.3.1
 */
export function parseMediaType(value: string): MediaType | undefined {
  if (value.length > MAX_FIELD_LENGTH) return undefined;
  const semi = value.indexOf(";");
  const essence = (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase();
  const slash = essence.indexOf("/");
  if (slash === -1) return undefined;
  const type = essence.slice(0, slash);
  const subtype = essence.slice(slash + 1);
  if (!TOKEN.test(type) || !TOKEN.test(subtype)) return undefined;
  if (type === "*" && subtype !== "*") return undefined;
  const parameters = semi === -1 ? [] : parseParameters(value.slice(semi));
  return parameters && { type, subtype, parameters };
}

/** One media range of an `Accept` field (RFC 9110 §12.5.1). */
export interface MediaRange {
  /** Lower-cased; `*` for `*\/*`. */
  type: string;
  /** Lower-cased; `*` for `type/*`. */
  subtype: string;
  /** The structured suffix (RFC 6838 §4.2.8): `json` for `application/vnd.x+json`. */
  suffix: string | undefined;
  /** Media-type parameters before `q`, values lower-cased; accept extensions after `q` are dropped. */
  parameters: readonly Parameter[];
  /** The weight, 0 ≤ q ≤ 1 (q = 0: "not acceptable"). */
  q: number;
  /** `type/subtype`, lower-cased. */
  essence: string;
}

/**
 * Whether the `*`s of a parsed member name a range. RFC 9110 §12.5.1: "The asterisk "*" character
 * is used to group media types into ranges, with "*\/*" indicating all media types and "type/*"
 * indicating all subtypes of that type", and no media type's name has one (RFC 6838 §4.2
 * restricted-name). `*` is a tchar, so `**\/*`, `text/**` or `text/x*ml` parse as tokens, but a
 * `*` anywhere else names neither a range nor a type: such a member is invalid, as `*\/json` is
 * (parseMediaType refuses that one). The structured-suffix wildcard clients send,
 * `application/*+json`, is kept as a range of its own; nothing matches it but itself.
 */
function isRangeName(type: string, subtype: string): boolean {
  if (type !== "*" && type.includes("*")) return false;
  if (subtype === "*") return true;
  const name = subtype.startsWith("*+") ? subtype.slice(2) : subtype;
  return name !== "" && !name.includes("*");
}

/**
 * Parses an `Accept` value into its valid media ranges, in the client's order. Invalid members
 * are dropped (`q=2`, two weights, `text`, `*\/html`, `text/**`, a parameter named twice as in
 * `text/html;LEVEL=1;level=2`: never a 500); `undefined` means nothing usable was left
 * (no valid member, or a field over the bounds), which callers treat as no `Accept` at all.
 *
 * @example parseMediaRanges("text/html;level=1;q=0.5, text/*")?.map((r) => r.q) // [0.5, 1]
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.1
 */
export function parseMediaRanges(accept: string): readonly MediaRange[] | undefined {
  const members = splitList(accept);
  if (members === undefined) return undefined;
  const ranges: MediaRange[] = [];
  for (const member of members) {
    const mt = parseMediaType(member);
    if (mt === undefined || !isRangeName(mt.type, mt.subtype)) continue;
    const parameters: Parameter[] = [];
    let repeated = false;
    for (const [name, value] of mt.parameters) {
      // RFC 9110 §12.4.2: "q" separates media-type parameters from (ignored) accept extensions.
      if (name === "q") break;
      // RFC 6838 §4.3: "It is an error for a specific parameter to be specified more than once"
      // (names are case-insensitive, RFC 9110 §5.6.6): `text/html;LEVEL=1;level=2` names no type.
      if (parameters.some(([seen]) => seen === name)) repeated = true;
      parameters.push([name, value.toLowerCase()]);
    }
    const q = repeated ? undefined : memberWeight(mt.parameters);
    if (q === undefined) continue;
    const plus = mt.subtype.lastIndexOf("+");
    ranges.push({
      type: mt.type,
      subtype: mt.subtype,
      suffix: plus > 0 ? mt.subtype.slice(plus + 1) : undefined,
      parameters,
      q,
      essence: `${mt.type}/${mt.subtype}`,
    });
  }
  return ranges.length > 0 ? ranges : undefined;
}

/**
 * The weight of one list member from its parameters: 1 without a `q`, the q-value with one, and
 * `undefined` (the member is invalid) when the `q` is not a qvalue or when there is more than one.
 * RFC 9110 §12.4.2 `weight = OWS ";" OWS "q=" qvalue`, and each weighted list allows one per
 * member (§12.5.1 `Accept = #( media-range [ weight ] )`, §12.5.3 `#( codings [ weight ] )`,
 * §12.5.4 `#( language-range [ weight ] )`): `gzip;q=0.1;q=1` matches none of them, and taking
 * either weight would be a guess, so it is ignored like any other invalid member.
 */
function memberWeight(params: readonly Parameter[]): number | undefined {
  let q: number | undefined = 1;
  let weights = 0;
  for (const [name, value] of params) {
    if (name !== "q") continue;
    if (++weights > 1) return undefined;
    q = parseQValue(value);
  }
  return q;
}

/** One member of a weighted token list (`Accept-Language`, `Accept-Encoding`). */
export interface QItem {
  /** The member, lower-cased. */
  value: string;
  q: number;
}

/**
 * Parses `value *( OWS ";" OWS parameter )` lists with a `q` weight (RFC 9110 §12.4.2), keeping
 * members that pass `valid` and carry at most one weight, well-formed; others are dropped. Over the bounds
 * → `[]` (the field is disregarded).
 *
 * @example parseQList("gzip;q=0.5, br") // [{ value: "gzip", q: 0.5 }, { value: "br", q: 1 }]
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.4.2
 */
export function parseQList(header: string, valid: (value: string) => boolean = isToken): QItem[] {
  const items: QItem[] = [];
  for (const member of splitList(header) ?? []) {
    const semi = member.indexOf(";");
    const value = (semi === -1 ? member : member.slice(0, semi)).trim().toLowerCase();
    if (value === "" || !valid(value)) continue;
    const params = semi === -1 ? [] : parseParameters(member.slice(semi));
    if (params === undefined) continue;
    const q = memberWeight(params);
    if (q !== undefined) items.push({ value, q });
  }
  return items;
}

/** The outcome of {@link matchMediaType}. */
export interface MediaTypeMatch {
  /** The offer that was selected, exactly as passed in. */
  offer: string;
  /**
   * The media type to put in `Content-Type` (without parameters): the offer's own type, or the
   * structured-suffix type the representation declared (`application/vnd.svc.v2+json`) when the
   * client asked for that one.
   */
  mediaType: string;
  /** The quality the client gave it, 0 < q ≤ 1. */
  q: number;
}

interface ParsedOffer {
  type: string;
  subtype: string;
  /** `type/subtype`, made once: the `mediaType` of every match of this offer. */
  essence: string;
  params: ReadonlyMap<string, string>;
}

/** Parameters that do not change a UTF-8 representation's bytes for our purposes. */
const INSIGNIFICANT_PARAMS = new Set(["profile"]);
/**
 * The parse caches below are shared by the whole process and keyed by what clients send (every
 * request's `Accept`), so each is bounded in entries and in bytes, whatever the clients send:
 *
 * - only a key of at most {@link CACHEABLE_LENGTH} (256) characters is cached: the `Accept` of
 *   browsers (about 130 characters) and of API clients fits; a longer value (up to
 *   {@link MAX_FIELD_LENGTH}) is parsed on each request and never held;
 * - at most {@link CACHE_LIMIT} (500) entries and {@link CACHE_MAX_BYTES} (512 KiB) per cache,
 *   bytes estimated from V8's layout (16 bytes a string plus 2 a character, 80 an object, 32 an
 *   array plus 8 an element, 64 a map entry): an entry that would pass either bound first clears
 *   the cache, so a client sending a fresh `Accept` on every request only ever costs a clear().
 *
 * Two caches (`Accept` values, and the offers and declared types the application passes): at
 * most 1000 entries and 1 MiB for both. Unbounded in bytes, 500 distinct 8 KB `Accept` values
 * would hold some 37 MB in every process that saw them.
 */
export const CACHE_LIMIT = 500;
/** Longest key, in characters, the parse caches hold (a longer value is parsed each time). */
export const CACHEABLE_LENGTH = 256;
/** Most bytes (estimated) each parse cache holds. */
export const CACHE_MAX_BYTES = 512 * 1024;

/** A string's estimated size: V8's header, and at most two bytes a character. */
const stringBytes = (s: string) => 16 + 2 * s.length;
/** A map entry (hash table slot and key, value pointers), before its key's and value's own sizes. */
const ENTRY_BYTES = 64;
/** An object with up to six in-object fields, or an array header with its backing store's. */
const OBJECT_BYTES = 80;
const ARRAY_BYTES = 32;
const POINTER_BYTES = 8;

function parametersBytes(parameters: readonly Parameter[]): number {
  let bytes = ARRAY_BYTES + POINTER_BYTES * parameters.length;
  for (const [name, value] of parameters) {
    bytes += ARRAY_BYTES + 2 * POINTER_BYTES + stringBytes(name) + stringBytes(value);
  }
  return bytes;
}

/** The estimated bytes a {@link rangeCache} entry holds: the key and the parsed ranges. */
function rangesBytes(key: string, ranges: readonly MediaRange[] | null): number {
  let bytes = ENTRY_BYTES + stringBytes(key);
  if (ranges === null) return bytes;
  bytes += ARRAY_BYTES + POINTER_BYTES * ranges.length;
  for (const r of ranges) {
    bytes += OBJECT_BYTES + stringBytes(r.type) + stringBytes(r.subtype) + stringBytes(r.essence);
    if (r.suffix !== undefined) bytes += stringBytes(r.suffix);
    bytes += parametersBytes(r.parameters);
  }
  return bytes;
}

/** The estimated bytes an {@link offerCache} entry holds: the key and the parsed offer. */
function offerBytes(key: string, offer: ParsedOffer | null): number {
  let bytes = ENTRY_BYTES + stringBytes(key);
  if (offer === null) return bytes;
  bytes +=
    OBJECT_BYTES +
    stringBytes(offer.type) +
    stringBytes(offer.subtype) +
    stringBytes(offer.essence) +
    OBJECT_BYTES;
  for (const [name, value] of offer.params) bytes += ENTRY_BYTES + stringBytes(name) + stringBytes(value);
  return bytes;
}

interface ParseCache<V> {
  readonly map: Map<string, V>;
  /** The estimated bytes of the entries held: kept as they are added, reset with them. */
  bytes: number;
  readonly size: (key: string, value: V) => number;
}

const rangeCache: ParseCache<readonly MediaRange[] | null> = { map: new Map(), bytes: 0, size: rangesBytes };
const offerCache: ParseCache<ParsedOffer | null> = { map: new Map(), bytes: 0, size: offerBytes };

function remember<V>(cache: ParseCache<V>, key: string, value: V): V {
  if (key.length > CACHEABLE_LENGTH) return value;
  const bytes = cache.size(key, value);
  if (cache.map.size >= CACHE_LIMIT || cache.bytes + bytes > CACHE_MAX_BYTES) {
    cache.map.clear();
    cache.bytes = 0;
  }
  cache.map.set(key, value);
  cache.bytes += bytes;
  return value;
}

/** What one parse cache holds, counted by {@link parseCacheUsage}. */
export interface ParseCacheUsage {
  entries: number;
  /** The estimated bytes of its keys and values. */
  bytes: number;
  /** The longest key, in characters. */
  longestKey: number;
}

function usageOf<V>(cache: ParseCache<V>): ParseCacheUsage {
  let bytes = 0;
  let longestKey = 0;
  for (const [key, value] of cache.map) {
    bytes += cache.size(key, value);
    longestKey = Math.max(longestKey, key.length);
  }
  return { entries: cache.map.size, bytes, longestKey };
}

/**
 * What the parse caches hold now, counted afresh from their entries (not from the running total
 * that bounds them): for tests of the bound, and for a look at a live process.
 *
 * @internal Exported from the main entry, not from `@svc/kernel/internal`: each entry is bundled
 * on its own, and this reads the caches of the parsers the main entry holds.
 */
export function parseCacheUsage(): { accept: ParseCacheUsage; offers: ParseCacheUsage } {
  return { accept: usageOf(rangeCache), offers: usageOf(offerCache) };
}

function cachedRanges(accept: string): readonly MediaRange[] | null {
  // The hit path allocates nothing: a length check and one lookup.
  const hit = accept.length <= CACHEABLE_LENGTH ? rangeCache.map.get(accept) : undefined;
  return hit !== undefined ? hit : remember(rangeCache, accept, parseMediaRanges(accept) ?? null);
}

function parseOffer(offer: string): ParsedOffer | null {
  const hit = offer.length <= CACHEABLE_LENGTH ? offerCache.map.get(offer) : undefined;
  if (hit !== undefined) return hit;
  const mt = parseMediaType(offer);
  const parsed =
    mt && mt.type !== "*" && mt.subtype !== "*"
      ? {
          type: mt.type,
          subtype: mt.subtype,
          essence: `${mt.type}/${mt.subtype}`,
          params: new Map(mt.parameters.map(([n, v]) => [n, v.toLowerCase()] as const)),
        }
      : null;
  return remember(offerCache, offer, parsed);
}

function paramsMatch(range: MediaRange, offer: ParsedOffer): boolean {
  for (const [name, value] of range.parameters) {
    if (INSIGNIFICANT_PARAMS.has(name)) continue;
    if (name === "charset") {
      // A text representation here is UTF-8 unless the offer says otherwise.
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
 * How specifically `range` names the concrete type `type/subtype` (with the offer's parameters):
 * 4 exact, 1 `type/*`, 0 `*\/*`, -1 no match. Parameters add a little, so `text/html;level=1`
 * beats `text/html`.
 */
function specificity(range: MediaRange, type: string, subtype: string, offer: ParsedOffer): number {
  let s: number;
  if (range.type === "*") s = 0;
  else if (range.type !== type) return -1;
  else if (range.subtype === "*") s = 1;
  else if (range.subtype === subtype) s = 4;
  else return -1;
  if (!paramsMatch(range, offer)) return -1;
  return s + range.parameters.length / 100;
}

/**
 * The quality of sending `type/subtype`: "media ranges can be overridden by more specific media
 * ranges or specific media types" (§12.5.1), so the most specific matching range decides, and a
 * `q=0` there excludes the type however many broader ranges accept it.
 */
function quality(ranges: readonly MediaRange[], type: string, subtype: string, offer: ParsedOffer) {
  let q = 0;
  let s = -1;
  for (const range of ranges) {
    const rs = specificity(range, type, subtype, offer);
    // A range listed twice at the same specificity is ambiguous (RFC 9110 §12.5.1 does not say);
    // the higher weight wins, as in `negotiator`, whichever order the client wrote them in.
    if (rs > s || (rs === s && range.q > q)) {
      s = rs;
      q = range.q;
    }
  }
  return { q, s };
}

/**
 * Chooses a representation by `Accept` (RFC 9110 §12.5.1) and says which media type to send.
 *
 * - Each offer's quality comes from the most specific range that matches it; q = 0 means "not
 *   acceptable", whatever broader range accepts it.
 * - A structured-suffix range (`application/vnd.svc.v2+json`, RFC 6838 §4.2.8) matches the offer
 *   its suffix names (`application/json`) only when the representation declares itself to be of
 *   that type (`declared`), and is then sent as that type; that type's own quality decides
 *   (`vnd.svc.v1+json;q=0` excludes only v1). A suffix says a type is parseable as JSON or XML,
 *   not that any JSON is of that type, and a Content-Type describes the representation actually
 *   sent (RFC 9110 §8.3): any other suffix type the client names matches nothing, so negotiation
 *   falls to the client's other ranges, or to none (→ 406).
 * - Parameters that change the bytes (`version=2`) must match; `charset` is compared as UTF-8
 *   equivalents and `profile` is ignored.
 * - Ties on q go to the more specific match, then to the server's order of `offers` (never the
 *   client's order of ranges).
 * - No `Accept`, or none usable: the first offer.
 *
 * @param offers concrete media types in the server's order of preference (parameters allowed)
 * @param declared the structured-suffix type the representation declares itself to be: the
 *   vendor type @svc/versioning labelled the response with (`application/vnd.svc.v2+json`), or a
 *   HAL resource's `application/hal+json`; `undefined` or `false`: none, only an offer's own type
 *   matches
 * @example
 * matchMediaType("application/vnd.svc.v2+json", ["application/json"], "application/vnd.svc.v2+json");
 * // → { offer: "application/json", mediaType: "application/vnd.svc.v2+json", q: 1 }
 * matchMediaType("application/problem+json", ["application/json"]); // → undefined
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.1
 */
export function matchMediaType(
  accept: string | undefined,
  offers: readonly string[],
  declared?: string | false,
): MediaTypeMatch | undefined {
  const first = offers[0];
  if (first === undefined) return undefined;
  // RFC 9110 §12.5.1: "A request without any Accept header field implies that the user agent
  // will accept any media type in response" — the server's first choice.
  const ranges = accept === undefined ? null : cachedRanges(accept);
  if (ranges === null) {
    const parsed = parseOffer(first);
    return { offer: first, mediaType: parsed ? parsed.essence : first, q: 1 };
  }
  let best: MediaTypeMatch | undefined;
  let bestS = -1;
  const consider = (offer: string, mediaType: string, q: number, s: number) => {
    if (s < 0 || q <= 0) return;
    if (best === undefined || q > best.q || (q === best.q && s > bestS)) {
      best = { offer, mediaType, q };
      bestS = s;
    }
  };
  // RFC 6838 §4.2.8: only the declared `type/name+suffix` stands for an offer of `type/suffix`.
  // A `*` only ever names a range (RFC 9110 §12.5.1), never a representation's type (§8.3.1).
  const suffixed = typeof declared === "string" && !declared.includes("*") ? parseOffer(declared) : null;
  const plus = suffixed === null ? -1 : suffixed.subtype.lastIndexOf("+");
  for (const offer of offers) {
    const parsed = parseOffer(offer);
    if (!parsed) continue;
    const own = quality(ranges, parsed.type, parsed.subtype, parsed);
    consider(offer, parsed.essence, own.q, own.s);
    if (suffixed === null || plus <= 0) continue;
    if (suffixed.type !== parsed.type || suffixed.subtype.slice(plus + 1) !== parsed.subtype) continue;
    const echo = quality(ranges, suffixed.type, suffixed.subtype, parsed);
    // Only a range naming the declared type itself (specificity 4) counts; `application/*` or
    // `*\/*` already accept the offer's own type. Specificity 3: below an exact offer of the
    // declared type, above `type/*`.
    if (echo.s >= 4) consider(offer, suffixed.essence, echo.q, 3 + (echo.s - 4));
  }
  return best;
}

/**
 * Picks the offer the client prefers according to `Accept` (RFC 9110 §12.5.1), or `undefined`
 * when none is acceptable (→ 406). See {@link matchMediaType} for the rules.
 *
 * @example
 * selectMediaType("application/xml;q=0.9, application/json", ["application/json", "application/xml"]);
 * // → "application/json"
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.1
 */
export function selectMediaType(accept: string | undefined, offers: readonly string[]): string | undefined {
  return matchMediaType(accept, offers)?.offer;
}

/** Calls `onLine` with the value of each field line named `name` (lower case) until it answers true. */
function scanFieldLines(
  rawHeaders: readonly unknown[] | undefined,
  name: string,
  onLine: (value: unknown) => boolean,
): void {
  if (!Array.isArray(rawHeaders)) return;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const field = rawHeaders[i];
    if (typeof field === "string" && field.length === name.length && field.toLowerCase() === name) {
      if (onLine(rawHeaders[i + 1])) return;
    }
  }
}

/**
 * The value of every field line named `name` (given in lower case) in a request's `rawHeaders`,
 * in the order sent. Node's `req.headers` keeps the first line of a field that is no list and
 * drops the rest, while RFC 9110 §5.3 forbids a sender more than one line of such a field
 * (`Host`, RFC 9112 §3.2; `Authorization`; `Content-Type`): a proxy in front may have read the
 * other. Empty when there is no raw list (a stand-in request, HTTP/2's pseudo-headers).
 */
export function fieldLines(rawHeaders: readonly unknown[] | undefined, name: string): string[] {
  const lines: string[] = [];
  scanFieldLines(rawHeaders, name, (value) => {
    lines.push(String(value ?? ""));
    return false;
  });
  return lines;
}

/** Whether `rawHeaders` holds more than one field line named `name` (lower case); see {@link fieldLines}. */
export function repeatsField(rawHeaders: readonly unknown[] | undefined, name: string): boolean {
  let seen = 0;
  scanFieldLines(rawHeaders, name, () => ++seen > 1);
  return seen > 1;
}
