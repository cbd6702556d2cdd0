import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join, normalize, relative, resolve } from "node:path";
import { escapeXml } from "@svc/errors";
import {
  type CompiledSchema,
  compileSchemas,
  type LongRepresentation,
  SchemaCompileError,
  type SchemaSource,
  XS_NS,
} from "./schema.js";
import { clark, type ParsedElement, parseXmlString, resolveLimits, resolveQName } from "./xml.js";

const WSDL_NS = "http://schemas.xmlsoap.org/wsdl/";
const SOAP12_BINDING_NS = "http://schemas.xmlsoap.org/wsdl/soap12/";
const SOAP11_BINDING_NS = "http://schemas.xmlsoap.org/wsdl/soap/";
const HTTP_TRANSPORT = "http://schemas.xmlsoap.org/soap/http";

/** One operation of the contract's SOAP 1.2 binding. */
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
   * WSDL 1.1 SOAP 1.2 binding §3.6), in document order: what clients generated from the WSDL may
   * send (credentials, say). Declaring a block does not make this node understand it (SOAP 1.2
   * Part 1 §2.4): `understoodHeaders` or the `authenticate` hook do.
   */
  headers: readonly string[];
}

/** A compiled WSDL 1.1 contract. */
export interface Contract {
  /** The WSDL's target namespace. */
  targetNamespace: string;
  /** Operations of the SOAP 1.2 binding, in document order. */
  operations: readonly ContractOperation[];
  /** The compiled XSD of the `wsdl:types` section and its imports. */
  schema: CompiledSchema;
  /** The WSDL text as loaded. */
  wsdlText: string;
  /** Imported schema documents by the relative path they are served under (`customer.xsd`). */
  schemaFiles: ReadonlyMap<string, string>;
  /**
   * Renders the WSDL (or an imported XSD when `xsd` is given) for the endpoint at `endpointUrl`:
   * the `soap12:address location` becomes `endpointUrl` and every `schemaLocation` points at
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
 * Loads and compiles a WSDL 1.1 contract (SOAP 1.2 binding, document/literal) and the XSDs it
 * imports, synchronously, at start-up. Anything the compiler does not support throws a
 * {@link SchemaCompileError} naming the construct and the file. `soap12:header` declarations are
 * checked (their message part must name a declared element) and listed per operation; extension
 * elements of other namespaces, such as a WS-Policy 1.5 `wsp:Policy` and its
 * `wsp:PolicyReference` (WS-PolicyAttachment 1.5 §4.1), are left to the clients that read them.
 *
 * @example
 * const contract = loadContract("contracts/customer.wsdl");
 * contract.operations.map((o) => o.name); // ["getCustomer", "createCustomer", ...]
 * @see https://www.w3.org/TR/2001/NOTE-wsdl-20010315
 * @see https://www.w3.org/Submission/wsdl11soap12/
 */
export function loadContract(wsdl: string, options: LoadContractOptions = {}): Contract {
  const limits = resolveLimits({
    maxBytes: 16 * 1024 * 1024,
    maxDepth: 128,
    maxElements: 1_000_000,
    maxAttributes: 256,
  });
  const isText = wsdl.trimStart().startsWith("<");
  const wsdlPath = isText ? join(resolve(options.baseDir ?? process.cwd()), "inline.wsdl") : resolve(wsdl);
  const baseDir = dirname(wsdlPath);
  const wsdlText = isText ? wsdl : readFileSync(wsdlPath, "utf8");
  const root = parse(wsdlText, isText ? "WSDL" : wsdlPath, limits);
  if (root.namespace !== WSDL_NS || root.localName !== "definitions") {
    throw new SchemaCompileError("the WSDL document element must be wsdl:definitions (WSDL 1.1)");
  }
  const tns = root.attributes.targetNamespace ?? "";

  // wsdl:types: inline schemas and, transitively, the documents they import or include.
  const sources: SchemaSource[] = [];
  const schemaFiles = new Map<string, string>();
  const seen = new Set<string>();
  const loadImports = (schema: ParsedElement, fromDir: string, location: string) => {
    for (const child of schema.children) {
      if (child.namespace !== XS_NS || (child.localName !== "import" && child.localName !== "include"))
        continue;
      const loc = child.attributes.schemaLocation;
      if (loc === undefined) {
        if (child.localName === "import" && child.attributes.namespace === XS_NS) continue;
        throw new SchemaCompileError(
          `${location}: xs:${child.localName} without schemaLocation cannot be resolved`,
        );
      }
      if (/^[a-z][a-z0-9+.-]*:/i.test(loc)) {
        throw new SchemaCompileError(
          `${location}: remote schemaLocation "${loc}" is not loaded; keep schemas next to the WSDL`,
        );
      }
      const file = resolve(fromDir, loc);
      const rel = relative(baseDir, file);
      if (rel.startsWith("..") || isAbsolute(rel)) {
        throw new SchemaCompileError(`${location}: schemaLocation "${loc}" is outside the WSDL's directory`);
      }
      if (seen.has(file)) continue;
      seen.add(file);
      const text = readFileSync(file, "utf8");
      const doc = parse(text, rel, limits);
      schemaFiles.set(normalize(rel).split("\\").join("/"), text);
      sources.push({ root: doc, location: rel });
      loadImports(doc, dirname(file), rel);
    }
  };
  const types = wsdlChildren(root, "types");
  for (const t of types) {
    for (const schema of t.children) {
      if (schema.namespace !== XS_NS || schema.localName !== "schema") {
        throw new SchemaCompileError(`wsdl:types: {${schema.namespace}}${schema.localName} is not supported`);
      }
      sources.push({ root: schema, location: "wsdl:types" });
      loadImports(schema, baseDir, "wsdl:types");
    }
  }
  const schema = compileSchemas(sources, options.longAs === undefined ? {} : { longAs: options.longAs });

  const qname = (node: ParsedElement, attr: string): string => {
    const raw = node.attributes[attr];
    const q = raw === undefined ? undefined : resolveQName(raw, node.scope);
    if (!q)
      throw new SchemaCompileError(
        `wsdl:${node.localName} "${node.attributes.name ?? ""}": ${attr} is missing or its prefix is undeclared`,
      );
    return clark(q.namespace, q.localName);
  };

  /** Message name → its one part (document/literal): the part's name and element. */
  const messages = new Map<string, { part: string; element: string }>();
  for (const m of wsdlChildren(root, "message")) {
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
  const message = (node: ParsedElement): string => {
    const name = qname(node, "message");
    const declared = messages.get(name);
    if (!declared) throw new SchemaCompileError(`message ${name} is not declared`);
    return declared.element;
  };

  const portTypes = new Map<string, ParsedElement>();
  for (const p of wsdlChildren(root, "portType")) portTypes.set(clark(tns, p.attributes.name ?? ""), p);
  const bindings = new Map<string, ParsedElement>();
  for (const b of wsdlChildren(root, "binding")) bindings.set(clark(tns, b.attributes.name ?? ""), b);

  // The first service port bound with SOAP 1.2 is the one this node implements.
  let binding: ParsedElement | undefined;
  let soap11Only = false;
  for (const service of wsdlChildren(root, "service")) {
    for (const port of wsdlChildren(service, "port")) {
      const b = bindings.get(qname(port, "binding"));
      if (!b)
        throw new SchemaCompileError(
          `wsdl:port "${port.attributes.name ?? ""}": its binding is not declared`,
        );
      const soapBinding = b.children.find((c) => c.localName === "binding");
      if (soapBinding?.namespace === SOAP11_BINDING_NS) soap11Only = true;
      if (soapBinding?.namespace === SOAP12_BINDING_NS && !binding) binding = b;
    }
  }
  if (!binding) {
    throw new SchemaCompileError(
      soap11Only
        ? "the WSDL has only SOAP 1.1 bindings; this node implements SOAP 1.2 (soap12:binding)"
        : "the WSDL has no wsdl:service port with a soap12:binding",
    );
  }
  const soapBinding = binding.children.find(
    (c) => c.namespace === SOAP12_BINDING_NS && c.localName === "binding",
  );
  if (soapBinding?.attributes.style !== undefined && soapBinding.attributes.style !== "document") {
    throw new SchemaCompileError(
      `soap12:binding style="${soapBinding.attributes.style}" is not supported (document only)`,
    );
  }
  if (soapBinding?.attributes.transport !== HTTP_TRANSPORT) {
    throw new SchemaCompileError(`soap12:binding transport must be ${HTTP_TRANSPORT}`);
  }
  const portType = portTypes.get(qname(binding, "type"));
  if (!portType) throw new SchemaCompileError("the binding's port type is not declared");

  const operations: ContractOperation[] = [];
  for (const bop of wsdlChildren(binding, "operation")) {
    const name = bop.attributes.name ?? "";
    const op = wsdlChildren(portType, "operation").find((o) => o.attributes.name === name);
    if (!op) throw new SchemaCompileError(`binding operation "${name}" is not in the port type`);
    const soapOp = bop.children.find((c) => c.namespace === SOAP12_BINDING_NS && c.localName === "operation");
    if (soapOp?.attributes.style !== undefined && soapOp.attributes.style !== "document") {
      throw new SchemaCompileError(
        `operation "${name}": style="${soapOp.attributes.style}" is not supported`,
      );
    }
    const headers: string[] = [];
    for (const io of bop.children) {
      for (const body of io.children) {
        if (
          body.namespace === SOAP12_BINDING_NS &&
          (body.localName === "body" || body.localName === "fault" || body.localName === "header")
        ) {
          if ((body.attributes.use ?? "literal") !== "literal") {
            throw new SchemaCompileError(
              `operation "${name}": use="${body.attributes.use}" is not supported (literal only)`,
            );
          }
          if (body.localName === "header") {
            // wsdl11soap12 §3.6: message and part name the element of the header block.
            const messageName = qname(body, "message");
            const declared = messages.get(messageName);
            if (!declared || declared.part !== body.attributes.part) {
              throw new SchemaCompileError(
                `operation "${name}": soap12:header names part "${body.attributes.part ?? ""}" of message ${messageName}, which is not declared`,
              );
            }
            if (io.namespace === WSDL_NS && io.localName === "input") headers.push(declared.element);
          }
        } else if (body.namespace === SOAP12_BINDING_NS) {
          throw new SchemaCompileError(`operation "${name}": soap12:${body.localName} is not supported`);
        }
      }
    }
    const input = wsdlChildren(op, "input")[0];
    const output = wsdlChildren(op, "output")[0];
    if (!input) {
      throw new SchemaCompileError(
        `operation "${name}": notification and solicit-response operations are not supported`,
      );
    }
    const faults: Record<string, string> = {};
    for (const f of wsdlChildren(op, "fault")) faults[f.attributes.name ?? ""] = message(f);
    operations.push({
      name,
      soapAction: soapOp?.attributes.soapAction ?? "",
      input: message(input),
      output: output ? message(output) : undefined,
      faults,
      headers,
    });
  }
  const inputs = new Set<string>();
  for (const op of operations) {
    if (inputs.has(op.input)) {
      throw new SchemaCompileError(
        `two operations take ${op.input}: the body element could not route requests`,
      );
    }
    inputs.add(op.input);
  }

  const render = (endpointUrl: string, xsd?: string): string | undefined => {
    const text = xsd === undefined ? wsdlText : schemaFiles.get(xsd);
    if (text === undefined) return undefined;
    const from = xsd === undefined ? "" : dirname(xsd);
    let out = text.replace(
      /(schemaLocation\s*=\s*)(["'])([^"']*)\2/g,
      (_all, pre: string, q: string, loc: string) => {
        const path = join(from, loc).split("\\").join("/");
        return schemaFiles.has(path)
          ? `${pre}${q}${escapeXml(`${endpointUrl}?xsd=${path}`)}${q}`
          : `${pre}${q}${loc}${q}`;
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

  return { targetNamespace: tns, operations, schema, wsdlText, schemaFiles, render };
}

function parse(text: string, location: string, limits: ReturnType<typeof resolveLimits>): ParsedElement {
  try {
    return parseXmlString(text, limits);
  } catch (err) {
    throw new SchemaCompileError(`${location}: ${(err as Error).message}`);
  }
}

function wsdlChildren(node: ParsedElement, localName: string): ParsedElement[] {
  return node.children.filter((c) => c.namespace === WSDL_NS && c.localName === localName);
}
