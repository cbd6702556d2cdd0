import { clark, type ParsedElement, parseXmlString, resolveLimits, resolveQName } from "../xml/reader.js";
import {
  BUILTIN_NAMESPACES,
  builtinSchemaText,
  SOAP_ENC_NS,
  SOAP12_ENC_NS,
  WSDL_NS,
} from "./builtin-docs.js";
import { BUILTIN_INFO, BUILTIN_LISTS, isBuiltin, type WhiteSpace } from "./builtins.js";
import {
  allowAttributes,
  occurs,
  parseBool,
  requireName,
  type SchemaDoc,
  unsupported,
  where,
  xsChildren,
} from "./components.js";
import { SchemaCompileError } from "./errors.js";
import { restrictFacets } from "./facets.js";
import {
  type AttributeDecl,
  type ComplexType,
  type ElementDecl,
  elementParticles,
  type GroupParticle,
  type Particle,
  REGISTRY,
  type SchemaRegistry,
  type SimpleType,
  SOAP_ARRAYS,
  type SoapArray,
  TYPE_NAMES,
  type Wildcard,
  XS_NS,
} from "./model.js";
import { type ComponentKind, resolveReference, unresolvedReferences } from "./references.js";

/** A schema document to compile, with the location its messages name it by. */
export interface SchemaSource {
  root: ParsedElement;
  location: string;
  /**
   * For a document an `xs:include` brings in: the including schema's targetNamespace. The
   * document must have that targetNamespace or none; with none, its components take it (Part 1
   * §4.2.1, the chameleon include).
   */
  includedInto?: string;
}

interface Global<T> {
  node: ParsedElement;
  doc: SchemaDoc;
  compiled?: T;
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
export function compileComponents(sources: readonly SchemaSource[]): SchemaComponents {
  const compiler = new SchemaCompiler(sources);
  return { elements: compiler.globalElements(), types: compiler.globalTypes() };
}

/** The SOAP-ENC array types: what every SOAP-encoded array restricts (SOAP 1.1 §5.4.2, SOAP 1.2 Part 2 §3.1.6). */
const ARRAY_TYPES: ReadonlySet<string> = new Set([`{${SOAP_ENC_NS}}Array`, `{${SOAP12_ENC_NS}}Array`]);

/** The `wsdl:arrayType` attribute (WSDL 1.1 §2.2) among a derivation step's attribute uses. */
function arrayTypeOf(children: readonly ParsedElement[]): { value: string; node: ParsedElement } | undefined {
  for (const c of children) {
    const value = c.localName === "attribute" ? c.attributes[WSDL_ARRAY_TYPE] : undefined;
    if (value !== undefined) return { value, node: c };
  }
  return undefined;
}

const WSDL_ARRAY_TYPE = `{${WSDL_NS}}arrayType`;

/** A complex type's derivation, merged once every global component is compiled. */
interface Derivation {
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

/** The attributes, wildcard and prohibited names an attribute group or a type's attribute uses give. */
interface AttributeUses {
  attributes: AttributeDecl[];
  anyAttribute: Wildcard | undefined;
  prohibited: Set<string>;
}

/** One compilation: global components are compiled once, on first use, so references may be circular. */
class SchemaCompiler {
  private readonly elementDefs = new Map<string, Global<ElementDecl>>();
  private readonly typeDefs = new Map<string, Global<SimpleType | ComplexType>>();
  private readonly groupDefs = new Map<
    string,
    Global<GroupParticle> & {
      repeated?: GroupParticle;
      /** While compiling: the element nesting it started at, and references from inside it. */
      depth?: number | undefined;
      waiting?: { placeholder: GroupParticle; repeated: boolean; min: number; max: number }[];
    }
  >();
  /** How many element declarations' inline types are being compiled, one inside the other. */
  private elementDepth = 0;
  /** How many types, model groups, attribute groups and derivations are being compiled, one inside the other. */
  private nesting = 0;
  private readonly attributeGroupDefs = new Map<string, Global<AttributeUses>>();
  private readonly attributeDefs = new Map<string, Global<AttributeDecl>>();
  private readonly builtins = new Map<string, SimpleType | ComplexType>();
  private readonly pending = new Map<ComplexType, Derivation>();
  private readonly deriving = new Set<ComplexType>();
  /** How many derivation steps lead from xs:anyType (or a simple type) to each derived complex type. */
  private readonly derivationSteps = new Map<ComplexType, number>();
  private readonly inProgress = new Set<object>();
  private readonly complexTypes: { type: ComplexType; node: ParsedElement; doc: SchemaDoc }[] = [];
  private readonly registry: SchemaRegistry;
  /** Elements with a default or fixed value, checked once every type is complete. */
  private readonly constrained: { decl: ElementDecl; at: string }[] = [];

  constructor(sources: readonly SchemaSource[]) {
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
    const docs = sources.map((source) => this.collect(source));
    this.addBuiltinDocs(docs);
    const missing = unresolvedReferences(
      docs.map((d) => d.doc),
      (kind, name) => this.declares(kind, name),
    );
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
    for (const name of this.groupDefs.keys()) this.globalGroup(name, "", false, 1, 1);
    for (const name of this.attributeGroupDefs.keys()) this.attributeGroup(name, "");
    for (const type of [...this.pending.keys()]) this.derive(type);
    for (const { type, node, doc } of this.complexTypes) checkPropertyNames(type, node, doc);
    // Part 1 §3.3.6 (e-props-correct.2): only an element with simple content has a value constraint.
    for (const { decl, at } of this.constrained) {
      if (decl.type.kind === "complex" && !decl.type.simpleContent)
        throw new SchemaCompileError(`${at}: default or fixed needs a simple type or simple content`);
    }
    this.linkDerivations();
  }

