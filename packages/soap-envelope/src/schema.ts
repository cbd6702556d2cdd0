import { clark, escapeText, type ParsedElement, resolveQName, type XmlElement } from "./xml.js";
import { compileXsdPattern, type XsdPattern, XsdPatternError } from "./xsd-regex.js";

/** The XML Schema namespace. */
export const XS_NS = "http://www.w3.org/2001/XMLSchema";
const XSI_NS = "http://www.w3.org/2001/XMLSchema-instance";
const XSI_NIL = `{${XSI_NS}}nil`;

/** The built-in types the compiler supports (XML Schema Part 2 §3.2, §3.3). */
export type BuiltinType = "string" | "long" | "int" | "decimal" | "boolean" | "date" | "dateTime";

const BUILTINS: ReadonlySet<string> = new Set([
  "string",
  "long",
  "int",
  "decimal",
  "boolean",
  "date",
  "dateTime",
]);

/**
 * A WSDL or XSD construct the compiler does not support; thrown at start-up so nothing in a
 * contract is silently ignored.
 */
export class SchemaCompileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SchemaCompileError";
  }
}

/** An instance that does not match the schema; `path` locates it (`GetCustomerRequest/customerId`). */
export class SchemaValidationError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(`${path}: ${message}`);
    this.name = "SchemaValidationError";
    this.path = path;
  }
}

/** How `xs:long` values are represented in decoded payloads. */
export type LongRepresentation = "bigint" | "string";

interface Facets {
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

interface SimpleType {
  kind: "simple";
  name: string;
  base: BuiltinType;
  facets: Facets;
}

interface AttributeDecl {
  key: string; // key in ParsedElement.attributes
  name: string; // property name in payloads
  qualifiedNs: string;
  type: SimpleType;
  required: boolean;
  defaultValue: string | undefined;
}

interface ElementDecl {
  namespace: string;
  localName: string;
  clark: string;
  type: SimpleType | ComplexType;
  nillable: boolean;
}

interface ElementParticle {
  kind: "element";
  decl: ElementDecl;
  min: number;
  max: number;
  many: boolean;
}

interface GroupParticle {
  kind: "sequence" | "choice" | "all";
  items: Particle[];
  min: number;
  max: number;
}

type Particle = ElementParticle | GroupParticle;

interface ComplexType {
  kind: "complex";
  name: string;
  attributes: AttributeDecl[];
  content: GroupParticle | undefined;
  simpleContent: SimpleType | undefined;
}

interface SchemaDoc {
  root: ParsedElement;
  location: string;
  targetNamespace: string;
  qualifiedElements: boolean;
  qualifiedAttributes: boolean;
}

interface Global<T> {
  node: ParsedElement;
  doc: SchemaDoc;
  compiled?: T;
}

/** A schema document to compile, with the location its messages name it by. */
export interface SchemaSource {
  root: ParsedElement;
  location: string;
}

/** Options of {@link compileSchemas}. */
export interface CompileOptions {
  /**
   * How `xs:long` is decoded: a `bigint` (exact, not JSON-serializable as is) or the canonical
   * decimal `string`. Either way no precision is lost.
   * @default "bigint"
   */
  longAs?: LongRepresentation;
}

/**
 * Compiles the subset of XML Schema 1.0 document/literal services use into validating
 * decoders and ordered encoders. Every unsupported construct throws {@link SchemaCompileError}.
 *
 * Supported: global and local elements (`ref`, `minOccurs`, `maxOccurs`, `nillable`, `form`),
 * `complexType` with `sequence`, `all`, `choice`, attributes and `simpleContent/extension`,
 * `simpleType` restrictions (`enumeration`, `pattern`, `length`, `minLength`, `maxLength`,
 * `min/maxInclusive`, `min/maxExclusive`, `totalDigits`, `fractionDigits`), the built-ins
 * `xs:string`, `xs:long`, `xs:int`, `xs:decimal`, `xs:boolean`, `xs:date`, `xs:dateTime`, and
 * `elementFormDefault` / `attributeFormDefault`.
 *
 * @example
 * const schema = compileSchemas([{ root: parseXmlString(xsdText, limits), location: "customer.xsd" }]);
 * const payload = schema.decode(bodyElement);
 * @see https://www.w3.org/TR/xmlschema-1/
 */
export function compileSchemas(
  sources: readonly SchemaSource[],
  options: CompileOptions = {},
): CompiledSchema {
  return new CompiledSchema(sources, options.longAs ?? "bigint");
}

/** The compiled schema set: global elements with their decoders and encoders. */
export class CompiledSchema {
  private readonly elementDefs = new Map<string, Global<ElementDecl>>();
  private readonly typeDefs = new Map<string, Global<SimpleType | ComplexType>>();
  private readonly longAs: LongRepresentation;

