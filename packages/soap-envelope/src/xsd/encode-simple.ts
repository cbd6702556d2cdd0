import { escapeXml } from "@svc/errors";
import { shown } from "../xml/shown.js";
import { BUILTIN_INFO, builtinLexical, encodeBytes, floatLexical, primitiveOf } from "./builtins.js";
import { SchemaValidationError } from "./errors.js";
import { applyWhiteSpace, checkLexical, checkXmlChars, collapse, lexicalCheck } from "./lexical.js";
import type { SimpleType } from "./model.js";

/**
 * The namespace declarations QName values need on the element being written (Part 2 §3.2.18: a
 * QName's prefix must be declared where it appears): `q`, `q1`, ... per namespace.
 */
export interface QNameScope {
  /** The element's default namespace, what an unprefixed QName would resolve to. */
  defaultNs: string;
  prefixes: Map<string, string>;
  declarations: string;
}

/** A Clark name `{ns}local` or a bare local name, its local part an NCName. */
export function splitClark(name: string, path: string): { namespace: string; localName: string } {
  let namespace = "";
  let localName = name;
  if (name.charCodeAt(0) === 0x7b) {
    const end = name.indexOf("}");
    namespace = name.slice(1, end);
    localName = end === -1 ? "" : name.slice(end + 1);
  }
  if (!builtinLexical("NCName", localName))
    throw new SchemaValidationError(
      path,
      `${JSON.stringify(shown(name, 60))} is not a name ({namespace}local)`,
    );
  return { namespace, localName };
}

/**
 * Set while a message is encoded as an XOP package (SOAP MTOM): it is handed each
 * `xs:base64Binary` value given as octets, with its checked lexical form, and answers the text
 * that stands for it in the serialization.
 */
let binaryHook: ((bytes: Uint8Array, lexical: string) => string) | undefined;

/**
 * Runs `encode` with each octet value of an `xs:base64Binary` type (or one derived from it)
 * handed to `hook` once checked: what XOP 1.0 §3.1 may take out of the envelope. Synchronous, as
 * the encoders are; the hook before is restored after.
 */
export function withBinaryHook<T>(hook: (bytes: Uint8Array, lexical: string) => string, encode: () => T): T {
  const before = binaryHook;
  binaryHook = hook;
  try {
    return encode();
  } finally {
    binaryHook = before;
  }
}

/** JS value → lexical form, then the same checks as on input. */
export function encodeSimple(type: SimpleType, value: unknown, path: string, qnames?: QNameScope): string {
  const lexical = lexicalOf(type, value, path, qnames);
  if (
    binaryHook === undefined ||
    !(value instanceof Uint8Array) ||
    type.variety !== "atomic" ||
    primitiveOf(type.base) !== "base64Binary"
  )
    return lexical;
  return binaryHook(value, lexical);
}

/**
 * {@link encodeSimple} for a value that is never taken out of the envelope (an attribute's: XOP
 * 1.0 §3.1 optimizes element content only).
 */
export function lexicalOf(type: SimpleType, value: unknown, path: string, qnames?: QNameScope): string {
  if (type.variety === "union") {
    // Part 2 §2.5.1.3: the value is of the first member type that takes it.
    for (const member of type.memberTypes ?? []) {
      let lexical: string;
      try {
        lexical = lexicalOf(member, value, path, qnames);
      } catch (err) {
        if (err instanceof SchemaValidationError) continue;
        throw err;
      }
      checkLexical(type, lexical, path);
      return lexical;
    }
    throw new SchemaValidationError(
      path,
      `${describeValue(value)} is not a value of any member type of ${type.name}`,
    );
  }
  if (type.variety === "list") {
    let lexical: string;
    if (typeof value === "string") lexical = collapse(value);
    else if (Array.isArray(value)) {
      const item = type.itemType as SimpleType;
      lexical = value
        .map((v, i) => {
          const text = lexicalOf(item, v, `${path}[${i}]`, qnames);
          // Part 2 §4.2.1: list items are separated by white space, so none may hold any.
          if (text === "" || /[ \t\n\r]/.test(text))
            throw new SchemaValidationError(
              `${path}[${i}]`,
              "a list item must be non-empty and hold no white space",
            );
          return text;
        })
        .join(" ");
    } else {
      throw new SchemaValidationError(path, `expected an array, got ${describeValue(value)}`);
    }
    checkLexical(type, lexical, path);
    return lexical;
  }
  let lexical: string;
  const bad = (): never => {
    throw new SchemaValidationError(path, `expected xs:${type.base}, got ${describeValue(value)}`);
  };
  switch (BUILTIN_INFO[type.base].value) {
    case "string":
      if (type.base === "date" || type.base === "dateTime") {
        lexical = dateLexical(type.base, value, bad);
        break;
      }
      if (typeof value !== "string") bad();
      checkXmlChars(value as string, path);
      lexical = applyWhiteSpace(type.whiteSpace, value as string);
      break;
    case "int":
    case "bigint":
      if (typeof value === "bigint") lexical = value.toString();
      else if (typeof value === "number" && Number.isSafeInteger(value)) lexical = String(value);
      else if (typeof value === "string") lexical = collapse(value);
      else lexical = bad();
      break;
    case "decimal":
      // A number is accepted only when its shortest round-trip form is plain decimal notation;
      // exact amounts should travel as strings.
      if (typeof value === "bigint") lexical = value.toString();
      else if (typeof value === "number" && Number.isFinite(value) && !/e/i.test(String(value)))
        lexical = String(value);
      else if (typeof value === "string") lexical = collapse(value);
      else lexical = bad();
      break;
    case "float":
      if (typeof value === "number") lexical = floatLexical(value);
      else if (typeof value === "string") lexical = collapse(value);
      else lexical = bad();
      break;
    case "boolean":
      if (typeof value === "boolean") lexical = String(value);
      else if (typeof value === "string") lexical = collapse(value);
      else lexical = bad();
      break;
    case "bytes":
      if (value instanceof Uint8Array) lexical = encodeBytes(type.base, value);
      else if (typeof value === "string") lexical = collapse(value);
      else lexical = bad();
      break;
    case "qname":
      lexical = qnameLexical(value, path, qnames, bad);
      break;
  }
  checkLexical(type, lexical, path);
  return lexical;
}

