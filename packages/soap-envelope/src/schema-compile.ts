import {
  allowAttributes,
  occurs,
  parseBool,
  requireName,
  type SchemaDoc,
  unsupported,
  where,
  xsChildren,
} from "./schema-components.js";
import { SchemaCompileError } from "./schema-errors.js";
import { restrictFacets } from "./schema-facets.js";
import {
  type AttributeDecl,
  BUILTINS,
  type BuiltinType,
  type ComplexType,
  type ElementDecl,
  elementParticles,
  type GroupParticle,
  type Particle,
  type SimpleType,
  TYPE_NAMES,
  XS_NS,
} from "./schema-model.js";
import { clark, type ParsedElement, resolveQName } from "./xml.js";

/** A schema document to compile, with the location its messages name it by. */
export interface SchemaSource {
  root: ParsedElement;
  location: string;
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

/** One compilation: global components are compiled once, on first use, so references may be circular. */
class SchemaCompiler {
  private readonly elementDefs = new Map<string, Global<ElementDecl>>();
  private readonly typeDefs = new Map<string, Global<SimpleType | ComplexType>>();

  constructor(sources: readonly SchemaSource[]) {
    for (const source of sources) this.collect(source);
    for (const name of this.elementDefs.keys()) this.globalElement(name, "");
    for (const name of this.typeDefs.keys()) this.globalType(name, "");
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

  private collect(source: SchemaSource): void {
    const root = source.root;
    if (root.namespace !== XS_NS || root.localName !== "schema") {
      throw new SchemaCompileError(`${source.location}: the document element is not xs:schema`);
    }
    allowAttributes(root, source.location, [
      "targetNamespace",
      "elementFormDefault",
      "attributeFormDefault",
      "version",
      "id",
    ]);
    const doc: SchemaDoc = {
      root,
      location: source.location,
      targetNamespace: root.attributes.targetNamespace ?? "",
      qualifiedElements: root.attributes.elementFormDefault === "qualified",
      qualifiedAttributes: root.attributes.attributeFormDefault === "qualified",
    };
    for (const child of xsChildren(root, source.location)) {
      const name = child.attributes.name;
      switch (child.localName) {
        case "import":
        case "include":
        case "annotation":
          break; // imports are loaded by the contract loader
        case "element":
          this.elementDefs.set(clark(doc.targetNamespace, requireName(child, doc)), { node: child, doc });
          break;
        case "simpleType":
        case "complexType":
          this.typeDefs.set(clark(doc.targetNamespace, requireName(child, doc)), { node: child, doc });
          break;
        default:
          throw unsupported(child, doc, name);
      }
    }
  }

  private globalElement(name: string, where: string): ElementDecl {
    const def = this.elementDefs.get(name);
    if (!def) throw new SchemaCompileError(`${where}: element ${name} is not declared`);
    if (!def.compiled) {
      const placeholder = {} as ElementDecl;
      def.compiled = placeholder;
      Object.assign(placeholder, this.elementDecl(def.node, def.doc, true));
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
        def.compiled = this.simpleType(def.node, def.doc, requireName(def.node, def.doc));
      } else {
        const placeholder = { kind: "complex" } as ComplexType;
        def.compiled = placeholder;
        Object.assign(placeholder, this.complexType(def.node, def.doc, requireName(def.node, def.doc)));
      }
      TYPE_NAMES.set(def.compiled, name);
    }
    return def.compiled;
  }

  private builtin(local: string, where: string): SimpleType {
    if (!BUILTINS.has(local)) {
      throw new SchemaCompileError(
        `${where}: xs:${local} is not supported (supported: ${[...BUILTINS].map((b) => `xs:${b}`).join(", ")})`,
      );
    }
    const type: SimpleType = {
      kind: "simple",
      name: `xs:${local}`,
      base: local as BuiltinType,
      facets: { patterns: [] },
    };
    TYPE_NAMES.set(type, clark(XS_NS, local));
    return type;
  }

