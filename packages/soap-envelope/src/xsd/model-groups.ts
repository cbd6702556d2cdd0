import type { ParsedElement } from "../xml/reader.js";
import type { CompileContext } from "./compile-context.js";
import { allowAttributes, occurs, type SchemaDoc, unsupported, where, xsChildren } from "./components.js";
import { SchemaCompileError } from "./errors.js";
import type { ElementDecl, GroupParticle, Particle } from "./model.js";
import { wildcard } from "./wildcards.js";

// Model groups (Part 1 §3.7, §3.8): named groups, references to them, and the sequence, choice
// and all groups of a content model with their particles.

/**
 * A named model group, compiled once for use where it occurs once and once for use inside a
 * repetition (`repeated`), where its elements' values are lists.
 */
export function globalGroup(
  ctx: CompileContext,
  name: string,
  at: string,
  repeated: boolean,
  min: number,
  max: number,
): GroupParticle {
  const def = ctx.groupDefs.get(name);
  if (!def) throw new SchemaCompileError(`${at}: group ${name} is not declared`);
  const done = repeated ? def.repeated : def.compiled;
  if (done) return { ...done, min, max };
  if (def.depth !== undefined) {
    // Part 1 §3.8.6 (Model Group Correct 2): a group may contain itself only inside the type
    // of an element it declares; the reference is filled in once the group is compiled.
    if (ctx.elementDepth <= def.depth) throw new SchemaCompileError(`${at}: group ${name} contains itself`);
    const placeholder = { kind: "sequence", items: [], min, max } as GroupParticle;
    def.waiting ??= [];
    def.waiting.push({ placeholder, repeated, min, max });
    return placeholder;
  }
  def.depth = ctx.elementDepth;
  allowAttributes(def.node, def.doc.location, ["name", "id"]);
  const model = xsChildren(def.node, def.doc.location).filter((c) => c.localName !== "annotation");
  const m = model[0];
  if (model.length !== 1 || !m || !["sequence", "choice", "all"].includes(m.localName))
    throw new SchemaCompileError(`${where(def.node, def.doc)}: needs one of xs:sequence, xs:choice, xs:all`);
  if (m.attributes.minOccurs !== undefined || m.attributes.maxOccurs !== undefined)
    throw new SchemaCompileError(
      `${where(m, def.doc)}: minOccurs and maxOccurs belong on the group reference`,
    );
  const group = modelGroup(ctx, m, def.doc, repeated);
  if (repeated) def.repeated = group;
  else def.compiled = group;
  def.depth = undefined;
  const waiting = def.waiting ?? [];
  def.waiting = [];
  for (const w of waiting) {
    const target = w.repeated
      ? globalGroup(ctx, name, at, true, w.min, w.max)
      : { ...group, min: w.min, max: w.max };
    Object.assign(w.placeholder, target);
  }
  return { ...group, min, max };
}

/** `xs:group ref=` in a content model: the group's particle with the reference's occurrences. */
export function groupRef(
  ctx: CompileContext,
  node: ParsedElement,
  doc: SchemaDoc,
  many: boolean,
): GroupParticle {
  allowAttributes(node, doc.location, ["ref", "minOccurs", "maxOccurs", "id"]);
  const { min, max } = occurs(node, doc);
  const group = globalGroup(ctx, ctx.qnameOf(node, "ref", doc), where(node, doc), many || max > 1, min, max);
  if (group.kind === "all" && (max !== 1 || min > 1))
    throw new SchemaCompileError(`${where(node, doc)}: xs:all occurs at most once`);
  return group;
}

/**
 * `xs:sequence`, `xs:choice` or `xs:all` with its particles; `many` when it occurs inside a
 * repetition, where its elements' values are lists.
 */
export function modelGroup(
  ctx: CompileContext,
  node: ParsedElement,
  doc: SchemaDoc,
  many: boolean,
): GroupParticle {
  allowAttributes(node, doc.location, ["minOccurs", "maxOccurs", "id"]);
  const kind = node.localName as GroupParticle["kind"];
  const { min, max } = occurs(node, doc);
  ctx.enter(where(node, doc));
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
        decl = ctx.globalElement(ctx.qnameOf(child, "ref", doc), where(child, doc));
      } else {
        decl = ctx.elementDecl(child, doc, false);
      }
      items.push({ kind: "element", decl, min: o.min, max: o.max, many: repeated || o.max > 1 });
    } else if ((child.localName === "sequence" || child.localName === "choice") && kind !== "all") {
      items.push(modelGroup(ctx, child, doc, repeated));
    } else if (child.localName === "group" && kind !== "all") {
      items.push(groupRef(ctx, child, doc, repeated));
    } else if (child.localName === "any" && kind !== "all") {
      const o = occurs(child, doc);
      const any = wildcard(ctx, child, doc, ["namespace", "processContents", "minOccurs", "maxOccurs", "id"]);
      items.push({ kind: "any", wildcard: any, min: o.min, max: o.max });
    } else {
      throw unsupported(child, doc, node.localName);
    }
  }
  ctx.nesting--;
  return { kind, items, min, max };
}
