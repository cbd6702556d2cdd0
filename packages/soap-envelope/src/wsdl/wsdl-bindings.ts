import { clark, type ParsedElement } from "../xml/reader.js";
import { type CompiledSchema, SchemaCompileError, Tolerance } from "../xsd/schema.js";
import { bodyShape, type DeclaredElements } from "./body-shape.js";
import {
  byLocalName,
  type ContractOperation,
  type Definitions,
  type FoundBinding,
  HTTP_TRANSPORTS,
  lineOf,
  located,
  type Messages,
  qname,
  SOAP_ENCODINGS,
  SOAP11_BINDING_NS,
  SOAP12_BINDING_NS,
  type SoapVersion,
  WSDL_NS,
  wsdlChildren,
} from "./contract-model.js";
import { faultElement, headerFaults, messageName, readInputHeaders } from "./wsdl-messages.js";

export const SOAP_VERSIONS: readonly SoapVersion[] = ["1.2", "1.1"];

/**
 * The bindings of the first service port bound with SOAP 1.2 (`soap12:binding`) and of the first
 * bound with SOAP 1.1 (`soap:binding`, WSDL 1.1 §3.3), 1.2 first: the ones this node implements.
 * A binding over another transport (SOAP over TCP, JMS) is not this node's. A tolerant load with
 * no port naming a declared binding serves the one SOAP binding over HTTP of each version.
 */
