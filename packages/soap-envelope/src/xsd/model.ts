import type { XmlElement } from "../xml/reader.js";
import type { BuiltinType, WhiteSpace } from "./builtins.js";
import type { XsdPattern } from "./regex.js";

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

export type { BuiltinType, WhiteSpace } from "./builtins.js";

/**
 * What the decoder and encoder look up by name while they run: the global element an `xs:any`
 * with processContents strict or lax matches, the type an `xsi:type` names.
 */
export interface SchemaRegistry {
  element(clarkName: string): ElementDecl | undefined;
  type(clarkName: string): SimpleType | ComplexType | undefined;
}

/** The registry of the schema set each element declaration and wildcard was compiled in. */
export const REGISTRY = new WeakMap<object, SchemaRegistry>();

/** The type `xsi:type` may name in place of `declared`, or why not (Part 1 §3.3.4 clause 4.3, §3.4.6). */
export function substitutable(
  candidate: SimpleType | ComplexType,
  declared: SimpleType | ComplexType,
  elementBlock?: { extension: boolean; restriction: boolean },
): string | undefined {
  if (candidate === declared) return undefined;
  if (TYPE_NAMES.get(declared) === ANY_TYPE_NAME) return undefined;
  const own = declared.kind === "complex" ? declared.block : undefined;
  const blocked =
    own || elementBlock
      ? {
          extension: (own?.extension ?? false) || (elementBlock?.extension ?? false),
          restriction: (own?.restriction ?? false) || (elementBlock?.restriction ?? false),
        }
      : undefined;
  for (let t: SimpleType | ComplexType | undefined = candidate; t !== undefined; t = t.baseType) {
    if (
      t === declared ||
      (TYPE_NAMES.get(t) !== undefined && TYPE_NAMES.get(t) === TYPE_NAMES.get(declared))
    ) {
      return undefined;
    }
    const method = t.kind === "complex" ? t.derivation : "restriction";
    if (blocked && method !== undefined && blocked[method]) return `derivation by ${method} is blocked`;
  }
  return "it is not derived from the declared type";
}

const ANY_TYPE_NAME = `{${XS_NS}}anyType`;

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

/**
 * The facets of {@link Facets} that hold one value (Part 2 §4.3.1-§4.3.3, §4.3.7-§4.3.12): all
 * but `enumeration`, `pattern` and `whiteSpace`.
 */
export const VALUE_FACETS = [
  "length",
  "minLength",
  "maxLength",
  "minInclusive",
  "maxInclusive",
  "minExclusive",
  "maxExclusive",
  "totalDigits",
  "fractionDigits",
] as const satisfies readonly (keyof Facets)[];

export interface SimpleType {
  kind: "simple";
  name: string;
  /** Atomic: the built-in it is derived from; a list or a union: `anySimpleType`. */
  base: BuiltinType;
  facets: Facets;
  /** Part 2 §4.3.6, applied to a literal before its lexical space is checked. */
  whiteSpace: WhiteSpace;
  /** Part 2 §2.5.1: atomic, a white-space separated list of `itemType`, or a union of `memberTypes`. */
  variety: "atomic" | "list" | "union";
  itemType?: SimpleType;
  memberTypes?: SimpleType[];
  /** The type it restricts (absent for anySimpleType), for `xsi:type` derivation checks. */
  baseType?: SimpleType | undefined;
}

export interface AttributeDecl {
  key: string; // key in ParsedElement.attributes
  name: string; // property name in payloads
  qualifiedNs: string;
  type: SimpleType;
  required: boolean;
  defaultValue: string | undefined;
  /** Part 1 §3.2.2 {value constraint} fixed: the one value the attribute may have. */
  fixed?: string;
}

export interface ElementDecl {
  namespace: string;
  localName: string;
  clark: string;
  type: SimpleType | ComplexType;
  nillable: boolean;
  /** Part 1 §3.3.2 {disallowed substitutions}: derivations `xsi:type` may not name here. */
  block?: { extension: boolean; restriction: boolean };
  /** Part 1 §3.3.2 {value constraint}: the value of an empty element, and whether it is fixed. */
  valueConstraint?: { value: string; fixed: boolean };
}

/**
 * What is compiled once for each element declaration (a decoder, an encoder), as declarations are
 * first used: `compile` says how.
 */
