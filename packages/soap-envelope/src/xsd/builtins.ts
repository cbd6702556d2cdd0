import { base64ToBytes, bytesToBase64, bytesToHex, hexToBytes } from "../xml/bytes.js";
import { compileXsdPattern } from "./regex.js";

// The built-in simple types of XML Schema 1.0 Part 2 (§3.2 primitive, §3.3 derived): how each
// is derived, its whiteSpace facet, the JavaScript value it decodes to, and the lexical checks
// the decimal and date types of xsd/lexical.ts do not already make. Strings only: no XML.

/** The atomic built-in types (Part 2 §3.2, §3.3); the list types NMTOKENS, IDREFS, ENTITIES are lists of these. */
export type BuiltinType =
  | "anySimpleType"
  | "string"
  | "normalizedString"
  | "token"
  | "language"
  | "NMTOKEN"
  | "Name"
  | "NCName"
  | "ID"
  | "IDREF"
  | "ENTITY"
  | "boolean"
  | "decimal"
  | "integer"
  | "nonPositiveInteger"
  | "negativeInteger"
  | "long"
  | "int"
  | "short"
  | "byte"
  | "nonNegativeInteger"
  | "unsignedLong"
  | "unsignedInt"
  | "unsignedShort"
  | "unsignedByte"
  | "positiveInteger"
  | "float"
  | "double"
  | "duration"
  | "dateTime"
  | "time"
  | "date"
  | "gYearMonth"
  | "gYear"
  | "gMonthDay"
  | "gDay"
  | "gMonth"
  | "hexBinary"
  | "base64Binary"
  | "anyURI"
  | "QName"
  | "NOTATION";

/** Part 2 §4.3.6: what a type does to white space before its lexical space is checked. */
export type WhiteSpace = "preserve" | "replace" | "collapse";

/**
 * The JavaScript value of a type: `string` (its lexical form, the dates included), `boolean`,
 * `decimal` (the exact lexical string), `int` (a `number`: every value of the type is a safe
 * integer), `bigint` (`bigint` or the canonical string, per `longAs`), `float` (a `number`,
 * `INF`/`-INF`/`NaN` as `Infinity`/`-Infinity`/`NaN`), `bytes` (a `Uint8Array`), `qname` (the
 * Clark name `{namespace}local` it resolves to).
 */
export type ValueKind = "string" | "boolean" | "decimal" | "int" | "bigint" | "float" | "bytes" | "qname";

export interface BuiltinInfo {
  /** The type it is derived from by restriction (Part 2 §3.3), none for anySimpleType. */
  parent: BuiltinType | undefined;
  whiteSpace: WhiteSpace;
  value: ValueKind;
  /** Integer types: the inclusive bounds (canonical integers), absent when unbounded that way. */
  min?: string;
  max?: string;
}

const b = (
  parent: BuiltinType | undefined,
  value: ValueKind,
  whiteSpace: WhiteSpace = "collapse",
  min?: string,
  max?: string,
): BuiltinInfo => ({
  parent,
  whiteSpace,
  value,
  ...(min === undefined ? {} : { min }),
  ...(max === undefined ? {} : { max }),
});

/** Part 2 §3.2 and §3.3, one entry per atomic built-in. */
export const BUILTIN_INFO: Readonly<Record<BuiltinType, BuiltinInfo>> = {
  anySimpleType: b(undefined, "string", "preserve"),
  string: b("anySimpleType", "string", "preserve"),
  normalizedString: b("string", "string", "replace"),
  token: b("normalizedString", "string"),
  language: b("token", "string"),
  NMTOKEN: b("token", "string"),
  Name: b("token", "string"),
  NCName: b("Name", "string"),
  ID: b("NCName", "string"),
  IDREF: b("NCName", "string"),
  ENTITY: b("NCName", "string"),
  boolean: b("anySimpleType", "boolean"),
  decimal: b("anySimpleType", "decimal"),
  integer: b("decimal", "bigint"),
  nonPositiveInteger: b("integer", "bigint", "collapse", undefined, "0"),
  negativeInteger: b("nonPositiveInteger", "bigint", "collapse", undefined, "-1"),
  long: b("integer", "bigint", "collapse", "-9223372036854775808", "9223372036854775807"),
  int: b("long", "int", "collapse", "-2147483648", "2147483647"),
  short: b("int", "int", "collapse", "-32768", "32767"),
  byte: b("short", "int", "collapse", "-128", "127"),
  nonNegativeInteger: b("integer", "bigint", "collapse", "0"),
  unsignedLong: b("nonNegativeInteger", "bigint", "collapse", "0", "18446744073709551615"),
  unsignedInt: b("unsignedLong", "int", "collapse", "0", "4294967295"),
  unsignedShort: b("unsignedInt", "int", "collapse", "0", "65535"),
  unsignedByte: b("unsignedShort", "int", "collapse", "0", "255"),
  positiveInteger: b("nonNegativeInteger", "bigint", "collapse", "1"),
  float: b("anySimpleType", "float"),
  double: b("anySimpleType", "float"),
  duration: b("anySimpleType", "string"),
  dateTime: b("anySimpleType", "string"),
  time: b("anySimpleType", "string"),
  date: b("anySimpleType", "string"),
  gYearMonth: b("anySimpleType", "string"),
  gYear: b("anySimpleType", "string"),
  gMonthDay: b("anySimpleType", "string"),
  gDay: b("anySimpleType", "string"),
  gMonth: b("anySimpleType", "string"),
  hexBinary: b("anySimpleType", "bytes"),
  base64Binary: b("anySimpleType", "bytes"),
  anyURI: b("anySimpleType", "string"),
  QName: b("anySimpleType", "qname"),
  NOTATION: b("anySimpleType", "qname"),
};

