import { escapeXml } from "@svc/errors";
import { SchemaValidationError } from "./schema-errors.js";
import {
  type ComplexType,
  cachedElementParticles,
  type ElementDecl,
  type ElementParticle,
  elementParticles,
  emptiable,
  firstNames,
  type GroupParticle,
  type Particle,
  type SimpleType,
  XSI_NS,
} from "./schema-model.js";
import { shown } from "./shown.js";
import { checkLexical, checkXmlChars, collapse, lexicalCheck } from "./xsd-lexical.js";

/**
 * Validates a value against an element declaration and serializes it, attributes and child
 * elements in schema order whatever the order of the object's keys; `parentNs` is the default
 * namespace in scope, so `xmlns` is written only where it changes.
 * @throws {SchemaValidationError} when the value does not match, `path` naming where as a property
 * path of the value (`GetCustomerResponse.customer.email`, `Order.item[2].price`)
 */
export function encodeElement(decl: ElementDecl, value: unknown, parentNs: string, path: string): string {
  const nsDecl = decl.namespace === parentNs ? "" : ` xmlns="${escapeXml(decl.namespace)}"`;
  const name = decl.localName;
  if (value === null) {
    if (!decl.nillable) throw new SchemaValidationError(path, "is not nillable");
    return `<${name}${nsDecl} xmlns:xsi="${XSI_NS}" xsi:nil="true"/>`;
  }
  const type = decl.type;
  if (type.kind === "simple") {
    return `<${name}${nsDecl}>${escapeXml(encodeSimple(type, value, path))}</${name}>`;
  }
  if (typeof value !== "object" || value === undefined || Array.isArray(value) || value instanceof Date) {
    throw new SchemaValidationError(path, `expected an object, got ${describeValue(value)}`);
  }
  const obj = value as Record<string, unknown>;
  let attrs = "";
  // Namespaces in XML 1.0 §3 and XML 1.0 §3.1 (unique attribute names): each namespace of a
  // qualified attribute is declared once per element, with its own prefix.
  let prefixes: Map<string, string> | undefined;
  for (const a of type.attributes) {
    const v = obj[a.name];
    if (v === undefined) {
      if (a.required) throw new SchemaValidationError(`${path}.${a.name}`, "is required");
      continue;
    }
    const text = escapeXml(encodeSimple(a.type, v, `${path}.${a.name}`));
    if (!a.qualifiedNs) {
      attrs += ` ${a.name}="${text}"`;
      continue;
    }
    let prefix = prefixes?.get(a.qualifiedNs);
    if (prefix === undefined) {
      prefixes ??= new Map();
      prefix = `a${prefixes.size === 0 ? "" : prefixes.size}`;
      prefixes.set(a.qualifiedNs, prefix);
      attrs += ` xmlns:${prefix}="${escapeXml(a.qualifiedNs)}"`;
    }
    attrs += ` ${prefix}:${a.name}="${text}"`;
  }
  let inner = "";
  if (type.simpleContent) {
    inner = escapeXml(encodeSimple(type.simpleContent, obj.$value, `${path}.$value`));
  } else if (type.content) {
    inner = encodeGroup(type.content, obj, decl.namespace, path);
  }
  const allowed = allowedKeys(type);
  for (const key of Object.keys(obj)) {
    if (!allowed.has(key) && obj[key] !== undefined)
      throw new SchemaValidationError(path, `"${key}" is not in the schema`);
  }
  return `<${name}${nsDecl}${attrs}>${inner}</${name}>`;
}

export function encodeGroup(
  g: GroupParticle,
  obj: Record<string, unknown>,
  ns: string,
  path: string,
): string {
  if (g.kind === "choice") {
    const alt = g.items.find((item) => [...firstNames(item, true)].some((n) => obj[n] !== undefined));
    if (!alt) {
      if (g.min === 0 || emptiable(g)) return "";
      throw new SchemaValidationError(
        path,
        `needs one of ${g.items.flatMap((i) => [...firstNames(i, true)]).join(", ")}`,
      );
    }
    return encodeParticle(alt, obj, ns, path);
  }
  if (g.max > 1) throw new SchemaValidationError(path, "repeated groups cannot be encoded from an object");
  if (g.min === 0 && !cachedElementParticles(g).some((p) => obj[p.decl.localName] !== undefined)) return "";
  let out = "";
  for (const item of g.items) out += encodeParticle(item, obj, ns, path);
  return out;
}

