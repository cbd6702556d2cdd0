import type { ParsedElement } from "../xml/reader.js";
import type { AttributeUses, CompileContext } from "./compile-context.js";
import {
  allowAttributes,
  requireName,
  type SchemaDoc,
  unsupported,
  where,
  xsChildren,
} from "./components.js";
import { SchemaCompileError } from "./errors.js";
import type { AttributeDecl } from "./model.js";
import { inlineSimple } from "./simple-types.js";
import { unionWildcard, wildcard } from "./wildcards.js";

// Attribute declarations and uses (Part 1 §3.2, §3.5) and attribute groups (§3.6).

/** One of `attribute`, `attributeGroup`, `anyAttribute`, added to `uses`. */
export function attributeUse(
  ctx: CompileContext,
  child: ParsedElement,
  doc: SchemaDoc,
  name: string,
  uses: AttributeUses,
): void {
  switch (child.localName) {
    case "attribute": {
      if (child.attributes.use === "prohibited") {
        const ref = child.attributes.ref;
        uses.prohibited.add(
          ref !== undefined
            ? ctx.qnameOf(child, "ref", doc)
            : attributeKey(child, doc, requireName(child, doc)),
        );
        return;
      }
      uses.attributes.push(attribute(ctx, child, doc, false));
      return;
    }
    case "attributeGroup": {
      allowAttributes(child, doc.location, ["ref", "id"]);
      const group = attributeGroup(ctx, ctx.qnameOf(child, "ref", doc), where(child, doc));
      uses.attributes.push(...group.attributes);
      for (const p of group.prohibited) uses.prohibited.add(p);
      uses.anyAttribute = unionWildcard(uses.anyAttribute, group.anyAttribute);
      return;
    }
    case "anyAttribute":
      if (uses.anyAttribute) throw unsupported(child, doc, name);
      uses.anyAttribute = wildcard(ctx, child, doc, ["namespace", "processContents", "id"]);
      return;
    default:
      throw unsupported(child, doc, name);
  }
}

export function attributeGroup(ctx: CompileContext, name: string, at: string): AttributeUses {
  const def = ctx.attributeGroupDefs.get(name);
  if (!def) throw new SchemaCompileError(`${at}: attribute group ${name} is not declared`);
  if (!def.compiled) {
    // Part 1 §3.6.6 (src-attribute_group.3): circular attribute groups are an error.
    if (ctx.inProgress.has(def))
      throw new SchemaCompileError(`${at}: attribute group ${name} refers to itself`);
    ctx.inProgress.add(def);
    ctx.enter(at);
    allowAttributes(def.node, def.doc.location, ["name", "id"]);
    const uses: AttributeUses = { attributes: [], anyAttribute: undefined, prohibited: new Set() };
    for (const c of xsChildren(def.node, def.doc.location)) {
      if (c.localName !== "annotation") attributeUse(ctx, c, def.doc, requireName(def.node, def.doc), uses);
    }
    def.compiled = uses;
    ctx.inProgress.delete(def);
    ctx.nesting--;
  }
  return def.compiled;
}

function attribute(ctx: CompileContext, node: ParsedElement, doc: SchemaDoc, global: boolean): AttributeDecl {
  if (!global && node.attributes.ref !== undefined) {
    allowAttributes(node, doc.location, ["ref", "use", "default", "fixed", "id"]);
    const key = ctx.qnameOf(node, "ref", doc);
    const def = ctx.attributeDefs.get(key);
    if (!def) throw new SchemaCompileError(`${where(node, doc)}: attribute ${key} is not declared`);
    if (!def.compiled) def.compiled = attribute(ctx, def.node, def.doc, true);
    return attributeUseOf(def.compiled, node, doc);
  }
  allowAttributes(
    node,
    doc.location,
    global
      ? ["name", "type", "default", "fixed", "id"]
      : ["name", "type", "use", "default", "fixed", "form", "id"],
  );
  const name = requireName(node, doc);
  const inline = inlineSimple(ctx, node, doc, name);
  // Part 1 §3.2.2: an attribute without a type is of xs:anySimpleType.
  const type =
    inline ??
    (node.attributes.type !== undefined
      ? ctx.typeRef(node, "type", doc)
      : ctx.builtin("anySimpleType", where(node, doc)));
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
  return attributeUseOf(decl, node, doc);
}

/** An attribute declaration as one use: `use`, and `default` or `fixed` (Part 1 §3.5.2). */
function attributeUseOf(decl: AttributeDecl, node: ParsedElement, doc: SchemaDoc): AttributeDecl {
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

function attributeKey(node: ParsedElement, doc: SchemaDoc, name: string): string {
  const qualified =
    (node.attributes.form ?? (doc.qualifiedAttributes ? "qualified" : "unqualified")) === "qualified";
  return qualified && doc.targetNamespace ? `{${doc.targetNamespace}}${name}` : name;
}