export function findBindings(
  defs: readonly Definitions[],
  // A contract already loaded reads its bindings again as it was loaded: its defects were said then.
  tolerance: Tolerance = new Tolerance(false),
): FoundBinding[] {
  const bindings = new Map<string, { element: ParsedElement; text: string }>();
  for (const { root, tns, text } of defs) {
    for (const b of wsdlChildren(root, "binding"))
      bindings.set(clark(tns, b.attributes.name ?? ""), { element: b, text });
  }
  const found = new Map<SoapVersion, FoundBinding>();
  const otherTransports = new Set<string>();
  /** Ports naming no binding at all (a tolerant load only), with how a strict load refuses each. */
  const dangling: { port: ParsedElement; location: string; problem: string }[] = [];
  for (const def of defs) {
    for (const service of wsdlChildren(def.root, "service")) {
      for (const port of wsdlChildren(service, "port")) {
        // Named with the document the port is in: the WSDL's own, or one it imports.
        const declared = portBinding(def, port, bindings, tolerance, dangling);
        if (declared === undefined) continue;
        const soap = soapBindingOf(declared.element);
        if (soap === undefined) continue;
        if (soap.transport !== undefined) {
          otherTransports.add(soap.transport);
          continue;
        }
        if (!found.has(soap.version)) found.set(soap.version, { ...soap.found, text: declared.text });
      }
    }
  }
  if (found.size === 0 && otherTransports.size === 0 && !tolerance.strict)
    unportedBindings(bindings, found, tolerance, dangling, defs[0]?.location ?? "");
  if (found.size === 0) {
    throw new SchemaCompileError(
      dangling[0]?.problem ??
        `${defs[0]?.location}: ${
          otherTransports.size > 0
            ? `the WSDL's SOAP ports are bound to another transport than HTTP: ${[...otherTransports].join(", ")}; this node implements SOAP over HTTP (${HTTP_TRANSPORTS.map((t) => `"${t}"`).join(" or ")})`
            : "the WSDL has no wsdl:service port with a soap12:binding or soap:binding"
        }`,
    );
  }
  return SOAP_VERSIONS.flatMap((v) => found.get(v) ?? []);
}

/**
 * What a `wsdl:binding` is to this node: not a SOAP binding (undefined), a SOAP binding over
 * another transport than HTTP (`transport` says which), or one it serves (`found`).
 */
function soapBindingOf(
  b: ParsedElement,
): { version: SoapVersion; transport?: string; found: Omit<FoundBinding, "text"> } | undefined {
  const soapBinding = b.children.find(
    (c) =>
      c.localName === "binding" && (c.namespace === SOAP12_BINDING_NS || c.namespace === SOAP11_BINDING_NS),
  );
  if (!soapBinding) return undefined;
  const version: SoapVersion = soapBinding.namespace === SOAP12_BINDING_NS ? "1.2" : "1.1";
  const prefix = version === "1.2" ? "soap12" : "soap";
  const found = { version, ns: soapBinding.namespace, prefix, element: b };
  // WSDL 1.1 §3.3, wsdl11soap12 §3.3: the transport's URI; HTTP's is the one this node speaks. The
  // attribute is an xs:anyURI, whose white space collapses (XML Schema Part 2 §3.2.17).
  const transport = soapBinding.attributes.transport?.replace(/[ \t\n\r]+/g, " ").trim();
  if (transport !== undefined && HTTP_TRANSPORTS.includes(transport)) return { version, found };
  return {
    version,
    found,
    transport: `wsdl:binding "${b.attributes.name ?? ""}" (${transport === undefined ? `${prefix}:binding without transport` : `transport "${transport}"`})`,
  };
}

/**
 * A tolerant load whose ports name no declared binding, or that has no port: the one SOAP binding
 * over HTTP of each version is served (the endpoint's own address stands for the port's, WSDL 1.1
 * §2.6 and §3.8 giving the port nothing else). Two of one version leave the choice to the
 * receiver: that version is not served.
 */
function unportedBindings(
  bindings: ReadonlyMap<string, { element: ParsedElement; text: string }>,
  found: Map<SoapVersion, FoundBinding>,
  tolerance: Tolerance,
  dangling: readonly { port: ParsedElement; location: string; problem: string }[],
  location: string,
): void {
  const byVersion = new Map<SoapVersion, { name: string; binding: FoundBinding }[]>();
  for (const [name, { element, text }] of bindings) {
    const soap = soapBindingOf(element);
    if (soap === undefined || soap.transport !== undefined) continue;
    byVersion.set(soap.version, [
      ...(byVersion.get(soap.version) ?? []),
      { name, binding: { ...soap.found, text } },
    ]);
  }
  for (const version of SOAP_VERSIONS) {
    const candidates = byVersion.get(version) ?? [];
    const only = candidates.length === 1 ? candidates[0] : undefined;
    if (only === undefined) continue;
    found.set(version, only.binding);
    const port = dangling[0];
    tolerance.pass(
      "unported-binding",
      port?.problem ?? `${location}: the WSDL has no wsdl:service port with a soap12:binding or soap:binding`,
      `wsdl:binding ${only.name} is served, the one SOAP ${version} binding over HTTP declared (the endpoint's address stands for a port's)`,
      port?.port ?? only.binding.element,
      port?.location ?? location,
    );
  }
}

/**
 * The binding a port names. A QName resolves in its scope (WSDL 1.1 §2.1): an unprefixed one takes
 * the default namespace, often WSDL's own, not the target namespace the binding is named in. A
 * tolerant load notes a port naming no binding of that local name in `dangling` (undefined).
 */
function portBinding(
  def: Definitions,
  port: ParsedElement,
  bindings: ReadonlyMap<string, { element: ParsedElement; text: string }>,
  tolerance: Tolerance,
  dangling: { port: ParsedElement; location: string; problem: string }[],
): { element: ParsedElement; text: string } | undefined {
  const refused = (name: string, near: string[]) =>
    `${def.location}: wsdl:port "${port.attributes.name ?? ""}": its binding ${name} is not declared${near.length > 0 ? ` (declared: ${near.join(", ")})` : ""}`;
  const raw = port.attributes.binding ?? "";
  const local = raw.slice(raw.indexOf(":") + 1);
  if (!tolerance.strict && ![...bindings.keys()].some((k) => k.endsWith(`}${local}`) || k === local)) {
    let problem: string;
    try {
      problem = refused(
        located(def.location, () => qname(port, "binding")),
        [],
      );
    } catch (err) {
      if (!(err instanceof SchemaCompileError)) throw err;
      problem = err.problems[0] as string;
    }
    dangling.push({ port, location: def.location, problem });
    return undefined;
  }
  const name = byLocalName(port, "binding", bindings.keys(), tolerance, def.location, refused);
  return bindings.get(name) as { element: ParsedElement; text: string };
}

/**
 * The style of soap12:binding / soap:binding, `document` by default (wsdl11soap12 §3.3, WSDL 1.1
 * §3.3): the default of each of its operations.
 */
export function bindingStyle(binding: FoundBinding): "document" | "rpc" {
  const soapBinding = binding.element.children.find(
    (c) => c.namespace === binding.ns && c.localName === "binding",
  );
  const style = soapBinding?.attributes.style ?? "document";
  if (style !== "document" && style !== "rpc") {
    throw new SchemaCompileError(
      `${binding.prefix}:binding style="${style}" is not supported (WSDL 1.1 §3.3: "rpc" or "document")`,
    );
  }
  return style;
}

/**
 * The operations handlers implement: the first binding's, then those only a later one has. An
 * operation both bind takes the same messages in each (one port type, or port types that agree):
 * one handler serves both.
 */
export function handledOperations(
  byVersion: Partial<Record<SoapVersion, readonly ContractOperation[]>>,
): ContractOperation[] {
  const out = new Map<string, ContractOperation>();
  for (const version of SOAP_VERSIONS) {
    for (const op of byVersion[version] ?? []) {
      const first = out.get(op.name);
      if (first === undefined) out.set(op.name, op);
      else if (first.input !== op.input || first.output !== op.output) {
        throw new SchemaCompileError(
          `operation "${op.name}" takes ${first.input} in the SOAP 1.2 binding and ${op.input} in the SOAP 1.1 binding: one handler cannot serve both`,
        );
      }
    }
  }
  return [...out.values()];
}

/** The port type the binding's `type` names. */
export function findPortType(
  defs: readonly Definitions[],
  binding: ParsedElement,
  tolerance: Tolerance = new Tolerance(false),
): ParsedElement {
  const portTypes = new Map<string, ParsedElement>();
  for (const { root, tns } of defs) {
    for (const p of wsdlChildren(root, "portType")) portTypes.set(clark(tns, p.attributes.name ?? ""), p);
  }
  const name = byLocalName(
    binding,
    "type",
    portTypes.keys(),
    tolerance,
    "",
    () => "the binding's port type is not declared",
  );
  return portTypes.get(name) as ParsedElement;
}

/** One binding operation joined with its port type operation. */
export function readOperation(
  bop: ParsedElement,
  portType: ParsedElement,
  messages: Messages,
  binding: FoundBinding,
  schema: CompiledSchema,
  declared: DeclaredElements,
  tolerance: Tolerance,
): ContractOperation | { operation: string; reason: string } {
  const name = bop.attributes.name ?? "";
  const op = wsdlChildren(portType, "operation").find((o) => o.attributes.name === name);
  if (!op) {
    const reason = "the binding operation is not in the port type: no message is declared for it";
    tolerance.pass(
      "operation-not-in-port-type",
      `binding operation "${name}" is not in the port type`,
      `operation "${name}" is not served (${reason})`,
      bop,
    );
    return { operation: name, reason };
  }
  // WSDL 1.1 §2.4: the messages an operation exchanges; one no wsdl:message declares leaves the
  // operation without a Body to read or write, so a tolerant load serves the others.
  for (const io of [...wsdlChildren(op, "input"), ...wsdlChildren(op, "output")]) {
    const message = io.attributes.message === undefined ? undefined : messageName(io, messages, tolerance);
    if (message === undefined || messages.has(message)) continue;
    const reason = `its ${io.localName} message ${message} is not declared`;
    tolerance.pass(
      "undeclared-message",
      `message ${message} is not declared`,
      `operation "${name}" is not served (${reason})`,
      io,
    );
    return { operation: name, reason };
  }
  const soapOp = bop.children.find((c) => c.namespace === binding.ns && c.localName === "operation");
  const style = (soapOp?.attributes.style ?? bindingStyle(binding)) as "document" | "rpc";
  const headers = readInputHeaders(bop, name, messages, binding, tolerance);
  const input = wsdlChildren(op, "input")[0];
  const output = wsdlChildren(op, "output")[0];
  // WSDL 1.1 §2.4.3, §2.4.4: an output first (alone, or then an input) is a message the
  // endpoint sends unasked.
  const first = op.children.find(
    (c) => c.namespace === WSDL_NS && (c.localName === "input" || c.localName === "output"),
  );
  if (!input || first?.localName === "output") {
    return {
      operation: name,
      reason: input
        ? "a solicit-response operation (WSDL 1.1 §2.4.4): the endpoint would send the first message"
        : "a notification operation (WSDL 1.1 §2.4.3): the endpoint would send the message unasked",
    };
  }
  const faults: Record<string, string> = {};
  for (const f of wsdlChildren(op, "fault")) {
    const message = f.attributes.message === undefined ? undefined : messageName(f, messages, tolerance);
    if (message !== undefined && !messages.has(message)) {
      // A fault is what the handler may answer: without its message, the operation has one fewer.
      tolerance.pass(
        "undeclared-message",
        `message ${message} is not declared`,
        `fault "${f.attributes.name ?? ""}" of operation "${name}" is left out (a handler's answer with it is not written)`,
        f,
      );
      continue;
    }
    faults[f.attributes.name ?? ""] = faultElement(f, name, messages, tolerance);
  }
  const shape = { operation: name, style, binding, messages, schema, declared, tolerance };
  const inputBody = bodyShape(bop, input, "input", shape);
  const outputBody = output ? bodyShape(bop, output, "output", shape) : undefined;
  const encoded = bop.children.some((io) =>
    io.children.some(
      (c) => c.namespace === binding.ns && c.localName === "body" && c.attributes.use === "encoded",
    ),
  );
  return {
    name,
    soapAction: soapOp?.attributes.soapAction ?? "",
    style,
    use: encoded ? "encoded" : "literal",
    input: inputBody.element,
    output: outputBody?.element,
    inputBody: inputBody.body,
    outputBody: outputBody?.body,
    faults,
    headers,
  };
}

