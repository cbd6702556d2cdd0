import { clark, type ParsedElement } from "../xml/reader.js";
import { attributeGroup } from "./attributes.js";
import { BUILTIN_INFO, BUILTIN_LISTS, isBuiltin } from "./builtins.js";
import {
  type AttributeUses,
  type CompileContext,
  type Derivation,
  type Global,
  type GroupDef,
  MAX_NESTING,
} from "./compile-context.js";
import { complexType } from "./complex-types.js";
import { requireName, type SchemaDoc, where } from "./components.js";
import type { Tolerance } from "./defects.js";
import { derive, linkDerivations } from "./derivations.js";
import { elementDecl } from "./element-decls.js";
import { SchemaCompileError } from "./errors.js";
import {
  type AttributeDecl,
  type ComplexType,
  type ElementDecl,
  REGISTRY,
  type SchemaRegistry,
  type SimpleType,
  TYPE_NAMES,
  type Wildcard,
  XS_NS,
} from "./model.js";
import { globalGroup } from "./model-groups.js";
import { checkPropertyNames } from "./property-names.js";
import {
  type ComponentKind,
  resolveReference,
  type UnresolvedReference,
  undeclaredPrefixNamespace,
  unresolvedReferences,
} from "./references.js";
import { addBuiltinDocs, collect, type SchemaSource } from "./schema-documents.js";
import { listType, simpleType } from "./simple-types.js";
import { type ExpectedGlobal, StandIns } from "./stand-ins.js";

// The schema compiler: one compilation's state, the global components by Clark name, the built-in
// types, and the order its steps run in. Each kind of component is compiled by a module of its
// own (element declarations, simple types, complex types and their derivations, model groups,
// attributes, wildcards), called with the compiler as its CompileContext (xsd/compile-context.ts).

/**
 * What a contract's loader compiles its schemas with: its {@link Tolerance}, and the elements its
 * `wsdl:part`s name, which a tolerant load declares stand-ins for when no schema does.
 */
export interface ContractLoad {
  tolerance: Tolerance;
  expected: readonly ExpectedGlobal[];
}

/** The global components of a schema set: elements and named types, by Clark name, in document order. */
export interface SchemaComponents {
  elements: Map<string, ElementDecl>;
  /** Named global types (not the built-ins), the same objects element declarations refer to. */
  types: Map<string, SimpleType | ComplexType>;
}

/**
 * Compiles XSD documents into their global element declarations and named types, keyed by Clark
 * name (`{ns}local`), in document order. Every global type is compiled too, used or not, so an
 * unsupported construct anywhere in the contract stops it at start-up.
 * @throws {SchemaCompileError} naming the file and the construct
 */
export function compileComponents(sources: readonly SchemaSource[], load?: ContractLoad): SchemaComponents {
  const compiler = new SchemaCompiler(sources, load);
  return { elements: compiler.globalElements(), types: compiler.globalTypes() };
}

/** One compilation: global components are compiled once, on first use, so references may be circular. */
class SchemaCompiler implements CompileContext {
  readonly elementDefs = new Map<string, Global<ElementDecl>>();
  readonly typeDefs = new Map<string, Global<SimpleType | ComplexType>>();
  readonly groupDefs = new Map<string, GroupDef>();
  /** How many element declarations' inline types are being compiled, one inside the other. */
  elementDepth = 0;
  /** How many types, model groups, attribute groups and derivations are being compiled, one inside the other. */
  nesting = 0;
  readonly attributeGroupDefs = new Map<string, Global<AttributeUses>>();
  readonly attributeDefs = new Map<string, Global<AttributeDecl>>();
  private readonly builtins = new Map<string, SimpleType | ComplexType>();
  readonly pending = new Map<ComplexType, Derivation>();
  readonly deriving = new Set<ComplexType>();
  /** How many derivation steps lead from xs:anyType (or a simple type) to each derived complex type. */
  readonly derivationSteps = new Map<ComplexType, number>();
  readonly inProgress = new Set<object>();
  readonly complexTypes: { type: ComplexType; node: ParsedElement; doc: SchemaDoc }[] = [];
  readonly registry: SchemaRegistry;
  /** Elements with a default or fixed value, checked once every type is complete. */
  readonly constrained: { decl: ElementDecl; at: string }[] = [];

  /** Whether a QName with an undeclared prefix names its stand-in (a tolerant load). */
  private readonly tolerant: boolean;
  /** A tolerant load's unqualified references, by node and QName, and the component each names. */
  private readonly renamed = new WeakMap<ParsedElement, Map<string, string>>();

