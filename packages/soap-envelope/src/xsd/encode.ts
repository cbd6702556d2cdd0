import { escapeXml } from "@svc/errors";
import { interned } from "../xml/interned.js";
import { shown } from "../xml/shown.js";
import { BUILTIN_INFO, builtinLexical, encodeBytes, floatLexical } from "./builtins.js";
import { SchemaValidationError } from "./errors.js";
import { applyWhiteSpace, checkLexical, checkXmlChars, collapse, lexicalCheck } from "./lexical.js";
import {
  type AnyParticle,
  type ComplexType,
  cachedElementParticles,
  type ElementDecl,
  type ElementParticle,
  elementParticles,
  emptiable,
  firstNames,
  type GroupParticle,
  type Particle,
  REGISTRY,
  type SimpleType,
  substitutable,
  TYPE_NAMES,
  wildcardAllows,
  XS_NS,
  XSI_NS,
} from "./model.js";

/**
 * The namespace declarations QName values need on the element being written (Part 2 §3.2.18: a
 * QName's prefix must be declared where it appears): `q`, `q1`, ... per namespace.
 */
interface QNameScope {
  /** The element's default namespace, what an unprefixed QName would resolve to. */
  defaultNs: string;
  prefixes: Map<string, string>;
  declarations: string;
}

/** What closes an `xsi:nil` element (XML Schema Part 1 §2.6.2), its prefix declared with it. */
const NIL = ` xmlns:xsi="${XSI_NS}" xsi:nil="true"/>`;

/** A `null` value: the element opened by `start`, empty and `xsi:nil`, when it is nillable. */
function nilElement(start: string, nillable: boolean, path: string): string {
  if (!nillable) throw new SchemaValidationError(path, "is not nillable");
  return `${start}${NIL}`;
}

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
  if (value === null) return nilElement(`<${name}${nsDecl}`, decl.nillable, path);
  let type = decl.type;
  const qnames: QNameScope = { defaultNs: decl.namespace, prefixes: new Map(), declarations: "" };
  if (type.kind === "simple") {
    const text = escapeXml(encodeSimple(type, value, path, qnames));
    return `<${name}${nsDecl}${qnames.declarations}>${text}</${name}>`;
  }
  if (TYPE_NAMES.get(type) === ANY_TYPE && typeof value === "string") {
    // xs:anyType is mixed: a string is its character content.
    checkXmlChars(value, path);
    return `<${name}${nsDecl}>${escapeXml(value)}</${name}>`;
  }
  if (typeof value !== "object" || value === undefined || Array.isArray(value) || value instanceof Date) {
    throw new SchemaValidationError(path, `expected an object, got ${describeValue(value)}`);
  }
  const obj = value as Record<string, unknown>;
  let attrs = "";
  // `$type` names the type derived from the declared one that the value is of: written as
  // xsi:type (XML Schema Part 1 §3.3.4 clause 4.3), checked as the decoder checks it.
  const named = obj.$type;
  if (named !== undefined && named !== TYPE_NAMES.get(type)) {
    const candidate = typeof named === "string" ? REGISTRY.get(decl)?.type(named) : undefined;
    if (candidate === undefined)
      throw new SchemaValidationError(`${path}.$type`, `${describeValue(named)} names no type of the schema`);
    const why = substitutable(candidate, type, decl.block);
    if (why !== undefined)
      throw new SchemaValidationError(
        `${path}.$type`,
        `${named} cannot replace ${TYPE_NAMES.get(type) ?? type.name}: ${why}`,
      );
    if (candidate.kind !== "complex")
      throw new SchemaValidationError(
        `${path}.$type`,
        `${named} is a simple type: give its value without $type`,
      );
    if (candidate.abstract) throw new SchemaValidationError(`${path}.$type`, `${named} is abstract`);
    const at = (named as string).indexOf("}");
    const ns = (named as string).slice(1, at);
    attrs += ` xmlns:xsi="${XSI_NS}"${ns === "" ? "" : ` xmlns:xt="${escapeXml(ns)}"`} xsi:type="${ns === "" ? "" : "xt:"}${escapeXml((named as string).slice(at + 1))}"`;
    type = candidate;
  }
  if (type.abstract)
    throw new SchemaValidationError(
      path,
      `is of the abstract type ${TYPE_NAMES.get(type) ?? type.name}: $type must name a type derived from it`,
    );
  // Namespaces in XML 1.0 §3 and XML 1.0 §3.1 (unique attribute names): each namespace of a
  // qualified attribute is declared once per element, with its own prefix.
  let prefixes: Map<string, string> | undefined;
  for (const a of type.attributes) {
    const v = obj[a.name];
    if (v === undefined) {
      if (a.required) throw new SchemaValidationError(`${path}.${a.name}`, "is required");
      continue;
    }
    const text = escapeXml(encodeSimple(a.type, v, `${path}.${a.name}`, qnames));
    if (a.fixed !== undefined && text !== escapeXml(applyWhiteSpace(a.type.whiteSpace, a.fixed)))
      throw new SchemaValidationError(`${path}.${a.name}`, `must be ${JSON.stringify(a.fixed)} (fixed)`);
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
  if (obj.$attributes !== undefined)
    attrs += wildcardAttributes(type, obj.$attributes, `${path}.$attributes`);
  let inner = "";
  if (type.simpleContent) {
    inner = escapeXml(encodeSimple(type.simpleContent, obj.$value, `${path}.$value`, qnames));
  } else {
    if (type.mixed && obj.$text !== undefined) {
      if (typeof obj.$text !== "string")
        throw new SchemaValidationError(
          `${path}.$text`,
          `expected a string, got ${describeValue(obj.$text)}`,
        );
      checkXmlChars(obj.$text, `${path}.$text`);
      inner = escapeXml(obj.$text);
    }
    if (type.content) inner += encodeContent(type.content, obj, decl.namespace, path);
  }
  const allowed = allowedKeys(type);
  for (const key of Object.keys(obj)) {
    if (!allowed.has(key) && obj[key] !== undefined && key !== "$type")
      throw new SchemaValidationError(path, `"${key}" is not in the schema`);
  }
  return `<${name}${nsDecl}${qnames.declarations}${attrs}>${inner}</${name}>`;
}

