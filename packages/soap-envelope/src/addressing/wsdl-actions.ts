import { WSU_NS } from "@svc/errors";
import {
  type Contract,
  type ContractOperation,
  type Definitions,
  HTTP_TRANSPORTS,
  SOAP11_BINDING_NS,
  SOAP12_BINDING_NS,
  type SoapVersion,
  WSDL_NS,
  wsdlChildren,
} from "../wsdl/contract-model.js";
import { type ParsedElement, parseXmlString, resolveLimits } from "../xml/reader.js";
import { POLICY_NAMESPACES, WSAM_NS, WSAW_NS } from "./names.js";

/** The actions of one operation's messages (WS-Addressing 1.0 Metadata §4.4). */
export interface OperationActions {
  /** The [action] of its input. */
  input: string;
  /** The [action] of its output; undefined for a one-way operation. */
  output: string | undefined;
  /** The [action] of each declared fault, by the Clark name of its detail element. */
  faults: ReadonlyMap<string, string>;
}

/** What one binding's WSDL says of WS-Addressing. */
export interface BindingAddressing {
  /** The operations each input [action] names (more than one only for an action they share). */
  byAction: ReadonlyMap<string, readonly ContractOperation[]>;
  /** Each operation's actions, by name. */
  byOperation: ReadonlyMap<string, OperationActions>;
  /**
   * Whether the binding or its port declares WS-Addressing in use (`wsaw:UsingAddressing`, the
   * `wsam:Addressing` policy assertion): `"required"` when messages without it are refused,
   * `"optional"` when it is declared optional, undefined when it is not declared.
   */
  use: "required" | "optional" | undefined;
}

/** Whether a contract's documents mention the namespaces addressing metadata is declared in. */
export function declaresAddressing(contract: Contract): boolean {
  for (const text of wsdlTexts(contract)) {
    if (text.includes(WSAM_NS) || text.includes(WSAW_NS)) return true;
  }
  return false;
}

/**
 * The [action]s of each served binding's operations, read from the contract's WSDL documents
 * (the main one and those it imports, as the loader kept them): `wsam:Action` (or the WSDL
 * Binding draft's `wsaw:Action`) on `wsdl:input`, `wsdl:output` and `wsdl:fault`; without one,
 * the input's non-empty `soapAction`, then the default action pattern (§4.4.4). Whether the binding
 * or its port declares WS-Addressing in use, and whether required.
 *
 * @see https://www.w3.org/TR/ws-addr-metadata/#actioninwsdl
 * @see https://www.w3.org/TR/ws-addr-metadata/#defactionwsdl11
 * @see https://www.w3.org/TR/ws-addr-metadata/#wspolicyassertions
 */
export function bindingAddressing(contract: Contract): Partial<Record<SoapVersion, BindingAddressing>> {
  const limits = resolveLimits({
    maxBytes: 16 * 1024 * 1024,
    maxDepth: 128,
    maxElements: 1_000_000,
    maxAttributes: 256,
  });
  const defs: Definitions[] = [];
  for (const text of wsdlTexts(contract)) {
    const root = parseXmlString(text, limits);
    if (root.namespace !== WSDL_NS || root.localName !== "definitions") continue;
    defs.push({ root, text, tns: root.attributes.targetNamespace ?? "", location: "WSDL", base: "" });
  }
  const out: Partial<Record<SoapVersion, BindingAddressing>> = {};
  for (const version of ["1.2", "1.1"] as const) {
    const operations = contract.bindings[version];
    if (operations === undefined) continue;
    const binding = servedBinding(defs, version, operations);
    if (binding === undefined) continue;
    const portType = byLocalName(defs, "portType", localPart(binding.element.attributes.type ?? ""));
    const tns = portType?.tns ?? contract.targetNamespace;
    const portTypeName = portType?.element.attributes.name ?? "";
    const byAction = new Map<string, ContractOperation[]>();
    const byOperation = new Map<string, OperationActions>();
    for (const op of operations) {
      const abstract =
        portType && wsdlChildren(portType.element, "operation").find((o) => o.attributes.name === op.name);
      const actions = operationActions(op, abstract, tns, portTypeName);
      byOperation.set(op.name, actions);
      const same = byAction.get(actions.input);
      if (same === undefined) byAction.set(actions.input, [op]);
      else same.push(op);
    }
    out[version] = { byAction, byOperation, use: declaredUse(defs, binding.element) };
  }
  return out;
}