  constructor(sources: readonly SchemaSource[], longAs: LongRepresentation) {
    this.longAs = longAs;
    for (const source of sources) this.collect(source);
    for (const name of this.elementDefs.keys()) this.globalElement(name, "");
    for (const name of this.typeDefs.keys()) this.globalType(name, "");
  }

  /** Clark names (`{ns}local`) of every global element. */
  get elementNames(): string[] {
    return [...this.elementDefs.keys()];
  }

  /** Whether a global element of this name exists. */
  hasElement(clarkName: string): boolean {
    return this.elementDefs.has(clarkName);
  }

  /**
   * Validates an element against its global declaration and decodes it into a plain object.
   * @throws {SchemaValidationError} when it does not match
   */
  decode(element: XmlElement): unknown {
    const name = clark(element.namespace, element.localName);
    const def = this.elementDefs.get(name);
    if (!def?.compiled)
      throw new SchemaValidationError(element.localName, "is not a global element of the schema");
    return this.decodeElement(element, def.compiled, element.localName);
  }

  /**
   * Validates a value against a global element and serializes it, children in schema order.
   * @throws {SchemaValidationError} when the value does not match
   */
  encode(clarkName: string, value: unknown): string {
    const def = this.elementDefs.get(clarkName);
    if (!def?.compiled) throw new SchemaValidationError(clarkName, "is not a global element of the schema");
    return this.encodeElement(def.compiled, value, "", def.compiled.localName);
  }