  /**
   * One more component compiled inside the others. XML Schema sets no limit on how deeply types
   * refer to types, but each level is a few stack frames here and in the decoder, so a contract
   * whose references nest deeper than {@link MAX_NESTING} is refused rather than left to exhaust
   * the stack. Each caller decrements `nesting` when it returns.
   */
  private enter(at: string): void {
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

  private collect(source: SchemaSource): { doc: SchemaDoc; imports: { node: ParsedElement; ns: string }[] } {
    const root = source.root;
    if (root.namespace !== XS_NS || root.localName !== "schema") {
      throw new SchemaCompileError(`${source.location}: the document element is not xs:schema`);
    }
    allowAttributes(root, source.location, [
      "targetNamespace",
      "elementFormDefault",
      "attributeFormDefault",
      "blockDefault",
      "finalDefault",
      "version",
      "id",
    ]);
    const own = root.attributes.targetNamespace;
    const into = source.includedInto;
    // Part 1 §4.2.1 (src-include.2): an included document has the including schema's
    // targetNamespace, or none and takes it.
    if (into !== undefined && own !== undefined && own !== into) {
      throw new SchemaCompileError(
        `${source.location}: xs:include of a schema whose targetNamespace "${own}" is not "${into}", the including schema's (xs:import brings in another namespace)`,
      );
    }
    const doc: SchemaDoc = {
      root,
      location: source.location,
      targetNamespace: own ?? into ?? "",
      qualifiedElements: root.attributes.elementFormDefault === "qualified",
      qualifiedAttributes: root.attributes.attributeFormDefault === "qualified",
      chameleon: own === undefined && (into ?? "") !== "",
    };
    const imports: { node: ParsedElement; ns: string }[] = [];
    for (const child of xsChildren(root, source.location)) {
      const name = child.attributes.name;
      const key = () => clark(doc.targetNamespace, requireName(child, doc));
      switch (child.localName) {
        case "import":
          // Part 1 §4.2.3: without schemaLocation the namespace's components come from elsewhere:
          // another schema of the contract, or one every processor knows (checked below).
          if (child.attributes.schemaLocation === undefined)
            imports.push({ node: child, ns: child.attributes.namespace ?? "" });
          break;
        case "include":
        case "annotation":
        case "notation":
          break; // documents with a schemaLocation are loaded by the contract loader
        case "element":
          this.elementDefs.set(key(), { node: child, doc });
          break;
        case "simpleType":
        case "complexType":
          this.typeDefs.set(key(), { node: child, doc });
          break;
        case "group":
          this.groupDefs.set(key(), { node: child, doc });
          break;
        case "attributeGroup":
          this.attributeGroupDefs.set(key(), { node: child, doc });
          break;
        case "attribute":
          this.attributeDefs.set(key(), { node: child, doc });
          break;
        default:
          throw unsupported(child, doc, name);
      }
    }
    return { doc, imports };
  }

  /**
   * Resolves each `xs:import` without schemaLocation: to another schema of the set with that
   * targetNamespace (a sibling in `wsdl:types`), to XML Schema's own namespace, or to a built-in
   * document (schema-builtin-docs.ts); anything else cannot be found and stops the load.
   */
  private addBuiltinDocs(docs: { doc: SchemaDoc; imports: { node: ParsedElement; ns: string }[] }[]): void {
    const declared = new Set(docs.map((d) => d.doc.targetNamespace));
    for (const { doc, imports } of docs) {
      for (const { node, ns } of imports) {
        if (declared.has(ns) || ns === XS_NS) continue;
        if (builtinSchemaText(ns) === undefined) {
          throw new SchemaCompileError(
            `${where(node, doc)}: xs:import of namespace "${ns}" has no schemaLocation and no schema of the contract has that targetNamespace`,
          );
        }
      }
    }
    for (const ns of BUILTIN_NAMESPACES) {
      if (declared.has(ns)) continue;
      const root = parseXmlString(builtinSchemaText(ns) as string, resolveLimits({ maxBytes: 1 << 20 }));
      this.collect({ root, location: `built-in schema of ${ns}` });
    }
  }

  private globalElement(name: string, where: string): ElementDecl {
    const def = this.elementDefs.get(name);
    if (!def) throw new SchemaCompileError(`${where}: element ${name} is not declared`);
    if (!def.compiled) {
      const placeholder = {} as ElementDecl;
      def.compiled = placeholder;
      Object.assign(placeholder, this.elementDecl(def.node, def.doc, true));
      REGISTRY.set(placeholder, this.registry);
    }
    return def.compiled;
  }

  private globalType(name: string, where: string): SimpleType | ComplexType {
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
        def.compiled = this.simpleType(def.node, def.doc, requireName(def.node, def.doc));
        this.inProgress.delete(def);
      } else {
        // Filled in place: a reference to the type from inside it finds this object.
        const type = { kind: "complex" } as ComplexType;
        def.compiled = type;
        this.complexType(def.node, def.doc, requireName(def.node, def.doc), type);
      }
      TYPE_NAMES.set(def.compiled, name);
    }
    return def.compiled;
  }