  private typeRef(node: ParsedElement, attr: string, doc: SchemaDoc): SimpleType | ComplexType {
    const raw = node.attributes[attr] ?? "";
    const q = resolveQName(raw, node.scope);
    if (!q) throw new SchemaCompileError(`${where(node, doc)}: prefix of "${raw}" is not declared`);
    return this.globalType(clark(q.namespace, q.localName), where(node, doc));
  }

  private elementDecl(node: ParsedElement, doc: SchemaDoc, global: boolean): ElementDecl {
    allowAttributes(
      node,
      doc.location,
      global
        ? ["name", "type", "nillable", "id"]
        : ["name", "type", "nillable", "minOccurs", "maxOccurs", "form", "id"],
    );
    const localName = requireName(node, doc);
    const qualified =
      global ||
      (node.attributes.form ?? (doc.qualifiedElements ? "qualified" : "unqualified")) === "qualified";
    const namespace = qualified ? doc.targetNamespace : "";
    const inline = xsChildren(node, doc.location).filter((c) => c.localName !== "annotation");
    let type: SimpleType | ComplexType;
    if (node.attributes.type !== undefined) {
      if (inline.length > 0)
        throw new SchemaCompileError(`${where(node, doc)}: both a type attribute and an inline type`);
      type = this.typeRef(node, "type", doc);
    } else {
      const def = inline[0];
      if (inline.length > 1) throw unsupported(inline[1] as ParsedElement, doc, localName);
      if (!def) {
        throw new SchemaCompileError(
          `${where(node, doc)}: an element without a type (xs:anyType) is not supported`,
        );
      }
      if (def.localName === "simpleType") type = this.simpleType(def, doc, localName);
      else if (def.localName === "complexType") type = this.complexType(def, doc, localName);
      else throw unsupported(def, doc, localName);
    }
    return {
      namespace,
      localName,
      clark: clark(namespace, localName),
      type,
      nillable: parseBool(node.attributes.nillable, node, doc),
    };
  }

  private simpleType(node: ParsedElement, doc: SchemaDoc, name: string): SimpleType {
    allowAttributes(node, doc.location, ["name", "id"]);
    const children = xsChildren(node, doc.location).filter((c) => c.localName !== "annotation");
    const restriction = children[0];
    if (children.length !== 1 || !restriction || restriction.localName !== "restriction") {
      throw new SchemaCompileError(
        `${where(node, doc)}: only xs:restriction is supported in xs:simpleType (not xs:list or xs:union)`,
      );
    }
    return this.restriction(restriction, doc, name);
  }

  private restriction(node: ParsedElement, doc: SchemaDoc, name: string): SimpleType {
    allowAttributes(node, doc.location, ["base", "id"]);
    const inline = xsChildren(node, doc.location).find((c) => c.localName === "simpleType");
    const base = inline ? this.simpleType(inline, doc, name) : this.typeRef(node, "base", doc);
    if (base.kind !== "simple") {
      throw new SchemaCompileError(`${where(node, doc)}: restriction of a complex type is not supported`);
    }
    return { kind: "simple", name, base: base.base, facets: restrictFacets(node, doc, base, name) };
  }

  private complexType(node: ParsedElement, doc: SchemaDoc, name: string): ComplexType {
    allowAttributes(node, doc.location, ["name", "id"]);
    const type: ComplexType = {
      kind: "complex",
      name,
      attributes: [],
      content: undefined,
      simpleContent: undefined,
    };
    for (const child of xsChildren(node, doc.location)) {
      switch (child.localName) {
        case "annotation":
          break;
        case "sequence":
        case "choice":
        case "all":
          if (type.content) throw unsupported(child, doc, name);
          type.content = this.group(child, doc, false);
          break;
        case "attribute":
          type.attributes.push(this.attribute(child, doc));
          break;
        case "simpleContent": {
          const ext = xsChildren(child, doc.location).filter((c) => c.localName !== "annotation");
          const e = ext[0];
          if (ext.length !== 1 || !e || e.localName !== "extension") {
            throw new SchemaCompileError(
              `${where(child, doc)}: only xs:simpleContent/xs:extension is supported`,
            );
          }
          allowAttributes(e, doc.location, ["base", "id"]);
          const base = this.typeRef(e, "base", doc);
          if (base.kind !== "simple")
            throw new SchemaCompileError(`${where(e, doc)}: base must be a simple type`);
          type.simpleContent = base;
          for (const a of xsChildren(e, doc.location)) {
            if (a.localName === "annotation") continue;
            if (a.localName !== "attribute") throw unsupported(a, doc, name);
            type.attributes.push(this.attribute(a, doc));
          }
          break;
        }
        default:
          throw unsupported(child, doc, name);
      }
    }
    checkPropertyNames(type, node, doc);
    return type;
  }

