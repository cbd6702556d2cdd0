import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join, normalize, relative, resolve, sep } from "node:path";
import { escapeXml } from "@svc/errors";
import { optionError as codedOptionError } from "@svc/kernel/internal";
import { checkLongAs, checkObject, optionError } from "./options.js";
import {
  type CompiledSchema,
  compileSchemas,
  type LongRepresentation,
  SchemaCompileError,
  type SchemaSource,
  XS_NS,
} from "./schema.js";
import { clark, type ParsedElement, parseXmlDocument, resolveLimits, resolveQName, XmlError } from "./xml.js";

const WSDL_NS = "http://schemas.xmlsoap.org/wsdl/";
const SOAP12_BINDING_NS = "http://schemas.xmlsoap.org/wsdl/soap12/";
const SOAP11_BINDING_NS = "http://schemas.xmlsoap.org/wsdl/soap/";
const HTTP_TRANSPORT = "http://schemas.xmlsoap.org/soap/http";

/** A SOAP version a contract's binding speaks: `"1.1"` (W3C Note, 2000) or `"1.2"` (W3C Recommendation). */
export type SoapVersion = "1.1" | "1.2";

/** One operation of one of the contract's SOAP bindings. */
export interface ContractOperation {
  /** The operation's name in the port type (`getCustomer`). */
  name: string;
  /** The binding's `soapAction`, `""` when none. */
  soapAction: string;
  /** Clark name of the input part's element. */
  input: string;
  /** Clark name of the output part's element; undefined for a one-way operation (WSDL 1.1 §2.4.1). */
  output: string | undefined;
  /** Clark names of the declared fault elements, by fault name. */
  faults: Readonly<Record<string, string>>;
  /**
   * Clark names of the header blocks the binding declares for the input (`soap12:header`,
   * WSDL 1.1 SOAP 1.2 binding §3.6; `soap:header`, WSDL 1.1 §3.7), in document order: what clients generated from the WSDL may
   * send (credentials, say). Declaring a block does not make this node understand it (SOAP 1.2
   * Part 1 §2.4): `understoodHeaders` or the `authenticate` hook do.
   */
  headers: readonly string[];
}

/** A compiled WSDL 1.1 contract. */
export interface Contract {
  /** The WSDL's target namespace. */
  targetNamespace: string;
  /**
   * The operations handlers implement, in document order: those of the SOAP 1.2 binding, then
   * those only the SOAP 1.1 binding has. Their `soapAction` and `headers` are the first binding's;
   * {@link Contract.bindings} has each binding's own.
   */
  operations: readonly ContractOperation[];
  /**
   * The SOAP versions this node serves the contract in, 1.2 first: those of the first
   * `wsdl:port` bound with `soap12:binding` and the first bound with `soap:binding` (WSDL 1.1 §3),
   * each over HTTP. One endpoint answers both; the request's media type and envelope choose.
   */
  versions: readonly SoapVersion[];
  /** Each served binding's operations, by SOAP version. */
  bindings: Readonly<Partial<Record<SoapVersion, readonly ContractOperation[]>>>;
  /** The compiled XSD of the `wsdl:types` section and its imports. */
  schema: CompiledSchema;
  /** The WSDL text as loaded. */
  wsdlText: string;
  /** Imported schema documents by the relative path they are served under (`customer.xsd`). */
  schemaFiles: ReadonlyMap<string, string>;
  /**
   * Renders the WSDL (or an imported XSD when `xsd` is given) for the endpoint at `endpointUrl`:
   * every port's address `location` (`soap12:address`, `soap:address`) becomes `endpointUrl` and every `schemaLocation` points at
   * `endpointUrl?xsd=<path>`.
   */
  render(endpointUrl: string, xsd?: string): string | undefined;
}

/** Options of {@link loadContract}. */
export interface LoadContractOptions {
  /**
   * Directory relative imports are resolved against when `wsdl` is the document's text.
   * @default process.cwd()
   */
  baseDir?: string;
  /**
   * Decoded representation of `xs:long`.
   * @default "bigint"
   */
  longAs?: LongRepresentation;
}

