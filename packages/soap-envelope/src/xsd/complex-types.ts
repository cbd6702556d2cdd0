import type { ParsedElement } from "../xml/reader.js";
import { attributeUse } from "./attributes.js";
import { WSDL_NS } from "./builtin-docs.js";
import type { AttributeUses, CompileContext } from "./compile-context.js";
import {
  allowAttributes,
  derivationSet,
  parseBool,
  type SchemaDoc,
  unsupported,
  where,
  xsChildren,
} from "./components.js";
import { SchemaCompileError } from "./errors.js";
import { type ComplexType, type GroupParticle, VALUE_FACETS } from "./model.js";
import { groupRef, modelGroup } from "./model-groups.js";

// Complex type definitions (Part 1 §3.4): a content model and attribute uses of their own, or a
// derivation step recorded here and merged into the type once every global component is compiled
// (xsd/derivations.ts).

/** The facets a simpleContent restriction may hold besides attributes (Part 2 §4.3). */
const FACETS = new Set<string>(["simpleType", "enumeration", "pattern", ...VALUE_FACETS, "whiteSpace"]);

/**
 * An `xs:complexType` definition, filled into `type`: a named type's object exists before it is
 * compiled, so references from inside it find it.
 */
export function complexType(
  ctx: CompileContext,
  node: ParsedElement,
  doc: SchemaDoc,
  name: string,
  type = { kind: "complex" } as ComplexType,
): ComplexType {
  allowAttributes(node, doc.location, ["name", "id", "mixed", "abstract", "block", "final"]);
  ctx.enter(where(node, doc));
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
    recordDerivation(ctx, type, derivation, doc, name);
  } else {
    const uses = contentAndAttributes(ctx, children, doc, name);
    type.content = uses.content;
    type.attributes = uses.attributes;
    type.anyAttribute = uses.anyAttribute;
  }
  ctx.complexTypes.push({ type, node, doc });
  ctx.nesting--;
  return type;
}

/**
 * `xs:simpleContent` / `xs:complexContent` (Part 1 §3.4.2): recorded, merged by derive()
 * (xsd/derivations.ts).
 */
function recordDerivation(
  ctx: CompileContext,
  type: ComplexType,
  node: ParsedElement,
  doc: SchemaDoc,
  name: string,
): void {
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
  const base = ctx.typeRef(step, "base", doc);
  const all = xsChildren(step, doc.location);
  const inlineSimple = all.find((c) => c.localName === "simpleType");
  if (inlineSimple) throw unsupported(inlineSimple, doc, name);
  const children = all.filter(
    (c) => c.localName !== "annotation" && !(simple && method === "restriction" && FACETS.has(c.localName)),
  );
  const uses = contentAndAttributes(ctx, children, doc, name);
  if (simple && uses.content) throw unsupported(children[0] as ParsedElement, doc, name);
  type.baseType = base;
  type.derivation = method;
  ctx.pending.set(type, {
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

/**
 * The particle and attribute uses among a complex type's (or derivation step's) children:
 * `(group | all | choice | sequence)?, (attribute | attributeGroup)*, anyAttribute?`.
 */
function contentAndAttributes(
  ctx: CompileContext,
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
          child.localName === "group" ? groupRef(ctx, child, doc, false) : modelGroup(ctx, child, doc, false);
        break;
      default:
        attributeUse(ctx, child, doc, name, uses);
    }
  }
  return { ...uses, content };
}

/** The `wsdl:arrayType` attribute (WSDL 1.1 §2.2) among a derivation step's attribute uses. */
function arrayTypeOf(children: readonly ParsedElement[]): { value: string; node: ParsedElement } | undefined {
  for (const c of children) {
    const value = c.localName === "attribute" ? c.attributes[WSDL_ARRAY_TYPE] : undefined;
    if (value !== undefined) return { value, node: c };
  }
  return undefined;
}

const WSDL_ARRAY_TYPE = `{${WSDL_NS}}arrayType`;
