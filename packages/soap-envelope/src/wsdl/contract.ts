import { escapeXml, fallbackLogger } from "@svc/errors";
import {
  ABSOLUTE_URI,
  checkLongAs,
  checkObject,
  checkSchemaLocations,
  checkStrict,
  hasMembers,
  optionError,
} from "../options.js";
import {
  type ContractDefect,
  compileContractSchemas,
  type ExpectedGlobal,
  SchemaCompileError,
  Tolerance,
} from "../xsd/schema.js";
import { DeclaredElements } from "./body-shape.js";
import {
  type Binding,
  type Contract,
  type ContractOperation,
  type DefectLogger,
  type Definitions,
  type LoadContractOptions,
  qname,
  type RemoteCopies,
  type SoapVersion,
  wsdlChildren,
} from "./contract-model.js";
import { memoryDocuments } from "./memory-documents.js";
import { dirname, join } from "./posix-path.js";
import {
  bindingStyle,
  checkBindingOperation,
  checkRoutable,
  findBindings,
  findPortType,
  handledOperations,
  readOperation,
  SOAP_VERSIONS,
} from "./wsdl-bindings.js";
import {
  importDefinitions,
  loadSchemaSources,
  locationPath,
  mainDefinitions,
  readWsdl,
  servedCopy,
  unescapeAttribute,
} from "./wsdl-documents.js";
import { readMessages } from "./wsdl-messages.js";

export type { ContractDefect, DefectClass } from "../xsd/schema.js";
export {
  type Contract,
  type ContractOperation,
  type DefectLogger,
  type LoadContractOptions,
  SOAP_ENCODINGS,
  type SoapVersion,
} from "./contract-model.js";

/**
 * Loads and compiles a WSDL 1.1 contract (a SOAP 1.2 binding, a SOAP 1.1 binding or both,
 * document or rpc style, literal or SOAP-encoded use), the WSDLs it imports (`wsdl:import` of local files) and the
 * XSDs it imports, synchronously, at start-up. Anything the compiler does
 * not support throws a {@link SchemaCompileError} naming the construct and the file. A binding of
 * one version that cannot be served is not served when the other version's can be (the contract
 * loads with {@link Contract.versions} naming the one); its problems block loading only when no
 * binding can be served. `soap12:header` / `soap:header` declarations are
 * checked (their message part must be declared) and listed per operation; extension
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
  checkObject(options, "options", [
    "documents",
    "baseDir",
    "longAs",
    "importRoot",
    "schemaLocations",
    "strict",
    "logger",
  ]);
  checkStrict(options.strict, "strict", "loadContract: strict");
  if (options.logger !== undefined && !hasMembers(options.logger, { error: "function" }))
    throw optionError(
      "logger",
      options.logger,
      "an object with an error(obj, msg) method (and warn(obj, msg), used when present)",
      "loadContract: logger",
    );
  const tolerance = new Tolerance(options.strict !== false);
  const documents =
    options.documents === undefined
      ? undefined
      : memoryDocuments(options.documents, "documents", "loadContract: documents");
  if (options.baseDir !== undefined && (typeof options.baseDir !== "string" || options.baseDir === "")) {
    throw optionError("baseDir", options.baseDir, "a directory path", "loadContract: baseDir");
  }
  if (
    options.importRoot !== undefined &&
    (typeof options.importRoot !== "string" || options.importRoot === "")
  ) {
    throw optionError("importRoot", options.importRoot, "a directory path", "loadContract: importRoot");
  }
  checkLongAs(options.longAs, "longAs", "loadContract: longAs");
  const schemaLocations = checkSchemaLocations(
    options.schemaLocations,
    "schemaLocations",
    "loadContract: schemaLocations",
  );
  const doc = readWsdl(wsdl, options, schemaLocations, documents, tolerance);
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
  // Its problems name their document: the WSDL, or the imported file.
  const imported = collect(() => importDefinitions(doc), "");
  const defs = imported?.definitions ?? [mainDefinitions(doc)];
  const found = collect(() => findBindings(defs, tolerance), "");
  // The binding's problems, per version, before any type is read.
  const served: { version: SoapVersion; binding: Binding; problems: string[] }[] = [];
  for (const binding of found ?? []) {
    const before = problems.length;
    const portType = collect(() => {
      bindingStyle(binding);
      return findPortType(defs, binding.element, tolerance);
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
  const loaded = collect(() => loadSchemaSources(doc, defs, imported?.schemas ?? []), "");
  const load = { tolerance, expected: tolerance.strict ? [] : partElements(defs) };
  const schema = loaded && collect(() => compileContractSchemas(loaded.sources, options.longAs, load), "");
  const messages = schema && readMessages(defs, schema, collect, tolerance);
  const byVersion: Partial<Record<SoapVersion, ContractOperation[]>> = {};
  const declared = new DeclaredElements();
  const notServed: { operation: string; reason: string }[] = [];
  if (messages && schema) {
    for (const { version, binding } of bindings) {
      const portType = binding.portType;
      if (!portType) continue;
      const operations: ContractOperation[] = [];
      for (const bop of binding.operations) {
        const op = collect(() =>
          readOperation(bop, portType, messages, binding, schema, declared, tolerance),
        );
        if (op && "reason" in op) {
          if (!notServed.some((n) => n.operation === op.operation)) notServed.push(op);
        } else if (op) operations.push(op);
      }
      collect(() => checkRoutable(operations));
      byVersion[version] = operations;
    }
  }
  const operations = collect(() => handledOperations(byVersion)) ?? [];
  // The elements rpc wrappers and Bodies of several parts decode as, compiled with the contract's
  // schemas they refer to (a second compile, at start-up, only for contracts that need one).
  const extra = declared.sources(doc.limits);
  const compiled =
    schema && loaded && extra.length > 0 && problems.length === 0
      ? collect(() => compileContractSchemas([...loaded.sources, ...extra], options.longAs, load), "")
      : schema;
  // Imported WSDLs are served next to the schemas, their locations rewritten as theirs are.
  for (const [path, text] of imported?.files ?? []) loaded?.schemaFiles.set(path, text);
  if (problems.length > 0 || !schema || !compiled || !loaded) {
    throw new SchemaCompileError(
      problems.length === 1
        ? (problems[0] as string)
        : `the contract cannot be loaded, ${problems.length} problems:\n- ${problems.join("\n- ")}`,
      problems,
    );
  }
  logDefects(tolerance.defects, options.logger ?? fallbackLogger);
  return {
    targetNamespace: doc.tns,
    operations,
    defects: tolerance.defects,
    versions: SOAP_VERSIONS.filter((v) => byVersion[v] !== undefined),
    notServed,
    bindings: byVersion,
    schema: compiled,
    wsdlText: doc.wsdlText,
    schemaFiles: loaded.schemaFiles,
    render: renderer(doc.wsdlText, loaded.schemaFiles, doc.remote),
  };
}

/**
 * The elements the WSDL's message parts name (WSDL 1.1 §2.3), for the stand-ins a tolerant load
 * declares when no schema does; a name whose prefix is not declared is left to readMessages.
 */