  // ---------------------------------------------------------------- compile

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
    }
    return def.compiled;
  }

  private builtin(local: string, where: string): SimpleType {
    if (!BUILTINS.has(local)) {
      throw new SchemaCompileError(
        `${where}: xs:${local} is not supported (supported: ${[...BUILTINS].map((b) => `xs:${b}`).join(", ")})`,
      );
    }
    return { kind: "simple", name: `xs:${local}`, base: local as BuiltinType, facets: { patterns: [] } };
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
    const facets: Facets = { ...base.facets, patterns: [...base.facets.patterns] };
    const patterns: XsdPattern[] = [];
    const enumeration: string[] = [];
    for (const f of xsChildren(node, doc.location)) {
      if (f.localName === "annotation" || f.localName === "simpleType") continue;
      const value = f.attributes.value;
      if (value === undefined) throw new SchemaCompileError(`${where(f, doc)}: facet without a value`);
      switch (f.localName) {
        case "enumeration":
          enumeration.push(base.base === "string" ? value : collapse(value));
          break;
        case "pattern":
          patterns.push(xsdPattern(value, doc, name));
          break;
        case "length":
        case "minLength":
        case "maxLength":
        case "totalDigits":
        case "fractionDigits": {
          const n = Number(value);
          if (!Number.isSafeInteger(n) || n < 0)
            throw new SchemaCompileError(`${where(f, doc)}: ${value} is not a count`);
          if (
            f.localName.endsWith("Digits") &&
            base.base !== "decimal" &&
            base.base !== "long" &&
            base.base !== "int"
          ) {
            throw new SchemaCompileError(`${where(f, doc)}: xs:${f.localName} applies to numeric types only`);
          }
          facets[f.localName] = n;
          break;
        }
        case "minInclusive":
        case "maxInclusive":
        case "minExclusive":
        case "maxExclusive":
          if (base.base !== "decimal" && base.base !== "long" && base.base !== "int") {
            throw new SchemaCompileError(
              `${where(f, doc)}: xs:${f.localName} is supported on xs:decimal, xs:long and xs:int only`,
            );
          }
          if (!DECIMAL_RE.test(collapse(value)))
            throw new SchemaCompileError(`${where(f, doc)}: ${value} is not a number`);
          facets[f.localName] = collapse(value);
          break;
        default:
          throw unsupported(f, doc, name);
      }
    }
    if (patterns.length > 0) facets.patterns.push(patterns);
    if (enumeration.length > 0) facets.enumeration = enumeration;
    return { kind: "simple", name, base: base.base, facets };
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

  // ---------------------------------------------------------------- decode

  private decodeElement(element: XmlElement, decl: ElementDecl, path: string): unknown {
    const nil = element.attributes[XSI_NIL];
    if (nil !== undefined && (nil.trim() === "true" || nil.trim() === "1")) {
      if (!decl.nillable) throw new SchemaValidationError(path, "is not nillable");
      if (element.children.length > 0 || /\S/.test(element.text)) {
        throw new SchemaValidationError(path, "has xsi:nil and content");
      }
      return null;
    }
    for (const key of Object.keys(element.attributes)) {
      if (key.startsWith(`{${XSI_NS}}`) && key !== XSI_NIL) {
        throw new SchemaValidationError(
          path,
          `attribute xsi:${key.slice(XSI_NS.length + 2)} is not supported`,
        );
      }
    }
    const type = decl.type;
    if (type.kind === "simple") {
      checkNoAttributes(element, path);
      if (element.children.length > 0) throw new SchemaValidationError(path, "must not contain elements");
      return this.decodeSimple(type, element.text, path);
    }
    const out: Record<string, unknown> = {};
    const known = new Set<string>([XSI_NIL]);
    for (const a of type.attributes) {
      known.add(a.key);
      const raw = element.attributes[a.key] ?? a.defaultValue;
      if (raw === undefined) {
        if (a.required) throw new SchemaValidationError(`${path}/@${a.name}`, "is required");
        continue;
      }
      out[a.name] = this.decodeSimple(a.type, raw, `${path}/@${a.name}`);
    }
    for (const key of Object.keys(element.attributes)) {
      if (!known.has(key)) throw new SchemaValidationError(path, `attribute "${key}" is not allowed`);
    }
    if (type.simpleContent) {
      if (element.children.length > 0) throw new SchemaValidationError(path, "must not contain elements");
      out.$value = this.decodeSimple(type.simpleContent, element.text, path);
      return out;
    }
    if (/\S/.test(element.text)) throw new SchemaValidationError(path, "must not contain text");
    const children = element.children;
    let index = 0;
    if (type.content) index = this.matchGroup(type.content, children, 0, out, path);
    const extra = children[index];
    if (extra) {
      throw new SchemaValidationError(
        path,
        `unexpected element ${extra.localName}${describeNs(extra.namespace)}`,
      );
    }
    return out;
  }

  private matchParticle(
    p: Particle,
    children: readonly XmlElement[],
    i: number,
    out: Record<string, unknown>,
    path: string,
  ): number {
    if (p.kind !== "element") return this.matchGroup(p, children, i, out, path);
    let count = 0;
    while (count < p.max) {
      const child = children[i];
      if (!child || child.localName !== p.decl.localName || child.namespace !== p.decl.namespace) break;
      const value = this.decodeElement(child, p.decl, `${path}/${p.decl.localName}`);
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
        `expected element ${p.decl.localName}${describeNs(p.decl.namespace)}${found ? `, found ${found.localName}${describeNs(found.namespace)}` : ""}`,
      );
    }
    if (p.many && count === 0 && out[p.decl.localName] === undefined) out[p.decl.localName] = [];
    return i;
  }

  private matchGroup(
    g: GroupParticle,
    children: readonly XmlElement[],
    i: number,
    out: Record<string, unknown>,
    path: string,
  ): number {
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
        out[p.decl.localName] = this.decodeElement(child, p.decl, `${path}/${p.decl.localName}`);
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
        for (const item of g.items) i = this.matchParticle(item, children, i, out, path);
      } else {
        const alt = child ? g.items.find((item) => canStart(item, child)) : undefined;
        if (!alt) {
          const names = g.items.flatMap((item) => [...firstNames(item)]).join(", ");
          throw new SchemaValidationError(
            path,
            `expected one of ${names}${child ? `, found ${child.localName}` : ""}`,
          );
        }
        i = this.matchParticle(alt, children, i, out, path);
      }
      if (i === before) break;
    }
    return i;
  }

  private decodeSimple(type: SimpleType, raw: string, path: string): unknown {
    const lexical = type.base === "string" ? raw : collapse(raw);
    checkLexical(type, lexical, path);
    switch (type.base) {
      case "long":
        return this.longAs === "bigint" ? BigInt(lexical) : BigInt(lexical).toString();
      case "int":
        return Number(lexical);
      case "boolean":
        return lexical === "true" || lexical === "1";
      default:
        return lexical;
    }
  }

  // ---------------------------------------------------------------- encode

  private encodeElement(decl: ElementDecl, value: unknown, parentNs: string, path: string): string {
    const nsDecl = decl.namespace === parentNs ? "" : ` xmlns="${escapeText(decl.namespace)}"`;
    const name = decl.localName;
    if (value === null) {
      if (!decl.nillable) throw new SchemaValidationError(path, "is not nillable");
      return `<${name}${nsDecl} xmlns:xsi="${XSI_NS}" xsi:nil="true"/>`;
    }
    const type = decl.type;
    if (type.kind === "simple") {
      return `<${name}${nsDecl}>${escapeText(encodeSimple(type, value, path))}</${name}>`;
    }
    if (typeof value !== "object" || value === undefined || Array.isArray(value) || value instanceof Date) {
      throw new SchemaValidationError(path, "must be an object");
    }
    const obj = value as Record<string, unknown>;
    let attrs = "";
    // Namespaces in XML 1.0 §3 and XML 1.0 §3.1 (unique attribute names): each namespace of a
    // qualified attribute is declared once per element, with its own prefix.
    let prefixes: Map<string, string> | undefined;
    for (const a of type.attributes) {
      const v = obj[a.name];
      if (v === undefined) {
        if (a.required) throw new SchemaValidationError(`${path}/@${a.name}`, "is required");
        continue;
      }
      const text = escapeText(encodeSimple(a.type, v, `${path}/@${a.name}`));
      if (!a.qualifiedNs) {
        attrs += ` ${a.name}="${text}"`;
        continue;
      }
      let prefix = prefixes?.get(a.qualifiedNs);
      if (prefix === undefined) {
        prefixes ??= new Map();
        prefix = `a${prefixes.size === 0 ? "" : prefixes.size}`;
        prefixes.set(a.qualifiedNs, prefix);
        attrs += ` xmlns:${prefix}="${escapeText(a.qualifiedNs)}"`;
      }
      attrs += ` ${prefix}:${a.name}="${text}"`;
    }
    let inner = "";
    if (type.simpleContent) {
      inner = escapeText(encodeSimple(type.simpleContent, obj.$value, `${path}/$value`));
    } else if (type.content) {
      inner = this.encodeGroup(type.content, obj, decl.namespace, path);
    }
    const allowed = allowedKeys(type);
    for (const key of Object.keys(obj)) {
      if (!allowed.has(key) && obj[key] !== undefined)
        throw new SchemaValidationError(path, `"${key}" is not in the schema`);
    }
    return `<${name}${nsDecl}${attrs}>${inner}</${name}>`;
  }

  private encodeGroup(g: GroupParticle, obj: Record<string, unknown>, ns: string, path: string): string {
    if (g.kind === "choice") {
      const alt = g.items.find((item) => [...firstNames(item, true)].some((n) => obj[n] !== undefined));
      if (!alt) {
        if (g.min === 0 || emptiable(g)) return "";
        throw new SchemaValidationError(
          path,
          `needs one of ${g.items.flatMap((i) => [...firstNames(i, true)]).join(", ")}`,
        );
      }
      return this.encodeParticle(alt, obj, ns, path);
    }
    if (g.max > 1) throw new SchemaValidationError(path, "repeated groups cannot be encoded from an object");
    if (g.min === 0 && !cachedElementParticles(g).some((p) => obj[p.decl.localName] !== undefined)) return "";
    let out = "";
    for (const item of g.items) out += this.encodeParticle(item, obj, ns, path);
    return out;
  }

  private encodeParticle(p: Particle, obj: Record<string, unknown>, ns: string, path: string): string {
    if (p.kind !== "element") return this.encodeGroup(p, obj, ns, path);
    const value = obj[p.decl.localName];
    const childPath = `${path}/${p.decl.localName}`;
    const list = value === undefined ? [] : p.many ? value : [value];
    if (!Array.isArray(list)) throw new SchemaValidationError(childPath, "must be an array");
    if (list.length < p.min) throw new SchemaValidationError(childPath, "is required");
    if (list.length > p.max) throw new SchemaValidationError(childPath, `occurs at most ${p.max} times`);
    let out = "";
    for (const v of list) out += this.encodeElement(p.decl, v, ns, childPath);
    return out;
  }
}