  private attribute(node: ParsedElement, doc: SchemaDoc): AttributeDecl {
    allowAttributes(node, doc.location, ["name", "type", "use", "default", "form", "id"]);
    const name = requireName(node, doc);
    const inline = xsChildren(node, doc.location).find((c) => c.localName === "simpleType");
    const type = inline
      ? this.simpleType(inline, doc, name)
      : node.attributes.type
        ? this.typeRef(node, "type", doc)
        : undefined;
    if (type?.kind !== "simple")
      throw new SchemaCompileError(`${where(node, doc)}: attribute needs a simple type`);
    const use = node.attributes.use ?? "optional";
    if (use !== "optional" && use !== "required")
      throw new SchemaCompileError(`${where(node, doc)}: use="${use}" is not supported`);
    const qualified =
      (node.attributes.form ?? (doc.qualifiedAttributes ? "qualified" : "unqualified")) === "qualified";
    const ns = qualified ? doc.targetNamespace : "";
    return {
      key: ns ? `{${ns}}${name}` : name,
      name,
      qualifiedNs: ns,
      type,
      required: use === "required",
      defaultValue: node.attributes.default,
    };
  }

  private group(node: ParsedElement, doc: SchemaDoc, many: boolean): GroupParticle {
    allowAttributes(node, doc.location, ["minOccurs", "maxOccurs", "id"]);
    const kind = node.localName as GroupParticle["kind"];
    const { min, max } = occurs(node, doc);
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
          const q = resolveQName(child.attributes.ref, child.scope);
          if (!q)
            throw new SchemaCompileError(
              `${where(child, doc)}: prefix of "${child.attributes.ref}" is not declared`,
            );
          decl = this.globalElement(clark(q.namespace, q.localName), where(child, doc));
        } else {
          decl = this.elementDecl(child, doc, false);
        }
        items.push({ kind: "element", decl, min: o.min, max: o.max, many: repeated || o.max > 1 });
      } else if ((child.localName === "sequence" || child.localName === "choice") && kind !== "all") {
        items.push(this.group(child, doc, repeated));
      } else {
        throw unsupported(child, doc, node.localName);
      }
    }
    return { kind, items, min, max };
  }
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
  coOccurringNames(type.content, false, (name) => {
    throw new SchemaCompileError(
      `${owner}: the element "${name}" can occur in two places of its content model; both would be the property "${name}" of the value`,
    );
  });
}

/**
 * The element names (property names: local names) a particle can give values to, calling `clash`
 * with a name two of its particles can both match in one instance: any two in a sequence or an
 * all group, and two alternatives of a choice when that choice can occur more than once
 * (`repeated`: it or a group around it has maxOccurs > 1).
 */
function coOccurringNames(p: Particle, repeated: boolean, clash: (name: string) => never): Set<string> {
  if (p.kind === "element") return new Set([p.decl.localName]);
  const again = repeated || p.max > 1;
  const out = new Set<string>();
  for (const item of p.items) {
    for (const name of coOccurringNames(item, again, clash)) {
      if (out.has(name) && (p.kind !== "choice" || again)) clash(name);
      out.add(name);
    }
  }
  return out;
}