/** A WSDL component and the target namespace of the document that declares it. */
interface Declared {
  element: ParsedElement;
  tns: string;
}

/**
 * The binding the contract serves in `version` (the loader chose it: the first port's bound with
 * that version's SOAP binding over HTTP): among the bindings of that version over HTTP whose
 * operations are the contract's, the first a port names, else the first.
 */
function servedBinding(
  defs: readonly Definitions[],
  version: SoapVersion,
  operations: readonly ContractOperation[],
): Declared | undefined {
  const ns = version === "1.2" ? SOAP12_BINDING_NS : SOAP11_BINDING_NS;
  const names = new Set(operations.map((o) => o.name));
  const candidates: Declared[] = [];
  for (const { root, tns } of defs) {
    for (const b of wsdlChildren(root, "binding")) {
      const soap = b.children.find((c) => c.namespace === ns && c.localName === "binding");
      if (soap === undefined || !HTTP_TRANSPORTS.includes(soap.attributes.transport ?? "")) continue;
      if (!wsdlChildren(b, "operation").every((o) => names.has(o.attributes.name ?? ""))) continue;
      candidates.push({ element: b, tns });
    }
  }
  for (const { root } of defs) {
    for (const service of wsdlChildren(root, "service")) {
      for (const port of wsdlChildren(service, "port")) {
        const local = localPart(port.attributes.binding ?? "");
        const named = candidates.find((c) => c.element.attributes.name === local);
        if (named !== undefined) return named;
      }
    }
  }
  return candidates[0];
}

/** The first `wsdl:<kind>` of the documents named `local`. */
function byLocalName(defs: readonly Definitions[], kind: string, local: string): Declared | undefined {
  for (const { root, tns } of defs) {
    const element = wsdlChildren(root, kind).find((e) => e.attributes.name === local);
    if (element !== undefined) return { element, tns };
  }
  return undefined;
}

/** A QName's local part. */
function localPart(qname: string): string {
  return qname.slice(qname.indexOf(":") + 1).trim();
}

/** The WSDL documents of a contract: its own and those it imports (kept beside its schemas). */
function wsdlTexts(contract: Contract): string[] {
  const texts = [contract.wsdlText];
  for (const text of contract.schemaFiles.values()) {
    if (/<(?:[\w.-]+:)?definitions[\s>]/.test(text)) texts.push(text);
  }
  return texts;
}

function operationActions(
  op: ContractOperation,
  abstract: ParsedElement | undefined,
  tns: string,
  portTypeName: string,
): OperationActions {
  const input = abstract && wsdlChildren(abstract, "input")[0];
  const output = abstract && wsdlChildren(abstract, "output")[0];
  // WSDL 1.1 §2.4.5: the default names of a request-response operation's messages, and of a
  // one-way operation's input.
  const inputName = input?.attributes.name ?? (op.output === undefined ? op.name : `${op.name}Request`);
  const outputName = output?.attributes.name ?? `${op.name}Response`;
  const faults = new Map<string, string>();
  for (const fault of abstract ? wsdlChildren(abstract, "fault") : []) {
    const name = fault.attributes.name ?? "";
    const element = op.faults[name];
    if (element === undefined) continue;
    faults.set(
      element,
      explicitAction(fault) ??
        defaultAction(tns, portTypeName, `${op.name}${delimiter(tns)}Fault${delimiter(tns)}${name}`),
    );
  }
  return {
    // §4.4.1: "In the absence of a wsam:Action attribute on a WSDL input element where a
    // non-empty SOAPAction value is specified, the value of the [action] property for the input
    // message is the value of the SOAPAction specified."
    input:
      (input && explicitAction(input)) ??
      (op.soapAction !== "" ? op.soapAction : defaultAction(tns, portTypeName, inputName)),
    output:
      op.output === undefined
        ? undefined
        : ((output && explicitAction(output)) ?? defaultAction(tns, portTypeName, outputName)),
    faults,
  };
}

