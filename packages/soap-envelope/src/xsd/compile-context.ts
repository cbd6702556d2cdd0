import type { ParsedElement } from "../xml/reader.js";
import type { SchemaDoc } from "./components.js";
import type {
  AttributeDecl,
  ComplexType,
  ElementDecl,
  GroupParticle,
  SchemaRegistry,
  SimpleType,
  Wildcard,
} from "./model.js";

// What the modules of the schema compiler share. Schema components refer to one another in
// circles (an element's type holds a model group that declares elements, a type refers to itself
// through its elements), so those modules reach the global components and element declarations
// through the compiler, SchemaCompiler (xsd/compile.ts), rather than by importing one another.

/** A global component's definition, compiled once, on first use. */
export interface Global<T> {
  node: ParsedElement;
  doc: SchemaDoc;
  compiled?: T;
}

/** A named model group's definition, compiled for use once and inside a repetition (xsd/model-groups.ts). */
export type GroupDef = Global<GroupParticle> & {
  repeated?: GroupParticle;
  /** While compiling: the element nesting it started at, and references from inside it. */
  depth?: number | undefined;
  waiting?: { placeholder: GroupParticle; repeated: boolean; min: number; max: number }[];
};

/** The attributes, wildcard and prohibited names an attribute group or a type's attribute uses give. */
export interface AttributeUses {
  attributes: AttributeDecl[];
  anyAttribute: Wildcard | undefined;
  prohibited: Set<string>;
}

/** A complex type's derivation, merged once every global component is compiled. */
export interface Derivation {
  base: SimpleType | ComplexType;
  method: "extension" | "restriction";
  simple: boolean;
  content: GroupParticle | undefined;
  attributes: AttributeDecl[];
  anyAttribute: Wildcard | undefined;
  prohibited: Set<string>;
  /** simpleContent/restriction: the facets, applied to the base's simple content. */
  facets: ParsedElement | undefined;
  /** WSDL 1.1 §2.2: the `wsdl:arrayType` an attribute use of the step carries (`xsd:string[]`). */
  arrayType: { value: string; node: ParsedElement } | undefined;
  node: ParsedElement;
  doc: SchemaDoc;
}

/**
 * The deepest nesting of types, model groups, attribute groups and derivations the compiler
 * follows (about 128 element declarations, each of a named type holding the next): far past real
 * contracts, and far below the stack the compiler and the decoder use for it.
 */
export const MAX_NESTING = 256;

/** One compilation's state, and the entry points the modules of the compiler call back through. */
export interface CompileContext {
  readonly registry: SchemaRegistry;
  readonly elementDefs: Map<string, Global<ElementDecl>>;
  readonly typeDefs: Map<string, Global<SimpleType | ComplexType>>;
  readonly groupDefs: Map<string, GroupDef>;
  readonly attributeGroupDefs: Map<string, Global<AttributeUses>>;
  readonly attributeDefs: Map<string, Global<AttributeDecl>>;
  /** How many element declarations' inline types are being compiled, one inside the other. */
  elementDepth: number;
  /** How many types, model groups, attribute groups and derivations are being compiled, one inside the other. */
  nesting: number;
  readonly pending: Map<ComplexType, Derivation>;
  readonly deriving: Set<ComplexType>;
  /** How many derivation steps lead from xs:anyType (or a simple type) to each derived complex type. */
  readonly derivationSteps: Map<ComplexType, number>;
  readonly inProgress: Set<object>;
  readonly complexTypes: { type: ComplexType; node: ParsedElement; doc: SchemaDoc }[];
  /** Elements with a default or fixed value, checked once every type is complete. */
  readonly constrained: { decl: ElementDecl; at: string }[];

  /**
   * One more component compiled inside the others, refused past {@link MAX_NESTING}. Each caller
   * decrements `nesting` when it returns.
   */
  enter(at: string): void;
  globalElement(name: string, where: string): ElementDecl;
  globalType(name: string, where: string): SimpleType | ComplexType;
  /** A built-in type of XML Schema by local name (`string`, `anyType`, `NMTOKENS`). */
  builtin(local: string, where: string): SimpleType | ComplexType;
  /** The Clark name of the QName in `node`'s attribute `attr` (or `raw`, one of its list items). */
  qnameOf(node: ParsedElement, attr: string, doc: SchemaDoc, raw?: string): string;
  typeRef(node: ParsedElement, attr: string, doc: SchemaDoc): SimpleType | ComplexType;
  simpleRef(node: ParsedElement, attr: string, doc: SchemaDoc): SimpleType;
  /** An `xs:element` declaration, global or local (xsd/element-decls.ts). */
  elementDecl(node: ParsedElement, doc: SchemaDoc, global: boolean): ElementDecl;
}