  private builtin(local: string, where: string): SimpleType | ComplexType {
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

  private qnameOf(
    node: ParsedElement,
    attr: string,
    doc: SchemaDoc,
    raw = node.attributes[attr] ?? "",
  ): string {
    const q = resolveReference(raw, node, doc);
    if (!q) throw new SchemaCompileError(`${where(node, doc)}: prefix of "${raw}" is not declared`);
    return clark(q.namespace, q.localName);
  }

  private typeRef(node: ParsedElement, attr: string, doc: SchemaDoc): SimpleType | ComplexType {
    return this.globalType(this.qnameOf(node, attr, doc), where(node, doc));
  }

  private simpleRef(node: ParsedElement, attr: string, doc: SchemaDoc): SimpleType {
    const type = this.typeRef(node, attr, doc);
    if (type.kind !== "simple")
      throw new SchemaCompileError(`${where(node, doc)}: ${attr} must name a simple type`);
    return type;
  }

  private elementDecl(node: ParsedElement, doc: SchemaDoc, global: boolean): ElementDecl {
    allowAttributes(
      node,
      doc.location,
      global
        ? ["name", "type", "nillable", "id", "block", "final", "default", "fixed"]
        : ["name", "type", "nillable", "minOccurs", "maxOccurs", "form", "id", "block", "default", "fixed"],
    );
    const localName = requireName(node, doc);
    const qualified =
      global ||
      (node.attributes.form ?? (doc.qualifiedElements ? "qualified" : "unqualified")) === "qualified";
    const namespace = qualified ? doc.targetNamespace : "";
    const children = xsChildren(node, doc.location).filter((c) => c.localName !== "annotation");
    // Part 1 §3.3.2: (simpleType | complexType)?, (unique | key | keyref)*.
    const constraints = children.filter((c) => IDENTITY.has(c.localName));
    const inline = children.filter((c) => !IDENTITY.has(c.localName));
    for (const c of constraints) identityConstraint(c, doc);
    let type: SimpleType | ComplexType;
    if (node.attributes.type !== undefined) {
      if (inline.length > 0)
        throw new SchemaCompileError(`${where(node, doc)}: both a type attribute and an inline type`);
      type = this.typeRef(node, "type", doc);
    } else {
      const def = inline[0];
      if (inline.length > 1) throw unsupported(inline[1] as ParsedElement, doc, localName);
      // Part 1 §3.3.2: an element with neither is of xs:anyType (no substitution groups here).
      if (!def) type = this.builtin("anyType", where(node, doc));
      else if (def.localName === "simpleType") type = this.simpleType(def, doc, localName);
      else if (def.localName === "complexType") {
        this.elementDepth++;
        type = this.complexType(def, doc, localName);
        this.elementDepth--;
      } else throw unsupported(def, doc, localName);
    }
    const decl: ElementDecl = {
      namespace,
      localName,
      clark: clark(namespace, localName),
      type,
      nillable: parseBool(node.attributes.nillable, node, doc),
    };
    const block = derivationSet(node.attributes.block, node, doc);
    if (block && (block.extension || block.restriction)) decl.block = block;
    const { default: dflt, fixed } = node.attributes;
    if (dflt !== undefined || fixed !== undefined) {
      if (dflt !== undefined && fixed !== undefined)
        throw new SchemaCompileError(`${where(node, doc)}: both default and fixed`);
      decl.valueConstraint = { value: (dflt ?? fixed) as string, fixed: fixed !== undefined };
      this.constrained.push({ decl, at: where(node, doc) });
    }
    REGISTRY.set(decl, this.registry);
    return decl;
  }

  private simpleType(node: ParsedElement, doc: SchemaDoc, name: string): SimpleType {
    allowAttributes(node, doc.location, ["name", "id", "final"]);
    const children = xsChildren(node, doc.location).filter((c) => c.localName !== "annotation");
    const def = children[0];
    if (children.length !== 1 || !def) {
      throw new SchemaCompileError(`${where(node, doc)}: needs one of xs:restriction, xs:list, xs:union`);
    }
    this.enter(where(node, doc));
    let type: SimpleType;
    if (def.localName === "restriction") type = this.restriction(def, doc, name);
    else if (def.localName === "list") type = this.list(def, doc, name);
    else if (def.localName === "union") type = this.union(def, doc, name);
    else throw unsupported(def, doc, name);
    this.nesting--;
    return type;
  }

  private inlineSimple(node: ParsedElement, doc: SchemaDoc, name: string): SimpleType | undefined {
    const inline = xsChildren(node, doc.location).find((c) => c.localName === "simpleType");
    return inline ? this.simpleType(inline, doc, name) : undefined;
  }

  private restriction(node: ParsedElement, doc: SchemaDoc, name: string): SimpleType {
    allowAttributes(node, doc.location, ["base", "id"]);
    const base = this.inlineSimple(node, doc, name) ?? this.simpleRef(node, "base", doc);
    return this.restrictSimple(node, doc, base, name);
  }

  /** A restriction of a simple type by the facets among `node`'s children (Part 2 §4.1.2). */
  private restrictSimple(node: ParsedElement, doc: SchemaDoc, base: SimpleType, name: string): SimpleType {
    const facets = restrictFacets(node, doc, base, name);
    const ws = xsChildren(node, doc.location).find((c) => c.localName === "whiteSpace");
    let whiteSpace: WhiteSpace = base.whiteSpace;
    if (ws) {
      const value = ws.attributes.value;
      if (value !== "preserve" && value !== "replace" && value !== "collapse")
        throw new SchemaCompileError(
          `${where(ws, doc)}: whiteSpace "${value ?? ""}" is not preserve, replace or collapse`,
        );
      // Part 2 §4.3.6.4: a derived type may only strengthen the base's white-space handling.
      const order = { preserve: 0, replace: 1, collapse: 2 };
      if (order[value] < order[base.whiteSpace])
        throw new SchemaCompileError(
          `${where(ws, doc)}: whiteSpace "${value}" is weaker than the base's "${base.whiteSpace}"`,
        );
      whiteSpace = value;
    }
    const type: SimpleType = { ...base, name, facets, whiteSpace, baseType: base };
    return type;
  }

  private list(node: ParsedElement, doc: SchemaDoc, name: string): SimpleType {
    allowAttributes(node, doc.location, ["itemType", "id"]);
    const inline = this.inlineSimple(node, doc, `${name} item`);
    if (inline && node.attributes.itemType !== undefined)
      throw new SchemaCompileError(`${where(node, doc)}: both an itemType and an inline item type`);
    const item = inline ?? this.simpleRef(node, "itemType", doc);
    // Part 2 §2.5.1.2: the item type of a list is atomic or a union, not a list.
    if (item.variety === "list")
      throw new SchemaCompileError(`${where(node, doc)}: a list of lists is not allowed`);
    return listType(name, item, this.builtin("anySimpleType", where(node, doc)) as SimpleType);
  }

  private union(node: ParsedElement, doc: SchemaDoc, name: string): SimpleType {
    allowAttributes(node, doc.location, ["memberTypes", "id"]);
    const members: SimpleType[] = [];
    for (const raw of (node.attributes.memberTypes ?? "").split(/[ \t\n\r]+/)) {
      if (raw === "") continue;
      const type = this.globalType(this.qnameOf(node, "memberTypes", doc, raw), where(node, doc));
      if (type.kind !== "simple")
        throw new SchemaCompileError(`${where(node, doc)}: member ${raw} is not a simple type`);
      members.push(type);
    }
    for (const c of xsChildren(node, doc.location)) {
      if (c.localName === "simpleType") members.push(this.simpleType(c, doc, `${name} member`));
      else if (c.localName !== "annotation") throw unsupported(c, doc, name);
    }
    if (members.length === 0) throw new SchemaCompileError(`${where(node, doc)}: a union needs member types`);
    return {
      kind: "simple",
      name,
      base: "anySimpleType",
      facets: { patterns: [] },
      // A union has no white-space facet of its own: each member applies its own.
      whiteSpace: "preserve",
      variety: "union",
      memberTypes: members,
      baseType: this.builtin("anySimpleType", where(node, doc)) as SimpleType,
    };
  }

  private complexType(
    node: ParsedElement,
    doc: SchemaDoc,
    name: string,
    type = { kind: "complex" } as ComplexType,
  ): ComplexType {
    allowAttributes(node, doc.location, ["name", "id", "mixed", "abstract", "block", "final"]);
    this.enter(where(node, doc));
    Object.assign(type, { name, attributes: [], content: undefined, simpleContent: undefined });
    if (parseBool(node.attributes.mixed, node, doc)) type.mixed = true;
    if (parseBool(node.attributes.abstract, node, doc)) type.abstract = true;
    const block = derivationSet(node.attributes.block, node, doc);
    if (block) type.block = block;
    const children = xsChildren(node, doc.location).filter((c) => c.localName !== "annotation");
    const derivation = children.find(
      (c) => c.localName === "simpleContent" || c.localName === "complexContent",
    );
    if (derivation) {
      if (children.length !== 1)
        throw unsupported(children.find((c) => c !== derivation) as ParsedElement, doc, name);
      this.derivation(type, derivation, doc, name);
    } else {
      const uses = this.contentAndAttributes(children, doc, name);
      type.content = uses.content;
      type.attributes = uses.attributes;
      type.anyAttribute = uses.anyAttribute;
    }
    this.complexTypes.push({ type, node, doc });
    this.nesting--;
    return type;
  }

  /** `xs:simpleContent` / `xs:complexContent` (Part 1 §3.4.2): recorded, merged by {@link derive}. */
  private derivation(type: ComplexType, node: ParsedElement, doc: SchemaDoc, name: string): void {
    allowAttributes(node, doc.location, node.localName === "complexContent" ? ["mixed", "id"] : ["id"]);
    if (node.localName === "complexContent" && node.attributes.mixed !== undefined)
      type.mixed = parseBool(node.attributes.mixed, node, doc);
    const steps = xsChildren(node, doc.location).filter((c) => c.localName !== "annotation");
    const step = steps[0];
    if (steps.length !== 1 || !step || (step.localName !== "extension" && step.localName !== "restriction")) {
      throw new SchemaCompileError(`${where(node, doc)}: needs one xs:extension or xs:restriction`);
    }
    allowAttributes(step, doc.location, ["base", "id"]);
    const simple = node.localName === "simpleContent";
    const method = step.localName as "extension" | "restriction";
    const base = this.typeRef(step, "base", doc);
    const all = xsChildren(step, doc.location);
    const inlineSimple = all.find((c) => c.localName === "simpleType");
    if (inlineSimple) throw unsupported(inlineSimple, doc, name);
    const children = all.filter(
      (c) => c.localName !== "annotation" && !(simple && method === "restriction" && FACETS.has(c.localName)),
    );
    const uses = this.contentAndAttributes(children, doc, name);
    if (simple && uses.content) throw unsupported(children[0] as ParsedElement, doc, name);
    type.baseType = base;
    type.derivation = method;
    this.pending.set(type, {
      base,
      method,
      simple,
      content: uses.content,
      attributes: uses.attributes,
      anyAttribute: uses.anyAttribute,
      prohibited: uses.prohibited,
      facets: simple && method === "restriction" ? step : undefined,
      arrayType: arrayTypeOf(children),
      node: step,
      doc,
    });
  }

  /** A complex type's derivation merged into it, its base's first (Part 1 §3.4.2). */
  private derive(type: ComplexType): void {
    const d = this.pending.get(type);
    if (!d) return;
    if (this.deriving.has(type))
      throw new SchemaCompileError(`${where(d.node, d.doc)}: the type is derived from itself`);
    this.enter(where(d.node, d.doc));
    this.deriving.add(type);
    const base = d.base;
    if (base.kind === "complex") this.derive(base);
    const at = where(d.node, d.doc);
    // Each extension nests its base's content one level deeper: bounded in whatever order the
    // chain's types were compiled.
    const steps = (base.kind === "complex" ? (this.derivationSteps.get(base) ?? 0) : 0) + 1;
    if (steps > MAX_NESTING)
      throw new SchemaCompileError(
        `${at}: type "${type.name}" is derived in more than ${MAX_NESTING} steps; this compiler stops there`,
      );
    this.derivationSteps.set(type, steps);
    if (d.simple) {
      // Simple content: the base is a simple type or a complex type with simple content.
      let content: SimpleType | undefined;
      if (base.kind === "simple") {
        if (d.method === "restriction")
          throw new SchemaCompileError(`${at}: xs:simpleContent/xs:restriction needs a complex base type`);
        content = base;
      } else {
        content = base.simpleContent;
        // Part 1 §3.4.2: a restriction of a mixed, emptiable type also gives simple content.
        if (!content) throw new SchemaCompileError(`${at}: base ${base.name} has no simple content`);
      }
      if (d.facets) content = this.restrictSimple(d.facets, d.doc, content, type.name);
      type.simpleContent = content;
    } else {
      if (base.kind === "simple")
        throw new SchemaCompileError(`${at}: xs:complexContent needs a complex base type`);
      if (base.simpleContent && (d.method === "extension" || d.content))
        throw new SchemaCompileError(
          `${at}: base ${base.name} has simple content; derive it with xs:simpleContent`,
        );
      if (d.method === "extension") {
        // §3.4.2 {content type} of an extension: the base's particle, then the extension's.
        type.content =
          base.content && d.content
            ? { kind: "sequence", items: [base.content, d.content], min: 1, max: 1 }
            : (d.content ?? base.content);
        type.mixed ||= base.mixed === true;
      } else {
        // A restriction's content model is written out whole (§3.4.2). A SOAP-ENC array that
        // restricts soapenc:Array with attributes only keeps its members (SOAP 1.1 §5.4.2).
        const array = SOAP_ARRAYS.get(base) !== undefined || ARRAY_TYPES.has(TYPE_NAMES.get(base) ?? "");
        type.content = d.content ?? (array ? base.content : undefined);
        if (array) {
          const item = this.arrayItem(d, base);
          if (d.content === undefined && d.arrayType !== undefined && item.itemType !== undefined) {
            // WSDL 1.1 §2.2 declares the item type alone: the members are `item` elements of it
            // (SOAP 1.1 §5.4.2 leaves their name free), a list in the value as any repeated element.
            const decl: ElementDecl = {
              namespace: "",
              localName: "item",
              clark: "item",
              type: this.registry.type(item.itemType) as SimpleType | ComplexType,
              nillable: true,
            };
            REGISTRY.set(decl, this.registry);
            const member: Particle = {
              kind: "element",
              decl,
              min: 0,
              max: Number.POSITIVE_INFINITY,
              many: true,
            };
            type.content = { kind: "sequence", items: [member], min: 1, max: 1 };
            item.member = "item";
          }
          SOAP_ARRAYS.set(type, item);
        }
      }
    }
    if (base.kind === "complex") {
      const own = new Set(d.attributes.map((a) => a.key));
      const inherited = base.attributes.filter((a) => !own.has(a.key) && !d.prohibited.has(a.key));
      type.attributes = [...inherited, ...d.attributes];
      type.anyAttribute =
        d.method === "extension" ? unionWildcard(base.anyAttribute, d.anyAttribute) : d.anyAttribute;
    } else {
      type.attributes = d.attributes;
      type.anyAttribute = d.anyAttribute;
    }
    this.pending.delete(type);
    this.deriving.delete(type);
    this.nesting--;
  }

  /**
   * The item type of a SOAP-encoded array (SOAP 1.1 §5.4.2, SOAP 1.2 Part 2 §3.1.6): `wsdl:arrayType`
   * (WSDL 1.1 §2.2, `xsd:string[]`) names it; without it, the restriction's one element declares
   * it; a type derived from another array keeps that one's.
   */
  private arrayItem(d: Derivation, base: ComplexType): SoapArray {
    const at = d.arrayType;
    if (at === undefined) {
      const members = d.content ? elementParticles(d.content) : [];
      const member = members.length === 1 ? members[0] : undefined;
      if (member) return { itemType: TYPE_NAMES.get(member.decl.type), member: member.decl.localName };
      return SOAP_ARRAYS.get(base) ?? { itemType: undefined, member: undefined };
    }
    const match = /^\s*([^\s[]+)((?:\[[\s,]*\])*)\[\s*\]\s*$/.exec(at.value);
    const q = match ? resolveQName(match[1] as string, at.node.scope) : undefined;
    if (!match || !q) {
      throw new SchemaCompileError(
        `${where(at.node, d.doc)}: wsdl:arrayType="${at.value}" is not an array type (WSDL 1.1 §2.2: a type's QName, then [])`,
      );
    }
    const name = clark(q.namespace, q.localName);
    if (match[2] !== "" || !this.registry.type(name)) {
      throw new SchemaCompileError(
        match[2] !== ""
          ? `${where(at.node, d.doc)}: wsdl:arrayType="${at.value}": an array of arrays is not supported (one-dimensional arrays of one item type)`
          : `${where(at.node, d.doc)}: wsdl:arrayType="${at.value}": type ${name} is not declared`,
      );
    }
    const members = d.content ? elementParticles(d.content) : [];
    return { itemType: name, member: members.length === 1 ? members[0]?.decl.localName : undefined };
  }

  /** Each global complex type learns the global types derived from it, what `xsi:type` may name. */
  private linkDerivations(): void {
    for (const def of this.typeDefs.values()) {
      const type = def.compiled;
      if (type?.kind !== "complex") continue;
      for (let base = type.baseType; base !== undefined; base = base.baseType) {
        if (base.kind !== "complex") break;
        if (!base.derived) base.derived = [];
        base.derived.push(type);
      }
    }
  }

  /**
   * The particle and attribute uses among a complex type's (or derivation step's) children:
   * `(group | all | choice | sequence)?, (attribute | attributeGroup)*, anyAttribute?`.
   */
  private contentAndAttributes(
    children: readonly ParsedElement[],
    doc: SchemaDoc,
    name: string,
  ): AttributeUses & { content: GroupParticle | undefined } {
    let content: GroupParticle | undefined;
    const uses: AttributeUses = { attributes: [], anyAttribute: undefined, prohibited: new Set() };
    for (const child of children) {
      switch (child.localName) {
        case "sequence":
        case "choice":
        case "all":
        case "group":
          if (content) throw unsupported(child, doc, name);
          content =
            child.localName === "group" ? this.groupRef(child, doc, false) : this.group(child, doc, false);
          break;
        default:
          this.attributeUse(child, doc, name, uses);
      }
    }
    return { ...uses, content };
  }

  /** One of `attribute`, `attributeGroup`, `anyAttribute`, added to `uses`. */
  private attributeUse(child: ParsedElement, doc: SchemaDoc, name: string, uses: AttributeUses): void {
    switch (child.localName) {
      case "attribute": {
        if (child.attributes.use === "prohibited") {
          const ref = child.attributes.ref;
          uses.prohibited.add(
            ref !== undefined
              ? this.qnameOf(child, "ref", doc)
              : attributeKey(child, doc, requireName(child, doc)),
          );
          return;
        }
        uses.attributes.push(this.attribute(child, doc, false));
        return;
      }
      case "attributeGroup": {
        allowAttributes(child, doc.location, ["ref", "id"]);
        const group = this.attributeGroup(this.qnameOf(child, "ref", doc), where(child, doc));
        uses.attributes.push(...group.attributes);
        for (const p of group.prohibited) uses.prohibited.add(p);
        uses.anyAttribute = unionWildcard(uses.anyAttribute, group.anyAttribute);
        return;
      }
      case "anyAttribute":
        if (uses.anyAttribute) throw unsupported(child, doc, name);
        uses.anyAttribute = this.wildcard(child, doc, ["namespace", "processContents", "id"]);
        return;
      default:
        throw unsupported(child, doc, name);
    }
  }

  private attributeGroup(name: string, at: string): AttributeUses {
    const def = this.attributeGroupDefs.get(name);
    if (!def) throw new SchemaCompileError(`${at}: attribute group ${name} is not declared`);
    if (!def.compiled) {
      // Part 1 §3.6.6 (src-attribute_group.3): circular attribute groups are an error.
      if (this.inProgress.has(def))
        throw new SchemaCompileError(`${at}: attribute group ${name} refers to itself`);
      this.inProgress.add(def);
      this.enter(at);
      allowAttributes(def.node, def.doc.location, ["name", "id"]);
      const uses: AttributeUses = { attributes: [], anyAttribute: undefined, prohibited: new Set() };
      for (const c of xsChildren(def.node, def.doc.location)) {
        if (c.localName !== "annotation") this.attributeUse(c, def.doc, requireName(def.node, def.doc), uses);
      }
      def.compiled = uses;
      this.inProgress.delete(def);
      this.nesting--;
    }
    return def.compiled;
  }

  private wildcard(node: ParsedElement, doc: SchemaDoc, allowed: readonly string[]): Wildcard {
    allowAttributes(node, doc.location, allowed);
    const process = node.attributes.processContents ?? "strict";
    if (process !== "strict" && process !== "lax" && process !== "skip")
      throw new SchemaCompileError(
        `${where(node, doc)}: processContents "${process}" is not strict, lax or skip`,
      );
    const raw = (node.attributes.namespace ?? "##any").trim();
    let namespaces: Wildcard["namespaces"];
    if (raw === "##any") namespaces = { kind: "any" };
    else if (raw === "##other") namespaces = { kind: "not", namespace: doc.targetNamespace };
    else {
      const list: string[] = [];
      for (const token of raw.split(/[ \t\n\r]+/)) {
        if (token === "") continue;
        if (token === "##targetNamespace") list.push(doc.targetNamespace);
        else if (token === "##local") list.push("");
        else if (token.startsWith("##"))
          throw new SchemaCompileError(
            `${where(node, doc)}: namespace "${token}" is not a namespace constraint`,
          );
        else list.push(token);
      }
      namespaces = { kind: "list", namespaces: list };
    }
    const wildcard: Wildcard = { namespaces, process };
    REGISTRY.set(wildcard, this.registry);
    return wildcard;
  }

  private attribute(node: ParsedElement, doc: SchemaDoc, global: boolean): AttributeDecl {
    if (!global && node.attributes.ref !== undefined) {
      allowAttributes(node, doc.location, ["ref", "use", "default", "fixed", "id"]);
      const key = this.qnameOf(node, "ref", doc);
      const def = this.attributeDefs.get(key);
      if (!def) throw new SchemaCompileError(`${where(node, doc)}: attribute ${key} is not declared`);
      if (!def.compiled) def.compiled = this.attribute(def.node, def.doc, true);
      return this.attributeUseOf(def.compiled, node, doc);
    }
    allowAttributes(
      node,
      doc.location,
      global
        ? ["name", "type", "default", "fixed", "id"]
        : ["name", "type", "use", "default", "fixed", "form", "id"],
    );
    const name = requireName(node, doc);
    const inline = this.inlineSimple(node, doc, name);
    // Part 1 §3.2.2: an attribute without a type is of xs:anySimpleType.
    const type =
      inline ??
      (node.attributes.type !== undefined
        ? this.typeRef(node, "type", doc)
        : this.builtin("anySimpleType", where(node, doc)));
    if (type.kind !== "simple")
      throw new SchemaCompileError(`${where(node, doc)}: attribute needs a simple type`);
    const qualified =
      global ||
      (node.attributes.form ?? (doc.qualifiedAttributes ? "qualified" : "unqualified")) === "qualified";
    const ns = qualified ? doc.targetNamespace : "";
    const decl: AttributeDecl = {
      key: ns ? `{${ns}}${name}` : name,
      name,
      qualifiedNs: ns,
      type,
      required: false,
      defaultValue: undefined,
    };
    return this.attributeUseOf(decl, node, doc);
  }

  /** An attribute declaration as one use: `use`, and `default` or `fixed` (Part 1 §3.5.2). */
  private attributeUseOf(decl: AttributeDecl, node: ParsedElement, doc: SchemaDoc): AttributeDecl {
    const use = node.attributes.use ?? "optional";
    if (use !== "optional" && use !== "required")
      throw new SchemaCompileError(`${where(node, doc)}: use="${use}" is not supported`);
    const { default: dflt, fixed } = node.attributes;
    if (dflt !== undefined && fixed !== undefined)
      throw new SchemaCompileError(`${where(node, doc)}: both default and fixed`);
    return {
      ...decl,
      required: use === "required",
      defaultValue: dflt ?? fixed ?? decl.defaultValue,
      ...(fixed !== undefined ? { fixed } : decl.fixed !== undefined ? { fixed: decl.fixed } : {}),
    };
  }

  /**
   * A named model group, compiled once for use where it occurs once and once for use inside a
   * repetition (`repeated`), where its elements' values are lists.
   */
  private globalGroup(name: string, at: string, repeated: boolean, min: number, max: number): GroupParticle {
    const def = this.groupDefs.get(name);
    if (!def) throw new SchemaCompileError(`${at}: group ${name} is not declared`);
    const done = repeated ? def.repeated : def.compiled;
    if (done) return { ...done, min, max };
    if (def.depth !== undefined) {
      // Part 1 §3.8.6 (Model Group Correct 2): a group may contain itself only inside the type
      // of an element it declares; the reference is filled in once the group is compiled.
      if (this.elementDepth <= def.depth)
        throw new SchemaCompileError(`${at}: group ${name} contains itself`);
      const placeholder = { kind: "sequence", items: [], min, max } as GroupParticle;
      def.waiting ??= [];
      def.waiting.push({ placeholder, repeated, min, max });
      return placeholder;
    }
    def.depth = this.elementDepth;
    allowAttributes(def.node, def.doc.location, ["name", "id"]);
    const model = xsChildren(def.node, def.doc.location).filter((c) => c.localName !== "annotation");
    const m = model[0];
    if (model.length !== 1 || !m || !["sequence", "choice", "all"].includes(m.localName))
      throw new SchemaCompileError(
        `${where(def.node, def.doc)}: needs one of xs:sequence, xs:choice, xs:all`,
      );
    if (m.attributes.minOccurs !== undefined || m.attributes.maxOccurs !== undefined)
      throw new SchemaCompileError(
        `${where(m, def.doc)}: minOccurs and maxOccurs belong on the group reference`,
      );
    const group = this.group(m, def.doc, repeated);
    if (repeated) def.repeated = group;
    else def.compiled = group;
    def.depth = undefined;
    const waiting = def.waiting ?? [];
    def.waiting = [];
    for (const w of waiting) {
      const target = w.repeated
        ? this.globalGroup(name, at, true, w.min, w.max)
        : { ...group, min: w.min, max: w.max };
      Object.assign(w.placeholder, target);
    }
    return { ...group, min, max };
  }

  /** `xs:group ref=` in a content model: the group's particle with the reference's occurrences. */
  private groupRef(node: ParsedElement, doc: SchemaDoc, many: boolean): GroupParticle {
    allowAttributes(node, doc.location, ["ref", "minOccurs", "maxOccurs", "id"]);
    const { min, max } = occurs(node, doc);
    const group = this.globalGroup(
      this.qnameOf(node, "ref", doc),
      where(node, doc),
      many || max > 1,
      min,
      max,
    );
    if (group.kind === "all" && (max !== 1 || min > 1))
      throw new SchemaCompileError(`${where(node, doc)}: xs:all occurs at most once`);
    return group;
  }

  private group(node: ParsedElement, doc: SchemaDoc, many: boolean): GroupParticle {
    allowAttributes(node, doc.location, ["minOccurs", "maxOccurs", "id"]);
    const kind = node.localName as GroupParticle["kind"];
    const { min, max } = occurs(node, doc);
    this.enter(where(node, doc));
    if (kind === "all" && (max !== 1 || min > 1))
      throw new SchemaCompileError(`${where(node, doc)}: xs:all occurs at most once`);
    const repeated = many || max > 1;
    const items: Particle[] = [];
    for (const child of xsChildren(node, doc.location)) {
      if (child.localName === "annotation") continue;
      if (child.localName === "element") {
        const o = occurs(child, doc);
        if (kind === "all" && o.max !== 1)
          throw new SchemaCompileError(`${where(child, doc)}: maxOccurs in xs:all must be 1`);
        let decl: ElementDecl;
        if (child.attributes.ref !== undefined) {
          allowAttributes(child, doc.location, ["ref", "minOccurs", "maxOccurs", "id"]);
          decl = this.globalElement(this.qnameOf(child, "ref", doc), where(child, doc));
        } else {
          decl = this.elementDecl(child, doc, false);
        }
        items.push({ kind: "element", decl, min: o.min, max: o.max, many: repeated || o.max > 1 });
      } else if ((child.localName === "sequence" || child.localName === "choice") && kind !== "all") {
        items.push(this.group(child, doc, repeated));
      } else if (child.localName === "group" && kind !== "all") {
        items.push(this.groupRef(child, doc, repeated));
      } else if (child.localName === "any" && kind !== "all") {
        const o = occurs(child, doc);
        const wildcard = this.wildcard(child, doc, [
          "namespace",
          "processContents",
          "minOccurs",
          "maxOccurs",
          "id",
        ]);
        items.push({ kind: "any", wildcard, min: o.min, max: o.max });
      } else {
        throw unsupported(child, doc, node.localName);
      }
    }
    this.nesting--;
    return { kind, items, min, max };
  }
}

/**
 * The deepest nesting of types, model groups, attribute groups and derivations the compiler
 * follows (about 128 element declarations, each of a named type holding the next): far past real
 * contracts, and far below the stack the compiler and the decoder use for it.
 */
const MAX_NESTING = 256;

/** The facets a simpleContent restriction may hold besides attributes (Part 2 §4.3). */
const FACETS = new Set([
  "simpleType",
  "enumeration",
  "pattern",
  "length",
  "minLength",
  "maxLength",
  "minInclusive",
  "maxInclusive",
  "minExclusive",
  "maxExclusive",
  "totalDigits",
  "fractionDigits",
  "whiteSpace",
]);

const IDENTITY = new Set(["unique", "key", "keyref"]);

/**
 * `xs:unique`, `xs:key`, `xs:keyref` (Part 1 §3.11): read for their form (a name, one
 * `xs:selector` and at least one `xs:field`, each with an `xpath`; a keyref's `refer`) and not
 * enforced: the values they constrain are the application's to compare.
 */
function identityConstraint(node: ParsedElement, doc: SchemaDoc): void {
  allowAttributes(node, doc.location, node.localName === "keyref" ? ["name", "refer", "id"] : ["name", "id"]);
  requireName(node, doc);
  if (node.localName === "keyref" && node.attributes.refer === undefined)
    throw new SchemaCompileError(`${where(node, doc)}: xs:keyref needs refer`);
  const parts = xsChildren(node, doc.location).filter((c) => c.localName !== "annotation");
  const [selector, ...fields] = parts;
  if (
    selector?.localName !== "selector" ||
    fields.length === 0 ||
    fields.some((f) => f.localName !== "field")
  )
    throw new SchemaCompileError(`${where(node, doc)}: needs one xs:selector and at least one xs:field`);
  for (const p of parts) {
    allowAttributes(p, doc.location, ["xpath", "id"]);
    if (p.attributes.xpath === undefined) throw new SchemaCompileError(`${where(p, doc)}: needs an xpath`);
  }
}

/** `block` / `final` (Part 1 §3.4.2): `#all` or a list of extension, restriction (and substitution). */
function derivationSet(
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

/** Part 1 §3.10.6 (attribute wildcard union), kept simple: `##any` wins, else the first given. */
function unionWildcard(a: Wildcard | undefined, b: Wildcard | undefined): Wildcard | undefined {
  if (!a) return b;
  if (!b) return a;
  if (b.namespaces.kind === "any") return b;
  if (a.namespaces.kind === "any") return a;
  if (a.namespaces.kind === "list" && b.namespaces.kind === "list") {
    return {
      ...a,
      namespaces: {
        kind: "list",
        namespaces: [...new Set([...a.namespaces.namespaces, ...b.namespaces.namespaces])],
      },
    };
  }
  return a;
}

function attributeKey(node: ParsedElement, doc: SchemaDoc, name: string): string {
  const qualified =
    (node.attributes.form ?? (doc.qualifiedAttributes ? "qualified" : "unqualified")) === "qualified";
  return qualified && doc.targetNamespace ? `{${doc.targetNamespace}}${name}` : name;
}

/** A list type of `item` (Part 2 §2.5.1.2): white space collapsed, items separated by spaces. */
function listType(name: string, item: SimpleType, anySimple: SimpleType): SimpleType {
  return {
    kind: "simple",
    name,
    base: "anySimpleType",
    facets: { patterns: [] },
    whiteSpace: "collapse",
    variety: "list",
    itemType: item,
    baseType: anySimple,
  };
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

/**
 * A complex type's value is a plain object with one property per attribute and element name.
 * XML Schema 1.0 Part 1 §2.5 puts local attributes and local elements in separate symbol spaces
 * (and §3.4.6 ct-props-correct.4 only forbids two attributes of the same name *and* namespace),
 * so a valid schema may name an attribute and an element `id`, or two attributes `id` in
 * different namespaces. Both would be the one property `id`: decoding would keep one value and
 * drop the other, encoding would write the value twice. Such a type is refused at compile time.
 *
 * The same holds for one element name in two particles that can both match in one instance:
 * §3.8.4 (Element Sequence Valid) makes `<a>1</a><b/><a>2</a>` valid against the sequence
 * (a, b, a), but the value's one property `a` would keep the second and drop the first (a
 * gateway reading the first and the service reading the last would disagree). Alternatives of a
 * choice that occurs once never both match, so the same name in each stays allowed.
 */
function checkPropertyNames(type: ComplexType, node: ParsedElement, doc: SchemaDoc): void {
  const owner =
    node.attributes.name !== undefined
      ? where(node, doc)
      : `${doc.location}: xs:complexType (of element "${type.name}")`;
  const attributes = new Set<string>();
  for (const a of type.attributes) {
    if (attributes.has(a.name)) {
      throw new SchemaCompileError(
        `${owner}: two attributes are named "${a.name}"; both would be the property "${a.name}" of the value`,
      );
    }
    attributes.add(a.name);
  }
  if (!type.content) return;
  for (const p of elementParticles(type.content)) {
    if (attributes.has(p.decl.localName)) {
      throw new SchemaCompileError(
        `${owner}: "${p.decl.localName}" is both an attribute and an element; both would be the property "${p.decl.localName}" of the value`,
      );
    }
  }
  coOccurringNames(type.content, false, new Set(), (name) => {
    throw new SchemaCompileError(
      `${owner}: the element "${name}" can occur in two places of its content model; both would be the property "${name}" of the value`,
    );
  });
}

/**
 * Adds to `into` the element names (property names: local names) a particle can give values to,
 * calling `clash` with a name two of its particles can both match in one instance: any two in a
 * sequence or an all group, and two alternatives of a choice when that choice can occur more than
 * once (`repeated`: it or a group around it has maxOccurs > 1). Groups nested in a sequence add to
 * the one set, so a deep nesting (a long chain of extensions) costs its size, not its square.
 */
function coOccurringNames(
  p: Particle,
  repeated: boolean,
  into: Set<string>,
  clash: (name: string) => never,
): void {
  if (p.kind === "element") {
    if (into.has(p.decl.localName)) clash(p.decl.localName);
    into.add(p.decl.localName);
    return;
  }
  // Every element a wildcard matches is one more entry of the one list `$any`.
  if (p.kind === "any") return;
  const again = repeated || p.max > 1;
  if (p.kind !== "choice" || again) {
    for (const item of p.items) coOccurringNames(item, again, into, clash);
    return;
  }
  // A choice that occurs once: its alternatives never both match, so each is checked alone.
  const union = new Set<string>();
  for (const item of p.items) {
    const alternative = new Set<string>();
    coOccurringNames(item, again, alternative, clash);
    for (const name of alternative) union.add(name);
  }
  for (const name of union) {
    if (into.has(name)) clash(name);
    into.add(name);
  }
}
