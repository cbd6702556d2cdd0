import { shown as shownText } from "../xml/shown.js";
import { trimXml } from "../xml/space.js";
import {
  BUILTIN_INFO,
  type BuiltinType,
  builtinLexical,
  floatValue,
  isDecimalFamily,
  MAX_INTEGER_DIGITS,
  octetLength,
  primitiveOf,
  type WhiteSpace,
} from "./builtins.js";
import { SchemaValidationError } from "./errors.js";
import { compareDecimal, compareDuration, splitDecimal } from "./lexical-order.js";
import type { SimpleType } from "./model.js";

export { compareDecimal, compareDuration } from "./lexical-order.js";

// Lexical forms of the supported built-in types and the checks of their constraining facets
// (XML Schema 1.0 Part 2 §3.2, §3.3, §4.3), on strings only: no XML, no payload objects.

/** XML Schema Part 2 §4.3.6: whiteSpace="collapse" for every supported type but xs:string. */
export function collapse(value: string): string {
  return trimXml(value.replace(/[\t\n\r ]+/g, " "));
}

/** A literal after a type's whiteSpace facet (Part 2 §4.3.6). */
export function applyWhiteSpace(whiteSpace: WhiteSpace, value: string): string {
  if (whiteSpace === "preserve") return value;
  if (whiteSpace === "replace") return value.replace(/[\t\n\r]/g, " ");
  return collapseFast(value);
}

/** The items of a collapsed list literal (Part 2 §3.2.1.2 list: "white space separated"). */
export function listItems(v: string): string[] {
  return v === "" ? [] : v.split(" ");
}

/**
 * The member of a union (Part 2 §2.5.1.3) a literal belongs to: the first, in the order of
 * `memberTypes` then the inline ones, whose lexical space (with its facets) holds it.
 */
export function unionMember(type: SimpleType, raw: string, path: string): SimpleType {
  for (const member of type.memberTypes ?? []) {
    if (member.variety === "union") {
      try {
        return unionMember(member, raw, path);
      } catch (err) {
        if (err instanceof SchemaValidationError) continue;
        throw err;
      }
    }
    try {
      checkLexical(member, applyWhiteSpace(member.whiteSpace, raw), path);
      return member;
    } catch (err) {
      if (!(err instanceof SchemaValidationError)) throw err;
    }
  }
  return fail(path, `${shown(raw)} is not a value of any member type of ${type.name}`);
}

// XML 1.0 §2.2 Char ::= #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]; with
// the `u` flag a lone surrogate is one code point outside every range, so it matches too.
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/**
 * Part 2 §3.2.1: the value space of xs:string is "the set of finite-length sequences of
 * characters (as defined in [XML 1.0 (Second Edition)]) that match the Char production". A
 * string with any other (U+0000, U+FFFE, a lone surrogate) is no xs:string, and no character
 * reference can write it (XML 1.0 §4.1, WFC: Legal Character). A parsed message never holds
 * one; a value a handler returns may.
 */