/**
 * Loads and compiles a WSDL 1.1 contract (a SOAP 1.2 binding, a SOAP 1.1 binding or both,
 * document/literal) and the XSDs it imports, synchronously, at start-up. Anything the compiler does
 * not support throws a {@link SchemaCompileError} naming the construct and the file. A binding of
 * one version that cannot be served is not served when the other version's can be (the contract
 * loads with {@link Contract.versions} naming the one); its problems block loading only when no
 * binding can be served. `soap12:header` / `soap:header` declarations are
 * checked (their message part must name a declared element) and listed per operation; extension
 * elements of other namespaces, such as a WS-Policy 1.5 `wsp:Policy` and its
 * `wsp:PolicyReference` (WS-PolicyAttachment 1.5 §4.1), are left to the clients that read them.
 *
 * @example
 * const contract = loadContract("contracts/customer.wsdl");
 * contract.operations.map((o) => o.name); // ["getCustomer", "createCustomer", ...]
 * @see https://www.w3.org/TR/2001/NOTE-wsdl-20010315 (§3: the SOAP 1.1 binding)
 * @see https://www.w3.org/Submission/wsdl11soap12/
 */
export function loadContract(wsdl: string, options: LoadContractOptions = {}): Contract {
  if (typeof wsdl !== "string" || wsdl.trim() === "") {
    throw optionError("wsdl", wsdl, "the path of a WSDL 1.1 file or its text", "loadContract: wsdl");
  }
  checkObject(options, "options", ["baseDir", "longAs"]);
  if (options.baseDir !== undefined && (typeof options.baseDir !== "string" || options.baseDir === "")) {
    throw optionError("baseDir", options.baseDir, "a directory path", "loadContract: baseDir");
  }
  checkLongAs(options.longAs, "longAs", "loadContract: longAs");
  const doc = readWsdl(wsdl, options);
  // Every blocker at once, the binding first: a team learns from one start-up whether the
  // contract's binding is one this node serves before it reads about its types.
  const problems: string[] = [];
  const collect = <T>(step: () => T, prefix = `${doc.location}: `): T | undefined => {
    try {
      return step();
    } catch (err) {
      if (!(err instanceof SchemaCompileError)) throw err;
      for (const problem of err.problems) problems.push(`${prefix}${problem}`);
      return undefined;
    }
  };
  const found = collect(() => findBindings(doc.root, doc.tns));
  // The binding's problems, per version, before any type is read.
  const served: { version: SoapVersion; binding: Binding; problems: string[] }[] = [];
  for (const binding of found ?? []) {
    const before = problems.length;
    const portType = collect(() => {
      checkSoapBinding(binding);
      return findPortType(doc.root, doc.tns, binding.element);
    });
    const bops = wsdlChildren(binding.element, "operation");
    for (const bop of bops) collect(() => checkBindingOperation(bop, binding));
    served.push({
      version: binding.version,
      binding: { ...binding, portType, operations: bops },
      problems: problems.splice(before),
    });
  }
  // A binding that cannot be served is left out when another can; with none, every problem counts.
  const usable = served.filter((b) => b.problems.length === 0);
  const bindings = usable.length > 0 ? usable : served;
  for (const b of bindings) problems.push(...b.problems);
  const loaded = collect(() => loadSchemaSources(doc), "");
  const schema =
    loaded &&
    collect(
      () => compileSchemas(loaded.sources, options.longAs === undefined ? {} : { longAs: options.longAs }),
      "",
    );
  const messages = schema && readMessages(doc.root, doc.tns, schema, collect);
  const byVersion: Partial<Record<SoapVersion, ContractOperation[]>> = {};
  if (messages) {
    for (const { version, binding } of bindings) {
      const portType = binding.portType;
      if (!portType) continue;
      const operations: ContractOperation[] = [];
      for (const bop of binding.operations) {
        const op = collect(() => readOperation(bop, portType, messages, binding));
        if (op) operations.push(op);
      }
      collect(() => checkRoutable(operations));
      byVersion[version] = operations;
    }
  }
  const operations = collect(() => handledOperations(byVersion)) ?? [];
  if (problems.length > 0 || !schema || !loaded) {
    throw new SchemaCompileError(
      problems.length === 1
        ? (problems[0] as string)
        : `the contract cannot be loaded, ${problems.length} problems:\n- ${problems.join("\n- ")}`,
      problems,
    );
  }
  return {
    targetNamespace: doc.tns,
    operations,
    versions: SOAP_VERSIONS.filter((v) => byVersion[v] !== undefined),
    bindings: byVersion,
    schema,
    wsdlText: doc.wsdlText,
    schemaFiles: loaded.schemaFiles,
    render: renderer(doc.wsdlText, loaded.schemaFiles),
  };
}