// ------------------------------------------------------------------ helpers

function where(node: XmlElement, doc: SchemaDoc): string {
  const name = node.attributes.name;
  return `${doc.location}: xs:${node.localName}${name ? ` "${name}"` : ""}`;
}

function unsupported(node: XmlElement, doc: SchemaDoc, context: string | undefined): SchemaCompileError {
  const ns = node.namespace === XS_NS ? "xs:" : `{${node.namespace}}`;
  return new SchemaCompileError(
    `${doc.location}: ${ns}${node.localName}${context ? ` (in "${context}")` : ""} is not supported by the schema compiler`,
  );
}

function xsChildren(node: ParsedElement, location: string): ParsedElement[] {
  for (const child of node.children) {
    if (child.namespace !== XS_NS) {
      throw new SchemaCompileError(
        `${location}: unexpected element {${child.namespace}}${child.localName} in xs:${node.localName}`,
      );
    }
  }
  return node.children;
}

function allowAttributes(node: ParsedElement, location: string, allowed: readonly string[]): void {
  for (const key of Object.keys(node.attributes)) {
    if (key.startsWith("{")) continue; // foreign attributes are allowed on schema components
    if (!allowed.includes(key)) {
      throw new SchemaCompileError(
        `${location}: attribute ${key}="${node.attributes[key]}" on xs:${node.localName} is not supported by the schema compiler`,
      );
    }
  }
}

