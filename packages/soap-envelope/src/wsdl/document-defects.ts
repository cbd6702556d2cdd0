import type { ParsedElement } from "../xml/reader.js";
import type { Tolerance } from "../xsd/schema.js";
import { WSDL_NS } from "./contract-model.js";

// Defects of a WSDL or XSD document as a document, which a tolerant load (`strict: false`) reads
// past before its definitions are read: where its XML declaration stands, the namespace of a
// WSDL's elements.

/** WSDL 1.1's elements (§2), by the WSDL element they appear in. */
const WSDL_STRUCTURE: Readonly<Record<string, readonly string[]>> = {
  definitions: ["import", "types", "message", "portType", "binding", "service", "documentation"],
  types: ["documentation"],
  message: ["part", "documentation"],
  part: ["documentation"],
  portType: ["operation", "documentation"],
  binding: ["operation", "documentation"],
  operation: ["input", "output", "fault", "documentation"],
  input: ["documentation"],
  output: ["documentation"],
  fault: ["documentation"],
  service: ["port", "documentation"],
  port: ["documentation"],
};

/**
 * A WSDL written in no namespace (`<definitions>` with no `xmlns` for WSDL 1.1's): a tolerant
 * load reads its elements of WSDL 1.1's names, where WSDL 1.1 places them, as WSDL 1.1's; those
 * of other namespaces (the SOAP binding's, the schemas in wsdl:types) are read as they are.
 */
export function wsdlInNoNamespace(root: ParsedElement, location: string, tolerance: Tolerance): void {
  if (tolerance.strict || root.namespace !== "" || root.localName !== "definitions") return;
  tolerance.pass(
    "wsdl-namespace",
    `${location}: the document element must be wsdl:definitions (WSDL 1.1), not {}definitions`,
    `the elements of WSDL 1.1's names in no namespace, where WSDL 1.1 places them (definitions, message, portType, binding, service and theirs), are read as WSDL 1.1's (${WSDL_NS})`,
    root,
    location,
  );
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop() as ParsedElement;
    const inside = WSDL_STRUCTURE[node.localName] ?? [];
    node.namespace = WSDL_NS;
    for (const child of node.children)
      if (child.namespace === "" && inside.includes(child.localName)) stack.push(child);
  }
}

/**
 * A document whose XML declaration follows white space or comments, which XML 1.0 §2.8 (production
 * [1], [22]) does not allow: a tolerant load reads it without that declaration (UTF-8, version 1.0,
 * as the document is read: files.ts), each character of it a space so lines and columns stay.
 * @see https://www.w3.org/TR/xml/#sec-prolog-dtd
 */
export function declarationFirst(text: string, location: string, tolerance: Tolerance): string {
  if (tolerance.strict) return text;
  const late = /^\uFEFF?((?:\s|<!--(?:[^-]|-[^-])*-->)+)(<\?xml\s[^?]*\?>)/.exec(text);
  if (late === null) return text;
  const [whole, before, declaration] = late as unknown as [string, string, string];
  const line = before.split("\n").length;
  tolerance.pass(
    "xml-declaration",
    `${location}:${line}: not well-formed XML: an XML declaration must be at the start of the document`,
    `the declaration ${declaration} is left out: the document is read as UTF-8 XML 1.0`,
    undefined,
    location,
    line,
  );
  return `${whole.slice(0, whole.length - declaration.length)}${declaration.replace(/[^\n]/g, " ")}${text.slice(whole.length)}`;
}
