import { clark, resolveQName } from "../xml/reader.js";
import { SOAP_ENC_NS, SOAP12_ENC_NS } from "./builtin-docs.js";
import { type CompileContext, type Derivation, MAX_NESTING } from "./compile-context.js";
import { where } from "./components.js";
import { SchemaCompileError } from "./errors.js";
import {
  type ComplexType,
  type ElementDecl,
  elementParticles,
  type Particle,
  REGISTRY,
  type SimpleType,
  SOAP_ARRAYS,
  type SoapArray,
  TYPE_NAMES,
} from "./model.js";
import { restrictSimple } from "./simple-types.js";
import { unionWildcard } from "./wildcards.js";

// Complex type derivations (Part 1 §3.4.2), merged once every global component is compiled, in
// any order (each base first): content models and attribute uses, SOAP-encoded arrays' item
// types, and each global type's list of the types derived from it.

/** The SOAP-ENC array types: what every SOAP-encoded array restricts (SOAP 1.1 §5.4.2, SOAP 1.2 Part 2 §3.1.6). */
const ARRAY_TYPES: ReadonlySet<string> = new Set([`{${SOAP_ENC_NS}}Array`, `{${SOAP12_ENC_NS}}Array`]);

/** A complex type's derivation merged into it, its base's first (Part 1 §3.4.2). */
export function derive(ctx: CompileContext, type: ComplexType): void {
  const d = ctx.pending.get(type);
  if (!d) return;
  if (ctx.deriving.has(type))
    throw new SchemaCompileError(`${where(d.node, d.doc)}: the type is derived from itself`);
  ctx.enter(where(d.node, d.doc));
  ctx.deriving.add(type);
  const base = d.base;
  if (base.kind === "complex") derive(ctx, base);
  const at = where(d.node, d.doc);
  // Each extension nests its base's content one level deeper: bounded in whatever order the
  // chain's types were compiled.
  const steps = (base.kind === "complex" ? (ctx.derivationSteps.get(base) ?? 0) : 0) + 1;
  if (steps > MAX_NESTING)
    throw new SchemaCompileError(
      `${at}: type "${type.name}" is derived in more than ${MAX_NESTING} steps; this compiler stops there`,
    );
  ctx.derivationSteps.set(type, steps);
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
    if (d.facets) content = restrictSimple(d.facets, d.doc, content, type.name);
    type.simpleContent = content;
  } else {
    if (base.kind === "simple")
      throw new SchemaCompileError(`${at}: xs:complexContent needs a complex base type`);
    // An empty xs:sequence or xs:all is empty content (§3.4.2, the effective content).
    const own = d.content !== undefined && (d.content.kind === "choice" || d.content.items.length > 0);
    if (base.simpleContent && (d.method === "extension" ? own : d.content !== undefined))
      throw new SchemaCompileError(
        `${at}: base ${base.name} has simple content; derive it with xs:simpleContent`,
      );
    if (base.simpleContent && d.method === "extension") {
      // §3.4.2 (complex content, clause 3.2.1): an extension whose effective content is empty has
      // its base's {content type}, here a simple type: it adds attributes only.
      type.simpleContent = base.simpleContent;
    } else if (d.method === "extension") {
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
        const item = arrayItem(ctx, d, base);
        if (d.content === undefined && d.arrayType !== undefined && item.itemType !== undefined) {
          // WSDL 1.1 §2.2 declares the item type alone: the members are `item` elements of it
          // (SOAP 1.1 §5.4.2 leaves their name free), a list in the value as any repeated element.
          const decl: ElementDecl = {
            namespace: "",
            localName: "item",
            clark: "item",
            type: ctx.registry.type(item.itemType) as SimpleType | ComplexType,
            nillable: true,
          };
          REGISTRY.set(decl, ctx.registry);
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
  ctx.pending.delete(type);
  ctx.deriving.delete(type);
  ctx.nesting--;
}

/**
 * The item type of a SOAP-encoded array (SOAP 1.1 §5.4.2, SOAP 1.2 Part 2 §3.1.6): `wsdl:arrayType`
 * (WSDL 1.1 §2.2, `xsd:string[]`) names it; without it, the restriction's one element declares
 * it; a type derived from another array keeps that one's.
 */
function arrayItem(ctx: CompileContext, d: Derivation, base: ComplexType): SoapArray {
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
  if (match[2] !== "" || !ctx.registry.type(name)) {
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
export function linkDerivations(ctx: CompileContext): void {
  for (const def of ctx.typeDefs.values()) {
    const type = def.compiled;
    if (type?.kind !== "complex") continue;
    for (let base = type.baseType; base !== undefined; base = base.baseType) {
      if (base.kind !== "complex") break;
      if (!base.derived) base.derived = [];
      base.derived.push(type);
    }
  }
}