/** The WSDL document as read: its text, parsed root and where relative imports resolve from. */
interface WsdlDocument {
  /** How problems name the document: its path as given, or `WSDL` for text. */
  location: string;
  wsdlText: string;
  root: ParsedElement;
  baseDir: string;
  tns: string;
  limits: ReturnType<typeof resolveLimits>;
}

/** Message name → its one part (document/literal): the part's name and element; null when refused. */
type Messages = ReadonlyMap<string, { part: string; element: string } | null>;

/** Thrown for a construct that names a message already reported: nothing more to say. */
const REPORTED = new SchemaCompileError("reported with the message it names", []);

/** Reads and parses the WSDL (a path, or the document's text) and checks its document element. */
function readWsdl(wsdl: string, options: LoadContractOptions): WsdlDocument {
  const limits = resolveLimits({
    maxBytes: 16 * 1024 * 1024,
    maxDepth: 128,
    maxElements: 1_000_000,
    maxAttributes: 256,
  });
  const isText = wsdl.trimStart().startsWith("<");
  const wsdlPath = isText ? join(resolve(options.baseDir ?? process.cwd()), "inline.wsdl") : resolve(wsdl);
  const location = isText ? "WSDL" : wsdl;
  let wsdlText: string;
  try {
    wsdlText = isText ? wsdl : readXmlFile(wsdlPath);
  } catch (err) {
    throw codedOptionError(
      "soap-envelope",
      "wsdl",
      `@svc/soap-envelope: wsdl names the file ${wsdlPath}, which cannot be read (${fileProblem(err)}); give the path of a WSDL 1.1 file or its text`,
    );
  }
  const root = parse(wsdlText, location, limits);
  if (root.namespace !== WSDL_NS || root.localName !== "definitions") {
    throw new SchemaCompileError(
      `${location}: the document element must be wsdl:definitions (WSDL 1.1), not {${root.namespace}}${root.localName}`,
    );
  }
  return {
    location,
    wsdlText,
    root,
    baseDir: dirname(wsdlPath),
    tns: root.attributes.targetNamespace ?? "",
    limits,
  };
}

/** wsdl:types: inline schemas and, transitively, the documents they import or include. */
function loadSchemaSources(doc: WsdlDocument): { sources: SchemaSource[]; schemaFiles: Map<string, string> } {
  const sources: SchemaSource[] = [];
  const schemaFiles = new Map<string, string>();
  const seen = new Set<string>();
  const loadImports = (schema: ParsedElement, fromDir: string, location: string) => {
    for (const child of schema.children) {
      const file = importedFile(child, fromDir, location, doc.baseDir);
      if (file === undefined || seen.has(file)) continue;
      seen.add(file);
      const rel = relative(doc.baseDir, file);
      let text: string;
      try {
        text = readXmlFile(file);
      } catch (err) {
        throw new SchemaCompileError(
          `${location}: xs:${child.localName} schemaLocation="${child.attributes.schemaLocation}" names ${file}, which cannot be read (${fileProblem(err)})`,
        );
      }
      const imported = parse(text, rel, doc.limits);
      schemaFiles.set(normalize(rel).split("\\").join("/"), text);
      sources.push({ root: imported, location: rel });
      loadImports(imported, dirname(file), rel);
    }
  };
  for (const t of wsdlChildren(doc.root, "types")) {
    for (const schema of t.children) {
      if (schema.namespace !== XS_NS || schema.localName !== "schema") {
        throw new SchemaCompileError(
          `${doc.location} wsdl:types: {${schema.namespace}}${schema.localName} is not supported`,
        );
      }
      sources.push({ root: schema, location: `${doc.location} wsdl:types` });
      loadImports(schema, doc.baseDir, `${doc.location} wsdl:types`);
    }
  }
  return { sources, schemaFiles };
}

/**
 * The absolute path an `xs:import` / `xs:include` child points at; undefined for any other child
 * and for the built-in XSD namespace. Remote locations and paths outside the WSDL's directory throw.
 */
