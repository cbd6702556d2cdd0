import { interned } from "../xml/interned.js";
import { clark, type ParsedElement, resolveQName, shown, type XmlElement } from "../xml/reader.js";
import { trimXml, XML_NON_WHITESPACE } from "../xml/space.js";
import { BUILTIN_INFO, decodeBytes, floatValue } from "./builtins.js";
import { EncodingStyleError, SchemaValidationError } from "./errors.js";
import {
  applyWhiteSpace,
  canonicalInteger,
  checkLexical,
  collapseFast,
  enumerationLiteral,
  lexicalCheck,
  listItems,
  unionMember,
} from "./lexical.js";
import {
  type AnyParticle,
  type ComplexType,
  canStart,
  type ElementDecl,
  type ElementParticle,
  emptiable,
  firstNames,
  type GroupParticle,
  type LongRepresentation,
  type Particle,
  REGISTRY,
  type SimpleType,
  substitutable,
  TYPE_NAMES,
  type Wildcard,
  wildcardAllows,
  XS_NS,
  XSI_NIL,
  XSI_NS,
  XSI_TYPE,
} from "./model.js";

/**
 * Validates an element against its declaration and decodes it into a plain object: attributes
 * and child elements by local name, simple content as `$value`, `xsi:nil` as `null`.
 * @throws {SchemaValidationError} when it does not match, `path` naming where
 */
export function decodeElement(
  element: XmlElement,
  decl: ElementDecl,
  path: string,
  longAs: LongRepresentation,
): unknown {
  const nil = element.attributes[XSI_NIL];
  let nilled = false;
  if (nil !== undefined) {
    const nilValue = trimXml(nil);
    const isNil = nilValue === "true" || nilValue === "1";
    // XML Schema Part 1 §3.2.7: xsi:nil is declared with type xs:boolean, and §3.2.4 (Attribute
    // Locally Valid) requires its value to be valid against it.
    if (!isNil && nilValue !== "false" && nilValue !== "0") {
      throw new SchemaValidationError(path, `xsi:nil="${shown(nil, 40)}" is not an xs:boolean`);
    }
    // §3.3.4, Element Locally Valid (Element) 3.1: "If {nillable} is false, then there must be no
    // attribute information item among the element information item's [attributes] whose
    // [namespace name] is identical to http://www.w3.org/2001/XMLSchema-instance and whose
    // [local name] is nil": xsi:nil="false" on a non-nillable element is invalid too.
    if (!decl.nillable) throw new SchemaValidationError(path, "is not nillable");
    if (isNil) {
      // §3.3.4 clause 3.2.1: a nilled element "must have no character or element information
      // item [children]": white space is character content too (`<note xsi:nil="true"> </note>`
      // would be null here and "  " to a reader that takes the text). Comments are not children.
      if (element.children.length > 0 || element.text !== "") {
        throw new SchemaValidationError(path, "has xsi:nil and content");
      }
      nilled = true;
    }
  }
  let type = decl.type;
  for (const key in element.attributes) {
    if (key === XSI_TYPE) type = xsiType(element, decl, path);
    else if (key.startsWith(XSI_PREFIX) && key !== XSI_NIL && !XSI_HINTS.has(key)) {
      throw new SchemaValidationError(
        path,
        `attribute xsi:${shown(key.slice(XSI_NS.length + 2))} is not supported`,
      );
    }
  }
  // Part 1 §3.3.4 clause 4.2 and §3.4.4 clause 1: an element of an abstract type is valid only
  // with an xsi:type naming a type derived from it that is not abstract.
  if (type.kind === "complex" && type.abstract) {
    throw new SchemaValidationError(
      path,
      `is of the abstract type ${TYPE_NAMES.get(type) ?? type.name}: xsi:type must name a type derived from it`,
    );
  }
  const scope = (element as Partial<ParsedElement>).scope;
  // A nilled element is null once its attributes are checked: xsi:nil exempts its content from
  // the type (§3.3.4 clause 3.2), not its attributes (§3.3.4 clause 5, Element Locally Valid
  // (Type): a simple type allows none but xsi:*; §3.4.4 clauses 3 and 4: a complex type's
  // undeclared attributes are refused and its required ones still required).
  if (type.kind === "simple") {
    checkNoAttributes(element, path);
    if (nilled) return null;
    if (element.children.length > 0) throw new SchemaValidationError(path, "must not contain elements");
    const text = valueText(element, decl, type, path);
    const value = decodeSimple(type, text, path, longAs, scope);
    // A value of a type derived by xsi:type is also one of the declared simple type (§3.14.6):
    // it keeps the declared type's JavaScript form (an xs:int in place of an xs:long stays a
    // bigint), the one the handler's types promise.
    return type !== decl.type && decl.type.kind === "simple"
      ? decodeSimple(decl.type, text, path, longAs, scope)
      : value;
  }
  const out: Record<string, unknown> = {};
  for (const a of type.attributes) {
    // Own attributes only: an absent `constructor` or `toString` is not Object.prototype's.
    const raw = Object.hasOwn(element.attributes, a.key) ? element.attributes[a.key] : a.defaultValue;
    if (raw === undefined) {
      if (a.required) throw new SchemaValidationError(`${path}/@${a.name}`, "is required");
      continue;
    }
    out[a.name] = decodeSimple(a.type, raw, `${path}/@${a.name}`, longAs, scope);
    if (a.fixed !== undefined) checkFixed(a.type, raw, a.fixed, `${path}/@${a.name}`);
  }
  let known: ReadonlySet<string> | undefined;
  let wild: Record<string, string> | undefined;
  for (const key in element.attributes) {
    known ??= knownAttributes(type);
    if (known.has(key) || SOAP_IGNORED.has(key) || XSI_HINTS.has(key) || key === XSI_TYPE) continue;
    if (key === SOAP_ENCODING_STYLE) checkEncodingStyle(element.attributes[key] ?? "", path);
    else if (type.anyAttribute && wildcardAllows(type.anyAttribute, attributeNamespace(key))) {
      // Part 1 §3.10.4: an attribute the wildcard allows, kept as written under its Clark name.
      wild ??= {};
      wild[key] = element.attributes[key] ?? "";
    } else throw new SchemaValidationError(path, `attribute "${shown(key)}" is not allowed`);
  }
  if (wild) out.$attributes = wild;
  if (nilled) return null;
  if (type !== decl.type) out.$type = TYPE_NAMES.get(type);
  if (type.simpleContent) {
    if (element.children.length > 0) throw new SchemaValidationError(path, "must not contain elements");
    out.$value = decodeSimple(
      type.simpleContent,
      valueText(element, decl, type.simpleContent, path),
      path,
      longAs,
      scope,
    );
    return out;
  }
  if (XML_NON_WHITESPACE.test(element.text)) {
    // Part 1 §3.4.4 clause 2.3: character data only where the type is mixed.
    if (!type.mixed) throw new SchemaValidationError(path, "must not contain text");
    out.$text = element.text;
  }
  const children = element.children;
  let index = 0;
  if (type.content) index = matchGroup(type.content, { children, out, path, longAs }, 0);
  const extra = children[index];
  if (extra) {
    throw new SchemaValidationError(
      path,
      `unexpected element ${shown(extra.localName)}${describeNs(extra.namespace)}`,
    );
  }
  return out;
}