function requireName(node: ParsedElement, doc: SchemaDoc): string {
  const name = node.attributes.name;
  if (!name) throw new SchemaCompileError(`${doc.location}: xs:${node.localName} needs a name`);
  return name;
}

/**
 * A complex type's value is a plain object with one property per attribute and element name.
 * XML Schema 1.0 Part 1 §2.5 puts local attributes and local elements in separate symbol spaces
 * (and §3.4.6 ct-props-correct.4 only forbids two attributes of the same name *and* namespace),
 * so a valid schema may name an attribute and an element `id`, or two attributes `id` in
 * different namespaces. Both would be the one property `id`: decoding would keep one value and
 * drop the other, encoding would write the value twice. Such a type is refused at compile time.
 * An element name repeated in the content model stays allowed: it is one property either way.
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
}

function parseBool(value: string | undefined, node: ParsedElement, doc: SchemaDoc): boolean {
  if (value === undefined || value === "false" || value === "0") return false;
  if (value === "true" || value === "1") return true;
  throw new SchemaCompileError(`${where(node, doc)}: "${value}" is not a boolean`);
}

function occurs(node: ParsedElement, doc: SchemaDoc): { min: number; max: number } {
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

const ALLOWED_KEYS = new WeakMap<ComplexType, ReadonlySet<string>>();

/** The object keys a complex type's value may carry (attributes, elements, `$value`), computed once. */
function allowedKeys(type: ComplexType): ReadonlySet<string> {
  let keys = ALLOWED_KEYS.get(type);
  if (keys === undefined) {
    const set = new Set<string>(type.attributes.map((a) => a.name));
    if (type.simpleContent) set.add("$value");
    else if (type.content) for (const p of elementParticles(type.content)) set.add(p.decl.localName);
    keys = set;
    ALLOWED_KEYS.set(type, keys);
  }
  return keys;
}