export function checkXmlChars(v: string, path: string): void {
  const bad = NOT_XML_CHAR.exec(v);
  if (bad === null) return;
  const code = (bad[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
  fail(path, `contains U+${code}, which is not an XML character`);
}

/** The lexical space of xs:decimal (Part 2 §3.2.3.1). */
export const DECIMAL_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

const INTEGER_RE = /^[+-]?\d+$/;

// Part 2 §3.2.7.1 (dateTime, and date §3.2.9.1): "'-'? yyyy" where "if more than four digits,
// leading zeros are prohibited" (10000 yes, 02024 no).
const DATE_RE = /^(-?(?:[1-9]\d{4,}|\d{4}))-(\d{2})-(\d{2})(Z|[+-](?:(?:0\d|1[0-3]):[0-5]\d|14:00))?$/;

const DATETIME_RE =
  /^(-?(?:[1-9]\d{4,}|\d{4}))-(\d{2})-(\d{2})T(?:([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.\d+)?|24:00:00(?:\.0+)?)(Z|[+-](?:(?:0\d|1[0-3]):[0-5]\d|14:00))?$/;

const LONG_MIN = -(2n ** 63n);

const LONG_MAX = 2n ** 63n - 1n;

const INT_MIN_BIG = -(2n ** 31n);

const INT_MAX_BIG = 2n ** 31n - 1n;

const INT_MIN = -(2 ** 31);

const INT_MAX = 2 ** 31 - 1;

function validDate(y: string, m: string, d: string): boolean {
  const year = Number(y);
  const month = Number(m);
  const day = Number(d);
  if (year === 0 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day <= days;
}

/**
 * Checks a lexical value (after the type's whiteSpace facet) against the base type and every
 * facet (XML Schema Part 2 §4.3); a list's items against its item type, a union's against its
 * members.
 */
export function checkLexical(type: SimpleType, value: string, path: string): void {
  const f = type.facets;
  let v = value;
  if (type.variety === "list") {
    const items = listItems(v);
    const item = type.itemType as SimpleType;
    // Part 2 §4.3.1.3: on a list, length facets count its items.
    checkCount(f, items.length, path, "items");
    for (const i of items) checkLexical(item, i, path);
  } else if (type.variety === "union") {
    // The union's own facets (pattern, enumeration) see the literal as its member normalises it.
    v = applyWhiteSpace(unionMember(type, v, path).whiteSpace, v);
  } else {
    checkBaseLexical(type.base, v, path);
    // The cheap, bounded checks come first (length, range, digits, enumeration) and the pattern
    // facets last, so a value that is too long is refused before any pattern reads it.
    checkLength(type.base, f, v, path);
    const value = BUILTIN_INFO[type.base].value;
    if (value === "int" || value === "bigint" || value === "decimal" || value === "float")
      checkRange(type.base, f, v, path);
    else if (type.base === "duration") checkDurationRange(f, v, path);
  }
  if (f.enumeration && enumerationLiteral(type, v) === undefined)
    fail(path, `${shown(v)} is not one of ${f.enumeration.join(", ")}`);
  // Linear in the value's length whatever the pattern (see xsd/regex.ts); the value itself is
  // bounded by the message size limit (`limits.maxBytes`).
  for (const step of f.patterns)
    if (!step.some((p) => p.test(v))) fail(path, `${shown(v)} does not match the pattern`);
}

type Facets = SimpleType["facets"];

/**
 * The enumeration value, as the schema writes it, that `v` (a valid lexical of the base type)
 * equals; undefined when none does. XML Schema 1.0 Part 2 §4.3.5: enumeration "constrains the
 * value space", so `01` and `+1` are the xs:int 1, `1` is the xs:boolean true and `1.50` the
 * xs:decimal 1.5. Strings (and dates, kept lexical here) compare as written.
 */
export function enumerationLiteral(type: SimpleType, v: string): string | undefined {
  const values = type.facets.enumeration;
  if (values === undefined) return undefined;
  if (type.variety !== "atomic") return values.includes(v) ? v : undefined;
  switch (BUILTIN_INFO[type.base].value) {
    case "int":
    case "bigint":
      return values.find((e) => INTEGER_RE.test(e) && compareDecimal(e, v) === 0);
    case "decimal":
      return values.find((e) => DECIMAL_RE.test(e) && compareDecimal(e, v) === 0);
    case "boolean": {
      const b = v === "true" || v === "1";
      return values.find((e) => (b ? e === "true" || e === "1" : e === "false" || e === "0"));
    }
    case "float": {
      const n = floatValue(v);
      return values.find((e) => builtinLexical("double", e) && Object.is(floatValue(e) || 0, n || 0));
    }
    case "bytes": {
      const hex = primitiveOf(type.base) === "hexBinary";
      const canonical = (x: string) => (hex ? x.toUpperCase() : x.replaceAll(" ", ""));
      const c = canonical(v);
      return values.find((e) => canonical(e) === c);
    }
    default:
      return values.includes(v) ? v : undefined;
  }
}

/** A check of one simple type's lexical values, as {@link checkLexical} makes it. */
export type LexicalCheck = (v: string, path: string) => void;

const LEXICAL_CHECKS = new WeakMap<SimpleType, LexicalCheck>();

/**
 * {@link checkLexical} for one type, chosen once: a type without constraining facets needs its
 * base type's lexical space only (Part 2 §4.3 adds nothing then), and `xs:string` without facets
 * accepts every string.
 */
export function lexicalCheck(type: SimpleType): LexicalCheck {
  let check = LEXICAL_CHECKS.get(type);
  if (check === undefined) {
    if (type.variety === "atomic" && !hasFacets(type.facets)) {
      const base = type.base;
      check =
        base === "string" || base === "anySimpleType"
          ? () => {}
          : (v, path) => checkBaseLexical(base, v, path);
    } else {
      check = (v, path) => checkLexical(type, v, path);
    }
    LEXICAL_CHECKS.set(type, check);
  }
  return check;
}

function hasFacets(f: Facets): boolean {
  return (
    f.patterns.length > 0 ||
    f.enumeration !== undefined ||
    f.length !== undefined ||
    f.minLength !== undefined ||
    f.maxLength !== undefined ||
    f.minInclusive !== undefined ||
    f.maxInclusive !== undefined ||
    f.minExclusive !== undefined ||
    f.maxExclusive !== undefined ||
    f.totalDigits !== undefined ||
    f.fractionDigits !== undefined
  );
}

const COLLAPSE_WORK = /[\t\n\r]| {2}/;

/**
 * {@link collapse} without the replacement when it would change nothing: once trimmed, a value
 * with no tab, line feed, carriage return or double space has no run to replace, and the runs
 * at its ends are white space `trim` removes either way.
 */
export function collapseFast(value: string): string {
  const trimmed = trimXml(value);
  return COLLAPSE_WORK.test(trimmed) ? collapse(value) : trimmed;
}

function fail(path: string, msg: string): never {
  throw new SchemaValidationError(path, msg);
}

/** The value as quoted in an error message; only built when a check fails. */
function shown(v: string): string {
  return JSON.stringify(shownText(v, 60));
}

/** The lexical space and value range of the built-in base type (Part 2 §3.2, §3.3). */
function checkBaseLexical(base: BuiltinType, v: string, path: string): void {
  switch (base) {
    case "string":
    case "anySimpleType":
      break;
    case "long":
    case "int":
      checkInteger(base, v, path);
      break;
    case "decimal":
      if (!DECIMAL_RE.test(v)) fail(path, `${shown(v)} is not a valid xs:decimal`);
      break;
    case "boolean":
      if (v !== "true" && v !== "false" && v !== "1" && v !== "0")
        fail(path, `${shown(v)} is not a valid xs:boolean`);
      break;
    case "date": {
      const m = DATE_RE.exec(v);
      if (!m || !validDate(m[1] ?? "", m[2] ?? "", m[3] ?? ""))
        fail(path, `${shown(v)} is not a valid xs:date`);
      break;
    }
    case "dateTime": {
      const m = DATETIME_RE.exec(v);
      if (!m || !validDate(m[1] ?? "", m[2] ?? "", m[3] ?? ""))
        fail(path, `${shown(v)} is not a valid xs:dateTime`);
      break;
    }
    default: {
      const info = BUILTIN_INFO[base];
      if (info.value === "int" || info.value === "bigint") checkIntegerRange(base, v, path);
      else if (!builtinLexical(base, v)) fail(path, `${shown(v)} is not a valid xs:${base}`);
    }
  }
}

/** The integer types but xs:long and xs:int: an integer within the type's bounds, if any. */
function checkIntegerRange(base: BuiltinType, raw: string, path: string): void {
  if (!INTEGER_RE.test(raw)) fail(path, `${shown(raw)} is not a valid xs:${base}`);
  const v = canonicalInteger(raw);
  const { min, max } = BUILTIN_INFO[base];
  if ((min !== undefined && compareDecimal(v, min) < 0) || (max !== undefined && compareDecimal(v, max) > 0))
    fail(path, `${shown(raw)} is out of the xs:${base} range`);
  if (v.length - (v.charCodeAt(0) === 0x2d ? 1 : 0) > MAX_INTEGER_DIGITS)
    fail(path, `${shown(raw)} has more than ${MAX_INTEGER_DIGITS} digits`);
}

/**
 * An xs:integer lexical (sign, digits) without its `+` and leading zeros (Part 2 §3.3.13.2, the
 * canonical representation): `+007` → `7`, `-0` → `0`. What is handed to `BigInt()`, which
 * converts a long digit string in more than linear time.
 */
export function canonicalInteger(v: string): string {
  const first = v.charCodeAt(0);
  // 0x2b "+", 0x2d "-", 0x30 "0": anything else starts a canonical form already.
  if (first !== 0x2b && first !== 0x2d && first !== 0x30) return v;
  const negative = first === 0x2d;
  let i = first === 0x2b || negative ? 1 : 0;
  while (i < v.length - 1 && v.charCodeAt(i) === 0x30) i++;
  const digits = v.slice(i);
  return negative && digits !== "0" ? `-${digits}` : digits;
}

/**
 * Significant digits of xs:long's bounds (±9223372036854775807/8, Part 2 §3.3.16): a value with
 * more lies outside the range, and is refused without converting it.
 */
const LONG_DIGITS = 19;

/** xs:long (Part 2 §3.3.16) and xs:int (§3.3.17): an integer inside the type's range. */
function checkInteger(base: "long" | "int", raw: string, path: string): void {
  if (!INTEGER_RE.test(raw)) fail(path, `${shown(raw)} is not a valid xs:${base}`);
  const v = canonicalInteger(raw);
  // At most 15 characters: exact as a double, and always inside the xs:long range.
  if (v.length <= 15) {
    if (base === "int") {
      const n = Number(v);
      if (n < INT_MIN || n > INT_MAX) fail(path, `${shown(raw)} is out of the xs:int range`);
    }
    return;
  }
  // No BigInt() of a value that cannot be in range: a message of a million digits would hold
  // the event loop for most of a second in the conversion alone.
  if (v.length - (v.charCodeAt(0) === 0x2d ? 1 : 0) > LONG_DIGITS)
    fail(path, `${shown(raw)} is out of the xs:${base} range`);
  const n = BigInt(v);
  const [lo, hi] = base === "long" ? [LONG_MIN, LONG_MAX] : [INT_MIN_BIG, INT_MAX_BIG];
  if (n < lo || n > hi) fail(path, `${shown(raw)} is out of the xs:${base} range`);
}

/**
 * length, minLength, maxLength (Part 2 §4.3.1-§4.3.3): counted in characters (code points) on
 * strings and URIs, in octets on binary types; not applied to the other types (§4.1.5 lists
 * them as not applicable there, and the compiler refuses them).
 */
function checkLength(base: BuiltinType, f: Facets, v: string, path: string): void {
  if (f.length === undefined && f.minLength === undefined && f.maxLength === undefined) return;
  const value = BUILTIN_INFO[base].value;
  if (value === "bytes") checkCount(f, octetLength(base, v), path, "octets");
  else if (value === "string") checkCount(f, codePointLength(v), path, "characters");
}

function checkCount(f: Facets, len: number, path: string, unit: string): void {
  if (f.length !== undefined && len !== f.length)
    fail(path, `length must be ${f.length}${unit === "characters" ? "" : ` ${unit}`}`);
  if (f.minLength !== undefined && len < f.minLength)
    fail(path, `length must be at least ${f.minLength}${unit === "characters" ? "" : ` ${unit}`}`);
  if (f.maxLength !== undefined && len > f.maxLength)
    fail(path, `length must be at most ${f.maxLength}${unit === "characters" ? "" : ` ${unit}`}`);
}

/** The range facets (Part 2 §4.3.7-§4.3.10), totalDigits and fractionDigits (§4.3.11, §4.3.12). */
function checkRange(base: BuiltinType, f: Facets, v: string, path: string): void {
  if (!isDecimalFamily(base)) {
    checkFloatRange(f, floatValue(v), path);
    return;
  }
  if (f.minInclusive !== undefined && compareDecimal(v, f.minInclusive) < 0)
    fail(path, `must be ≥ ${f.minInclusive}`);
  if (f.maxInclusive !== undefined && compareDecimal(v, f.maxInclusive) > 0)
    fail(path, `must be ≤ ${f.maxInclusive}`);
  if (f.minExclusive !== undefined && compareDecimal(v, f.minExclusive) <= 0)
    fail(path, `must be > ${f.minExclusive}`);
  if (f.maxExclusive !== undefined && compareDecimal(v, f.maxExclusive) >= 0)
    fail(path, `must be < ${f.maxExclusive}`);
  if (f.totalDigits === undefined && f.fractionDigits === undefined) return;
  const { int, frac } = splitDecimal(v);
  const digits = `${int}${frac}`.replace(/^0+/, "") || "0";
  if (f.totalDigits !== undefined && digits.length > f.totalDigits)
    fail(path, `has more than ${f.totalDigits} digits`);
  if (f.fractionDigits !== undefined && frac.length > f.fractionDigits) {
    fail(path, `has more than ${f.fractionDigits} fraction digits`);
  }
}

/** The range facets on xs:float and xs:double: compared as numbers (Part 2 §3.2.4, §3.2.5 order). */
function checkFloatRange(f: Facets, n: number, path: string): void {
  if (f.minInclusive !== undefined && !(n >= floatValue(f.minInclusive)))
    fail(path, `must be ≥ ${f.minInclusive}`);
  if (f.maxInclusive !== undefined && !(n <= floatValue(f.maxInclusive)))
    fail(path, `must be ≤ ${f.maxInclusive}`);
  if (f.minExclusive !== undefined && !(n > floatValue(f.minExclusive)))
    fail(path, `must be > ${f.minExclusive}`);
  if (f.maxExclusive !== undefined && !(n < floatValue(f.maxExclusive)))
    fail(path, `must be < ${f.maxExclusive}`);
}

/**
 * The range facets on xs:duration (Part 2 §3.2.6.2): durations are partially ordered (P1M and
 * P30D are neither equal nor ordered), and a value not ordered against a bound fails it.
 */
function checkDurationRange(f: Facets, v: string, path: string): void {
  const check = (bound: string | undefined, ok: (c: number) => boolean, op: string) => {
    if (bound !== undefined && !ok(compareDuration(v, bound))) fail(path, `must be ${op} ${bound}`);
  };
  check(f.minInclusive, (c) => c >= 0, "≥");
  check(f.maxInclusive, (c) => c <= 0, "≤");
  check(f.minExclusive, (c) => c > 0, ">");
  check(f.maxExclusive, (c) => c < 0, "<");
}

const HIGH_SURROGATE = /[\ud800-\udbff]/;

/** Length in characters (XML Schema Part 2 §4.3.1: code points, not UTF-16 units), without copying. */
function codePointLength(v: string): number {
  // Without a high surrogate there is no pair: one code unit per character.
  if (!HIGH_SURROGATE.test(v)) return v.length;
  let pairs = 0;
  for (let i = 0; i < v.length; i++) {
    const unit = v.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = v.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return v.length - pairs;
}