/**
 * What the binding says of one operation, before any type is read: document or rpc style;
 * soap12:body of literal or encoded use (the SOAP encoding of the binding's version), the same for
 * input and output; soap12:fault and header of literal use only (wsdl11soap12 §3.4-§3.7;
 * soap:body, soap:fault, soap:header, WSDL 1.1 §3.5-§3.7).
 */
export function checkBindingOperation(bop: ParsedElement, binding: FoundBinding): void {
  const name = bop.attributes.name ?? "";
  const { ns, prefix } = binding;
  const soapOp = bop.children.find((c) => c.namespace === ns && c.localName === "operation");
  const style = soapOp?.attributes.style;
  if (style !== undefined && style !== "document" && style !== "rpc") {
    throw new SchemaCompileError(
      `operation "${name}": style="${style}" is not supported (WSDL 1.1 §3.4: "rpc" or "document")`,
    );
  }
  for (const io of bop.children) {
    for (const body of io.children) {
      if (body.namespace !== ns) continue;
      if (body.localName !== "body" && body.localName !== "fault" && body.localName !== "header") {
        throw new SchemaCompileError(`operation "${name}": ${prefix}:${body.localName} is not supported`);
      }
      for (const declaration of [body, ...headerFaults(body, ns)]) {
        const use = declaration.attributes.use ?? "literal";
        if (use === "literal") continue;
        if (use !== "encoded") {
          throw new SchemaCompileError(
            `operation "${name}": ${prefix}:${declaration.localName} use="${use}" is not supported (WSDL 1.1 §3.5: "literal" or "encoded")`,
          );
        }
        if (declaration.localName !== "body") {
          throw new SchemaCompileError(
            `operation "${name}": ${prefix}:${declaration.localName} use="encoded" is not supported (header blocks and fault details are read and written literal; the Body's parts may be encoded)`,
          );
        }
        checkEncodingStyle(declaration, name, binding);
      }
    }
  }
  const uses = new Set(
    bop.children.flatMap((io) =>
      io.children
        .filter((c) => c.namespace === ns && c.localName === "body")
        .map((c) => c.attributes.use ?? "literal"),
    ),
  );
  if (uses.size > 1) {
    throw new SchemaCompileError(
      `operation "${name}": its input and output differ in ${prefix}:body use; one operation is literal or encoded`,
    );
  }
}