function importedFile(
  child: ParsedElement,
  fromDir: string,
  location: string,
  baseDir: string,
): string | undefined {
  if (child.namespace !== XS_NS || (child.localName !== "import" && child.localName !== "include"))
    return undefined;
  const loc = child.attributes.schemaLocation;
  if (loc === undefined) {
    // An import by namespace alone: the schema compiler resolves it (a sibling schema, or one
    // it knows), schema-compile.ts.
    if (child.localName === "import") return undefined;
    throw new SchemaCompileError(
      `${location}: xs:${child.localName} without schemaLocation cannot be resolved`,
    );
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(loc)) {
    throw new SchemaCompileError(
      `${location}: remote schemaLocation "${loc}" is not loaded; keep schemas next to the WSDL`,
    );
  }
  const file = resolve(fromDir, locationPath(loc));
  const rel = relative(baseDir, file);
  // Outside: the relative path climbs (`..` as a whole segment); `..shared.xsd` is a file in it.
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new SchemaCompileError(`${location}: schemaLocation "${loc}" is outside the WSDL's directory`);
  }
  return file;
}

/**
 * A WSDL or XSD file's text. XML 1.0 §4.3.3: a processor MUST read UTF-16 as well as UTF-8, and a
 * UTF-16 entity begins with a byte order mark (Appendix F.1); anything else is read as UTF-8. The
 * text is served as UTF-8 (`?wsdl`, `?xsd=`), so the declaration of a UTF-16 file is made to say so.
 */
