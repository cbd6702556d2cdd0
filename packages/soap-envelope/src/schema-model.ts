import type { XmlElement } from "./xml.js";
import type { XsdPattern } from "./xsd-regex.js";

// The compiled form of a schema: what the compiler produces and the decoder and encoder walk.

/** The XML Schema namespace. */
export const XS_NS = "http://www.w3.org/2001/XMLSchema";
export const XSI_NS = "http://www.w3.org/2001/XMLSchema-instance";
export const XSI_NIL = `{${XSI_NS}}nil`;
export const XSI_TYPE = `{${XSI_NS}}type`;

/**
 * The qualified name (`{ns}local`) of each named type the compiler produced: global simple and
 * complex types and the built-ins. Anonymous types have none. What `xsi:type` is compared with.
 */
export const TYPE_NAMES = new WeakMap<SimpleType | ComplexType, string>();

/** The built-in types the compiler supports (XML Schema Part 2 §3.2, §3.3). */
export type BuiltinType = "string" | "long" | "int" | "decimal" | "boolean" | "date" | "dateTime";

export const BUILTINS: ReadonlySet<string> = new Set([
  "string",
  "long",
  "int",
  "decimal",
  "boolean",
  "date",
  "dateTime",
]);

/** How `xs:long` values are represented in decoded payloads. */
export type LongRepresentation = "bigint" | "string";

export interface Facets {
  enumeration?: string[];
  patterns: XsdPattern[][]; // each inner list is one derivation step (ORed); steps are ANDed
  length?: number;
  minLength?: number;
  maxLength?: number;
  minInclusive?: string;
  maxInclusive?: string;
  minExclusive?: string;
  maxExclusive?: string;
  totalDigits?: number;
  fractionDigits?: number;
}

export interface SimpleType {
  kind: "simple";
  name: string;
  base: BuiltinType;
  facets: Facets;
}

export interface AttributeDecl {
  key: string; // key in ParsedElement.attributes
  name: string; // property name in payloads
  qualifiedNs: string;
  type: SimpleType;
  required: boolean;
  defaultValue: string | undefined;
}

export interface ElementDecl {
  namespace: string;
  localName: string;
  clark: string;
  type: SimpleType | ComplexType;
  nillable: boolean;
}

export interface ElementParticle {
  kind: "element";
  decl: ElementDecl;
  min: number;
  max: number;
  many: boolean;
}

export interface GroupParticle {
  kind: "sequence" | "choice" | "all";
  items: Particle[];
  min: number;
  max: number;
}

export type Particle = ElementParticle | GroupParticle;

export interface ComplexType {
  kind: "complex";
  name: string;
  attributes: AttributeDecl[];
  content: GroupParticle | undefined;
  simpleContent: SimpleType | undefined;
}

/** Every element particle of a group, nested groups included, in document order. */
export function elementParticles(g: GroupParticle): ElementParticle[] {
  return g.items.flatMap((i) => (i.kind === "element" ? [i] : elementParticles(i)));
}

const ELEMENT_PARTICLES = new WeakMap<GroupParticle, ElementParticle[]>();

/** {@link elementParticles}, computed once per group (the encoder asks on every value). */
export function cachedElementParticles(g: GroupParticle): ElementParticle[] {
  let list = ELEMENT_PARTICLES.get(g);
  if (list === undefined) {
    list = elementParticles(g);
    ELEMENT_PARTICLES.set(g, list);
  }
  return list;
}

/** Whether a particle can match no element at all. */
export function emptiable(p: Particle): boolean {
  if (p.min === 0) return true;
  if (p.kind === "element") return false;
  if (p.kind === "choice") return p.items.some(emptiable);
  return p.items.every(emptiable);
}

/** Local names that can start a particle (with `all` names, every member). */
export function firstNames(p: Particle, all = false): Set<string> {
  if (p.kind === "element") return new Set([p.decl.localName]);
  const out = new Set<string>();
  for (const item of p.items) {
    for (const n of firstNames(item, all)) out.add(n);
    if (!all && p.kind === "sequence" && !emptiable(item)) break;
  }
  return out;
}

/** Whether `child` can be the first element a particle matches. */
export function canStart(p: Particle, child: XmlElement): boolean {
  if (p.kind === "element")
    return child.localName === p.decl.localName && child.namespace === p.decl.namespace;
  for (const item of p.items) {
    if (canStart(item, child)) return true;
    if (p.kind === "sequence" && !emptiable(item)) return false;
  }
  return false;
}
