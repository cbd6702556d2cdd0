import { clark, type ParsedElement } from "../xml/reader.js";
import type { CompileContext } from "./compile-context.js";
import { complexType } from "./complex-types.js";
import {
  allowAttributes,
  derivationSet,
  parseBool,
  requireName,
  type SchemaDoc,
  unsupported,
  where,
  xsChildren,
} from "./components.js";
import { SchemaCompileError } from "./errors.js";
import { IDENTITY, identityConstraint } from "./identity-constraints.js";
import { type ComplexType, type ElementDecl, REGISTRY, type SimpleType } from "./model.js";
import { simpleType } from "./simple-types.js";

/**
 * An `xs:element` declaration (Part 1 §3.3), global or local in a model group: its name and
 * namespace, its type (named, inline or xs:anyType), nillable, block, and a default or fixed value.
 */
export function elementDecl(
  ctx: CompileContext,
  node: ParsedElement,
  doc: SchemaDoc,
  global: boolean,
): ElementDecl {
  allowAttributes(
    node,
    doc.location,
    global
      ? ["name", "type", "nillable", "id", "block", "final", "default", "fixed"]
      : ["name", "type", "nillable", "minOccurs", "maxOccurs", "form", "id", "block", "default", "fixed"],
  );
  const localName = requireName(node, doc);
  const qualified =
    global || (node.attributes.form ?? (doc.qualifiedElements ? "qualified" : "unqualified")) === "qualified";
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
    type = ctx.typeRef(node, "type", doc);
  } else {
    const def = inline[0];
    if (inline.length > 1) throw unsupported(inline[1] as ParsedElement, doc, localName);
    // Part 1 §3.3.2: an element with neither is of xs:anyType (no substitution groups here).
    if (!def) type = ctx.builtin("anyType", where(node, doc));
    else if (def.localName === "simpleType") type = simpleType(ctx, def, doc, localName);
    else if (def.localName === "complexType") {
      ctx.elementDepth++;
      type = complexType(ctx, def, doc, localName);
      ctx.elementDepth--;
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
    ctx.constrained.push({ decl, at: where(node, doc) });
  }
  REGISTRY.set(decl, ctx.registry);
  return decl;
}
