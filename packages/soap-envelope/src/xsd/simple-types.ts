import type { ParsedElement } from "../xml/reader.js";
import type { WhiteSpace } from "./builtins.js";
import type { CompileContext } from "./compile-context.js";
import { allowAttributes, type SchemaDoc, unsupported, where, xsChildren } from "./components.js";
import { SchemaCompileError } from "./errors.js";
import { restrictFacets } from "./facets.js";
import type { SimpleType } from "./model.js";

// Simple type definitions (Part 1 §3.14, Part 2 §2.5): restrictions by facets, lists and unions.

/** An `xs:simpleType` definition: one xs:restriction, xs:list or xs:union. */
export function simpleType(
  ctx: CompileContext,
  node: ParsedElement,
  doc: SchemaDoc,
  name: string,
): SimpleType {
  allowAttributes(node, doc.location, ["name", "id", "final"]);
  const children = xsChildren(node, doc.location).filter((c) => c.localName !== "annotation");
  const def = children[0];
  if (children.length !== 1 || !def) {
    throw new SchemaCompileError(`${where(node, doc)}: needs one of xs:restriction, xs:list, xs:union`);
  }
  ctx.enter(where(node, doc));
  let type: SimpleType;
  if (def.localName === "restriction") type = restriction(ctx, def, doc, name);
  else if (def.localName === "list") type = list(ctx, def, doc, name);
  else if (def.localName === "union") type = union(ctx, def, doc, name);
  else throw unsupported(def, doc, name);
  ctx.nesting--;
  return type;
}

export function inlineSimple(
  ctx: CompileContext,
  node: ParsedElement,
  doc: SchemaDoc,
  name: string,
): SimpleType | undefined {
  const inline = xsChildren(node, doc.location).find((c) => c.localName === "simpleType");
  return inline ? simpleType(ctx, inline, doc, name) : undefined;
}

function restriction(ctx: CompileContext, node: ParsedElement, doc: SchemaDoc, name: string): SimpleType {
  allowAttributes(node, doc.location, ["base", "id"]);
  const base = inlineSimple(ctx, node, doc, name) ?? ctx.simpleRef(node, "base", doc);
  return restrictSimple(node, doc, base, name);
}

/** A restriction of a simple type by the facets among `node`'s children (Part 2 §4.1.2). */
export function restrictSimple(
  node: ParsedElement,
  doc: SchemaDoc,
  base: SimpleType,
  name: string,
): SimpleType {
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

function list(ctx: CompileContext, node: ParsedElement, doc: SchemaDoc, name: string): SimpleType {
  allowAttributes(node, doc.location, ["itemType", "id"]);
  const inline = inlineSimple(ctx, node, doc, `${name} item`);
  if (inline && node.attributes.itemType !== undefined)
    throw new SchemaCompileError(`${where(node, doc)}: both an itemType and an inline item type`);
  const item = inline ?? ctx.simpleRef(node, "itemType", doc);
  // Part 2 §2.5.1.2: the item type of a list is atomic or a union, not a list.
  if (item.variety === "list")
    throw new SchemaCompileError(`${where(node, doc)}: a list of lists is not allowed`);
  return listType(name, item, ctx.builtin("anySimpleType", where(node, doc)) as SimpleType);
}

function union(ctx: CompileContext, node: ParsedElement, doc: SchemaDoc, name: string): SimpleType {
  allowAttributes(node, doc.location, ["memberTypes", "id"]);
  const members: SimpleType[] = [];
  for (const raw of (node.attributes.memberTypes ?? "").split(/[ \t\n\r]+/)) {
    if (raw === "") continue;
    const type = ctx.globalType(ctx.qnameOf(node, "memberTypes", doc, raw), where(node, doc));
    if (type.kind !== "simple")
      throw new SchemaCompileError(`${where(node, doc)}: member ${raw} is not a simple type`);
    members.push(type);
  }
  for (const c of xsChildren(node, doc.location)) {
    if (c.localName === "simpleType") members.push(simpleType(ctx, c, doc, `${name} member`));
    else if (c.localName !== "annotation") throw unsupported(c, doc, name);
  }
  if (members.length === 0) throw new SchemaCompileError(`${where(node, doc)}: a union needs member types`);
  const anySimple = ctx.builtin("anySimpleType", where(node, doc)) as SimpleType;
  // A union has no white-space facet of its own: each member applies its own.
  return ofAnySimpleType(name, "preserve", { variety: "union", memberTypes: members }, anySimple);
}

/** A list type of `item` (Part 2 §2.5.1.2): white space collapsed, items separated by spaces. */
export function listType(name: string, item: SimpleType, anySimple: SimpleType): SimpleType {
  return ofAnySimpleType(name, "collapse", { variety: "list", itemType: item }, anySimple);
}

/** A list or union type: derived from xs:anySimpleType, with no facet of its own but `whiteSpace`. */
function ofAnySimpleType(
  name: string,
  whiteSpace: WhiteSpace,
  variety: Pick<SimpleType, "variety" | "itemType" | "memberTypes">,
  anySimple: SimpleType,
): SimpleType {
  return {
    kind: "simple",
    name,
    base: "anySimpleType",
    facets: { patterns: [] },
    whiteSpace,
    ...variety,
    baseType: anySimple,
  };
}
