import type { ParsedElement } from "../xml/reader.js";
import { allowAttributes, requireName, type SchemaDoc, where, xsChildren } from "./components.js";
import { SchemaCompileError } from "./errors.js";

/** The identity-constraint definitions an element declaration may hold (Part 1 §3.11). */
export const IDENTITY = new Set(["unique", "key", "keyref"]);

/**
 * `xs:unique`, `xs:key`, `xs:keyref` (Part 1 §3.11): read for their form (a name, one
 * `xs:selector` and at least one `xs:field`, each with an `xpath`; a keyref's `refer`) and not
 * enforced: the values they constrain are the application's to compare.
 */
export function identityConstraint(node: ParsedElement, doc: SchemaDoc): void {
  allowAttributes(node, doc.location, node.localName === "keyref" ? ["name", "refer", "id"] : ["name", "id"]);
  requireName(node, doc);
  if (node.localName === "keyref" && node.attributes.refer === undefined)
    throw new SchemaCompileError(`${where(node, doc)}: xs:keyref needs refer`);
  const parts = xsChildren(node, doc.location).filter((c) => c.localName !== "annotation");
  const [selector, ...fields] = parts;
  if (
    selector?.localName !== "selector" ||
    fields.length === 0 ||
    fields.some((f) => f.localName !== "field")
  )
    throw new SchemaCompileError(`${where(node, doc)}: needs one xs:selector and at least one xs:field`);
  for (const p of parts) {
    allowAttributes(p, doc.location, ["xpath", "id"]);
    if (p.attributes.xpath === undefined) throw new SchemaCompileError(`${where(p, doc)}: needs an xpath`);
  }
}
