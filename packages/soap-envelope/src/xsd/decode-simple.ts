import { clark, type ParsedElement, resolveQName, shown, type XmlElement } from "../xml/reader.js";
import { trimXml } from "../xml/space.js";
import { BUILTIN_INFO, decodeBytes, floatValue } from "./builtins.js";
import { EncodingStyleError, SchemaValidationError } from "./errors.js";
import {
  applyWhiteSpace,
  canonicalInteger,
  checkLexical,
  enumerationLiteral,
  listItems,
  unionMember,
} from "./lexical.js";
import {
  type ComplexType,
  type ElementDecl,
  type LongRepresentation,
  REGISTRY,
  type SimpleType,
  substitutable,
  TYPE_NAMES,
  XSI_NIL,
  XSI_NS,
  XSI_TYPE,
} from "./model.js";

/** The namespace of an attribute key (`{ns}local` or an unqualified `local`). */
export function attributeNamespace(key: string): string {
  return key.charCodeAt(0) === 0x7b ? key.slice(1, key.indexOf("}")) : "";
}

/**
 * An element's character content, or its declaration's default or fixed value when it is empty
 * (Part 1 §3.3.4 Element Locally Valid (Element) 5.1); a fixed value must be the one given (5.2.2).
 */
export function valueText(element: XmlElement, decl: ElementDecl, type: SimpleType, path: string): string {
  const constraint = decl.valueConstraint;
  if (constraint === undefined) return element.text;
  if (element.text === "") return constraint.value;
  if (constraint.fixed) checkFixed(type, element.text, constraint.value, path);
  return element.text;
}

/** Part 1 §3.2.4 (Attribute Locally Valid) clause 3: a fixed value is the value it must have. */
export function checkFixed(type: SimpleType, raw: string, fixed: string, path: string): void {
  const ws = type.variety === "union" ? "collapse" : type.whiteSpace;
  if (applyWhiteSpace(ws, raw) !== applyWhiteSpace(ws, fixed))
    throw new SchemaValidationError(path, `must be ${shown(fixed)} (fixed)`);
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

export function describeNs(ns: string): string {
  return ns ? ` {${shown(ns)}}` : "";
}

/**
 * The error for content that ends, or goes on with another element, before a particle's
 * minOccurs are met (Part 1 §3.9.4): the `expected` element and the one `found` in its place.
 */
export function missingElement(
  path: string,
  expected: string,
  found: XmlElement | undefined,
): SchemaValidationError {
  const instead = found ? `, found ${shown(found.localName)}${describeNs(found.namespace)}` : "";
  return new SchemaValidationError(path, `expected ${expected}${instead}`);
}

export const XSI_PREFIX = `{${XSI_NS}}`;

/**
 * XML Schema Part 1 §3.4.4, Element Locally Valid (Complex Type) 3, and §3.3.4, Element Locally
 * Valid (Type) 3.1.1: every element may carry the attributes "whose [namespace name] is identical
 * to http://www.w3.org/2001/XMLSchema-instance and whose [local name] is one of type, nil,
 * schemaLocation or noNamespaceSchemaLocation". The two location attributes are only hints of
 * where a schema document might be found (§4.3.2), which this node, compiled from its contract,
 * does not need: a valid instance that carries them is still valid, so they are ignored.
 */
export const XSI_HINTS: ReadonlySet<string> = new Set([
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
export function xsiType(element: XmlElement, decl: ElementDecl, path: string): SimpleType | ComplexType {
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
export function knownAttributes(type: ComplexType): ReadonlySet<string> {
  let known = KNOWN_ATTRIBUTES.get(type);
  if (known === undefined) {
    known = new Set([XSI_NIL, ...type.attributes.map((a) => a.key)]);
    KNOWN_ATTRIBUTES.set(type, known);
  }
  return known;
}

export function checkNoAttributes(element: XmlElement, path: string): void {
  for (const key in element.attributes) {
    if (key === XSI_NIL || key === XSI_TYPE || SOAP_IGNORED.has(key) || XSI_HINTS.has(key)) continue;
    if (key === SOAP_ENCODING_STYLE) checkEncodingStyle(element.attributes[key] ?? "", path);
    else throw new SchemaValidationError(path, `attribute "${shown(key)}" is not allowed`);
  }
}

export const SOAP_ENCODING_STYLE = "{http://www.w3.org/2003/05/soap-envelope}encodingStyle";

const ENCODING_NONE = "http://www.w3.org/2003/05/soap-envelope/encoding/none";

/**
 * SOAP 1.2 Part 1 §5.1.1: env:encodingStyle "MAY appear on ... Any descendent of" a body child
 * and scopes that element. `encoding/none` ("no claims are made regarding the encoding style")
 * and an empty value leave it literal, as this node reads everything; any other encoding is one
 * it does not decode: DataEncodingUnknown (§5.4.6), not a schema mismatch.
 */
export function checkEncodingStyle(value: string, path: string): void {
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
export const SOAP_IGNORED: ReadonlySet<string> = new Set(
  ["role", "mustUnderstand", "relay"].map((local) => `{http://www.w3.org/2003/05/soap-envelope}${local}`),
);