function explicitAction(element: ParsedElement): string | undefined {
  const value = element.attributes[`{${WSAM_NS}}Action`] ?? element.attributes[`{${WSAW_NS}}Action`];
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}

/** §4.4.4: `":"` when the target namespace is a URN, otherwise `"/"`. */
function delimiter(tns: string): string {
  return /^urn:/i.test(tns) ? ":" : "/";
}

/**
 * §4.4.4: `[target namespace][delimiter][port type name][delimiter][input|output name]`, no
 * delimiter added after a target namespace that ends with one.
 */
function defaultAction(tns: string, portTypeName: string, name: string): string {
  const d = delimiter(tns);
  return `${tns.endsWith(d) ? tns : `${tns}${d}`}${portTypeName}${d}${name}`;
}

/**
 * `wsaw:UsingAddressing` on the binding or a port bound to it (`wsdl:required="true"`: required),
 * or a `wsam:Addressing` (or `wsaw:UsingAddressing`) assertion in a policy the binding or the port
 * holds or references (`wsp:Optional="true"`: optional). Required wins.
 */
function declaredUse(defs: readonly Definitions[], binding: ParsedElement): BindingAddressing["use"] {
  const subjects = [binding, ...portsOf(defs, binding)];
  let use: BindingAddressing["use"];
  const found = (required: boolean) => {
    if (required) use = "required";
    else use ??= "optional";
  };
  for (const subject of subjects) {
    for (const child of subject.children) {
      if (child.namespace === WSAW_NS && child.localName === "UsingAddressing") {
        found(isTrue(child.attributes[`{${WSDL_NS}}required`]));
      } else if (POLICY_NAMESPACES.includes(child.namespace)) {
        if (child.localName === "Policy") scanPolicy(child, found, 0);
        else if (child.localName === "PolicyReference") {
          const policy = referencedPolicy(defs, child.attributes.URI ?? "");
          if (policy !== undefined) scanPolicy(policy, found, 0);
        }
      }
    }
  }
  return use;
}

function scanPolicy(policy: ParsedElement, found: (required: boolean) => void, depth: number): void {
  if (depth > 16) return;
  for (const child of policy.children) {
    const assertion =
      (child.namespace === WSAM_NS && child.localName === "Addressing") ||
      (child.namespace === WSAW_NS && child.localName === "UsingAddressing");
    if (assertion) {
      const optional = POLICY_NAMESPACES.some((ns) => isTrue(child.attributes[`{${ns}}Optional`]));
      found(!optional);
    } else if (POLICY_NAMESPACES.includes(child.namespace)) scanPolicy(child, found, depth + 1);
  }
}

/** WS-PolicyAttachment: `URI="#id"` names a `wsp:Policy` of the documents by its `wsu:Id` (or `xml:id`). */
function referencedPolicy(defs: readonly Definitions[], uri: string): ParsedElement | undefined {
  if (!uri.startsWith("#")) return undefined;
  const id = uri.slice(1);
  for (const { root } of defs) {
    for (const child of root.children) {
      if (child.localName !== "Policy" || !POLICY_NAMESPACES.includes(child.namespace)) continue;
      const own =
        child.attributes[`{${WSU_NS}}Id`] ??
        child.attributes["{http://www.w3.org/XML/1998/namespace}id"] ??
        child.attributes.Id;
      if (own === id) return child;
    }
  }
  return undefined;
}

/** The service ports bound to `binding` (by its name, as a port names it). */
function portsOf(defs: readonly Definitions[], binding: ParsedElement): ParsedElement[] {
  const ports: ParsedElement[] = [];
  for (const { root } of defs) {
    for (const service of wsdlChildren(root, "service")) {
      for (const port of wsdlChildren(service, "port")) {
        if (localPart(port.attributes.binding ?? "") === binding.attributes.name) ports.push(port);
      }
    }
  }
  return ports;
}

function isTrue(value: string | undefined): boolean {
  const v = value?.trim();
  return v === "true" || v === "1";
}