function encodeParticle(p: Particle, obj: Record<string, unknown>, ns: string, path: string): string {
  if (p.kind !== "element") return encodeGroup(p, obj, ns, path);
  const value = obj[p.decl.localName];
  const childPath = `${path}.${p.decl.localName}`;
  if (!p.many) {
    // One value or none: the checks below on a list of zero or one, without building it.
    const count = value === undefined ? 0 : 1;
    if (count < p.min) throw new SchemaValidationError(childPath, "is required");
    if (count > p.max) throw new SchemaValidationError(childPath, `occurs at most ${p.max} times`);
    return count === 0 ? "" : encodeElement(p.decl, value, ns, childPath);
  }
  const list = value === undefined ? [] : value;
  if (!Array.isArray(list)) {
    throw new SchemaValidationError(childPath, `expected an array, got ${describeValue(list)}`);
  }
  if (list.length < p.min) throw new SchemaValidationError(childPath, "is required");
  if (list.length > p.max) throw new SchemaValidationError(childPath, `occurs at most ${p.max} times`);
  let out = "";
  for (let i = 0; i < list.length; i++) out += encodeElement(p.decl, list[i], ns, `${childPath}[${i}]`);
  return out;
}

const ALLOWED_KEYS = new WeakMap<ComplexType, ReadonlySet<string>>();

/** The object keys a complex type's value may carry (attributes, elements, `$value`), computed once. */
function allowedKeys(type: ComplexType): ReadonlySet<string> {
  let keys = ALLOWED_KEYS.get(type);
  if (keys === undefined) {
    const set = new Set<string>(type.attributes.map((a) => a.name));
    if (type.simpleContent) set.add("$value");
    else if (type.content) for (const p of elementParticles(type.content)) set.add(p.decl.localName);
    keys = set;
    ALLOWED_KEYS.set(type, keys);
  }
  return keys;
}

/** JS value → lexical form, then the same checks as on input. */
function encodeSimple(type: SimpleType, value: unknown, path: string): string {
  let lexical: string;
  const bad = (): never => {
    throw new SchemaValidationError(path, `expected xs:${type.base}, got ${describeValue(value)}`);
  };
  switch (type.base) {
    case "string":
      if (typeof value !== "string") bad();
      lexical = value as string;
      checkXmlChars(lexical, path);
      break;
    case "long":
    case "int":
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
    case "boolean":
      if (typeof value === "boolean") lexical = String(value);
      else if (typeof value === "string") lexical = collapse(value);
      else lexical = bad();
      break;
    case "date":
      if (value instanceof Date && !Number.isNaN(value.getTime())) {
        const iso = isoDateTime(value);
        lexical = iso.slice(0, iso.indexOf("T"));
      } else if (typeof value === "string") lexical = collapse(value);
      else lexical = bad();
      break;
    case "dateTime":
      if (value instanceof Date && !Number.isNaN(value.getTime())) lexical = isoDateTime(value);
      else if (typeof value === "string") lexical = collapse(value);
      else lexical = bad();
      break;
  }
  checkLexical(type, lexical, path);
  return lexical;
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
function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (typeof value === "string") return `the string ${JSON.stringify(shown(value, 60))}`;
  if (typeof value === "bigint") return `the bigint ${value}n`;
  if (typeof value === "object") {
    return Array.isArray(value) ? "an array" : value instanceof Date ? "a Date" : "an object";
  }
  return `the ${typeof value} ${String(value)}`;
}

// Compiled encoders: encodeElement specialised once per element declaration (its tags written
// out, its simple types' conversions and checks chosen), writing and failing exactly as
// encodeElement does. A type with attributes or simple content is handed to encodeElement, and
// any content model but a sequence of elements occurring once to encodeGroup.

/** Encodes a value as an element of one declaration; arguments as encodeElement's. */
export type ElementEncoder = (value: unknown, parentNs: string, path: string) => string;

/** The compiled encoders of one schema, filled as declarations are first used. */
export class Encoders {
  private readonly cache = new Map<ElementDecl, ElementEncoder>();

  for(decl: ElementDecl): ElementEncoder {
    let encoder = this.cache.get(decl);
    if (encoder === undefined) {
      encoder = compileEncoder(decl, this);
      this.cache.set(decl, encoder);
    }
    return encoder;
  }
}