function dateLexical(base: "date" | "dateTime", value: unknown, bad: () => never): string {
  if (value instanceof Date && !Number.isNaN(value.getTime())) {
    const iso = isoDateTime(value);
    return base === "date" ? iso.slice(0, iso.indexOf("T")) : iso;
  }
  if (typeof value === "string") return collapse(value);
  return bad();
}

/**
 * A QName value (a Clark name `{ns}local`, or a bare local name for no namespace) as `prefix:local`,
 * its prefix declared on the element being written.
 */
function qnameLexical(
  value: unknown,
  path: string,
  qnames: QNameScope | undefined,
  bad: () => never,
): string {
  if (typeof value !== "string" || qnames === undefined) return bad();
  const { namespace, localName } = splitClark(value, path);
  if (namespace === "") {
    // An unprefixed QName takes the default namespace, which is the element's own.
    if (qnames.defaultNs !== "")
      throw new SchemaValidationError(
        path,
        `${JSON.stringify(value)} has no namespace and cannot be written inside a namespaced element`,
      );
    return localName;
  }
  let prefix = qnames.prefixes.get(namespace);
  if (prefix === undefined) {
    prefix = `q${qnames.prefixes.size === 0 ? "" : qnames.prefixes.size}`;
    qnames.prefixes.set(namespace, prefix);
    qnames.declarations += ` xmlns:${prefix}="${escapeXml(namespace)}"`;
  }
  return `${prefix}:${localName}`;
}

/**
 * A valid Date as an xs:dateTime lexical in UTC (XML Schema 1.0 Part 2 §3.2.7.1). `toISOString`
 * writes a year after 9999 in the expanded form of ECMA-262 §21.4.1.32 (`+010000-01-01T…`); Part
 * 2 writes it with as many digits as it needs and no sign (`10000-01-01T…`: "if more than four
 * digits, leading zeros are prohibited"). Years before 0001 keep their form, which Part 2 has no
 * lexical for, and fail the lexical check as before.
 */
function isoDateTime(value: Date): string {
  const iso = value.toISOString();
  if (iso.charCodeAt(0) !== 0x2b) return iso;
  const dash = iso.indexOf("-", 1);
  return `${iso.slice(1, dash).replace(/^0+/, "")}${iso.slice(dash)}`;
}

/** What a value is, for "expected xs:string, got the number 5". */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (typeof value === "string") return `the string ${JSON.stringify(shown(value, 60))}`;
  if (typeof value === "bigint") return `the bigint ${value}n`;
  if (typeof value === "object") {
    return Array.isArray(value) ? "an array" : value instanceof Date ? "a Date" : "an object";
  }
  return `the ${typeof value} ${String(value)}`;
}

/** Whether a type's values may be QNames, whose prefixes the element must declare. */
export function needsDeclarations(type: SimpleType): boolean {
  if (type.variety === "list") return needsDeclarations(type.itemType as SimpleType);
  if (type.variety === "union") return (type.memberTypes ?? []).some(needsDeclarations);
  return BUILTIN_INFO[type.base].value === "qname";
}

/** An xs:string (or a restriction of it) that keeps its white space: written as given. */
export function isPlainString(type: SimpleType): boolean {
  return type.variety === "atomic" && type.base === "string" && type.whiteSpace === "preserve";
}

/**
 * escapeXml's test (`@svc/errors`): a character to escape, or one XML 1.0 §2.2 does not allow
 * (which checkXmlChars refuses).
 */
export const NEEDS_WORK = /[&<>"'\t\n\r]|[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** encodeSimple for one type: its conversion and lexical check chosen once. */
export function simpleEncoder(type: SimpleType): (value: unknown, path: string) => string {
  const check = lexicalCheck(type);
  if (type.variety !== "atomic") return (value, path) => encodeSimple(type, value, path);
  if (isPlainString(type)) {
    return (value, path) => {
      if (typeof value !== "string") return encodeSimple(type, value, path);
      checkXmlChars(value, path);
      check(value, path);
      return value;
    };
  }
  if (type.base === "long" || type.base === "int") {
    return (value, path) => {
      if (typeof value !== "bigint") return encodeSimple(type, value, path);
      const lexical = value.toString();
      check(lexical, path);
      return lexical;
    };
  }
  return (value, path) => encodeSimple(type, value, path);
}
