import type { ParsedElement } from "../xml/reader.js";
import { SchemaCompileError } from "./errors.js";

// A contract's defects that a tolerant load (`strict: false`) passes over: each one is said once,
// with the file, the line and what the loader assumed in its place; a strict load refuses each as
// it always has. Nothing here decides what is tolerated: each defect site does, and refuses
// whatever would leave the receiver to choose between two meanings.

/** The kinds of defect a tolerant load passes over (README: Real-world contracts). */
export type DefectClass =
  /** An `xs:import` whose `namespace` is not the imported schema's `targetNamespace` (Part 1 §4.2.3). */
  | "import-namespace"
  /** An `xs:import` without `schemaLocation` of a namespace no schema of the contract declares. */
  | "import-unresolved"
  /** An `xs:include` naming its file with `location=` rather than `schemaLocation=` (Part 1 §4.2.1). */
  | "include-location"
  /** An `xs:include` of a schema whose targetNamespace is not the including schema's (Part 1 §4.2.1). */
  | "include-namespace"
  /** An element of the XML Schema namespace whose name differs from one XML Schema defines only in case. */
  | "misspelled-construct"
  /** `minOccurs` or `maxOccurs` on a global element, where they mean nothing (Part 1 §3.3.2). */
  | "global-occurrence"
  /** A reference to a type no schema of the contract declares. */
  | "undeclared-type"
  /** A reference (`ref=`, a `wsdl:part`'s `element=`) to an element no schema declares. */
  | "undeclared-element"
  /** A reference to an attribute or attribute group no schema declares. */
  | "undeclared-attribute"
  /** A QName in a schema whose prefix is not declared. */
  | "undeclared-prefix"
  /**
   * A QName naming nothing (unprefixed with no default namespace in scope, or in the XML Schema
   * namespace and not built in) where the schema's own targetNamespace declares that component.
   */
  | "own-namespace-reference"
  /** An operation's input, output or fault, or a header, naming a message the contract does not declare. */
  | "undeclared-message"
  /** A `soap:header` naming a part its message does not have. */
  | "undeclared-header-part"
  /** A `soap:body parts=` naming a part the message does not have. */
  | "undeclared-body-part"
  /** A binding operation its port type lacks. */
  | "operation-not-in-port-type"
  /** A SOAP binding no `wsdl:port` names: no service, no port, or ports naming no declared binding. */
  | "unported-binding"
  /** A WSDL whose elements are in no namespace rather than WSDL 1.1's. */
  | "wsdl-namespace"
  /** An `xs:import` straight in `wsdl:types`, where WSDL 1.1 §2.2 expects schemas. */
  | "types-import"
  /** An XML declaration after white space or a comment, where XML 1.0 §2.8 allows it only first. */
  | "xml-declaration"
  /**
   * A WSDL QName (a port's binding, a binding's port type, a message, a part's element or type) naming
   * nothing, or with an undeclared prefix, where one component of that local name is declared.
   */
  | "wsdl-name";

/** One defect a tolerant load passed over. */
export interface ContractDefect {
  /** The document it is in: the WSDL as given, or an imported file's path from the WSDL's folder. */
  readonly file: string;
  /** The 1-based line of the construct, when it is found in the document's text. */
  readonly line: number | undefined;
  /** What kind of defect it is (README: Contracts with defects). */
  readonly class: DefectClass;
  /** What the defect is, as a strict load refuses it. */
  readonly problem: string;
  /** What the loader assumed instead, and so what messages are validated against. */
  readonly assumed: string;
}

/** A document of the contract, for the lines of its elements. */
interface DocumentText {
  root: ParsedElement;
  text: string;
  location: string;
  lines?: Map<ParsedElement, number>;
}

/**
 * One load's policy: strict, each defect throws the {@link SchemaCompileError} it always did;
 * tolerant, each is recorded once and the load goes on with the assumption its site makes.
 */
export class Tolerance {
  readonly defects: ContractDefect[] = [];
  private readonly documents: DocumentText[] = [];
  private readonly said = new Set<string>();

  constructor(readonly strict: boolean) {}

  /** A document read, whose elements a defect may name. */
  document(root: ParsedElement, text: string, location: string): void {
    this.documents.push({ root, text, location });
  }

  /**
   * A defect at `node` (in `location`, at `line`, when no document read holds it): throws
   * `problem` when strict, records it otherwise (once per place, class and assumption).
   */
  pass(
    defectClass: DefectClass,
    problem: string,
    assumed: string,
    node?: ParsedElement,
    location = "",
    line?: number,
  ): void {
    if (this.strict) throw new SchemaCompileError(problem);
    const found = node === undefined ? undefined : this.lineOf(node);
    const defect: ContractDefect = {
      file: found?.location ?? location,
      line: found?.line ?? line,
      class: defectClass,
      problem,
      assumed,
    };
    const key = `${defect.file}\n${defect.line}\n${defectClass}\n${problem}\n${assumed}`;
    if (this.said.has(key)) return;
    this.said.add(key);
    this.defects.push(defect);
  }

  /** The document holding `node` and the line its start tag is on. */
  private lineOf(node: ParsedElement): { location: string; line: number | undefined } | undefined {
    for (const doc of this.documents) {
      doc.lines ??= startTagLines(doc.root, doc.text);
      const line = doc.lines.get(node);
      if (line !== undefined || contains(doc.root, node)) return { location: doc.location, line };
    }
    return undefined;
  }
}

/** Whether `node` is `root` or below it. */
function contains(root: ParsedElement, node: ParsedElement): boolean {
  const stack = [root];
  while (stack.length > 0) {
    const next = stack.pop() as ParsedElement;
    if (next === node) return true;
    stack.push(...next.children);
  }
  return false;
}

/**
 * The line of each element's start tag: the n-th start tag of the text (outside comments, CDATA
 * sections, processing instructions and the document type declaration, where `<` starts no tag)
 * is the n-th element in document order (XML 1.0 §3.1; `<` cannot appear in an attribute value, §2.3).
 */
function startTagLines(root: ParsedElement, text: string): Map<ParsedElement, number> {
  const lines = new Map<ParsedElement, number>();
  const order: ParsedElement[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop() as ParsedElement;
    order.push(node);
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i] as ParsedElement);
  }
  const tags =
    /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>|<!DOCTYPE[^>]*>|<([^\s/!?>][^\s/>]*)/g;
  let line = 1;
  let scanned = 0;
  let index = 0;
  for (const match of text.matchAll(tags)) {
    const name = match[1];
    if (name === undefined) continue;
    const node = order[index++];
    if (node === undefined) break;
    // A tree that does not follow the text (a fragment, a document built otherwise): no lines.
    if (name.slice(name.indexOf(":") + 1) !== node.localName) return new Map();
    for (let i = text.indexOf("\n", scanned); i !== -1 && i < match.index; i = text.indexOf("\n", i + 1))
      line++;
    scanned = match.index;
    lines.set(node, line);
  }
  return lines;
}