const ELEMENT_PARTICLES = new WeakMap<GroupParticle, ElementParticle[]>();

function cachedElementParticles(g: GroupParticle): ElementParticle[] {
  let list = ELEMENT_PARTICLES.get(g);
  if (list === undefined) {
    list = elementParticles(g);
    ELEMENT_PARTICLES.set(g, list);
  }
  return list;
}

function elementParticles(g: GroupParticle): ElementParticle[] {
  return g.items.flatMap((i) => (i.kind === "element" ? [i] : elementParticles(i)));
}

function emptiable(p: Particle): boolean {
  if (p.min === 0) return true;
  if (p.kind === "element") return false;
  if (p.kind === "choice") return p.items.some(emptiable);
  return p.items.every(emptiable);
}

/** Local names that can start a particle (with `all` names, every member). */
function firstNames(p: Particle, all = false): Set<string> {
  if (p.kind === "element") return new Set([p.decl.localName]);
  const out = new Set<string>();
  for (const item of p.items) {
    for (const n of firstNames(item, all)) out.add(n);
    if (!all && p.kind === "sequence" && !emptiable(item)) break;
  }
  return out;
}

function canStart(p: Particle, child: XmlElement): boolean {
  if (p.kind === "element")
    return child.localName === p.decl.localName && child.namespace === p.decl.namespace;
  for (const item of p.items) {
    if (canStart(item, child)) return true;
    if (p.kind === "sequence" && !emptiable(item)) return false;
  }
  return false;
}

function describeNs(ns: string): string {
  return ns ? ` {${ns}}` : "";
}

function checkNoAttributes(element: XmlElement, path: string): void {
  for (const key of Object.keys(element.attributes)) {
    if (key !== XSI_NIL) throw new SchemaValidationError(path, `attribute "${key}" is not allowed`);
  }
}

/** XML Schema Part 2 §4.3.6: whiteSpace="collapse" for every supported type but xs:string. */
function collapse(value: string): string {
  return value.replace(/[\t\n\r ]+/g, " ").trim();
}