/** One complex element's content being matched: its children, the object they decode into. */
export interface ContentMatch {
  children: readonly XmlElement[];
  out: Record<string, unknown>;
  path: string;
  longAs: LongRepresentation;
}

/** Matches a particle against the children from index `i` on; returns the index after its match. */
function matchParticle(p: Particle, m: ContentMatch, i: number): number {
  const { children, out, path, longAs } = m;
  if (p.kind === "any") return matchAny(p, m, i);
  if (p.kind !== "element") return matchGroup(p, m, i);
  let count = 0;
  while (count < p.max) {
    const child = children[i];
    if (!child || child.localName !== p.decl.localName || child.namespace !== p.decl.namespace) break;
    const value = decodeElement(child, p.decl, `${path}/${p.decl.localName}`, longAs);
    if (p.many) {
      const list = (out[p.decl.localName] as unknown[] | undefined) ?? [];
      list.push(value);
      out[p.decl.localName] = list;
    } else {
      out[p.decl.localName] = value;
    }
    i++;
    count++;
  }
  if (count < p.min) {
    const found = children[i];
    throw new SchemaValidationError(
      path,
      `expected element ${p.decl.localName}${describeNs(p.decl.namespace)}${found ? `, found ${shown(found.localName)}${describeNs(found.namespace)}` : ""}`,
    );
  }
  if (p.many && count === 0 && out[p.decl.localName] === undefined) out[p.decl.localName] = [];
  return i;
}