function compileEncoder(decl: ElementDecl, encoders: Encoders): ElementEncoder {
  const type = decl.type;
  if (type.kind === "complex" && (type.attributes.length > 0 || type.simpleContent))
    return (value, parentNs, path) => encodeElement(decl, value, parentNs, path);
  const ns = decl.namespace;
  const name = decl.localName;
  const open = `<${name}`;
  const openNs = `<${name} xmlns="${escapeXml(ns)}"`;
  const close = `</${name}>`;
  const nil = ` xmlns:xsi="${XSI_NS}" xsi:nil="true"/>`;
  const nillable = decl.nillable;
  if (type.kind === "simple") {
    const simple = simpleEncoder(type);
    // A lexical form that passed its check holds no character to escape (XML 1.0 §2.4) unless
    // it is an xs:string's: the other built-ins' lexical spaces are digits, signs, `.`, `:`,
    // `T`, `Z` and the booleans' words (XML Schema Part 2 §3.2, §3.3).
    const needsEscape = type.base === "string";
    return (value, parentNs, path) => {
      const start = ns === parentNs ? open : openNs;
      if (value === null) {
        if (!nillable) throw new SchemaValidationError(path, "is not nillable");
        return start + nil;
      }
      const lexical = simple(value, path);
      return `${start}>${needsEscape ? escapeXml(lexical) : lexical}${close}`;
    };
  }
  const content = type.content;
  const sequence =
    content && content.kind === "sequence" && content.min === 1 && content.max === 1
      ? content.items
      : undefined;
  const steps =
    sequence?.every((item) => item.kind === "element") === true
      ? sequence.map((item) => particleEncoder(item as ElementParticle, ns, encoders))
      : undefined;
  const allowed = allowedKeys(type);
  return (value, parentNs, path) => {
    const start = ns === parentNs ? open : openNs;
    if (value === null) {
      if (!nillable) throw new SchemaValidationError(path, "is not nillable");
      return start + nil;
    }
    if (typeof value !== "object" || value === undefined || Array.isArray(value) || value instanceof Date) {
      throw new SchemaValidationError(path, `expected an object, got ${describeValue(value)}`);
    }
    const obj = value as Record<string, unknown>;
    let inner = "";
    if (steps !== undefined) {
      for (const step of steps) inner += step(obj, path);
    } else if (content) {
      inner = encodeGroup(content, obj, ns, path);
    }
    for (const key of Object.keys(obj)) {
      if (!allowed.has(key) && obj[key] !== undefined)
        throw new SchemaValidationError(path, `"${key}" is not in the schema`);
    }
    return `${start}>${inner}${close}`;
  };
}

/** encodeParticle for one element particle inside an element of namespace `ns`. */
function particleEncoder(
  p: ElementParticle,
  ns: string,
  encoders: Encoders,
): (obj: Record<string, unknown>, path: string) => string {
  const name = p.decl.localName;
  const { min, max } = p;
  let encode: ElementEncoder | undefined;
  if (!p.many) {
    // The child's path is the same string for the same parent path (an element's path only
    // varies inside a list): built once, not per value.
    let parentPath: string | undefined;
    let childPath = "";
    return (obj, path) => {
      const value = obj[name];
      if (path !== parentPath) {
        childPath = `${path}.${name}`;
        parentPath = path;
      }
      // One value or none: encodeParticle's checks on a list of zero or one.
      const count = value === undefined ? 0 : 1;
      if (count < min) throw new SchemaValidationError(childPath, "is required");
      if (count > max) throw new SchemaValidationError(childPath, `occurs at most ${max} times`);
      if (count === 0) return "";
      encode ??= encoders.for(p.decl);
      return encode(value, ns, childPath);
    };
  }
  return (obj, path) => {
    const value = obj[name];
    const childPath = `${path}.${name}`;
    const list = value === undefined ? [] : value;
    if (!Array.isArray(list)) {
      throw new SchemaValidationError(childPath, `expected an array, got ${describeValue(list)}`);
    }
    if (list.length < min) throw new SchemaValidationError(childPath, "is required");
    if (list.length > max) throw new SchemaValidationError(childPath, `occurs at most ${max} times`);
    encode ??= encoders.for(p.decl);
    let out = "";
    for (let i = 0; i < list.length; i++) out += encode(list[i], ns, `${childPath}[${i}]`);
    return out;
  };
}

/** encodeSimple for one type: its conversion and lexical check chosen once. */
function simpleEncoder(type: SimpleType): (value: unknown, path: string) => string {
  const check = lexicalCheck(type);
  if (type.base === "string") {
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