  constructor(sources: readonly SchemaSource[], load?: ContractLoad) {
    this.tolerant = load !== undefined && !load.tolerance.strict;
    this.registry = {
      element: (name) => this.elementDefs.get(name)?.compiled,
      type: (name) => {
        const m = /^\{([^}]*)\}(.+)$/.exec(name);
        if (m?.[1] === XS_NS) {
          const local = m[2] ?? "";
          return isBuiltin(local) || local === "anyType" || Object.hasOwn(BUILTIN_LISTS, local)
            ? this.builtin(local, "")
            : undefined;
        }
        return this.typeDefs.get(name)?.compiled;
      },
    };
    const docs = sources.map((source) => collect(this, source, load?.tolerance));
    addBuiltinDocs(this, docs, load?.tolerance);
    const standIns = this.tolerant && load ? new StandIns(load.tolerance) : undefined;
    if (standIns && load) {
      for (const global of load.expected)
        if (!this.elementDefs.has(global.name)) standIns.expected(global, sources[0]?.location ?? "");
    }
    const missing = unresolvedReferences(
      docs.map((d) => d.doc),
      (kind, name) => this.declares(kind, name),
      standIns && load && ((ref) => this.ownNamespace(ref, load.tolerance) || standIns.reference(ref)),
    );
    for (const source of standIns?.sources() ?? []) collect(this, source);
    if (missing.length > 0) {
      throw new SchemaCompileError(
        missing.length === 1
          ? (missing[0] as string)
          : `${missing.length} references name nothing the schemas declare:\n- ${missing.join("\n- ")}`,
        missing,
      );
    }
    for (const name of this.elementDefs.keys()) this.globalElement(name, "");
    for (const name of this.typeDefs.keys()) this.globalType(name, "");
    for (const name of this.groupDefs.keys()) globalGroup(this, name, "", false, 1, 1);
    for (const name of this.attributeGroupDefs.keys()) attributeGroup(this, name, "");
    for (const type of [...this.pending.keys()]) derive(this, type);
    for (const { type, node, doc } of this.complexTypes) checkPropertyNames(type, node, doc);
    // Part 1 §3.3.6 (e-props-correct.2): only an element with simple content has a value constraint.
    for (const { decl, at } of this.constrained) {
      if (decl.type.kind === "complex" && !decl.type.simpleContent)
        throw new SchemaCompileError(`${at}: default or fixed needs a simple type or simple content`);
    }
    linkDerivations(this);
  }

  /**
   * One more component compiled inside the others. XML Schema sets no limit on how deeply types
   * refer to types, but each level is a few stack frames here and in the decoder, so a contract
   * whose references nest deeper than {@link MAX_NESTING} is refused rather than left to exhaust
   * the stack. Each caller decrements `nesting` when it returns.
   */
  enter(at: string): void {
    if (++this.nesting > MAX_NESTING)
      throw new SchemaCompileError(
        `${at}: types, groups and derivations nest more than ${MAX_NESTING} deep (each referring to the next); this compiler stops there`,
      );
  }

  /** Whether the set declares a global component of this kind and Clark name (built-ins included). */
  private declares(kind: ComponentKind, name: string): boolean {
    switch (kind) {
      case "type":
        return this.typeDefs.has(name) || this.registry.type(name) !== undefined;
      case "element":
        return this.elementDefs.has(name);
      case "attribute":
        return this.attributeDefs.has(name);
      case "group":
        return this.groupDefs.has(name);
      case "attribute group":
        return this.attributeGroupDefs.has(name);
    }
  }

  /** The global elements, all compiled by the constructor. */
  globalElements(): Map<string, ElementDecl> {
    const out = new Map<string, ElementDecl>();
    for (const name of this.elementDefs.keys()) out.set(name, this.globalElement(name, ""));
    return out;
  }

  /** The named global types, all compiled by the constructor. */
  globalTypes(): Map<string, SimpleType | ComplexType> {
    const out = new Map<string, SimpleType | ComplexType>();
    for (const name of this.typeDefs.keys()) out.set(name, this.globalType(name, ""));
    return out;
  }

  globalElement(name: string, where: string): ElementDecl {
    const def = this.elementDefs.get(name);
    if (!def) throw new SchemaCompileError(`${where}: element ${name} is not declared`);
    if (!def.compiled) {
      const placeholder = {} as ElementDecl;
      def.compiled = placeholder;
      Object.assign(placeholder, elementDecl(this, def.node, def.doc, true));
      REGISTRY.set(placeholder, this.registry);
    }
    return def.compiled;
  }

  globalType(name: string, where: string): SimpleType | ComplexType {
    const m = /^\{([^}]*)\}(.+)$/.exec(name);
    if (m && m[1] === XS_NS) return this.builtin(m[2] ?? "", where);
    const def = this.typeDefs.get(name);
    if (!def) throw new SchemaCompileError(`${where}: type ${name} is not declared`);
    if (!def.compiled) {
      if (def.node.localName === "simpleType") {
        // A simple type's definition cannot refer to itself (Part 1 §3.14.6, st-props-correct.2).
        if (this.inProgress.has(def))
          throw new SchemaCompileError(`${where}: type ${name} is derived from itself`);
        this.inProgress.add(def);
        def.compiled = simpleType(this, def.node, def.doc, requireName(def.node, def.doc));
        this.inProgress.delete(def);
      } else {
        // Filled in place: a reference to the type from inside it finds this object.
        const type = { kind: "complex" } as ComplexType;
        def.compiled = type;
        complexType(this, def.node, def.doc, requireName(def.node, def.doc), type);
      }
      TYPE_NAMES.set(def.compiled, name);
    }
    return def.compiled;
  }

  builtin(local: string, where: string): SimpleType | ComplexType {
    const known = this.builtins.get(local);
    if (known) return known;
    let type: SimpleType | ComplexType;
    if (local === "anyType") {
      type = anyType(this.registry);
    } else if (Object.hasOwn(BUILTIN_LISTS, local)) {
      // Part 2 §3.3.5, §3.3.10, §3.3.12: lists of at least one item.
      const item = this.builtin(BUILTIN_LISTS[local] as string, where) as SimpleType;
      type = listType(`xs:${local}`, item, this.builtin("anySimpleType", where) as SimpleType);
      type.facets.minLength = 1;
    } else if (isBuiltin(local)) {
      const info = BUILTIN_INFO[local];
      type = {
        kind: "simple",
        name: `xs:${local}`,
        base: local,
        facets: { patterns: [] },
        whiteSpace: info.whiteSpace,
        variety: "atomic",
        baseType: info.parent === undefined ? undefined : (this.builtin(info.parent, where) as SimpleType),
      };
    } else {
      throw new SchemaCompileError(`${where}: xs:${local} is not a built-in type of XML Schema 1.0`);
    }
    TYPE_NAMES.set(type, clark(XS_NS, local));
    this.builtins.set(local, type);
    return type;
  }

  /**
   * A tolerant load's QName that names nothing and cannot be meant as written, where the schema's
   * own targetNamespace declares that kind of component of that local name: the one it can mean.
   * Such a QName is unprefixed with no default namespace in scope, so in no namespace (Part 1
   * §3.15.3), or in the XML Schema namespace, where a type that is not built in cannot be declared.
   */
  private ownNamespace(ref: UnresolvedReference, tolerance: Tolerance): boolean {
    const { doc, raw, kind, node } = ref;
    if (ref.prefixUndeclared || doc.targetNamespace === "") return false;
    const local = raw.slice(raw.indexOf(":") + 1);
    const unqualified = !raw.includes(":") && ref.name === raw;
    const inXs = ref.name === clark(XS_NS, local);
    if (!unqualified && !inXs) return false;
    const own = clark(doc.targetNamespace, local);
    if (!this.declares(kind, own)) return false;
    const renamed = this.renamed.get(node) ?? new Map<string, string>();
    renamed.set(raw, own);
    this.renamed.set(node, renamed);
    tolerance.pass(
      "own-namespace-reference",
      ref.problem,
      `${ref.attr}="${raw}" names ${kind} ${own}, of the schema's own targetNamespace`,
      node,
      doc.location,
    );
    return true;
  }

  qnameOf(node: ParsedElement, attr: string, doc: SchemaDoc, raw = node.attributes[attr] ?? ""): string {
    const renamed = this.renamed.get(node)?.get(raw);
    if (renamed !== undefined) return renamed;
    const q = resolveReference(raw, node, doc);
    // A tolerant load declared a stand-in for the name (xsd/stand-ins.ts).
    if (!q && this.tolerant) return clark(undeclaredPrefixNamespace(raw), raw.slice(raw.indexOf(":") + 1));
    if (!q) throw new SchemaCompileError(`${where(node, doc)}: prefix of "${raw}" is not declared`);
    return clark(q.namespace, q.localName);
  }

  typeRef(node: ParsedElement, attr: string, doc: SchemaDoc): SimpleType | ComplexType {
    return this.globalType(this.qnameOf(node, attr, doc), where(node, doc));
  }

  simpleRef(node: ParsedElement, attr: string, doc: SchemaDoc): SimpleType {
    const type = this.typeRef(node, attr, doc);
    if (type.kind !== "simple")
      throw new SchemaCompileError(`${where(node, doc)}: ${attr} must name a simple type`);
    return type;
  }

  elementDecl(node: ParsedElement, doc: SchemaDoc, global: boolean): ElementDecl {
    return elementDecl(this, node, doc, global);
  }
}

/**
 * xs:anyType (Part 1 §3.4.7): any attributes, any elements (lax: those the schema declares are
 * validated), character data between them.
 */
function anyType(registry: SchemaRegistry): ComplexType {
  const wildcard: Wildcard = { namespaces: { kind: "any" }, process: "lax" };
  REGISTRY.set(wildcard, registry);
  return {
    kind: "complex",
    name: "xs:anyType",
    attributes: [],
    content: {
      kind: "sequence",
      items: [{ kind: "any", wildcard, min: 0, max: Number.POSITIVE_INFINITY }],
      min: 1,
      max: 1,
    },
    simpleContent: undefined,
    anyAttribute: wildcard,
    mixed: true,
  };
}