const ANY_TYPE = `{${XS_NS}}anyType`;

/**
 * `$attributes` of a type with `xs:anyAttribute`: each key a Clark name (`{ns}local`) or a local
 * name, in a namespace the wildcard allows (Part 1 §3.10.4), each value a string.
 */
function wildcardAttributes(type: ComplexType, value: unknown, path: string): string {
  const wildcard = type.anyAttribute;
  if (wildcard === undefined) throw new SchemaValidationError(path, "the type allows no other attributes");
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new SchemaValidationError(path, `expected an object, got ${describeValue(value)}`);
  const declared = new Set(type.attributes.map((a) => a.key));
  let out = "";
  let n = 0;
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined) continue;
    const { namespace, localName } = splitClark(key, `${path}.${key}`);
    if (declared.has(key))
      throw new SchemaValidationError(`${path}.${key}`, "is a declared attribute: give it as a property");
    if (!wildcardAllows(wildcard, namespace))
      throw new SchemaValidationError(
        `${path}.${key}`,
        "is in a namespace the type's xs:anyAttribute does not allow",
      );
    if (typeof v !== "string")
      throw new SchemaValidationError(`${path}.${key}`, `expected a string, got ${describeValue(v)}`);
    checkXmlChars(v, `${path}.${key}`);
    if (namespace === "") out += ` ${localName}="${escapeXml(v)}"`;
    else out += ` xmlns:w${n}="${escapeXml(namespace)}" w${n++}:${localName}="${escapeXml(v)}"`;
  }
  return out;
}