const DECIMAL_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
const INTEGER_RE = /^[+-]?\d+$/;
const DATE_RE = /^(-?\d{4,})-(\d{2})-(\d{2})(Z|[+-](?:(?:0\d|1[0-3]):[0-5]\d|14:00))?$/;
const DATETIME_RE =
  /^(-?\d{4,})-(\d{2})-(\d{2})T(?:([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.\d+)?|24:00:00(?:\.0+)?)(Z|[+-](?:(?:0\d|1[0-3]):[0-5]\d|14:00))?$/;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const INT_MIN_BIG = -(2n ** 31n);
const INT_MAX_BIG = 2n ** 31n - 1n;
const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;

function validDate(y: string, m: string, d: string): boolean {
  const year = Number(y);
  const month = Number(m);
  const day = Number(d);
  if (year === 0 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day <= days;
}

/** Checks a lexical value against the base type and every facet (XML Schema Part 2 §4.3). */
function checkLexical(type: SimpleType, v: string, path: string): void {
  const fail = (msg: string): never => {
    throw new SchemaValidationError(path, msg);
  };
  // Only built when a check fails: valid values are the hot path.
  const shown = {
    toString: () => JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v),
  };
  switch (type.base) {
    case "long":
    case "int": {
      if (!INTEGER_RE.test(v)) fail(`${shown} is not a valid xs:${type.base}`);
      // At most 15 characters: exact as a double, and always inside the xs:long range.
      if (v.length <= 15) {
        if (type.base === "int") {
          const n = Number(v);
          if (n < INT_MIN || n > INT_MAX) fail(`${shown} is out of the xs:int range`);
        }
        break;
      }
      const n = BigInt(v);
      const [lo, hi] = type.base === "long" ? [LONG_MIN, LONG_MAX] : [INT_MIN_BIG, INT_MAX_BIG];
      if (n < lo || n > hi) fail(`${shown} is out of the xs:${type.base} range`);
      break;
    }
    case "decimal":
      if (!DECIMAL_RE.test(v)) fail(`${shown} is not a valid xs:decimal`);
      break;
    case "boolean":
      if (v !== "true" && v !== "false" && v !== "1" && v !== "0") fail(`${shown} is not a valid xs:boolean`);
      break;
    case "date": {
      const m = DATE_RE.exec(v);
      if (!m || !validDate(m[1] ?? "", m[2] ?? "", m[3] ?? "")) fail(`${shown} is not a valid xs:date`);
      break;
    }
    case "dateTime": {
      const m = DATETIME_RE.exec(v);
      if (!m || !validDate(m[1] ?? "", m[2] ?? "", m[3] ?? "")) fail(`${shown} is not a valid xs:dateTime`);
      break;
    }
    default:
      break;
  }
  const f = type.facets;
  // The cheap, bounded checks come first (length, range, digits, enumeration) and the pattern
  // facets last, so a value that is too long is refused before any pattern reads it.
  if (type.base === "string") {
    const len = codePointLength(v);
    if (f.length !== undefined && len !== f.length) fail(`length must be ${f.length}`);
    if (f.minLength !== undefined && len < f.minLength) fail(`length must be at least ${f.minLength}`);
    if (f.maxLength !== undefined && len > f.maxLength) fail(`length must be at most ${f.maxLength}`);
  }
  if (type.base === "decimal" || type.base === "long" || type.base === "int") {
    if (f.minInclusive !== undefined && compareDecimal(v, f.minInclusive) < 0)
      fail(`must be ≥ ${f.minInclusive}`);
    if (f.maxInclusive !== undefined && compareDecimal(v, f.maxInclusive) > 0)
      fail(`must be ≤ ${f.maxInclusive}`);
    if (f.minExclusive !== undefined && compareDecimal(v, f.minExclusive) <= 0)
      fail(`must be > ${f.minExclusive}`);
    if (f.maxExclusive !== undefined && compareDecimal(v, f.maxExclusive) >= 0)
      fail(`must be < ${f.maxExclusive}`);
    if (f.totalDigits !== undefined || f.fractionDigits !== undefined) {
      const { int, frac } = splitDecimal(v);
      const digits = `${int}${frac}`.replace(/^0+/, "") || "0";
      if (f.totalDigits !== undefined && digits.length > f.totalDigits)
        fail(`has more than ${f.totalDigits} digits`);
      if (f.fractionDigits !== undefined && frac.length > f.fractionDigits) {
        fail(`has more than ${f.fractionDigits} fraction digits`);
      }
    }
  }
  if (f.enumeration && !f.enumeration.includes(v)) fail(`${shown} is not one of ${f.enumeration.join(", ")}`);
  // Linear in the value's length whatever the pattern (see xsd-regex.ts); the value itself is
  // bounded by the message size limit (`limits.maxBytes`).
  for (const step of f.patterns)
    if (!step.some((p) => p.test(v))) fail(`${shown} does not match the pattern`);
}

/** Length in characters (XML Schema Part 2 §4.3.1: code points, not UTF-16 units), without copying. */
function codePointLength(v: string): number {
  let pairs = 0;
  for (let i = 0; i < v.length; i++) {
    const unit = v.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = v.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return v.length - pairs;
}

function splitDecimal(v: string): { negative: boolean; int: string; frac: string } {
  const negative = v.startsWith("-");
  const body = v.replace(/^[+-]/, "");
  const [i = "", f = ""] = body.split(".");
  const frac = f.replace(/0+$/, "");
  const int = i.replace(/^0+/, "");
  return { negative: negative && (int !== "" || frac !== ""), int, frac };
}

/** Compares two xs:decimal lexicals exactly, without binary floating point. */
export function compareDecimal(a: string, b: string): number {
  const x = splitDecimal(a);
  const y = splitDecimal(b);
  if (x.negative !== y.negative) return x.negative ? -1 : 1;
  const sign = x.negative ? -1 : 1;
  if (x.int.length !== y.int.length) return sign * (x.int.length < y.int.length ? -1 : 1);
  if (x.int !== y.int) return sign * (x.int < y.int ? -1 : 1);
  const len = Math.max(x.frac.length, y.frac.length);
  const fx = x.frac.padEnd(len, "0");
  const fy = y.frac.padEnd(len, "0");
  if (fx === fy) return 0;
  return sign * (fx < fy ? -1 : 1);
}

/** JS value → lexical form, then the same checks as on input. */
function encodeSimple(type: SimpleType, value: unknown, path: string): string {
  let lexical: string;
  const bad = (): never => {
    throw new SchemaValidationError(path, `${describeValue(value)} is not a valid xs:${type.base}`);
  };
  switch (type.base) {
    case "string":
      if (typeof value !== "string") bad();
      lexical = value as string;
      break;
    case "long":
    case "int":
      if (typeof value === "bigint") lexical = value.toString();
      else if (typeof value === "number" && Number.isSafeInteger(value)) lexical = String(value);
      else if (typeof value === "string") lexical = collapse(value);
      else lexical = bad();
      break;
    case "decimal":
      // A number is accepted only when its shortest round-trip form is plain decimal notation;
      // exact amounts should travel as strings.
      if (typeof value === "bigint") lexical = value.toString();
      else if (typeof value === "number" && Number.isFinite(value) && !/e/i.test(String(value)))
        lexical = String(value);
      else if (typeof value === "string") lexical = collapse(value);
      else lexical = bad();
      break;
    case "boolean":
      if (typeof value === "boolean") lexical = String(value);
      else if (typeof value === "string") lexical = collapse(value);
      else lexical = bad();
      break;
    case "date":
      if (value instanceof Date && !Number.isNaN(value.getTime())) lexical = value.toISOString().slice(0, 10);
      else if (typeof value === "string") lexical = collapse(value);
      else lexical = bad();
      break;
    case "dateTime":
      if (value instanceof Date && !Number.isNaN(value.getTime())) lexical = value.toISOString();
      else if (typeof value === "string") lexical = collapse(value);
      else lexical = bad();
      break;
  }
  checkLexical(type, lexical, path);
  return lexical;
}

function describeValue(value: unknown): string {
  if (value === undefined) return "a missing value";
  if (typeof value === "string") return JSON.stringify(value.slice(0, 60));
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "object")
    return value === null ? "null" : Array.isArray(value) ? "an array" : "an object";
  return String(value);
}

/**
 * Compiles a `pattern` facet (XML Schema Part 2 §4.3.4) for the linear-time engine; a pattern
 * that is invalid or cannot be translated stops the contract from loading, naming the type.
 */
function xsdPattern(pattern: string, doc: SchemaDoc, typeName: string): XsdPattern {
  try {
    return compileXsdPattern(pattern);
  } catch (err) {
    if (!(err instanceof XsdPatternError)) throw err;
    throw new SchemaCompileError(
      `${doc.location}: xs:pattern "${pattern}" of type "${typeName}" cannot be used: ${err.message}`,
    );
  }
}
