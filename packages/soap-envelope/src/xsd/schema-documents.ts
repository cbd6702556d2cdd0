import { clark, type ParsedElement, parseXmlString, resolveLimits } from "../xml/reader.js";
import { BUILTIN_NAMESPACES, builtinSchemaText } from "./builtin-docs.js";
import type { CompileContext } from "./compile-context.js";
import {
  allowAttributes,
  requireName,
  type SchemaDoc,
  unsupported,
  where,
  XS_ELEMENTS,
  xsChildren,
} from "./components.js";
import type { Tolerance } from "./defects.js";
import { SchemaCompileError } from "./errors.js";
import { XS_NS } from "./model.js";

// The documents of a schema set, read before anything is compiled: each one's defaults and the
// definitions of its global components, by Clark name, so references among them resolve in any
// order.

/** A schema document to compile, with the location its messages name it by. */
export interface SchemaSource {
  root: ParsedElement;
  location: string;
  /**
   * For a document an `xs:include` brings in: the including schema's targetNamespace. The
   * document must have that targetNamespace or none; with none, its components take it (Part 1
   * §4.2.1, the chameleon include).
   */
  includedInto?: string;
}

/** A schema document read, and its `xs:import`s without schemaLocation, resolved once all are read. */
export interface CollectedDoc {
  doc: SchemaDoc;
  imports: { node: ParsedElement; ns: string }[];
}

/** Reads `source`'s top level: its defaults, and each global component's definition, by Clark name. */
export function collect(ctx: CompileContext, source: SchemaSource, tolerance?: Tolerance): CollectedDoc {
  const root = source.root;
  if (tolerance !== undefined && !tolerance.strict) {
    correctCase(root, source.location, tolerance);
    globalOccurrences(root, source.location, tolerance);
  }
  if (root.namespace !== XS_NS || root.localName !== "schema") {
    throw new SchemaCompileError(`${source.location}: the document element is not xs:schema`);
  }
  allowAttributes(root, source.location, [
    "targetNamespace",
    "elementFormDefault",
    "attributeFormDefault",
    "blockDefault",
    "finalDefault",
    "version",
    "id",
  ]);
  const own = root.attributes.targetNamespace;
  const into = source.includedInto;
  // Part 1 §4.2.1 (src-include.2): an included document has the including schema's
  // targetNamespace, or none and takes it.
  let includedInto = into;
  if (into !== undefined && own !== undefined && own !== into) {
    const problem = `${source.location}: xs:include of a schema whose targetNamespace "${own}" is not "${into}", the including schema's (xs:import brings in another namespace)`;
    if (tolerance === undefined) throw new SchemaCompileError(problem);
    // Its components can be named only in the namespace the document declares: read as an import.
    tolerance.pass(
      "include-namespace",
      problem,
      `the included schema is read as an xs:import of "${own}"`,
      root,
      source.location,
    );
    includedInto = undefined;
  }
  const doc: SchemaDoc = {
    root,
    location: source.location,
    targetNamespace: own ?? includedInto ?? "",
    qualifiedElements: root.attributes.elementFormDefault === "qualified",
    qualifiedAttributes: root.attributes.attributeFormDefault === "qualified",
    chameleon: own === undefined && (includedInto ?? "") !== "",
  };
  const imports: { node: ParsedElement; ns: string }[] = [];
  for (const child of xsChildren(root, source.location)) {
    const name = child.attributes.name;
    const key = () => clark(doc.targetNamespace, requireName(child, doc));
    switch (child.localName) {
      case "import":
        // Part 1 §4.2.3: without schemaLocation the namespace's components come from elsewhere:
        // another schema of the contract, or one every processor knows (checked below).
        if (child.attributes.schemaLocation === undefined)
          imports.push({ node: child, ns: child.attributes.namespace ?? "" });
        break;
      case "include":
      case "annotation":
      case "notation":
        break; // documents with a schemaLocation are loaded by the contract loader
      case "element":
        ctx.elementDefs.set(key(), { node: child, doc });
        break;
      case "simpleType":
      case "complexType":
        ctx.typeDefs.set(key(), { node: child, doc });
        break;
      case "group":
        ctx.groupDefs.set(key(), { node: child, doc });
        break;
      case "attributeGroup":
        ctx.attributeGroupDefs.set(key(), { node: child, doc });
        break;
      case "attribute":
        ctx.attributeDefs.set(key(), { node: child, doc });
        break;
      default:
        throw unsupported(child, doc, name);
    }
  }
  return { doc, imports };
}

