import { clark, type ParsedElement } from "../xml/reader.js";
import { isBuiltin } from "../xsd/builtins.js";
import {
  type CompiledSchema,
  SchemaCompileError,
  schemaComponents,
  type Tolerance,
  XS_NS,
} from "../xsd/schema.js";
import {
  byLocalName,
  type Definitions,
  type FoundBinding,
  type Messages,
  type Part,
  qname,
  REPORTED,
  WSDL_NS,
  wsdlChildren,
} from "./contract-model.js";

/** wsdl:message: each part names a declared element or type (WSDL 1.1 §2.3). */
export function readMessages(
  defs: readonly Definitions[],
  schema: CompiledSchema,
  collect: <T>(step: () => T, prefix?: string) => T | undefined,
  tolerance: Tolerance,
): Messages {
  const messages = new Map<string, { name: string; parts: Part[] } | null>();
  const types = schemaComponents(schema)?.types;
  const hasType = (name: string) =>
    types?.has(name) === true ||
    (name.startsWith(`{${XS_NS}}`) && (isBuiltin(name.slice(XS_NS.length + 2)) || name.endsWith("}anyType")));
  for (const { root, tns, location } of defs) {
    for (const m of wsdlChildren(root, "message")) {
      messages.set(clark(tns, m.attributes.name ?? ""), null);
      collect(() => readMessage(m, tns, schema, hasType, messages, tolerance), `${location}: `);
    }
  }
  return messages;
}

function readMessage(
  m: ParsedElement,
  tns: string,
  schema: CompiledSchema,
  hasType: (name: string) => boolean,
  messages: Map<string, { name: string; parts: Part[] } | null>,
  tolerance: Tolerance,
): void {
  const name = m.attributes.name ?? "";
  const parts: Part[] = [];
  const names = new Set<string>();
  for (const part of wsdlChildren(m, "part")) {
    const partName = part.attributes.name ?? "";
    const { element, type } = part.attributes;
    if ((element === undefined) === (type === undefined)) {
      throw new SchemaCompileError(
        `wsdl:message "${name}": part "${partName}" needs either element= or type= (WSDL 1.1 §2.3)`,
      );
    }
    if (names.has(partName)) {
      throw new SchemaCompileError(`wsdl:message "${name}": two parts are named "${partName}"`);
    }
    names.add(partName);
    if (element !== undefined) {
      // A tolerant load declared a stand-in for a resolved name no schema declares (xsd/stand-ins.ts).
      const el = tolerance.strict
        ? qname(part, "element")
        : byLocalName(
            part,
            "element",
            schema.elementNames,
            tolerance,
            "",
            () => `wsdl:part "${partName}": element is missing or its prefix is undeclared`,
          );
      if (!schema.hasElement(el))
        throw new SchemaCompileError(`wsdl:message "${name}": element ${el} is not declared`);
      parts.push({ name: partName, element: el });
    } else {
      const refused = (t: string) => `wsdl:message "${name}": type ${t} is not declared`;
      let t: string | undefined;
      try {
        t = qname(part, "type");
      } catch (err) {
        if (tolerance.strict) throw err;
      }
      if (t === undefined || !hasType(t)) {
        if (tolerance.strict) throw new SchemaCompileError(refused(t as string));
        // A type named in another namespace, or with an undeclared prefix: the one declared of
        // that local name, as a part's element is read.
        t = byLocalName(part, "type", schemaComponents(schema)?.types.keys() ?? [], tolerance, "", refused);
      }
      parts.push({ name: partName, type: t });
    }
  }
  messages.set(clark(tns, name), { name, parts });
}

/**
 * The Clark name of the message `node` names (its `message` attribute). A tolerant load reads a
 * name no message has, or whose prefix is not declared, as the one message of that local name
 * (WSDL's default namespace for the target one, say); with none or several, the name as written,
 * which the caller finds undeclared.
 */