export function readXmlFile(path: string): string {
  const bytes = readFileSync(path);
  const encoding =
    bytes[0] === 0xfe && bytes[1] === 0xff
      ? "utf-16be"
      : bytes[0] === 0xff && bytes[1] === 0xfe
        ? "utf-16le"
        : undefined;
  if (encoding === undefined) return bytes.toString("utf8");
  const text = new TextDecoder(encoding).decode(bytes);
  return text.replace(/^(<\?xml\s[^?]*?\bencoding\s*=\s*)(["'])[^"']*\2/, "$1$2UTF-8$2");
}

/** The Clark name of the QName in attribute `attr` of `node`, resolved in the node's scope. */
function qname(node: ParsedElement, attr: string): string {
  const raw = node.attributes[attr];
  const q = raw === undefined ? undefined : resolveQName(raw, node.scope);
  if (!q)
    throw new SchemaCompileError(
      `wsdl:${node.localName} "${node.attributes.name ?? ""}": ${attr} is missing or its prefix is undeclared`,
    );
  return clark(q.namespace, q.localName);
}

/** wsdl:message: each must have one part naming a declared element (document/literal). */
function readMessages(
  root: ParsedElement,
  tns: string,
  schema: CompiledSchema,
  collect: <T>(step: () => T) => T | undefined,
): Messages {
  const messages = new Map<string, { part: string; element: string } | null>();
  for (const m of wsdlChildren(root, "message")) {
    messages.set(clark(tns, m.attributes.name ?? ""), null);
    collect(() => readMessage(m, tns, schema, messages));
  }
  return messages;
}

function readMessage(
  m: ParsedElement,
  tns: string,
  schema: CompiledSchema,
  messages: Map<string, { part: string; element: string } | null>,
): void {
  const parts = wsdlChildren(m, "part");
  const part = parts[0];
  if (parts.length !== 1 || !part || part.attributes.element === undefined) {
    throw new SchemaCompileError(
      `wsdl:message "${m.attributes.name ?? ""}": document/literal needs exactly one part with an element (no type= parts)`,
    );
  }
  const element = qname(part, "element");
  if (!schema.hasElement(element))
    throw new SchemaCompileError(
      `wsdl:message "${m.attributes.name ?? ""}": element ${element} is not declared`,
    );
  messages.set(clark(tns, m.attributes.name ?? ""), { part: part.attributes.name ?? "", element });
}

/** The element of the one part of the message `node` names. */
function messageElement(node: ParsedElement, messages: Messages): string {
  const name = qname(node, "message");
  const declared = messages.get(name);
  if (declared === null) throw REPORTED;
  if (!declared) throw new SchemaCompileError(`message ${name} is not declared`);
  return declared.element;
}

/** A `wsdl:binding` this node may serve: its SOAP version and the namespace of its extension elements. */
interface FoundBinding {
  version: SoapVersion;
  /** `http://schemas.xmlsoap.org/wsdl/soap12/` or `http://schemas.xmlsoap.org/wsdl/soap/`. */
  ns: string;
  /** How messages name the extension elements: `soap12` or `soap`. */
  prefix: string;
  element: ParsedElement;
}

/** A {@link FoundBinding} with its port type (undefined when it is missing) and operations. */
interface Binding extends FoundBinding {
  portType: ParsedElement | undefined;
  operations: ParsedElement[];
}

const SOAP_VERSIONS: readonly SoapVersion[] = ["1.2", "1.1"];

/**
 * The bindings of the first service port bound with SOAP 1.2 (`soap12:binding`) and of the first
 * bound with SOAP 1.1 (`soap:binding`, WSDL 1.1 §3.3), 1.2 first: the ones this node implements.
 * A binding over another transport (SOAP over TCP, JMS) is not this node's.
 */
function findBindings(root: ParsedElement, tns: string): FoundBinding[] {
  const bindings = new Map<string, ParsedElement>();
  for (const b of wsdlChildren(root, "binding")) bindings.set(clark(tns, b.attributes.name ?? ""), b);
  const found = new Map<SoapVersion, FoundBinding>();
  const otherTransports = new Set<string>();
  for (const service of wsdlChildren(root, "service")) {
    for (const port of wsdlChildren(service, "port")) {
      const b = bindings.get(qname(port, "binding"));
      if (!b)
        throw new SchemaCompileError(
          `wsdl:port "${port.attributes.name ?? ""}": its binding is not declared`,
        );
      const soapBinding = b.children.find(
        (c) =>
          c.localName === "binding" &&
          (c.namespace === SOAP12_BINDING_NS || c.namespace === SOAP11_BINDING_NS),
      );
      if (!soapBinding) continue;
      const version: SoapVersion = soapBinding.namespace === SOAP12_BINDING_NS ? "1.2" : "1.1";
      // WSDL 1.1 §3.3, wsdl11soap12 §3.3: the transport's URI; HTTP's is the one this node speaks.
      if (soapBinding.attributes.transport !== HTTP_TRANSPORT) {
        otherTransports.add(`${soapBinding.attributes.transport ?? "none"}`);
        continue;
      }
      if (!found.has(version)) {
        found.set(version, {
          version,
          ns: soapBinding.namespace,
          prefix: version === "1.2" ? "soap12" : "soap",
          element: b,
        });
      }
    }
  }
  if (found.size === 0) {
    throw new SchemaCompileError(
      otherTransports.size > 0
        ? `the WSDL's SOAP ports use the transport ${[...otherTransports].map((t) => `"${t}"`).join(", ")}; this node implements ${HTTP_TRANSPORT}`
        : "the WSDL has no wsdl:service port with a soap12:binding or soap:binding",
    );
  }
  return SOAP_VERSIONS.flatMap((v) => found.get(v) ?? []);
}

/** soap12:binding, soap:binding: document style only (wsdl11soap12 §3.3, WSDL 1.1 §3.3). */
function checkSoapBinding(binding: FoundBinding): void {
  const soapBinding = binding.element.children.find(
    (c) => c.namespace === binding.ns && c.localName === "binding",
  );
  if (soapBinding?.attributes.style !== undefined && soapBinding.attributes.style !== "document") {
    throw new SchemaCompileError(
      `${binding.prefix}:binding style="${soapBinding.attributes.style}" is not supported (document only)`,
    );
  }
}

/**
 * The operations handlers implement: the first binding's, then those only a later one has. An
 * operation both bind takes the same messages in each (one port type, or port types that agree):
 * one handler serves both.
 */
function handledOperations(
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
function findPortType(root: ParsedElement, tns: string, binding: ParsedElement): ParsedElement {
  const portTypes = new Map<string, ParsedElement>();
  for (const p of wsdlChildren(root, "portType")) portTypes.set(clark(tns, p.attributes.name ?? ""), p);
  const portType = portTypes.get(qname(binding, "type"));
  if (!portType) throw new SchemaCompileError("the binding's port type is not declared");
  return portType;
}

/** One binding operation joined with its port type operation. */
function readOperation(
  bop: ParsedElement,
  portType: ParsedElement,
  messages: Messages,
  binding: FoundBinding,
): ContractOperation {
  const name = bop.attributes.name ?? "";
  const op = wsdlChildren(portType, "operation").find((o) => o.attributes.name === name);
  if (!op) throw new SchemaCompileError(`binding operation "${name}" is not in the port type`);
  const soapOp = bop.children.find((c) => c.namespace === binding.ns && c.localName === "operation");
  const headers = readInputHeaders(bop, name, messages, binding);
  const input = wsdlChildren(op, "input")[0];
  const output = wsdlChildren(op, "output")[0];
  if (!input) {
    throw new SchemaCompileError(
      `operation "${name}": notification and solicit-response operations are not supported`,
    );
  }
  const faults: Record<string, string> = {};
  for (const f of wsdlChildren(op, "fault")) faults[f.attributes.name ?? ""] = messageElement(f, messages);
  return {
    name,
    soapAction: soapOp?.attributes.soapAction ?? "",
    input: messageElement(input, messages),
    output: output ? messageElement(output, messages) : undefined,
    faults,
    headers,
  };
}

/**
 * What the binding says of one operation, before any type is read: document style, and
 * soap12:body / fault / header of literal use only (wsdl11soap12 §3.4-§3.7; soap:body, soap:fault,
 * soap:header, WSDL 1.1 §3.5-§3.7).
 */
function checkBindingOperation(bop: ParsedElement, binding: FoundBinding): void {
  const name = bop.attributes.name ?? "";
  const { ns, prefix } = binding;
  const soapOp = bop.children.find((c) => c.namespace === ns && c.localName === "operation");
  if (soapOp?.attributes.style !== undefined && soapOp.attributes.style !== "document") {
    throw new SchemaCompileError(`operation "${name}": style="${soapOp.attributes.style}" is not supported`);
  }
  for (const io of bop.children) {
    for (const body of io.children) {
      if (body.namespace !== ns) continue;
      if (body.localName !== "body" && body.localName !== "fault" && body.localName !== "header") {
        throw new SchemaCompileError(`operation "${name}": ${prefix}:${body.localName} is not supported`);
      }
      for (const declaration of [body, ...headerFaults(body, ns)]) {
        if ((declaration.attributes.use ?? "literal") !== "literal") {
          throw new SchemaCompileError(
            `operation "${name}": ${prefix}:${declaration.localName} use="${declaration.attributes.use}" is not supported (literal only)`,
          );
        }
      }
    }
  }
}

/** The headerfault children of a soap12:header or soap:header (wsdl11soap12 §3.7, WSDL 1.1 §3.7). */
function headerFaults(node: ParsedElement, ns: string): ParsedElement[] {
  if (node.localName !== "header") return [];
  return node.children.filter((c) => c.namespace === ns && c.localName === "headerfault");
}

/**
 * The elements of the input's header blocks (soap12:header), in document order. Each
 * soap12:header, and each soap12:headerfault in one, must name a part of a declared message
 * (wsdl11soap12 §3.6, §3.7); a headerfault describes header blocks of faults, which this node
 * never sends, so it is checked and otherwise ignored.
 */
function readInputHeaders(
  bop: ParsedElement,
  name: string,
  messages: Messages,
  binding: FoundBinding,
): string[] {
  const headers: string[] = [];
  for (const io of bop.children) {
    for (const header of io.children) {
      if (header.namespace !== binding.ns || header.localName !== "header") continue;
      const element = declaredPart(header, name, messages, binding.prefix);
      for (const fault of headerFaults(header, binding.ns))
        declaredPart(fault, name, messages, binding.prefix);
      if (io.namespace === WSDL_NS && io.localName === "input") headers.push(element);
    }
  }
  return headers;
}

/** The element of the message part a header or headerfault names. */
function declaredPart(node: ParsedElement, operation: string, messages: Messages, prefix: string): string {
  const messageName = qname(node, "message");
  const declared = messages.get(messageName);
  if (declared === null) throw REPORTED;
  if (!declared || declared.part !== node.attributes.part) {
    throw new SchemaCompileError(
      `operation "${operation}": ${prefix}:${node.localName} names part "${node.attributes.part ?? ""}" of message ${messageName}, which is not declared`,
    );
  }
  return declared.element;
}

/** The body element routes a request to its operation: no two operations may take the same one. */
function checkRoutable(operations: readonly ContractOperation[]): void {
  const inputs = new Set<string>();
  for (const op of operations) {
    if (inputs.has(op.input)) {
      throw new SchemaCompileError(
        `two operations take ${op.input}: the body element could not route requests`,
      );
    }
    inputs.add(op.input);
  }
}

/** {@link Contract.render}: the WSDL or an imported XSD with its locations pointing at the endpoint. */
function renderer(wsdlText: string, schemaFiles: ReadonlyMap<string, string>): Contract["render"] {
  return (endpointUrl, xsd) => {
    const text = xsd === undefined ? wsdlText : schemaFiles.get(xsd);
    if (text === undefined) return undefined;
    const from = xsd === undefined ? "" : dirname(xsd);
    let out = text.replace(
      /(schemaLocation\s*=\s*)(["'])([^"']*)\2/g,
      (_all, pre: string, q: string, raw: string) => {
        // The attribute's value, as the loader resolved it (XML 1.0 §3.3.3): `a&amp;b.xsd` is a&b.xsd.
        const path = join(from, locationPath(unescapeAttribute(raw)))
          .split("\\")
          .join("/");
        // RFC 3986 §3.4, §2.1: the path percent-encoded in the query, so that a space, `+`, `&`,
        // `#` or `%` in a file name reaches ?xsd= as it is named (each segment, keeping `/`).
        const query = path.split("/").map(encodeURIComponent).join("/");
        return schemaFiles.has(path)
          ? `${pre}${q}${escapeXml(`${endpointUrl}?xsd=${query}`)}${q}`
          : `${pre}${q}${raw}${q}`;
      },
    );
    if (xsd === undefined) {
      out = out.replace(
        /(<[\w.-]+:address\b[^>]*\blocation\s*=\s*)(["'])[^"']*\2/g,
        (_all, pre: string, q: string) => `${pre}${q}${escapeXml(endpointUrl)}${q}`,
      );
    }
    return out;
  };
}

/**
 * The file path a relative `schemaLocation` names. It is an `xs:anyURI` (XML Schema Part 1
 * §4.2.1 include, §4.2.3 import), so its percent-encoded octets are UTF-8 (RFC 3986 §2.1, §2.5): `my%20types.xsd`
 * is the file `my types.xsd`. A `%` that starts no valid escape is kept as it is written.
 */
function locationPath(location: string): string {
  return location.replace(/(?:%[0-9A-Fa-f]{2})+/g, (escaped) => {
    try {
      return decodeURIComponent(escaped);
    } catch {
      return escaped;
    }
  });
}

/** An attribute value's text with its character and predefined entity references replaced. */
function unescapeAttribute(raw: string): string {
  return raw.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|lt|gt|amp|quot|apos);/g, (_all, ref: string) => {
    if (ref.startsWith("#x")) return String.fromCodePoint(Number.parseInt(ref.slice(2), 16));
    if (ref.startsWith("#")) return String.fromCodePoint(Number.parseInt(ref.slice(1), 10));
    return PREDEFINED_ENTITIES[ref] ?? "";
  });
}

const PREDEFINED_ENTITIES: Readonly<Record<string, string>> = {
  lt: "<",
  gt: ">",
  amp: "&",
  quot: '"',
  apos: "'",
};

/**
 * A WSDL or XSD file parsed; what is wrong with it is said of the file (its line and column when it
 * is not well-formed), never of a message.
 */
function parse(text: string, location: string, limits: ReturnType<typeof resolveLimits>): ParsedElement {
  try {
    return parseXmlDocument(text, limits);
  } catch (err) {
    if (!(err instanceof XmlError)) throw err;
    const position = err.position;
    if (position !== undefined) {
      throw new SchemaCompileError(
        `${location}:${position.line}:${position.column}: not well-formed XML: ${position.problem}`,
      );
    }
    const problem =
      err.kind === "dtd"
        ? "a document type declaration is not allowed (no DTD is read, so no entity is expanded)"
        : err.message.replace(/^The message\b/, "the document");
    throw new SchemaCompileError(`${location}: ${problem}`);
  }
}

/** Why a file could not be read, for a message: `ENOENT: no such file or directory`. */
function fileProblem(err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  const message = err instanceof Error ? err.message : String(err);
  return typeof code === "string"
    ? `${code}: ${message.replace(/^[A-Z]+: /, "").replace(/, \w+ '.*'$/, "")}`
    : message;
}

function wsdlChildren(node: ParsedElement, localName: string): ParsedElement[] {
  return node.children.filter((c) => c.namespace === WSDL_NS && c.localName === localName);
}