/**
 * Resolves each `xs:import` without schemaLocation: to another schema of the set with that
 * targetNamespace (a sibling in `wsdl:types`), to XML Schema's own namespace, or to a built-in
 * document (xsd/builtin-docs.ts); anything else cannot be found and stops the load.
 */
export function addBuiltinDocs(
  ctx: CompileContext,
  docs: readonly CollectedDoc[],
  tolerance?: Tolerance,
): void {
  const declared = new Set(docs.map((d) => d.doc.targetNamespace));
  for (const { doc, imports } of docs) {
    for (const { node, ns } of imports) {
      if (declared.has(ns) || ns === XS_NS) continue;
      if (builtinSchemaText(ns) === undefined) {
        const problem = `${where(node, doc)}: xs:import of namespace "${ns}" has no schemaLocation and no schema of the contract has that targetNamespace`;
        if (tolerance === undefined) throw new SchemaCompileError(problem);
        tolerance.pass(
          "import-unresolved",
          problem,
          `namespace "${ns}" declares nothing: each reference into it is a defect of its own, read as said there`,
          node,
          doc.location,
        );
      }
    }
  }
  for (const ns of BUILTIN_NAMESPACES) {
    if (declared.has(ns)) continue;
    const root = parseXmlString(builtinSchemaText(ns) as string, resolveLimits({ maxBytes: 1 << 20 }));
    collect(ctx, { root, location: `built-in schema of ${ns}` });
  }
}

/**
 * Part 1 §3.3.2: `minOccurs` and `maxOccurs` belong to local element declarations and references,
 * the particles; on a global element they say nothing, as the references to it say how often it
 * occurs. A tolerant load leaves them out.
 */
function globalOccurrences(root: ParsedElement, location: string, tolerance: Tolerance): void {
  for (const child of root.children) {
    if (child.namespace !== XS_NS || child.localName !== "element") continue;
    for (const attr of ["minOccurs", "maxOccurs"]) {
      const value = child.attributes[attr];
      if (value === undefined) continue;
      tolerance.pass(
        "global-occurrence",
        `${location}: attribute ${attr}="${value}" on xs:element is not supported by the schema compiler`,
        `${attr} on the global element "${child.attributes.name ?? ""}" is ignored: each reference to it says how often it occurs`,
        child,
        location,
      );
      delete child.attributes[attr];
    }
  }
}

/**
 * A tolerant load reads an element of the XML Schema namespace whose name XML Schema does not
 * define but differs from one it does only in case (`xs:simpletype`) as that one: no other
 * construct has a name that close, so nothing else could have been meant.
 */
function correctCase(root: ParsedElement, location: string, tolerance: Tolerance): void {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop() as ParsedElement;
    if (node.namespace !== XS_NS) continue;
    if (node.localName === "annotation") continue;
    if (!XS_ELEMENTS.includes(node.localName)) {
      const lower = node.localName.toLowerCase();
      const near = XS_ELEMENTS.filter((name) => name.toLowerCase() === lower);
      if (near.length === 1) {
        const context = node.attributes.name ?? "";
        tolerance.pass(
          "misspelled-construct",
          `${location}: xs:${node.localName}${context ? ` "${context}"` : ""} is not an element of XML Schema (names are case-sensitive: xs:${near[0]})`,
          `xs:${node.localName} is read as xs:${near[0]}`,
          node,
          location,
        );
        node.localName = near[0] as string;
      }
    }
    stack.push(...node.children);
  }
}