/** A Clark name `{ns}local` or a bare local name, its local part an NCName. */
function splitClark(name: string, path: string): { namespace: string; localName: string } {
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

/** A type's content: its particles, then a check that every `$any` entry found its wildcard. */
function encodeContent(
  content: GroupParticle,
  obj: Record<string, unknown>,
  ns: string,
  path: string,
): string {
  const cursor = { any: 0 };
  const out = encodeGroup(content, obj, ns, path, cursor);
  const entries = obj.$any;
  if (entries !== undefined) {
    if (!Array.isArray(entries))
      throw new SchemaValidationError(`${path}.$any`, `expected an array, got ${describeValue(entries)}`);
    if (cursor.any < entries.length)
      throw new SchemaValidationError(
        `${path}.$any[${cursor.any}]`,
        "matches no xs:any of the type where it would go",
      );
  }
  return out;
}

/** The `$any` entries an `xs:any` particle takes, from the cursor on, as elements. */
function encodeAny(
  p: AnyParticle,
  obj: Record<string, unknown>,
  ns: string,
  path: string,
  cursor: { any: number },
): string {
  const entries = obj.$any;
  if (entries !== undefined && !Array.isArray(entries))
    throw new SchemaValidationError(`${path}.$any`, `expected an array, got ${describeValue(entries)}`);
  const list = (entries ?? []) as unknown[];
  let out = "";
  let count = 0;
  while (count < p.max && cursor.any < list.length) {
    const entryPath = `${path}.$any[${cursor.any}]`;
    const entry = list[cursor.any];
    if (typeof entry !== "object" || entry === null || typeof (entry as { name?: unknown }).name !== "string")
      throw new SchemaValidationError(entryPath, `expected { name, value }, got ${describeValue(entry)}`);
    const { name, value } = entry as { name: string; value: unknown };
    const q = splitClark(name, `${entryPath}.name`);
    if (!wildcardAllows(p.wildcard, q.namespace)) break;
    const registry = REGISTRY.get(p.wildcard);
    let decl =
      p.wildcard.process === "skip" ? undefined : registry?.element(clarkOf(q.namespace, q.localName));
    if (decl === undefined) {
      if (p.wildcard.process === "strict")
        throw new SchemaValidationError(
          entryPath,
          `element ${name} is not declared (xs:any processContents="strict")`,
        );
      decl = {
        namespace: q.namespace,
        localName: q.localName,
        clark: clarkOf(q.namespace, q.localName),
        type: registry?.type(ANY_TYPE) as ComplexType,
        nillable: true,
      };
      REGISTRY.set(decl, registry as NonNullable<typeof registry>);
    }
    out += encodeElement(decl, value, ns, `${entryPath}.value`);
    cursor.any++;
    count++;
  }
  if (count < p.min)
    throw new SchemaValidationError(`${path}.$any`, `needs at least ${p.min} element(s) for xs:any`);
  return out;
}

function clarkOf(namespace: string, localName: string): string {
  return namespace === "" ? localName : `{${namespace}}${localName}`;
}

export function encodeGroup(
  g: GroupParticle,
  obj: Record<string, unknown>,
  ns: string,
  path: string,
  cursor: { any: number } = { any: 0 },
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
    return encodeParticle(alt, obj, ns, path, cursor);
  }
  if (g.max > 1) throw new SchemaValidationError(path, "repeated groups cannot be encoded from an object");
  if (
    g.min === 0 &&
    !cachedElementParticles(g).some((p) => obj[p.decl.localName] !== undefined) &&
    !(obj.$any !== undefined && hasWildcard(g))
  )
    return "";
  let out = "";
  for (const item of g.items) out += encodeParticle(item, obj, ns, path, cursor);
  return out;
}

function encodeParticle(
  p: Particle,
  obj: Record<string, unknown>,
  ns: string,
  path: string,
  cursor: { any: number },
): string {
  if (p.kind === "any") return encodeAny(p, obj, ns, path, cursor);
  if (p.kind !== "element") return encodeGroup(p, obj, ns, path, cursor);
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
    if (type.content && hasWildcard(type.content)) set.add("$any");
    if (type.anyAttribute) set.add("$attributes");
    if (type.mixed) set.add("$text");
    keys = set;
    ALLOWED_KEYS.set(type, keys);
  }
  return keys;
}

function hasWildcard(p: Particle): boolean {
  return p.kind === "any" || (p.kind !== "element" && p.items.some(hasWildcard));
}