/**
 * An `xs:any` particle (Part 1 §3.10.4): each child in its namespaces, up to maxOccurs, becomes
 * an entry `{ name, value }` of the value's `$any` list, in document order.
 */
function matchAny(p: AnyParticle, m: ContentMatch, i: number): number {
  const { children, out, path, longAs } = m;
  let count = 0;
  while (count < p.max) {
    const child = children[i];
    if (!child || !wildcardAllows(p.wildcard, child.namespace)) break;
    const list = (out.$any as unknown[] | undefined) ?? [];
    out.$any = list;
    list.push({
      name: clark(child.namespace, child.localName),
      value: decodeWildcard(child, p.wildcard, `${path}/${child.localName}`, longAs),
    });
    i++;
    count++;
  }
  if (count < p.min) {
    const found = children[i];
    throw new SchemaValidationError(
      path,
      `expected an element of ${describeWildcard(p.wildcard)}${found ? `, found ${shown(found.localName)}${describeNs(found.namespace)}` : ""}`,
    );
  }
  return i;
}

function describeWildcard(w: Wildcard): string {
  const ns = w.namespaces;
  if (ns.kind === "any") return "any namespace";
  if (ns.kind === "not") return `a namespace other than ${shown(ns.namespace)}`;
  return `the namespaces ${ns.namespaces.map((n) => (n === "" ? "(none)" : shown(n))).join(", ")}`;
}

/**
 * An element a wildcard matched (Part 1 §3.10.1 {process contents}): `skip`, not validated, as
 * its tree; `strict` and `lax`, by the global declaration of its name; `lax` without one (and
 * `strict` with an `xsi:type`), as xs:anyType, whose own wildcards are lax.
 */
export function decodeWildcard(
  child: XmlElement,
  wildcard: Wildcard,
  path: string,
  longAs: LongRepresentation,
): unknown {
  if (wildcard.process === "skip") return untyped(child);
  const registry = REGISTRY.get(wildcard);
  const decl = registry?.element(clark(child.namespace, child.localName));
  if (decl) return decodeElement(child, decl, path, longAs);
  if (wildcard.process === "strict" && child.attributes[XSI_TYPE] === undefined) {
    throw new SchemaValidationError(
      path,
      `element ${shown(child.localName)}${describeNs(child.namespace)} is not declared (xs:any processContents="strict")`,
    );
  }
  const untypedDecl: ElementDecl = {
    namespace: child.namespace,
    localName: child.localName,
    clark: clark(child.namespace, child.localName),
    type: registry?.type(ANY_TYPE) as ComplexType,
    nillable: true,
  };
  if (registry) REGISTRY.set(untypedDecl, registry);
  return decodeElement(child, untypedDecl, path, longAs);
}

const ANY_TYPE = `{${XS_NS}}anyType`;

/** An element not validated (processContents="skip"): its attributes, children and text as written. */
function untyped(element: XmlElement): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let attributes: Record<string, string> | undefined;
  for (const key in element.attributes) {
    attributes ??= {};
    attributes[key] = element.attributes[key] ?? "";
  }
  if (attributes) out.$attributes = attributes;
  if (element.children.length > 0) {
    out.$any = element.children.map((c) => ({ name: clark(c.namespace, c.localName), value: untyped(c) }));
  }
  if (XML_NON_WHITESPACE.test(element.text)) out.$text = element.text;
  return out;
}

/** The namespace of an attribute key (`{ns}local` or an unqualified `local`). */
function attributeNamespace(key: string): string {
  return key.charCodeAt(0) === 0x7b ? key.slice(1, key.indexOf("}")) : "";
}

/**
 * An element's character content, or its declaration's default or fixed value when it is empty
 * (Part 1 §3.3.4 Element Locally Valid (Element) 5.1); a fixed value must be the one given (5.2.2).
 */
function valueText(element: XmlElement, decl: ElementDecl, type: SimpleType, path: string): string {
  const constraint = decl.valueConstraint;
  if (constraint === undefined) return element.text;
  if (element.text === "") return constraint.value;
  if (constraint.fixed) checkFixed(type, element.text, constraint.value, path);
  return element.text;
}

/** Part 1 §3.2.4 (Attribute Locally Valid) clause 3: a fixed value is the value it must have. */
function checkFixed(type: SimpleType, raw: string, fixed: string, path: string): void {
  const ws = type.variety === "union" ? "collapse" : type.whiteSpace;
  if (applyWhiteSpace(ws, raw) !== applyWhiteSpace(ws, fixed))
    throw new SchemaValidationError(path, `must be ${shown(fixed)} (fixed)`);
}