function partElements(defs: readonly Definitions[]): ExpectedGlobal[] {
  const out: ExpectedGlobal[] = [];
  for (const { root } of defs) {
    for (const m of wsdlChildren(root, "message")) {
      for (const part of wsdlChildren(m, "part")) {
        if (part.attributes.element === undefined || part.attributes.type !== undefined) continue;
        let name: string;
        try {
          name = qname(part, "element");
        } catch {
          continue;
        }
        out.push({
          kind: "element",
          name,
          node: part,
          problem: `wsdl:message "${m.attributes.name ?? ""}": element ${name} is not declared`,
        });
      }
    }
  }
  return out;
}

/** Each defect a tolerant load passed over, one line each through the logger's `warn` (else `error`). */
function logDefects(defects: readonly ContractDefect[], logger: DefectLogger): void {
  for (const defect of defects) {
    const entry = {
      defect: defect.class,
      file: defect.file,
      line: defect.line,
      problem: defect.problem,
      assumed: defect.assumed,
    };
    const message = `@svc/soap-envelope: the contract's defect is passed over (strict: false): ${defect.assumed}`;
    if (typeof logger.warn === "function") logger.warn(entry, message);
    else logger.error(entry, message);
  }
}

/** {@link Contract.render}: the WSDL or an imported XSD with its locations pointing at the endpoint. */
function renderer(
  wsdlText: string,
  schemaFiles: ReadonlyMap<string, string>,
  remote: RemoteCopies,
): Contract["render"] {
  return (endpointUrl, xsd) => {
    const text = xsd === undefined ? wsdlText : schemaFiles.get(xsd);
    if (text === undefined) return undefined;
    const from = xsd === undefined ? "" : dirname(xsd);
    const baseUrl = xsd === undefined ? undefined : remote.urls.get(xsd);
    let out = text.replace(
      /(schemaLocation\s*=\s*|<(?:[\w.-]+:)?import\b[^>]*?\slocation\s*=\s*)(["'])([^"']*)\2/g,
      (_all, pre: string, q: string, raw: string) => {
        // The attribute's value, as the loader resolved it (XML 1.0 §3.3.3): `a&amp;b.xsd` is a&b.xsd.
        const value = unescapeAttribute(raw);
        const path =
          baseUrl !== undefined || ABSOLUTE_URI.test(value)
            ? servedCopy(remote, value, baseUrl)
            : join(from, locationPath(value).split("\\").join("/"));
        if (path === undefined) return `${pre}${q}${raw}${q}`;
        // RFC 3986 §3.4, §2.1: the path percent-encoded in the query, so that a space, `+`, `&`,
        // `#` or `%` in a file name reaches ?xsd= as it is named (each segment, keeping `/`).
        const query = path.split("/").map(encodeURIComponent).join("/");
        return schemaFiles.has(path)
          ? `${pre}${q}${escapeXml(`${endpointUrl}?xsd=${query}`)}${q}`
          : `${pre}${q}${raw}${q}`;
      },
    );
    if (xsd === undefined || xsd.endsWith(".wsdl")) {
      out = out.replace(
        /(<[\w.-]+:address\b[^>]*\blocation\s*=\s*)(["'])[^"']*\2/g,
        (_all, pre: string, q: string) => `${pre}${q}${escapeXml(endpointUrl)}${q}`,
      );
    }
    return out;
  };
}