/** The built-in list types (Part 2 §3.3.5, §3.3.10, §3.3.12): their item type. */
export const BUILTIN_LISTS: Readonly<Record<string, BuiltinType>> = {
  NMTOKENS: "NMTOKEN",
  IDREFS: "IDREF",
  ENTITIES: "ENTITY",
};

export function isBuiltin(local: string): local is BuiltinType {
  return Object.hasOwn(BUILTIN_INFO, local);
}

/** Whether `type` is `ancestor` or derived from it among the built-ins. */
export function builtinDerives(type: BuiltinType, ancestor: BuiltinType): boolean {
  for (let t: BuiltinType | undefined = type; t !== undefined; t = BUILTIN_INFO[t].parent) {
    if (t === ancestor) return true;
  }
  return false;
}

/** The primitive (Part 2 §3.2) a built-in is derived from. */
export function primitiveOf(type: BuiltinType): BuiltinType {
  let t = type;
  for (;;) {
    const parent = BUILTIN_INFO[t].parent;
    if (parent === undefined || parent === "anySimpleType") return t;
    t = parent;
  }
}

/** Types whose values are ordered numbers: the range facets and digits apply (Part 2 §4.3.7-§4.3.12). */
export function isDecimalFamily(type: BuiltinType): boolean {
  return builtinDerives(type, "decimal");
}

// Name productions (XML 1.0 Fifth Edition §2.3, Namespaces in XML §3) as XSD patterns, run on the
// linear-time pattern engine (xsd/regex.ts): the character classes are the Unicode ranges the
// productions list, which a hand-written test would have to repeat.
const NAME = compileXsdPattern("\\i\\c*");
const NCNAME = compileXsdPattern("[\\i-[:]][\\c-[:]]*");
const NMTOKEN = compileXsdPattern("\\c+");
// Part 2 §3.3.3: the lexical space of xs:language is RFC 3066's, written there as this pattern.
const LANGUAGE = compileXsdPattern("[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*");