export function matchGroup(g: GroupParticle, m: ContentMatch, i: number): number {
  const { children, out, path, longAs } = m;
  if (g.kind === "all") {
    const seen = new Set<ElementParticle>();
    for (;;) {
      const child = children[i];
      if (!child) break;
      const p = g.items.find(
        (item): item is ElementParticle =>
          item.kind === "element" &&
          item.decl.localName === child.localName &&
          item.decl.namespace === child.namespace,
      );
      if (!p || seen.has(p)) break;
      seen.add(p);
      out[p.decl.localName] = decodeElement(child, p.decl, `${path}/${p.decl.localName}`, longAs);
      i++;
    }
    if (seen.size > 0 || g.min > 0) {
      for (const item of g.items) {
        if (item.kind === "element" && item.min > 0 && !seen.has(item)) {
          throw new SchemaValidationError(
            path,
            `expected element ${item.decl.localName}${describeNs(item.decl.namespace)}`,
          );
        }
      }
    }
    return i;
  }
  for (let occ = 0; occ < g.max; occ++) {
    const child = children[i];
    const starts = child !== undefined && canStart(g, child);
    if (!starts && (occ >= g.min || emptiable(g))) break;
    const before = i;
    if (g.kind === "sequence") {
      for (const item of g.items) i = matchParticle(item, m, i);
    } else {
      const alt = child ? g.items.find((item) => canStart(item, child)) : undefined;
      if (!alt) {
        const names = g.items.flatMap((item) => [...firstNames(item)]).join(", ");
        throw new SchemaValidationError(
          path,
          `expected one of ${names}${child ? `, found ${shown(child.localName)}` : ""}`,
        );
      }
      i = matchParticle(alt, m, i);
    }
    if (i === before) break;
  }
  return i;
}

/**
 * A simple type's literal validated and decoded: its white space handled (Part 2 §4.3.6), a
 * list into an array of its items' values, a union by the first member it fits (§2.5.1.3).
 */
export function decodeSimple(
  type: SimpleType,
  raw: string,
  path: string,
  longAs: LongRepresentation,
  scope: Readonly<Record<string, string>> | undefined,
): unknown {
  if (type.variety === "union") {
    if (type.facets.patterns.length > 0 || type.facets.enumeration !== undefined)
      checkLexical(type, raw, path);
    return decodeSimple(unionMember(type, raw, path), raw, path, longAs, scope);
  }
  const lexical = applyWhiteSpace(type.whiteSpace, raw);
  checkLexical(type, lexical, path);
  if (type.variety === "list") {
    const item = type.itemType as SimpleType;
    return listItems(lexical).map((i) => decodeSimple(item, i, path, longAs, scope));
  }
  return atomicValue(type, lexical, path, longAs, scope);
}

/** The JavaScript value of a checked atomic lexical (xsd-builtins.ts, ValueKind). */
function atomicValue(
  type: SimpleType,
  lexical: string,
  path: string,
  longAs: LongRepresentation,
  scope: Readonly<Record<string, string>> | undefined,
): unknown {
  switch (BUILTIN_INFO[type.base].value) {
    case "bigint":
      // Converted from the canonical form: leading zeros (valid, but unbounded in number) would
      // make the conversion cost more than linear time in the message.
      return longAs === "bigint" ? BigInt(canonicalInteger(lexical)) : canonicalInteger(lexical);
    case "int":
      // From the canonical form (Part 2 §3.3.13.2): "-0" is the integer 0, not JavaScript's -0.
      return Number(canonicalInteger(lexical));
    case "boolean":
      return lexical === "true" || lexical === "1";
    case "decimal":
      // An enumerated xs:decimal decodes to the literal it equals (`1.50` → the schema's `1.5`),
      // the value generated types give it.
      return type.facets.enumeration ? (enumerationLiteral(type, lexical) ?? lexical) : lexical;
    case "float":
      return floatValue(lexical);
    case "bytes":
      return decodeBytes(type.base, lexical);
    case "qname": {
      // Part 2 §3.2.18: a QName's prefix (or, without one, the default namespace) is resolved
      // against the namespaces in scope where it appears.
      const q = scope === undefined ? undefined : resolveQName(lexical, scope);
      if (q === undefined)
        throw new SchemaValidationError(path, `the prefix of ${shown(lexical)} is not declared`);
      return clark(q.namespace, q.localName);
    }
    default:
      return lexical;
  }
}