export function messageName(node: ParsedElement, messages: Messages, tolerance: Tolerance): string {
  if (tolerance.strict) return qname(node, "message");
  let name: string | undefined;
  try {
    name = qname(node, "message");
    if (messages.has(name)) return name;
  } catch {}
  const raw = node.attributes.message ?? "";
  const local = raw.slice(raw.indexOf(":") + 1);
  const near = [...messages.keys()].filter((k) => k.endsWith(`}${local}`) || k === local);
  if (near.length === 1) {
    tolerance.pass(
      "wsdl-name",
      name === undefined
        ? `wsdl:${node.localName} "${node.attributes.name ?? ""}": message is missing or its prefix is undeclared`
        : `message ${name} is not declared`,
      `message="${raw}" names the one declared of that local name, ${near[0]}`,
      node,
    );
    return near[0] as string;
  }
  return name ?? qname(node, "message");
}

/** The parts of the message `node` names (its `message` attribute). */
export function messageParts(
  node: ParsedElement,
  messages: Messages,
  tolerance: Tolerance,
): { name: string; parts: Part[] } {
  const name = messageName(node, messages, tolerance);
  const declared = messages.get(name);
  if (declared === null) throw REPORTED;
  if (!declared) throw new SchemaCompileError(`message ${name} is not declared`);
  return declared;
}

/**
 * The element of a fault's message: WSDL 1.1 §3.6, "the fault message MUST have a single part",
 * written as the fault's detail entry, so an element.
 */
export function faultElement(
  node: ParsedElement,
  operation: string,
  messages: Messages,
  tolerance: Tolerance,
): string {
  const { name, parts } = messageParts(node, messages, tolerance);
  const part = parts[0];
  if (parts.length !== 1 || part?.element === undefined) {
    throw new SchemaCompileError(
      `operation "${operation}": fault "${node.attributes.name ?? ""}" names message "${name}", which needs exactly one part with an element (WSDL 1.1 §3.6)`,
    );
  }
  return part.element;
}

/** The headerfault children of a soap12:header or soap:header (wsdl11soap12 §3.7, WSDL 1.1 §3.7). */
export function headerFaults(node: ParsedElement, ns: string): ParsedElement[] {
  if (node.localName !== "header") return [];
  return node.children.filter((c) => c.namespace === ns && c.localName === "headerfault");
}

/**
 * The elements of the input's header blocks (soap12:header), in document order. Each
 * soap12:header, and each soap12:headerfault in one, must name a part of a declared message
 * (wsdl11soap12 §3.6, §3.7); a headerfault describes header blocks of faults, which this node
 * never sends, so it is checked and otherwise ignored.
 */
export function readInputHeaders(
  bop: ParsedElement,
  name: string,
  messages: Messages,
  binding: FoundBinding,
  tolerance: Tolerance,
): string[] {
  const headers: string[] = [];
  for (const io of bop.children) {
    for (const header of io.children) {
      if (header.namespace !== binding.ns || header.localName !== "header") continue;
      const element = declaredPart(header, name, messages, binding.prefix, tolerance);
      for (const fault of headerFaults(header, binding.ns))
        declaredPart(fault, name, messages, binding.prefix, tolerance);
      if (element !== undefined && io.namespace === WSDL_NS && io.localName === "input")
        headers.push(element);
    }
  }
  return headers;
}

/**
 * The element of the message part a header or headerfault names (WSDL 1.1 §3.7). A tolerant load
 * leaves out a header whose part is not declared: the block is then one the contract does not
 * declare, which a client may still send (and `mustUnderstand` decides as for any other).
 */
function declaredPart(
  node: ParsedElement,
  operation: string,
  messages: Messages,
  prefix: string,
  tolerance: Tolerance,
): string | undefined {
  const named = messageName(node, messages, tolerance);
  const declared = messages.get(named);
  if (declared === null) throw REPORTED;
  const part = declared?.parts.find((p) => p.name === node.attributes.part);
  if (!part) {
    tolerance.pass(
      "undeclared-header-part",
      `operation "${operation}": ${prefix}:${node.localName} names part "${node.attributes.part ?? ""}" of message ${named}, which is not declared`,
      `the ${prefix}:${node.localName} is left out: operation "${operation}" declares no such header block`,
      node,
    );
    return undefined;
  }
  // A type= part's block is named after the part, unqualified, as a document-style Body's part is.
  return part.element ?? part.name;
}
