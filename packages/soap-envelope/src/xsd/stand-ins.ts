import { escapeXml } from "@svc/errors";
import { type ParsedElement, parseXmlString, resolveLimits } from "../xml/reader.js";
import type { DefectClass, Tolerance } from "./defects.js";
import { XS_NS } from "./model.js";
import type { ComponentKind, UnresolvedReference } from "./references.js";
import type { SchemaSource } from "./schema-documents.js";

// What a tolerant load (`strict: false`) declares for the components a contract refers to but no
// schema of it declares: one stand-in per name, whose meaning is the widest the reference allows,
// so that a message is still validated against everything the contract does declare.

/** A global component the WSDL expects a schema to declare: a `wsdl:part`'s element. */
export interface ExpectedGlobal {
  kind: "element";
  /** Its Clark name. */
  name: string;
  node: ParsedElement;
  /** How a strict load refuses it when it is not declared. */
  problem: string;
}

/**
 * What each stand-in is. A type: `any` (xs:anyType: any attributes and, laxly, any content, every
 * element the schemas declare still validated), `simple` (a restriction of xs:string: any text),
 * `empty` (the base of an extension: no content of its own, any attribute, laxly; its
 * extensions' content is validated as declared).
 */
type TypeStandIn = "any" | "simple" | "empty";

/** The stand-ins of one load, by Clark name, and the defects they answer. */
export class StandIns {
  private readonly types = new Map<string, TypeStandIn>();
  private readonly elements = new Set<string>();
  private readonly attributes = new Set<string>();
  private readonly attributeGroups = new Set<string>();
  /** The elements `wsdl:part`s name, said as such: a reference to one is not another defect. */
  private readonly parts = new Set<string>();
  /** The references taken, reported once every one is seen. */
  private readonly references: UnresolvedReference[] = [];

  constructor(private readonly tolerance: Tolerance) {}

  /** Takes a reference no schema resolves, reporting it; false for what is never tolerated (a group). */
  reference(ref: UnresolvedReference): boolean {
    if (ref.kind === "element" && this.parts.has(ref.name)) return true;
    if (!this.declare(ref.kind, ref.name, ref)) return false;
    this.references.push(ref);
    return true;
  }

  /**
   * Reports each reference taken, with the stand-in its name got once every reference was seen
   * (a type one reference reads as any content and another as text is text for both).
   */
  private report(): void {
    for (const ref of this.references.splice(0)) {
      const defect: DefectClass = ref.prefixUndeclared
        ? "undeclared-prefix"
        : ref.kind === "type"
          ? "undeclared-type"
          : ref.kind === "element"
            ? "undeclared-element"
            : "undeclared-attribute";
      const read = ref.prefixUndeclared ? `${ref.attr}="${ref.node.attributes[ref.attr]}" is read as ` : "";
      this.tolerance.pass(
        defect,
        ref.problem,
        `${read}${this.assumed(ref.kind, ref.name)}`,
        ref.node,
        ref.doc.location,
      );
    }
  }

  /** What the stand-in for `name` is, as a defect says it. */
  private assumed(kind: ComponentKind, name: string): string {
    switch (kind) {
      case "type": {
        const chosen = this.types.get(name);
        return chosen === "simple"
          ? `type ${name}, a restriction of xs:string without facets (any text)`
          : chosen === "empty"
            ? `type ${name}, a complex type with no content and any attribute (the extension's own content is validated as declared)`
            : `type ${name} as xs:anyType (any attributes and content, declared elements in it validated)`;
      }
      case "element":
        return `element ${name} of xs:anyType (any attributes and content, declared elements in it validated)`;
      case "attribute":
        return `attribute ${name} of xs:anySimpleType (any text)`;
      default:
        return `attribute group ${name} as any attribute, validated laxly`;
    }
  }

  /** A `wsdl:part`'s element no schema declares: an element of xs:anyType. */
  expected(global: ExpectedGlobal, location: string): void {
    this.elements.add(global.name);
    this.parts.add(global.name);
    this.tolerance.pass(
      "undeclared-element",
      global.problem,
      `element ${global.name} of xs:anyType (any attributes and content, declared elements in it validated)`,
      global.node,
      location,
    );
  }

  /** Declares the stand-in `ref` needs; false for a model group, which is never assumed. */
  private declare(kind: ComponentKind, name: string, ref: UnresolvedReference): boolean {
    switch (kind) {
      case "type": {
        const use = typeUse(ref);
        const before = this.types.get(name);
        // One stand-in serves every reference: a simple one where any use needs a simple type.
        const chosen: TypeStandIn =
          before === "simple" || use === "simple"
            ? "simple"
            : before === "empty" || use === "empty"
              ? "empty"
              : "any";
        this.types.set(name, chosen);
        return true;
      }
      case "element":
        this.elements.add(name);
        return true;
      case "attribute":
        this.attributes.add(name);
        return true;
      case "attribute group":
        this.attributeGroups.add(name);
        return true;
      case "group":
        // A model group stands at a place in its content model: anything assumed would either refuse
        // what it holds or take elements the rest of the model declares.
        return false;
    }
  }

  /** The stand-ins as schema documents, one per namespace, each reference taken reported first. */
  sources(): SchemaSource[] {
    this.report();
    const byNamespace = new Map<string, string[]>();
    const add = (name: string, declaration: (local: string) => string) => {
      const close = name.indexOf("}");
      const ns = name.startsWith("{") ? name.slice(1, close) : "";
      const local = name.startsWith("{") ? name.slice(close + 1) : name;
      const list = byNamespace.get(ns) ?? [];
      list.push(declaration(escapeXml(local)));
      byNamespace.set(ns, list);
    };
    for (const [name, use] of this.types) {
      add(name, (local) =>
        use === "simple"
          ? `<xs:simpleType name="${local}"><xs:restriction base="xs:string"/></xs:simpleType>`
          : use === "empty"
            ? `<xs:complexType name="${local}"><xs:anyAttribute processContents="lax"/></xs:complexType>`
            : `<xs:complexType name="${local}" mixed="true"><xs:sequence><xs:any processContents="lax" minOccurs="0" maxOccurs="unbounded"/></xs:sequence><xs:anyAttribute processContents="lax"/></xs:complexType>`,
      );
    }
    for (const name of this.elements) add(name, (local) => `<xs:element name="${local}"/>`);
    for (const name of this.attributes) add(name, (local) => `<xs:attribute name="${local}"/>`);
    for (const name of this.attributeGroups)
      add(
        name,
        (local) =>
          `<xs:attributeGroup name="${local}"><xs:anyAttribute processContents="lax"/></xs:attributeGroup>`,
      );
    return [...byNamespace].map(([ns, declarations]) => {
      const target = ns === "" ? "" : ` targetNamespace="${escapeXml(ns)}"`;
      const text = `<xs:schema xmlns:xs="${XS_NS}"${target}>${declarations.join("")}</xs:schema>`;
      return {
        root: parseXmlString(text, resolveLimits({ maxBytes: 64 * 1024 * 1024, maxElements: 1_000_000 })),
        location: `stand-ins for what ${ns === "" ? "no namespace" : ns} lacks (strict: false)`,
      };
    });
  }
}

/** What a reference to a type needs of it: simple for attributes, lists, unions and simple content. */
function typeUse(ref: UnresolvedReference): TypeStandIn {
  const { node, parent } = ref;
  if (node.localName === "attribute" || node.localName === "list" || node.localName === "union")
    return "simple";
  if (node.localName === "element") return "any";
  if (parent?.localName === "simpleType" || parent?.localName === "simpleContent") return "simple";
  return node.localName === "extension" ? "empty" : "any";
}