function describeNs(ns: string): string {
  return ns ? ` {${shown(ns)}}` : "";
}

const XSI_PREFIX = `{${XSI_NS}}`;

/**
 * XML Schema Part 1 §3.4.4, Element Locally Valid (Complex Type) 3, and §3.3.4, Element Locally
 * Valid (Type) 3.1.1: every element may carry the attributes "whose [namespace name] is identical
 * to http://www.w3.org/2001/XMLSchema-instance and whose [local name] is one of type, nil,
 * schemaLocation or noNamespaceSchemaLocation". The two location attributes are only hints of
 * where a schema document might be found (§4.3.2), which this node, compiled from its contract,
 * does not need: a valid instance that carries them is still valid, so they are ignored.
 */
const XSI_HINTS: ReadonlySet<string> = new Set([
  `${XSI_PREFIX}schemaLocation`,
  `${XSI_PREFIX}noNamespaceSchemaLocation`,
]);

/**
 * XML Schema Part 1 §3.3.4, Element Locally Valid (Element) 4: `xsi:type` is a QName that "must
 * resolve to a type definition", which "must be validly derived from the {type definition}" of
 * the element's declaration (§3.4.6, §3.14.6: by the derivations the schema declares, none its
 * type or element blocks), and becomes its type. Any type is derived from itself, so naming the
 * declared type (as some clients do on every element) changes nothing.
 */
function xsiType(element: XmlElement, decl: ElementDecl, path: string): SimpleType | ComplexType {
  const raw = element.attributes[XSI_TYPE] ?? "";
  const scope = (element as Partial<ParsedElement>).scope;
  const q = scope === undefined ? undefined : resolveQName(trimXml(raw), scope);
  if (q === undefined)
    throw new SchemaValidationError(path, `xsi:type="${shown(raw)}": its prefix is not declared`);
  const name = clark(q.namespace, q.localName);
  const declared = TYPE_NAMES.get(decl.type);
  if (name === declared) return decl.type;
  const candidate = REGISTRY.get(decl)?.type(name);
  if (candidate === undefined)
    throw new SchemaValidationError(path, `xsi:type="${shown(raw)}" names no type of the schema`);
  const why = substitutable(candidate, decl.type, decl.block);
  if (why !== undefined) {
    throw new SchemaValidationError(
      path,
      `xsi:type="${shown(raw)}" cannot replace ${declared ?? `the type of ${decl.localName}`}: ${why}`,
    );
  }
  if (candidate.kind === "complex" && candidate.abstract)
    throw new SchemaValidationError(path, `xsi:type="${shown(raw)}" names an abstract type`);
  return candidate;
}

const KNOWN_ATTRIBUTES = new WeakMap<ComplexType, ReadonlySet<string>>();

/** The attribute keys an element of a complex type may carry (its attributes, `xsi:nil`), once per type. */
function knownAttributes(type: ComplexType): ReadonlySet<string> {
  let known = KNOWN_ATTRIBUTES.get(type);
  if (known === undefined) {
    known = new Set([XSI_NIL, ...type.attributes.map((a) => a.key)]);
    KNOWN_ATTRIBUTES.set(type, known);
  }
  return known;
}

function checkNoAttributes(element: XmlElement, path: string): void {
  for (const key in element.attributes) {
    if (key === XSI_NIL || key === XSI_TYPE || SOAP_IGNORED.has(key) || XSI_HINTS.has(key)) continue;
    if (key === SOAP_ENCODING_STYLE) checkEncodingStyle(element.attributes[key] ?? "", path);
    else throw new SchemaValidationError(path, `attribute "${shown(key)}" is not allowed`);
  }
}

const SOAP_ENCODING_STYLE = "{http://www.w3.org/2003/05/soap-envelope}encodingStyle";
const ENCODING_NONE = "http://www.w3.org/2003/05/soap-envelope/encoding/none";

/**
 * SOAP 1.2 Part 1 §5.1.1: env:encodingStyle "MAY appear on ... Any descendent of" a body child
 * and scopes that element. `encoding/none` ("no claims are made regarding the encoding style")
 * and an empty value leave it literal, as this node reads everything; any other encoding is one
 * it does not decode: DataEncodingUnknown (§5.4.6), not a schema mismatch.
 */