export abstract class PerDeclaration<T> {
  private readonly cache = new Map<ElementDecl, T>();

  protected abstract compile(decl: ElementDecl): T;

  for(decl: ElementDecl): T {
    let compiled = this.cache.get(decl);
    if (compiled === undefined) {
      compiled = this.compile(decl);
      this.cache.set(decl, compiled);
    }
    return compiled;
  }
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

/**
 * A namespace constraint (Part 1 §3.10.1): `##any`, `not` (##other: neither the target namespace
 * nor absent) or a list of namespaces (`""` is absent, ##local); with how matching items are
 * validated (§3.10.1 {process contents}).
 */
export interface Wildcard {
  namespaces: { kind: "any" } | { kind: "not"; namespace: string } | { kind: "list"; namespaces: string[] };
  process: "strict" | "lax" | "skip";
}

/** `xs:any` in a content model: each element it matches is one entry of the value's `$any`. */
export interface AnyParticle {
  kind: "any";
  wildcard: Wildcard;
  min: number;
  max: number;
}

export type Particle = ElementParticle | GroupParticle | AnyParticle;

export interface ComplexType {
  kind: "complex";
  name: string;
  attributes: AttributeDecl[];
  content: GroupParticle | undefined;
  simpleContent: SimpleType | undefined;
  /** `xs:anyAttribute`: the attributes it matches become the value's `$attributes`. */
  anyAttribute?: Wildcard | undefined;
  /** Part 1 §3.4.2 {mixed}: character data between the elements, decoded as `$text`. */
  mixed?: boolean;
  /** Part 1 §3.4.2 {abstract}: an element of this type needs an `xsi:type` naming a derived one. */
  abstract?: boolean;
  /** The type it extends or restricts (`xs:complexContent`, `xs:simpleContent`). */
  baseType?: SimpleType | ComplexType | undefined;
  derivation?: "extension" | "restriction";
  /** Derivations `xsi:type` may not substitute for this type (Part 1 §3.4.2 {prohibited substitutions}). */
  block?: { extension: boolean; restriction: boolean };
  /** The global types derived from this one, what `xsi:type` may name (filled at compile time). */
  derived?: ComplexType[];
}

/**
 * A SOAP-encoded array type (a restriction of SOAP-ENC's `Array`, SOAP 1.1 §5.4.2, SOAP 1.2 Part 2
 * §3.1.6): the Clark name of its item type (undefined: any), and the local name of the one element
 * its restriction declares for the members, which take that name whatever the wire calls them.
 */
export interface SoapArray {
  itemType: string | undefined;
  member: string | undefined;
}

/** The SOAP-encoded array types of the compiled schemas (filled at compile time). */
export const SOAP_ARRAYS = new WeakMap<ComplexType, SoapArray>();

/** Whether a wildcard matches an element or attribute of `namespace` (Part 1 §3.10.4). */
export function wildcardAllows(w: Wildcard, namespace: string): boolean {
  const ns = w.namespaces;
  if (ns.kind === "any") return true;
  if (ns.kind === "not") return namespace !== "" && namespace !== ns.namespace;
  return ns.namespaces.includes(namespace);
}

/** Every element particle of a group, nested groups included, in document order. */
export function elementParticles(g: GroupParticle, into: ElementParticle[] = []): ElementParticle[] {
  // Into one list: a deep nesting (a long chain of extensions) costs its size, not its square.
  for (const i of g.items) {
    if (i.kind === "element") into.push(i);
    else if (i.kind !== "any") elementParticles(i, into);
  }
  return into;
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
  if (p.kind === "element" || p.kind === "any") return false;
  if (p.kind === "choice") return p.items.some(emptiable);
  return p.items.every(emptiable);
}

/** Local names that can start a particle (with `all` names, every member). */
export function firstNames(p: Particle, all = false): Set<string> {
  if (p.kind === "element") return new Set([p.decl.localName]);
  if (p.kind === "any") return new Set(["$any"]);
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
  if (p.kind === "any") return wildcardAllows(p.wildcard, child.namespace);
  for (const item of p.items) {
    if (canStart(item, child)) return true;
    if (p.kind === "sequence" && !emptiable(item)) return false;
  }
  return false;
}
