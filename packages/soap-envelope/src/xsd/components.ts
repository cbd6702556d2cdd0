import type { ParsedElement, XmlElement } from "../xml/reader.js";
import { trimXml } from "../xml/space.js";
import { SchemaCompileError } from "./errors.js";
import { XS_NS } from "./model.js";

// Reading the elements of an XSD document as schema components (XML Schema 1.0 Part 1 §3):
// which attributes each may carry, its name, its occurrence bounds, its derivation sets, and
// the location that every compile error names.

/** One `xs:schema` document with the defaults its declarations inherit (Part 1 §3.15). */
export interface SchemaDoc {
  root: ParsedElement;
  location: string;
  targetNamespace: string;
  qualifiedElements: boolean;
  qualifiedAttributes: boolean;
  /**
   * Included without a targetNamespace into a schema with one (Part 1 §4.2.1): its components
   * and its references to no namespace are in `targetNamespace`, the including schema's.
   */
  chameleon: boolean;
}

/** `file: xs:kind "name"`, the location a compile error names. */
export function where(node: XmlElement, doc: SchemaDoc): string {
  const name = node.attributes.name;
  return `${doc.location}: xs:${node.localName}${name ? ` "${name}"` : ""}`;
}

/**
 * The elements of the XML Schema 1.0 namespace (Part 1 §3, Part 2 §4.3): a name in that namespace
 * outside this list is no construct at all, whatever the compiler supports.
 */
export const XS_ELEMENTS: readonly string[] = [
  "all",
  "annotation",
  "any",
  "anyAttribute",
  "appinfo",
  "attribute",
  "attributeGroup",
  "choice",
  "complexContent",
  "complexType",
  "documentation",
  "element",
  "enumeration",
  "extension",
  "field",
  "fractionDigits",
  "group",
  "import",
  "include",
  "key",
  "keyref",
  "length",
  "list",
  "maxExclusive",
  "maxInclusive",
  "maxLength",
  "minExclusive",
  "minInclusive",
  "minLength",
  "notation",
  "pattern",
  "redefine",
  "restriction",
  "schema",
  "selector",
  "sequence",
  "simpleContent",
  "simpleType",
  "totalDigits",
  "union",
  "unique",
  "whiteSpace",
];

/**
 * The error for a construct the compiler does not support, naming the file and its context; for a
 * name XML Schema does not define (`xs:simpletype`), that it is none, with the name it differs
 * from only in case (XML names are case-sensitive, XML 1.0 §2.3).
 */
export function unsupported(
  node: XmlElement,
  doc: SchemaDoc,
  context: string | undefined,
): SchemaCompileError {
  const ns = node.namespace === XS_NS ? "xs:" : `{${node.namespace}}`;
  const at = `${doc.location}: ${ns}${node.localName}${context ? ` (in "${context}")` : ""}`;
  if (node.namespace === XS_NS && !XS_ELEMENTS.includes(node.localName)) {
    const lower = node.localName.toLowerCase();
    const near = XS_ELEMENTS.find((name) => name.toLowerCase() === lower);
    return new SchemaCompileError(
      `${at} is not an element of XML Schema${near ? ` (names are case-sensitive: xs:${near})` : ""}`,
    );
  }
  return new SchemaCompileError(`${at} is not supported by the schema compiler`);
}

/** The child elements of a schema component, all of which must be in the XSD namespace. */
export function xsChildren(node: ParsedElement, location: string): ParsedElement[] {
  for (const child of node.children) {
    if (child.namespace !== XS_NS) {
      throw new SchemaCompileError(
        `${location}: unexpected element {${child.namespace}}${child.localName} in xs:${node.localName}`,
      );
    }
  }
  return node.children;
}

/** Refuses any unqualified attribute not in `allowed`, so no unsupported attribute is ignored. */
export function allowAttributes(node: ParsedElement, location: string, allowed: readonly string[]): void {
  for (const key of Object.keys(node.attributes)) {
    if (key.startsWith("{")) continue; // foreign attributes are allowed on schema components
    if (!allowed.includes(key)) {
      throw new SchemaCompileError(
        `${location}: attribute ${key}="${node.attributes[key]}" on xs:${node.localName} is not supported by the schema compiler`,
      );
    }
  }
}

/**
 * The `name` of a component that must have one: an `xs:NCName`, so its white space collapsed
 * (Part 2 §3.3.9, §4.3.6), as `name="ResultCode "` is the name `ResultCode`.
 */
export function requireName(node: ParsedElement, doc: SchemaDoc): string {
  const name = trimXml(node.attributes.name ?? "");
  if (!name) throw new SchemaCompileError(`${doc.location}: xs:${node.localName} needs a name`);
  return name;
}

/** An `xs:boolean` attribute value (Part 2 §3.2.2), absent meaning false. */
export function parseBool(value: string | undefined, node: ParsedElement, doc: SchemaDoc): boolean {
  if (value === undefined || value === "false" || value === "0") return false;
  if (value === "true" || value === "1") return true;
  throw new SchemaCompileError(`${where(node, doc)}: "${value}" is not a boolean`);
}

/** `minOccurs` / `maxOccurs` of a particle (Part 1 §3.9.2), `unbounded` as Infinity. */
export function occurs(node: ParsedElement, doc: SchemaDoc): { min: number; max: number } {
  const min = Number(node.attributes.minOccurs ?? "1");
  const rawMax = node.attributes.maxOccurs ?? "1";
  const max = rawMax === "unbounded" ? Number.POSITIVE_INFINITY : Number(rawMax);
  if (
    !Number.isSafeInteger(min) ||
    min < 0 ||
    !(max === Number.POSITIVE_INFINITY || Number.isSafeInteger(max)) ||
    max < min
  ) {
    throw new SchemaCompileError(`${where(node, doc)}: invalid minOccurs/maxOccurs`);
  }
  return { min, max };
}

/** `block` / `final` (Part 1 §3.4.2): `#all` or a list of extension, restriction (and substitution). */
export function derivationSet(
  raw: string | undefined,
  node: ParsedElement,
  doc: SchemaDoc,
): { extension: boolean; restriction: boolean } | undefined {
  if (raw === undefined) return undefined;
  const tokens = raw
    .trim()
    .split(/[ \t\n\r]+/)
    .filter(Boolean);
  if (tokens.includes("#all")) return { extension: true, restriction: true };
  for (const t of tokens) {
    if (t !== "extension" && t !== "restriction" && t !== "substitution" && t !== "list" && t !== "union")
      throw new SchemaCompileError(`${where(node, doc)}: "${t}" is not a derivation method`);
  }
  return { extension: tokens.includes("extension"), restriction: tokens.includes("restriction") };
}