function checkEncodingStyle(value: string, path: string): void {
  const style = trimXml(value);
  if (style !== ENCODING_NONE && style !== "") throw new EncodingStyleError(path, value);
}

/**
 * SOAP 1.2 Part 1 §5.2.2, §5.2.3, §5.2.4: env:role, env:mustUnderstand and env:relay belong to
 * header blocks, and "SOAP receivers MUST ignore this attribute information item if it appears
 * on descendants of a SOAP header block or on a SOAP body child element information item (or its
 * descendents)": on payload elements they are not the schema's to refuse. (The body child's own
 * env:* attributes are removed before decoding, service.ts.)
 */
const SOAP_IGNORED: ReadonlySet<string> = new Set(
  ["role", "mustUnderstand", "relay"].map((local) => `{http://www.w3.org/2003/05/soap-envelope}${local}`),
);

// Compiled decoders: the walk above, specialised once per element declaration to what the
// declaration allows, so a message is not interpreted against the schema model. They decide,
// decode and fail exactly as decodeElement does: an element with any attribute, a type with
// attributes or simple content, and any content model but a sequence of elements occurring once
// are handed to decodeElement itself.

/** Decodes an element already known to carry the declaration's name; `path` as in decodeElement. */
export type ElementDecoder = (element: XmlElement, path: string) => unknown;

/** The compiled decoders of one schema (its `longAs`), filled as declarations are first used. */
export class Decoders {
  private readonly cache = new Map<ElementDecl, ElementDecoder>();
  constructor(readonly longAs: LongRepresentation) {}

  for(decl: ElementDecl): ElementDecoder {
    let decoder = this.cache.get(decl);
    if (decoder === undefined) {
      decoder = compileDecoder(decl, this);
      this.cache.set(decl, decoder);
    }
    return decoder;
  }
}

function hasAttribute(attributes: Readonly<Record<string, string>>): boolean {
  for (const _ in attributes) return true;
  return false;
}

function compileDecoder(decl: ElementDecl, decoders: Decoders): ElementDecoder {
  const longAs = decoders.longAs;
  const interpret: ElementDecoder = (element, path) => decodeElement(element, decl, path, longAs);
  const type = decl.type;
  if (decl.valueConstraint !== undefined) return interpret;
  if (type.kind === "simple") {
    // A QName's value depends on the namespaces in scope, which decodeElement passes on.
    if (needsScope(type)) return interpret;
    const simple = simpleDecoder(type, longAs);
    return (element, path) => {
      // With no attribute neither xsi:nil nor any other can apply (decodeElement's first steps).
      if (hasAttribute(element.attributes)) return interpret(element, path);
      if (element.children.length > 0) throw new SchemaValidationError(path, "must not contain elements");
      return simple(element.text, path);
    };
  }
  // An abstract type refuses every element without xsi:type; a mixed one takes text.
  if (type.attributes.length > 0 || type.simpleContent || type.abstract || type.mixed) return interpret;
  const content = type.content;
  const sequence = content ? sequenceOfElements(content) : undefined;
  if (content && sequence === undefined) {
    // Another content model: decodeElement's matching, behind the same checks.
    return (element, path) => {
      if (hasAttribute(element.attributes)) return interpret(element, path);
      if (XML_NON_WHITESPACE.test(element.text))
        throw new SchemaValidationError(path, "must not contain text");
      const out: Record<string, unknown> = {};
      const children = element.children;
      const index = matchGroup(content, { children, out, path, longAs }, 0);
      unexpected(children, index, path);
      return out;
    };
  }
  const group = content as GroupParticle | undefined;
  const particles = sequence ?? [];
  const skippable = group !== undefined && emptiable(group);
  const steps = particles.map((p) => particleDecoder(p, decoders));
  return (element, path) => {
    if (hasAttribute(element.attributes)) return interpret(element, path);
    if (XML_NON_WHITESPACE.test(element.text)) throw new SchemaValidationError(path, "must not contain text");
    const out: Record<string, unknown> = {};
    const children = element.children;
    let index = 0;
    // matchGroup on a sequence occurring once: an emptiable one its first child cannot start
    // matches nothing at all.
    if (group !== undefined) {
      const first = children[0];
      if (!(skippable && (first === undefined || !canStart(group, first))))
        for (const step of steps) index = step(children, out, path, index);
    }
    unexpected(children, index, path);
    return out;
  };
}

