import { clark, type ParsedElement, resolveQName } from "../xml/reader.js";
import { type SchemaDoc, where } from "./components.js";
import { XS_NS } from "./model.js";

// Every QName reference of a schema set checked before anything is compiled, so that a contract
// naming components it does not declare is refused with all of them at once, each named with
// the file, the construct and what is declared under a near name.

/** The symbol spaces a QName reference looks in (XML Schema Part 1 §2.5, §3.15.3). */
export type ComponentKind = "type" | "element" | "attribute" | "group" | "attribute group";

/** Which attribute of which schema element refers to which kind of component. */
const REFERENCES: Readonly<Record<string, Readonly<Record<string, ComponentKind>>>> = {
  element: { type: "type", ref: "element" },
  attribute: { type: "type", ref: "attribute" },
  restriction: { base: "type" },
  extension: { base: "type" },
  list: { itemType: "type" },
  union: { memberTypes: "type" },
  group: { ref: "group" },
  attributeGroup: { ref: "attribute group" },
};

/**
 * The namespace a QName value of `doc` names, as Part 1 §3.15.3 (QName resolution) resolves it:
 * its prefix's namespace, the default namespace when it has none, else no namespace; in a
 * document included without a targetNamespace, no namespace is the including schema's
 * (§4.2.1, the chameleon include). Undefined when the prefix is not declared.
 */
export function resolveReference(
  raw: string,
  node: ParsedElement,
  doc: SchemaDoc,
): { namespace: string; localName: string } | undefined {
  const q = resolveQName(raw, node.scope);
  if (q === undefined) return undefined;
  return q.namespace === "" && doc.chameleon ? { ...q, namespace: doc.targetNamespace } : q;
}

/** A reference that names nothing declared, as {@link unresolvedReferences} finds it. */
export interface UnresolvedReference {
  kind: ComponentKind;
  /** Its Clark name; for an undeclared prefix, in {@link undeclaredPrefixNamespace}. */
  name: string;
  node: ParsedElement;
  /** The element holding `node` (`xs:simpleContent` for an `xs:extension`), undefined at the top. */
  parent: ParsedElement | undefined;
  attr: string;
  /** The QName as written. */
  raw: string;
  doc: SchemaDoc;
  problem: string;
  /** Whether the QName's prefix is not declared. */
  prefixUndeclared: boolean;
}

/**
 * The namespace a tolerant load reads a QName with an undeclared prefix in: one no document can
 * declare components in, so the name refers to the stand-in the load declares for it.
 */
export function undeclaredPrefixNamespace(raw: string): string {
  const colon = raw.indexOf(":");
  return `urn:svc:soap-envelope:undeclared-prefix:${colon === -1 ? "" : raw.slice(0, colon)}`;
}

/**
 * The references of `docs` that name nothing declared, each as `file: xs:construct "name": kind
 * {ns}local is not declared` with a hint when a component of another kind, or of the same local
 * name in the document's own namespace, is. `declared(kind, clarkName)` says what the set holds.
 * A prefix that is not declared is left to the compiler, which names it, unless `tolerate` is
 * given: then each such reference is handed to it, and those it takes are not problems.
 */
export function unresolvedReferences(
  docs: readonly SchemaDoc[],
  declared: (kind: ComponentKind, clarkName: string) => boolean,
  tolerate?: (ref: UnresolvedReference) => boolean,
): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const doc of docs) {
    // Iterative: a schema document's depth is the parser's to bound, not the call stack's.
    // Each node with the name of the nearest named component around it, for unnamed constructs.
    type Visit = [ParsedElement, string | undefined, ParsedElement | undefined];
    const stack: Visit[] = [[doc.root, undefined, undefined]];
    const inOrder: Visit[] = [];
    while (stack.length > 0) {
      const [node, owner, parent] = stack.pop() as Visit;
      if (node.namespace !== XS_NS || node.localName === "annotation") continue;
      inOrder.push([node, owner, parent]);
      const inner = node.attributes.name ?? owner;
      for (let i = node.children.length - 1; i >= 0; i--)
        stack.push([node.children[i] as ParsedElement, inner, node]);
    }
    for (const [node, owner, parent] of inOrder) {
      const refs = REFERENCES[node.localName];
      if (refs === undefined) continue;
      for (const [attr, kind] of Object.entries(refs)) {
        const value = node.attributes[attr];
        if (value === undefined) continue;
        for (const raw of attr === "memberTypes" ? value.split(/[ \t\n\r]+/) : [value]) {
          if (raw === "") continue;
          const q = resolveReference(raw, node, doc);
          const at =
            node.attributes.name === undefined && owner !== undefined
              ? `${where(node, doc)} (in "${owner}")`
              : where(node, doc);
          if (q === undefined) {
            if (tolerate === undefined) continue;
            const local = raw.slice(raw.indexOf(":") + 1);
            const problem = `${at}: prefix of "${raw}" is not declared`;
            const name = clark(undeclaredPrefixNamespace(raw), local);
            const ref = { kind, name, node, parent, attr, raw, doc, problem, prefixUndeclared: true };
            if (!tolerate(ref)) problems.push(problem);
            continue;
          }
          const name = clark(q.namespace, q.localName);
          if (declared(kind, name)) continue;
          const problem = `${at}: ${kind} ${name} is not declared${hint(kind, q, raw, doc, declared)}`;
          if (tolerate?.({ kind, name, node, parent, attr, raw, doc, problem, prefixUndeclared: false }))
            continue;
          if (!seen.has(problem)) problems.push(problem);
          seen.add(problem);
        }
      }
    }
  }
  return problems;
}

const KINDS: readonly ComponentKind[] = ["type", "element", "attribute", "group", "attribute group"];

/** What is declared near a name that is not: another kind of that name, or the name in the document's namespace. */
function hint(
  kind: ComponentKind,
  q: { namespace: string; localName: string },
  raw: string,
  doc: SchemaDoc,
  declared: (kind: ComponentKind, clarkName: string) => boolean,
): string {
  const name = clark(q.namespace, q.localName);
  if (kind === "type" && q.namespace === XS_NS)
    return ` (xs:${q.localName} is not a built-in type of XML Schema 1.0)`;
  const other = KINDS.find((k) => k !== kind && declared(k, name));
  if (other !== undefined)
    return ` (${article(other)} ${other} of that name is declared, not ${article(kind)} ${kind})`;
  if (q.namespace === "" && !raw.includes(":") && doc.targetNamespace !== "") {
    const own = clark(doc.targetNamespace, q.localName);
    if (declared(kind, own))
      return ` (an unprefixed name, with no default namespace in scope, names no namespace: ${kind} ${own} is declared)`;
  }
  return "";
}

function article(kind: ComponentKind): string {
  return /^[aeiou]/.test(kind) ? `an` : `a`;
}