// Each expression below is anchored and has no two quantified pieces that can match the same
// character next to each other, so a failing value is given up after at most a few passes over
// it: linear time, whatever the value (and the value is bounded by the message size limit).
const FLOAT_RE = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|-?INF|NaN)$/;
const TZ = "(Z|[+-](?:(?:0\\d|1[0-3]):[0-5]\\d|14:00))?";
const YEAR = "(-?(?:[1-9]\\d{4,}|\\d{4}))";
const TIME_RE = new RegExp(`^(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?|24:00:00(?:\\.0+)?)${TZ}$`);
const G_YEAR_MONTH_RE = new RegExp(`^${YEAR}-(\\d{2})${TZ}$`);
const G_YEAR_RE = new RegExp(`^${YEAR}${TZ}$`);
const G_MONTH_DAY_RE = new RegExp(`^--(\\d{2})-(\\d{2})${TZ}$`);
const G_DAY_RE = new RegExp(`^---(\\d{2})${TZ}$`);
const G_MONTH_RE = new RegExp(`^--(\\d{2})${TZ}$`);
// Part 2 §3.2.6.1: PnYnMnDTnHnMnS, each part optional, at least one, and T only before a time part.
const DURATION_RE =
  /^-?P(?=[\dT])(?:\d+Y)?(?:\d+M)?(?:\d+D)?(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?$/;
const HEX_RE = /^[0-9a-fA-F]*$/;
const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The built-ins whose lexical space is one pattern's language. */
const LEXICAL_PATTERNS: Partial<Record<BuiltinType, { test(value: string): boolean }>> = {
  language: LANGUAGE,
  NMTOKEN,
  Name: NAME,
  NCName: NCNAME,
  ID: NCNAME,
  IDREF: NCNAME,
  ENTITY: NCNAME,
  float: FLOAT_RE,
  double: FLOAT_RE,
  duration: DURATION_RE,
  time: TIME_RE,
};

function month(m: string | undefined): number {
  const n = Number(m);
  return n >= 1 && n <= 12 ? n : 0;
}

/**
 * The lexical check of the built-ins xsd/lexical.ts does not handle itself, on the value after
 * its whiteSpace facet: whether `v` is in the lexical space of `type`.
 */
export function builtinLexical(type: BuiltinType, v: string): boolean {
  const pattern = LEXICAL_PATTERNS[type];
  if (pattern !== undefined) return pattern.test(v);
  switch (type) {
    case "anySimpleType":
    case "string":
    case "anyURI":
      // xs:anyURI (Part 2 §3.2.17): every string is taken; a URI reference's syntax is the
      // application's to check (the W3C's own note says lexical checking is "impractical").
      return true;
    case "normalizedString":
      // After whiteSpace="replace" no tab, line feed or carriage return is left.
      return !/[\t\n\r]/.test(v);
    case "token":
      return !/[\t\n\r]|^ | $| {2}/.test(v);
    case "QName":
    case "NOTATION": {
      const colon = v.indexOf(":");
      if (colon === -1) return NCNAME.test(v);
      return NCNAME.test(v.slice(0, colon)) && NCNAME.test(v.slice(colon + 1));
    }
    case "gYearMonth": {
      const m = G_YEAR_MONTH_RE.exec(v);
      return m !== null && Number(m[1]) !== 0 && month(m[2]) > 0;
    }
    case "gYear": {
      const m = G_YEAR_RE.exec(v);
      return m !== null && Number(m[1]) !== 0;
    }
    case "gMonthDay": {
      const m = G_MONTH_DAY_RE.exec(v);
      const mm = month(m?.[1]);
      const d = Number(m?.[2]);
      return mm > 0 && d >= 1 && d <= (DAYS[mm - 1] ?? 0);
    }
    case "gDay": {
      const d = Number(G_DAY_RE.exec(v)?.[1]);
      return d >= 1 && d <= 31;
    }
    case "gMonth":
      return month(G_MONTH_RE.exec(v)?.[1]) > 0;
    case "hexBinary":
      return v.length % 2 === 0 && HEX_RE.test(v);
    case "base64Binary":
      return base64Octets(v) !== -1;
    default:
      return true;
  }
}

/**
 * xs:base64Binary (Part 2 §3.2.16): groups of four characters of the RFC 2045 alphabet, single
 * spaces allowed between them (the collapsed form), `=` padding only at the end and the bits it
 * leaves out zero (the B16 and B04 productions). The number of octets, or -1 when invalid.
 */
export function base64Octets(v: string): number {
  let count = 0;
  let pad = 0;
  let last = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c === 0x20) {
      if (i === 0 || i === v.length - 1 || v.charCodeAt(i - 1) === 0x20) return -1;
      continue;
    }
    if (c === 0x3d) {
      pad++;
      count++;
      continue;
    }
    if (pad > 0) return -1; // nothing but padding after padding
    if (!isBase64Char(c)) return -1;
    last = c;
    count++;
  }
  if (count % 4 !== 0 || pad > 2) return -1;
  const index = base64Index(last);
  // One `=`: the last character carries 2 bits that must be zero (B16); two: 4 bits (B04).
  if (pad === 1 && index % 4 !== 0) return -1;
  if (pad === 2 && index % 16 !== 0) return -1;
  return (count / 4) * 3 - pad;
}

function isBase64Char(c: number): boolean {
  return (
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2b ||
    c === 0x2f
  );
}

function base64Index(c: number): number {
  if (c >= 0x41 && c <= 0x5a) return c - 0x41;
  if (c >= 0x61 && c <= 0x7a) return c - 0x61 + 26;
  if (c >= 0x30 && c <= 0x39) return c - 0x30 + 52;
  return c === 0x2b ? 62 : 63;
}

/** The octets of a valid hexBinary or base64Binary lexical, in a Uint8Array of its own. */
export function decodeBytes(type: BuiltinType, v: string): Uint8Array {
  return primitiveOf(type) === "hexBinary" ? hexToBytes(v) : base64ToBytes(v);
}

/** The canonical lexical of octets (Part 2 §3.2.15.2 upper-case hex, §3.2.16 base64 without spaces). */
export function encodeBytes(type: BuiltinType, bytes: Uint8Array): string {
  return primitiveOf(type) === "hexBinary" ? bytesToHex(bytes) : bytesToBase64(bytes);
}

/** The octet count of a valid binary lexical, what its length facets count (Part 2 §4.3.1.3). */
export function octetLength(type: BuiltinType, v: string): number {
  return primitiveOf(type) === "hexBinary" ? v.length / 2 : base64Octets(v);
}

/** An xs:float / xs:double lexical as a number (Part 2 §3.2.4.1, §3.2.5.1). */
export function floatValue(v: string): number {
  if (v === "INF") return Number.POSITIVE_INFINITY;
  if (v === "-INF") return Number.NEGATIVE_INFINITY;
  return Number(v);
}

/** A number as an xs:float / xs:double lexical: `Infinity` as `INF`, `1e+21` as written by JavaScript. */
export function floatLexical(n: number): string {
  if (n === Number.POSITIVE_INFINITY) return "INF";
  if (n === Number.NEGATIVE_INFINITY) return "-INF";
  return String(n);
}

/**
 * The most significant digits an integer of a type without a bound on that side may have
 * (xs:integer, xs:nonNegativeInteger, ...). XML Schema Part 2 §5.4 lets a processor limit the
 * infinite value spaces, if it says where; converting a digit string to a `bigint` costs more
 * than linear time in its length, so a value of a million digits is refused, not converted.
 */
export const MAX_INTEGER_DIGITS = 10_000;