/** The element particles of a sequence occurring exactly once, when it holds nothing else. */
function sequenceOfElements(g: GroupParticle): ElementParticle[] | undefined {
  if (g.kind !== "sequence" || g.min !== 1 || g.max !== 1) return undefined;
  const out: ElementParticle[] = [];
  for (const item of g.items) {
    if (item.kind !== "element") return undefined;
    out.push(item);
  }
  return out;
}

type ParticleStep = (
  children: readonly XmlElement[],
  out: Record<string, unknown>,
  path: string,
  i: number,
) => number;

/** matchParticle for one element particle, its element's decoder compiled on first use. */
function particleDecoder(p: ElementParticle, decoders: Decoders): ParticleStep {
  // Interned: each child's names are compared with them, and `localName` keys the value.
  const localName = interned(p.decl.localName);
  const namespace = interned(p.decl.namespace);
  const { min, max, many } = p;
  let decode: ElementDecoder | undefined;
  // The child's path is the same string for the same parent path: built once, not per element.
  let parentPath: string | undefined;
  let childPath = "";
  return (children, out, path, i) => {
    let count = 0;
    while (count < max) {
      const child = children[i];
      if (!child || child.localName !== localName || child.namespace !== namespace) break;
      decode ??= decoders.for(p.decl);
      if (path !== parentPath) {
        childPath = `${path}/${localName}`;
        parentPath = path;
      }
      const value = decode(child, childPath);
      if (many) {
        const list = (out[localName] as unknown[] | undefined) ?? [];
        list.push(value);
        out[localName] = list;
      } else {
        out[localName] = value;
      }
      i++;
      count++;
    }
    if (count < min) {
      const found = children[i];
      throw new SchemaValidationError(
        path,
        `expected element ${localName}${describeNs(namespace)}${found ? `, found ${shown(found.localName)}${describeNs(found.namespace)}` : ""}`,
      );
    }
    if (many && count === 0 && out[localName] === undefined) out[localName] = [];
    return i;
  };
}

function unexpected(children: readonly XmlElement[], index: number, path: string): void {
  const extra = children[index];
  if (extra) {
    throw new SchemaValidationError(
      path,
      `unexpected element ${shown(extra.localName)}${describeNs(extra.namespace)}`,
    );
  }
}

/** decodeSimple for one type, its lexical check chosen once. */
function simpleDecoder(type: SimpleType, longAs: LongRepresentation): (raw: string, path: string) => unknown {
  const generic = (raw: string, path: string) => decodeSimple(type, raw, path, longAs, undefined);
  if (type.variety !== "atomic") return generic;
  const check = lexicalCheck(type);
  switch (type.base) {
    case "string":
      if (type.whiteSpace !== "preserve") return generic;
      return (raw, path) => {
        check(raw, path);
        return raw;
      };
    case "long":
      return longAs === "bigint"
        ? (raw, path) => {
            const lexical = collapseFast(raw);
            check(lexical, path);
            return BigInt(canonicalInteger(lexical));
          }
        : (raw, path) => {
            const lexical = collapseFast(raw);
            check(lexical, path);
            return canonicalInteger(lexical);
          };
    case "int":
      return (raw, path) => {
        const lexical = collapseFast(raw);
        check(lexical, path);
        return Number(canonicalInteger(lexical));
      };
    case "boolean":
      return (raw, path) => {
        const lexical = collapseFast(raw);
        check(lexical, path);
        return lexical === "true" || lexical === "1";
      };
    case "decimal": {
      // An enumerated xs:decimal decodes to the literal it equals, as decodeSimple does.
      const enumerated = type.facets.enumeration !== undefined;
      return (raw, path) => {
        const lexical = collapseFast(raw);
        check(lexical, path);
        return enumerated ? (enumerationLiteral(type, lexical) ?? lexical) : lexical;
      };
    }
    case "date":
    case "dateTime":
      return (raw, path) => {
        const lexical = collapseFast(raw);
        check(lexical, path);
        return lexical;
      };
    default:
      return generic;
  }
}

/** Whether decoding a type's values needs the namespaces in scope (a QName among its values). */
function needsScope(type: SimpleType): boolean {
  if (type.variety === "list") return needsScope(type.itemType as SimpleType);
  if (type.variety === "union") return (type.memberTypes ?? []).some(needsScope);
  return BUILTIN_INFO[type.base].value === "qname";
}