/**
 * WSDL 1.1 §3.5: with `use="encoded"`, `encodingStyle` lists the encodings the parts are written
 * in, most restrictive first. This node reads and writes one: the SOAP encoding of the binding's
 * version (SOAP 1.1 §5, SOAP 1.2 Part 2 §3). Any other (an application's own rules, the other
 * version's encoding, none at all) is refused, naming where it is.
 */
function checkEncodingStyle(body: ParsedElement, operation: string, binding: FoundBinding): void {
  const raw = body.attributes.encodingStyle;
  const styles = (raw ?? "").split(/[ \t\r\n]+/).filter((u) => u !== "");
  const expected = SOAP_ENCODINGS[binding.version];
  if (styles.length === 1 && styles[0] === expected) return;
  const line = lineOf(
    binding.text,
    raw === undefined
      ? /\buse\s*=\s*["']encoded["']/
      : new RegExp(`encodingStyle\\s*=\\s*["']${raw.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}["']`),
  );
  const where = `operation "${operation}"${line === undefined ? "" : ` (line ${line})`}: ${binding.prefix}:body`;
  throw new SchemaCompileError(
    raw === undefined
      ? `${where} use="encoded" needs encodingStyle="${expected}" (WSDL 1.1 §3.5: the encoding the parts are written in; this node reads and writes the SOAP ${binding.version} encoding)`
      : `${where} use="encoded" encodingStyle="${raw}" is not supported: this node reads and writes the SOAP ${binding.version} encoding, encodingStyle="${expected}" (WSDL 1.1 §3.5)`,
  );
}

/**
 * The Body's first child (none for an empty Body) routes a request to its operation. Operations
 * that take the same one are told apart by their actions (SOAP 1.2 Part 2 §7.1.4, SOAP 1.1
 * §6.1.1): each needs its own `soapAction`, shared with no other operation.
 */
export function checkRoutable(operations: readonly ContractOperation[]): void {
  const byKey = new Map<string, ContractOperation[]>();
  const actions = new Map<string, number>();
  for (const op of operations) {
    const key = op.inputBody[0] ?? "";
    const same = byKey.get(key);
    if (same) same.push(op);
    else byKey.set(key, [op]);
    if (op.soapAction) actions.set(op.soapAction, (actions.get(op.soapAction) ?? 0) + 1);
  }
  for (const [key, ops] of byKey) {
    if (ops.length < 2) continue;
    const untold = ops.filter((o) => o.soapAction === "" || (actions.get(o.soapAction) ?? 0) > 1);
    if (untold.length === 0) continue;
    const what = key === "" ? "an empty Body" : key;
    throw new SchemaCompileError(
      `two operations take ${what} and their soapActions do not tell them apart (${ops.map((o) => `${o.name}: "${o.soapAction}"`).join(", ")}): the body ${key === "" ? "" : "element "}could not route requests`,
    );
  }
}