/** JS value → lexical form, then the same checks as on input. */
function encodeSimple(type: SimpleType, value: unknown, path: string, qnames?: QNameScope): string {
  if (type.variety === "union") {
    // Part 2 §2.5.1.3: the value is of the first member type that takes it.
    for (const member of type.memberTypes ?? []) {
      let lexical: string;
      try {
        lexical = encodeSimple(member, value, path, qnames);
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
          const text = encodeSimple(item, v, `${path}[${i}]`, qnames);
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
  const interpret: ElementEncoder = (value, parentNs, path) => encodeElement(decl, value, parentNs, path);
  // The constructs encodeElement alone writes: attributes and simple content, `$type`
  // substitution, wildcard attributes, mixed text, xs:anyType's strings; QNames' declarations.
  if (
    type.kind === "complex" &&
    (type.attributes.length > 0 ||
      type.simpleContent ||
      type.derived !== undefined ||
      type.baseType?.kind === "complex" ||
      type.abstract ||
      type.anyAttribute ||
      type.mixed)
  )
    return interpret;
  if (type.kind === "simple" && needsDeclarations(type)) return interpret;
  const ns = decl.namespace;
  const name = decl.localName;
  const open = `<${name}`;
  const openNs = `<${name} xmlns="${escapeXml(ns)}"`;
  const close = `</${name}>`;
  const nillable = decl.nillable;
  if (type.kind === "simple" && isPlainString(type)) {
    const simple = simpleEncoder(type);
    const check = lexicalCheck(type);
    return (value, parentNs, path) => {
      const start = ns === parentNs ? open : openNs;
      if (value === null) return nilElement(start, nillable, path);
      if (typeof value !== "string") return `${start}>${escapeXml(simple(value, path))}${close}`;
      // simpleEncoder's checks and escapeXml, with one expression for what checkXmlChars looks
      // for and escapeXml replaces: a value without any of it (most) needs neither.
      if (!NEEDS_WORK.test(value)) {
        check(value, path);
        return `${start}>${value}${close}`;
      }
      checkXmlChars(value, path);
      check(value, path);
      return `${start}>${escapeXml(value)}${close}`;
    };
  }
  if (type.kind === "simple") {
    const simple = simpleEncoder(type);
    // A lexical form that passed its check holds no character to escape (XML 1.0 §2.4) unless
    // it is an xs:string's: the other built-ins' lexical spaces are digits, signs, `.`, `:`,
    // `T`, `Z` and the booleans' words (XML Schema Part 2 §3.2, §3.3).
    const needsEscape =
      type.variety !== "atomic" ||
      (BUILTIN_INFO[type.base].value === "string" && type.base !== "date" && type.base !== "dateTime");
    return (value, parentNs, path) => {
      const start = ns === parentNs ? open : openNs;
      if (value === null) return nilElement(start, nillable, path);
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
    if (value === null) return nilElement(start, nillable, path);
    if (typeof value !== "object" || value === undefined || Array.isArray(value) || value instanceof Date) {
      throw new SchemaValidationError(path, `expected an object, got ${describeValue(value)}`);
    }
    const obj = value as Record<string, unknown>;
    let inner = "";
    if (steps !== undefined) {
      for (const step of steps) inner += step(obj, path);
    } else if (content) {
      inner = encodeContent(content, obj, ns, path);
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
  // Interned: it is the key of every value read (a key V8 does not hold interned is looked up
  // among the interned ones on each read).
  const name = interned(p.decl.localName);
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

/** Whether a type's values may be QNames, whose prefixes the element must declare. */
function needsDeclarations(type: SimpleType): boolean {
  if (type.variety === "list") return needsDeclarations(type.itemType as SimpleType);
  if (type.variety === "union") return (type.memberTypes ?? []).some(needsDeclarations);
  return BUILTIN_INFO[type.base].value === "qname";
}

/** An xs:string (or a restriction of it) that keeps its white space: written as given. */
function isPlainString(type: SimpleType): boolean {
  return type.variety === "atomic" && type.base === "string" && type.whiteSpace === "preserve";
}

/**
 * escapeXml's test (`@svc/errors`): a character to escape, or one XML 1.0 §2.2 does not allow
 * (which checkXmlChars refuses).
 */
const NEEDS_WORK = /[&<>"'\t\n\r]|[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** encodeSimple for one type: its conversion and lexical check chosen once. */
function simpleEncoder(type: SimpleType): (value: unknown, path: string) => string {
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
