import { escapeXml } from "@svc/errors";
import { describeValue, encodeSimple, lexicalOf, type QNameScope, splitClark } from "./encode-simple.js";
import { SchemaValidationError } from "./errors.js";
import { applyWhiteSpace, checkXmlChars } from "./lexical.js";
import {
  type AnyParticle,
  type ComplexType,
  cachedElementParticles,
  type ElementDecl,
  elementParticles,
  emptiable,
  firstNames,
  type GroupParticle,
  type Particle,
  REGISTRY,
  substitutable,
  TYPE_NAMES,
  wildcardAllows,
  XS_NS,
  XSI_NS,
} from "./model.js";

/** The namespace the `xml` prefix is bound to (Namespaces in XML 1.0 §3). */
const XML_NAMESPACE = "http://www.w3.org/XML/1998/namespace";

/** What closes an `xsi:nil` element (XML Schema Part 1 §2.6.2), its prefix declared with it. */
const NIL = ` xmlns:xsi="${XSI_NS}" xsi:nil="true"/>`;

/** A `null` value: the element opened by `start`, empty and `xsi:nil`, when it is nillable. */
export function nilElement(start: string, nillable: boolean, path: string): string {
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
    const text = escapeXml(lexicalOf(a.type, v, `${path}.${a.name}`, qnames));
    if (a.fixed !== undefined && text !== escapeXml(applyWhiteSpace(a.type.whiteSpace, a.fixed)))
      throw new SchemaValidationError(`${path}.${a.name}`, `must be ${JSON.stringify(a.fixed)} (fixed)`);
    if (!a.qualifiedNs) {
      attrs += ` ${a.name}="${text}"`;
      continue;
    }
    // Namespaces in XML 1.0 §3: the xml prefix is bound to its namespace by definition, and no
    // other prefix may be (xml:lang, xml:space).
    let prefix = a.qualifiedNs === XML_NAMESPACE ? "xml" : prefixes?.get(a.qualifiedNs);
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
    else if (namespace === XML_NAMESPACE) out += ` xml:${localName}="${escapeXml(v)}"`;
    else out += ` xmlns:w${n}="${escapeXml(namespace)}" w${n++}:${localName}="${escapeXml(v)}"`;
  }
  return out;
}

/** A type's content: its particles, then a check that every `$any` entry found its wildcard. */
export function encodeContent(
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
export function allowedKeys(type: ComplexType): ReadonlySet<string> {
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
