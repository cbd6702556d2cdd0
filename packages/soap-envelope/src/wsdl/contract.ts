import { dirname, isAbsolute, join, normalize, relative, resolve, sep } from "node:path";
import { escapeXml } from "@svc/errors";
import { optionError as codedOptionError } from "@svc/kernel/internal";
import { ABSOLUTE_URI, checkLongAs, checkObject, checkSchemaLocations, optionError } from "../options.js";
import {
  clark,
  type ParsedElement,
  parseXmlDocument,
  resolveLimits,
  resolveQName,
  XmlError,
} from "../xml/reader.js";
import { builtinSchemaText } from "../xsd/builtin-docs.js";
import { isBuiltin } from "../xsd/builtins.js";
import { TYPE_NAMES } from "../xsd/model.js";
import {
  type CompiledSchema,
  compileSchemas,
  type LongRepresentation,
  SchemaCompileError,
  type SchemaSource,
  schemaComponents,
  XS_NS,
} from "../xsd/schema.js";
import { readXmlFile } from "./files.js";

const WSDL_NS = "http://schemas.xmlsoap.org/wsdl/";
const SOAP12_BINDING_NS = "http://schemas.xmlsoap.org/wsdl/soap12/";
const SOAP11_BINDING_NS = "http://schemas.xmlsoap.org/wsdl/soap/";
/**
 * The transports of SOAP over HTTP a binding may name: WSDL 1.1 §3.3's, and the SOAP 1.2 HTTP
 * binding's own name (SOAP 1.2 Part 2 §7), which contracts such as WS-Discovery's and Apache CXF's
 * SOAP 1.2 samples give.
 * @see https://www.w3.org/TR/soap12-part2/#soapinhttp
 */
const HTTP_TRANSPORTS: readonly string[] = [
  "http://schemas.xmlsoap.org/soap/http",
  "http://www.w3.org/2003/05/soap/bindings/HTTP/",
];

/** A SOAP version a contract's binding speaks: `"1.1"` (W3C Note, 2000) or `"1.2"` (W3C Recommendation). */
export type SoapVersion = "1.1" | "1.2";

/** One operation of one of the contract's SOAP bindings. */
export interface ContractOperation {
  /** The operation's name in the port type (`getCustomer`). */
  name: string;
  /** The binding's `soapAction`, `""` when none. */
  soapAction: string;
  /**
   * The binding's style for the operation (WSDL 1.1 §3.4, §3.5): `"document"`, the Body holds the
   * message parts; `"rpc"`, a wrapper element named after the operation holds one accessor per part.
   */
  style: "document" | "rpc";
  /**
   * How the messages' parts are written (WSDL 1.1 §3.5 `use`): `"literal"`, as the schema
   * declares them; `"encoded"`, by the SOAP encoding of the binding's version (SOAP 1.1 §5, SOAP
   * 1.2 Part 2 §3): accessors typed by `xsi:type`, SOAP-ENC arrays, multi-reference values.
   */
  use: "literal" | "encoded";
  /**
   * Clark name of the element a request decodes as, the handler's payload: the one part's element
   * (document style, one `element=` part); the wrapper `{soap:body namespace}operation` (rpc style);
   * an element the loader declares for the Body's content otherwise (document style with `type=`
   * parts, several parts or none), whose children are the parts.
   */
  input: string;
  /**
   * Clark name of the element a response encodes from (as {@link ContractOperation.input}, the
   * rpc wrapper being `operationResponse`); undefined for a one-way operation (WSDL 1.1 §2.4.1).
   */
  output: string | undefined;
  /**
   * Clark names of the request Body's children, in order: `[input]` when the Body holds that one
   * element, each part's element (or its name, unqualified, for a `type=` part) when the Body holds
   * the parts themselves, `[]` for an empty Body.
   */
  inputBody: readonly string[];
  /** The response Body's children, as {@link ContractOperation.inputBody}; undefined for a one-way operation. */
  outputBody: readonly string[] | undefined;
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
  /**
   * Operations of the served bindings this node does not serve, with why: notification and
   * solicit-response operations (WSDL 1.1 §2.4.3, §2.4.4), which the endpoint would have to send
   * on its own initiative; HTTP request-response carries only one-way and request-response
   * operations (WSDL 1.1 §2.4: "WSDL only defines bindings for the One-way and Request-response
   * primitives"). Handlers are neither needed nor accepted for them.
   */
  notServed: readonly { operation: string; reason: string }[];
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
  /**
   * The folder the contract's imports may read from (`wsdl:import`, `xs:import`, `xs:include`),
   * which holds the WSDL's folder: the WSDL's own folder by default. A parent of it lets contracts
   * share schemas kept in a sibling folder (`schemaLocation="../common/types.xsd"`). Nothing outside
   * it is read, and every file read is served to clients (`?xsd=`), so it names a folder of
   * contracts only.
   * @default the WSDL's folder (`baseDir` for a WSDL given as text)
   */
  importRoot?: string;
  /**
   * Local copies of the documents a contract imports by URL (`xs:import`, `xs:include` or
   * `wsdl:import` with an `http:` or `https:` location), by that URL: `{ "https://example.com/types.xsd":
   * "contracts/vendor/types.xsd" }`. Nothing is fetched, at start-up or later: an import by URL
   * with no entry here is refused, naming the URL. A relative location inside such a copy resolves
   * against its URL (RFC 3986 §5), so the copies of a remote tree are named here one by one. Each
   * file is read from inside `importRoot` and served under its path (`?xsd=`), and the served
   * documents name it there instead of the URL. Relative paths resolve against `process.cwd()`.
   * @default {}
   */
  schemaLocations?: Readonly<Record<string, string>>;
}

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
  checkObject(options, "options", ["baseDir", "longAs", "importRoot", "schemaLocations"]);
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
  const doc = readWsdl(wsdl, options, schemaLocations);
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
  const found = collect(() => findBindings(defs), "");
  // The binding's problems, per version, before any type is read.
  const served: { version: SoapVersion; binding: Binding; problems: string[] }[] = [];
  for (const binding of found ?? []) {
    const before = problems.length;
    const portType = collect(() => {
      bindingStyle(binding);
      return findPortType(defs, binding.element);
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
  const schema =
    loaded &&
    collect(
      () => compileSchemas(loaded.sources, options.longAs === undefined ? {} : { longAs: options.longAs }),
      "",
    );
  const messages = schema && readMessages(defs, schema, collect);
  const byVersion: Partial<Record<SoapVersion, ContractOperation[]>> = {};
  const declared = new DeclaredElements();
  const notServed: { operation: string; reason: string }[] = [];
  if (messages && schema) {
    for (const { version, binding } of bindings) {
      const portType = binding.portType;
      if (!portType) continue;
      const operations: ContractOperation[] = [];
      for (const bop of binding.operations) {
        const op = collect(() => readOperation(bop, portType, messages, binding, schema, declared));
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
      ? collect(
          () =>
            compileSchemas(
              [...loaded.sources, ...extra],
              options.longAs === undefined ? {} : { longAs: options.longAs },
            ),
          "",
        )
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
  return {
    targetNamespace: doc.tns,
    operations,
    versions: SOAP_VERSIONS.filter((v) => byVersion[v] !== undefined),
    notServed,
    bindings: byVersion,
    schema: compiled,
    wsdlText: doc.wsdlText,
    schemaFiles: loaded.schemaFiles,
    render: renderer(doc.wsdlText, loaded.schemaFiles, doc.remote),
  };
}

/** The WSDL document as read: its text, parsed root and where relative imports resolve from. */
interface WsdlDocument {
  /** How problems name the document: its path as given, or `WSDL` for text. */
  location: string;
  /** Its absolute path (`inline.wsdl` in `baseDir` for text). */
  path: string;
  wsdlText: string;
  root: ParsedElement;
  baseDir: string;
  /** The folder imports may read from: `baseDir` or a folder holding it (`importRoot`). */
  importRoot: string;
  tns: string;
  limits: ReturnType<typeof resolveLimits>;
  /** The `schemaLocations` option: normalised URL → absolute path of its local copy. */
  schemaLocations: ReadonlyMap<string, string>;
  /** The copies read for URLs: each one's served path by URL, and URL by served path. */
  remote: RemoteCopies;
}

/** The local copies read for documents imported by URL, as they are served. */
interface RemoteCopies {
  /** Normalised URL → the copy's served path. */
  served: Map<string, string>;
  /** Served path → the URL it stands for: relative locations inside it resolve against that. */
  urls: Map<string, string>;
}

/**
 * One `wsdl:definitions`: the WSDL's own, then those it imports (`wsdl:import`, WSDL 1.1 §2.1.1),
 * each naming its components in its own target namespace.
 */
interface Definitions {
  root: ParsedElement;
  /** The document's text. */
  text: string;
  tns: string;
  /** How problems name the document: the WSDL's location, or an imported file's path from its folder. */
  location: string;
  /** Where its relative locations resolve from: its folder, or the URL its local copy stands for. */
  base: string;
}

/** One `wsdl:part`: its name and either the element or the type it refers to (WSDL 1.1 §2.3). */
interface Part {
  name: string;
  /** Clark name of the part's element (`element=`). */
  element?: string;
  /** Clark name of the part's type (`type=`). */
  type?: string;
}

/** Message name → its parts, in document order; null when refused. */
type Messages = ReadonlyMap<string, { name: string; parts: Part[] } | null>;

/** Thrown for a construct that names a message already reported: nothing more to say. */
const REPORTED = new SchemaCompileError("reported with the message it names", []);

/** Reads and parses the WSDL (a path, or the document's text) and checks its document element. */
function readWsdl(
  wsdl: string,
  options: LoadContractOptions,
  schemaLocations: ReadonlyMap<string, string>,
): WsdlDocument {
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
  const baseDir = dirname(wsdlPath);
  const importRoot = options.importRoot === undefined ? baseDir : resolve(options.importRoot);
  if (outside(importRoot, baseDir)) {
    throw optionError(
      "importRoot",
      options.importRoot,
      `a folder holding the WSDL's folder ${baseDir}`,
      "loadContract: importRoot",
    );
  }
  return {
    location,
    path: wsdlPath,
    wsdlText,
    root,
    baseDir,
    importRoot,
    tns: root.attributes.targetNamespace ?? "",
    limits,
    schemaLocations: new Map([...schemaLocations].map(([url, file]) => [url, resolve(file)])),
    remote: { served: new Map(), urls: new Map() },
  };
}

/** wsdl:types: inline schemas and, transitively, the documents they import or include. */
function loadSchemaSources(
  doc: WsdlDocument,
  defs: readonly Definitions[],
  importedSchemas: readonly ImportedSchema[],
): { sources: SchemaSource[]; schemaFiles: Map<string, string> } {
  const sources: SchemaSource[] = [];
  const schemaFiles = new Map<string, string>();
  const seen = new Set<string>();
  /** Each file read, by absolute path: its targetNamespace, absent as undefined. */
  const namespaces = new Map<string, string | undefined>();
  // `tns`: the schema's targetNamespace, the one a document it includes without one takes.
  const loadImports = (schema: ParsedElement, base: string, location: string, tns: string) => {
    for (const child of schema.children) {
      const found = importedFile(child, base, location, doc);
      if (found === undefined) continue;
      const { file } = found;
      const included = child.localName === "include";
      // A document included into two namespaces is two sets of components (Part 1 §4.2.1).
      const key = included ? `${file}\n${tns}` : file;
      if (seen.has(key)) {
        if (!included) checkImportedNamespace(child, namespaces.get(file), location);
        continue;
      }
      seen.add(key);
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
      namespaces.set(file, imported.attributes.targetNamespace);
      if (!included) checkImportedNamespace(child, imported.attributes.targetNamespace, location);
      schemaFiles.set(servedPath(rel), text);
      if (found.url !== undefined) remember(doc.remote, found.url, servedPath(rel));
      sources.push({ root: imported, location: rel, ...(included ? { includedInto: tns } : {}) });
      loadImports(imported, found.base, rel, imported.attributes.targetNamespace ?? (included ? tns : ""));
    }
  };
  for (const def of defs) {
    for (const t of wsdlChildren(def.root, "types")) {
      for (const schema of t.children) {
        if (schema.namespace !== XS_NS || schema.localName !== "schema") {
          throw new SchemaCompileError(
            `${def.location} wsdl:types: {${schema.namespace}}${schema.localName} is not supported`,
          );
        }
        sources.push({ root: schema, location: `${def.location} wsdl:types` });
        loadImports(schema, def.base, `${def.location} wsdl:types`, schema.attributes.targetNamespace ?? "");
      }
    }
  }
  // An XSD a wsdl:import names (WSDL 1.1 §2.1.1 shows one) is a schema of the contract.
  for (const imported of importedSchemas) {
    if ("error" in imported) throw imported.error;
    const { root, file, text, base } = imported;
    if (seen.has(file)) continue;
    seen.add(file);
    const rel = relative(doc.baseDir, file);
    schemaFiles.set(servedPath(rel), text);
    sources.push({ root, location: rel });
    loadImports(root, base, rel, root.attributes.targetNamespace ?? "");
  }
  return { sources, schemaFiles };
}

/**
 * An `xs:import`'s `namespace` is the imported document's `targetNamespace` (XML Schema Part 1
 * §4.2.3, Import Constraints and Semantics, clause 3.1): a client reading the served schemas
 * refuses a mismatch (zeep does), so the contract is refused here rather than served. An import
 * without `namespace` of a document that has one (clause 3.2) is taken, as node-soap and zeep
 * take it: the document's own targetNamespace names its components.
 * @see https://www.w3.org/TR/xmlschema-1/#src-import
 */
function checkImportedNamespace(child: ParsedElement, targetNamespace: string | undefined, location: string) {
  const expected = child.attributes.namespace;
  if (expected === undefined || expected === targetNamespace) return;
  const has =
    targetNamespace === undefined ? "has no targetNamespace" : `has targetNamespace="${targetNamespace}"`;
  throw new SchemaCompileError(
    `${location}: xs:import namespace="${expected}" names schemaLocation="${child.attributes.schemaLocation}", which ${has} (XML Schema Part 1 §4.2.3: the two must be the same)`,
  );
}

/** An XSD a `wsdl:import` names, parsed, or what is wrong with it. */
type ImportedSchema =
  | { root: ParsedElement; file: string; text: string; base: string }
  | { error: SchemaCompileError; file: string; text: string };

/** A file's path from the WSDL's folder as it is served (`?xsd=`): `/`-separated. */
function servedPath(rel: string): string {
  return normalize(rel).split("\\").join("/");
}

/** The WSDL's own definitions. */
function mainDefinitions(doc: WsdlDocument): Definitions {
  return { root: doc.root, text: doc.wsdlText, tns: doc.tns, location: doc.location, base: doc.baseDir };
}

/**
 * The WSDL's definitions and, transitively, those its `wsdl:import`s name (WSDL 1.1 §2.1.1): local
 * files in the WSDL's folder, each read once; an imported XSD joins the schemas. Each imported
 * document keeps its own target namespace for the names it defines (WSDL 1.1 §2.1); the import's
 * `namespace` is a hint WS-I BP R2005 asks to agree with it, not checked here. The imported WSDLs
 * are served as the XSDs are (`?xsd=sub.wsdl`).
 */
function importDefinitions(doc: WsdlDocument): {
  definitions: Definitions[];
  schemas: ImportedSchema[];
  files: Map<string, string>;
} {
  const definitions: Definitions[] = [mainDefinitions(doc)];
  const schemas: ImportedSchema[] = [];
  const files = new Map<string, string>();
  const seen = new Set<string>([doc.path]);
  for (let i = 0; i < definitions.length; i++) {
    const def = definitions[i] as Definitions;
    for (const imp of wsdlChildren(def.root, "import")) {
      const loc = imp.attributes.location;
      if (loc === undefined || loc === "") {
        throw new SchemaCompileError(`${def.location}: wsdl:import without location cannot be resolved`);
      }
      const { file, base, url } = locate(loc, def.base, doc, {
        remote: `wsdl:import of the remote location "${loc}"`,
        local: `wsdl:import location "${loc}"`,
        location: def.location,
      });
      const rel = relative(doc.baseDir, file);
      if (seen.has(file)) continue;
      seen.add(file);
      let text: string;
      try {
        text = readXmlFile(file);
      } catch (err) {
        throw new SchemaCompileError(
          `${def.location}: wsdl:import location="${loc}" names ${file}, which cannot be read (${fileProblem(err)})`,
        );
      }
      let root: ParsedElement;
      try {
        root = parse(text, rel, doc.limits);
      } catch (err) {
        // Said with the types (loadSchemaSources), after the binding's problems, as for an XSD.
        if (!(err instanceof SchemaCompileError)) throw err;
        schemas.push({ error: err, file, text });
        continue;
      }
      if (url !== undefined) remember(doc.remote, url, servedPath(rel));
      if (root.namespace === XS_NS && root.localName === "schema") {
        schemas.push({ root, file, text, base });
        continue;
      }
      if (root.namespace !== WSDL_NS || root.localName !== "definitions") {
        throw new SchemaCompileError(
          `${rel}: a wsdl:import names a document whose element is {${root.namespace}}${root.localName}, neither wsdl:definitions nor xs:schema`,
        );
      }
      files.set(servedPath(rel), text);
      definitions.push({
        root,
        text,
        tns: root.attributes.targetNamespace ?? "",
        location: rel,
        base,
      });
    }
  }
  return { definitions, schemas, files };
}

/**
 * The file an `xs:import` / `xs:include` child points at; undefined for any other child and for
 * the built-in XSD namespace. A remote location without a copy in `schemaLocations` and a path
 * outside `importRoot` throw.
 */
function importedFile(
  child: ParsedElement,
  base: string,
  location: string,
  doc: WsdlDocument,
): Located | undefined {
  if (child.namespace !== XS_NS || (child.localName !== "import" && child.localName !== "include"))
    return undefined;
  const loc = child.attributes.schemaLocation;
  if (loc === undefined) {
    // An import by namespace alone: the schema compiler resolves it (a sibling schema, or one
    // it knows), xsd/compile.ts.
    if (child.localName === "import") return undefined;
    // Part 1 §4.2.1: schemaLocation is required on xs:include; no other attribute names the file.
    const named = Object.keys(child.attributes).filter((k) => k !== "id" && !k.startsWith("{"));
    throw new SchemaCompileError(
      `${location}: xs:include without schemaLocation cannot be resolved (XML Schema Part 1 §4.2.1 requires it${named.length > 0 ? `; ${named.map((k) => `${k}=`).join(", ")} is not an attribute of xs:include` : ""})`,
    );
  }
  if (ABSOLUTE_URI.test(loc)) {
    // A namespace every SOAP toolkit knows (SOAP-ENC, xml:) is built in: its remote copy is not needed.
    const ns = child.attributes.namespace;
    if (child.localName === "import" && ns !== undefined && builtinSchemaText(ns) !== undefined)
      return undefined;
  }
  return locate(loc, base, doc, {
    remote: `remote schemaLocation "${loc}"`,
    local: `schemaLocation "${loc}"`,
    location,
  });
}

/** Where an import's location is read from, and the base of the locations inside it. */
interface Located {
  file: string;
  /** The file's folder, or the URL it stands for. */
  base: string;
  /** The normalised URL the file is the local copy of, for a remote location. */
  url?: string;
}

/**
 * The file a location names: a path relative to `base` (a folder), or, for an absolute URL or
 * any location inside a document read for a URL (RFC 3986 §5.2: resolved against that URL), the
 * local copy `schemaLocations` names for it; never fetched. The file must be inside `importRoot`.
 */
function locate(
  loc: string,
  base: string,
  doc: WsdlDocument,
  said: { remote: string; local: string; location: string },
): Located {
  const baseUrl = ABSOLUTE_URI.test(base) ? base : undefined;
  if (baseUrl === undefined && !ABSOLUTE_URI.test(loc)) {
    const file = resolve(base, locationPath(loc));
    if (outside(doc.importRoot, file)) {
      throw new SchemaCompileError(`${said.location}: ${said.local} is outside ${rootName(doc)}`);
    }
    return { file, base: dirname(file) };
  }
  let url: string;
  try {
    url = new URL(loc, baseUrl).href;
  } catch {
    throw new SchemaCompileError(`${said.location}: ${said.local} is not a URI reference (RFC 3986 §4.1)`);
  }
  const file = doc.schemaLocations.get(url);
  if (file === undefined) {
    throw new SchemaCompileError(
      `${said.location}: ${said.remote} is not fetched: name a local copy of ${url} in the schemaLocations option`,
    );
  }
  if (outside(doc.importRoot, file)) {
    throw new SchemaCompileError(
      `${said.location}: ${said.local}: the schemaLocations option names ${file} for ${url}, which is outside ${rootName(doc)}`,
    );
  }
  return { file, base: url, url };
}

/** Records that the copy served as `served` stands for `url`. */
function remember(remote: RemoteCopies, url: string, served: string): void {
  remote.served.set(url, served);
  remote.urls.set(served, url);
}

/**
 * Whether `path` is outside the folder `root`: the relative path climbs (`..` as a whole
 * segment; `..shared.xsd` is a file in it) or is on another drive.
 */
function outside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel);
}

/** How a problem names the folder imports may read from. */
function rootName(doc: WsdlDocument): string {
  return doc.importRoot === doc.baseDir
    ? "the WSDL's directory (the importRoot option names a folder holding it)"
    : `importRoot ${doc.importRoot}`;
}

/** `step`'s SchemaCompileError with each problem prefixed by `location`, the document it is about. */
function located<T>(location: string, step: () => T): T {
  try {
    return step();
  } catch (err) {
    if (!(err instanceof SchemaCompileError)) throw err;
    const problems = err.problems.map((p) => `${location}: ${p}`);
    throw new SchemaCompileError(problems.length === 1 ? (problems[0] as string) : err.message, problems);
  }
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

/** wsdl:message: each part names a declared element or type (WSDL 1.1 §2.3). */
function readMessages(
  defs: readonly Definitions[],
  schema: CompiledSchema,
  collect: <T>(step: () => T, prefix?: string) => T | undefined,
): Messages {
  const messages = new Map<string, { name: string; parts: Part[] } | null>();
  const types = schemaComponents(schema)?.types;
  const hasType = (name: string) =>
    types?.has(name) === true ||
    (name.startsWith(`{${XS_NS}}`) && (isBuiltin(name.slice(XS_NS.length + 2)) || name.endsWith("}anyType")));
  for (const { root, tns, location } of defs) {
    for (const m of wsdlChildren(root, "message")) {
      messages.set(clark(tns, m.attributes.name ?? ""), null);
      collect(() => readMessage(m, tns, schema, hasType, messages), `${location}: `);
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
      const el = qname(part, "element");
      if (!schema.hasElement(el))
        throw new SchemaCompileError(`wsdl:message "${name}": element ${el} is not declared`);
      parts.push({ name: partName, element: el });
    } else {
      const t = qname(part, "type");
      if (!hasType(t)) throw new SchemaCompileError(`wsdl:message "${name}": type ${t} is not declared`);
      parts.push({ name: partName, type: t });
    }
  }
  messages.set(clark(tns, name), { name, parts });
}

/** The parts of the message `node` names (its `message` attribute). */
function messageParts(node: ParsedElement, messages: Messages): { name: string; parts: Part[] } {
  const name = qname(node, "message");
  const declared = messages.get(name);
  if (declared === null) throw REPORTED;
  if (!declared) throw new SchemaCompileError(`message ${name} is not declared`);
  return declared;
}

/**
 * The element of a fault's message: WSDL 1.1 §3.6, "the fault message MUST have a single part",
 * written as the fault's detail entry, so an element.
 */
function faultElement(node: ParsedElement, operation: string, messages: Messages): string {
  const { name, parts } = messageParts(node, messages);
  const part = parts[0];
  if (parts.length !== 1 || part?.element === undefined) {
    throw new SchemaCompileError(
      `operation "${operation}": fault "${node.attributes.name ?? ""}" names message "${name}", which needs exactly one part with an element (WSDL 1.1 §3.6)`,
    );
  }
  return part.element;
}

/** A `wsdl:binding` this node may serve: its SOAP version and the namespace of its extension elements. */
interface FoundBinding {
  version: SoapVersion;
  /** `http://schemas.xmlsoap.org/wsdl/soap12/` or `http://schemas.xmlsoap.org/wsdl/soap/`. */
  ns: string;
  /** How messages name the extension elements: `soap12` or `soap`. */
  prefix: string;
  element: ParsedElement;
  /** The text of the document that declares the binding, for the line a problem is on. */
  text: string;
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
function findBindings(defs: readonly Definitions[]): FoundBinding[] {
  const bindings = new Map<string, { element: ParsedElement; text: string }>();
  for (const { root, tns, text } of defs) {
    for (const b of wsdlChildren(root, "binding"))
      bindings.set(clark(tns, b.attributes.name ?? ""), { element: b, text });
  }
  const found = new Map<SoapVersion, FoundBinding>();
  const otherTransports = new Set<string>();
  for (const def of defs) {
    for (const service of wsdlChildren(def.root, "service")) {
      for (const port of wsdlChildren(service, "port")) {
        // Named with the document the port is in: the WSDL's own, or one it imports.
        const name = located(def.location, () => qname(port, "binding"));
        const declared = bindings.get(name);
        if (!declared) {
          // A QName resolves in its scope (WSDL 1.1 §2.1): an unprefixed one takes the default
          // namespace, often WSDL's own, not the target namespace the binding is named in.
          const local = name.slice(name.indexOf("}") + 1);
          const near = [...bindings.keys()].filter((k) => k.endsWith(`}${local}`));
          throw new SchemaCompileError(
            `${def.location}: wsdl:port "${port.attributes.name ?? ""}": its binding ${name} is not declared${near.length > 0 ? ` (declared: ${near.join(", ")})` : ""}`,
          );
        }
        const b = declared.element;
        const soapBinding = b.children.find(
          (c) =>
            c.localName === "binding" &&
            (c.namespace === SOAP12_BINDING_NS || c.namespace === SOAP11_BINDING_NS),
        );
        if (!soapBinding) continue;
        const version: SoapVersion = soapBinding.namespace === SOAP12_BINDING_NS ? "1.2" : "1.1";
        // WSDL 1.1 §3.3, wsdl11soap12 §3.3: the transport's URI; HTTP's is the one this node speaks.
        const transport = soapBinding.attributes.transport;
        if (transport === undefined || !HTTP_TRANSPORTS.includes(transport)) {
          const prefix = version === "1.2" ? "soap12" : "soap";
          otherTransports.add(
            `wsdl:binding "${b.attributes.name ?? ""}" (${transport === undefined ? `${prefix}:binding without transport` : `transport "${transport}"`})`,
          );
          continue;
        }
        if (!found.has(version)) {
          found.set(version, {
            version,
            ns: soapBinding.namespace,
            prefix: version === "1.2" ? "soap12" : "soap",
            element: b,
            text: declared.text,
          });
        }
      }
    }
  }
  if (found.size === 0) {
    throw new SchemaCompileError(
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
 * The style of soap12:binding / soap:binding, `document` by default (wsdl11soap12 §3.3, WSDL 1.1
 * §3.3): the default of each of its operations.
 */
function bindingStyle(binding: FoundBinding): "document" | "rpc" {
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
function findPortType(defs: readonly Definitions[], binding: ParsedElement): ParsedElement {
  const portTypes = new Map<string, ParsedElement>();
  for (const { root, tns } of defs) {
    for (const p of wsdlChildren(root, "portType")) portTypes.set(clark(tns, p.attributes.name ?? ""), p);
  }
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
  schema: CompiledSchema,
  declared: DeclaredElements,
): ContractOperation | { operation: string; reason: string } {
  const name = bop.attributes.name ?? "";
  const op = wsdlChildren(portType, "operation").find((o) => o.attributes.name === name);
  if (!op) throw new SchemaCompileError(`binding operation "${name}" is not in the port type`);
  const soapOp = bop.children.find((c) => c.namespace === binding.ns && c.localName === "operation");
  const style = (soapOp?.attributes.style ?? bindingStyle(binding)) as "document" | "rpc";
  const headers = readInputHeaders(bop, name, messages, binding);
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
  for (const f of wsdlChildren(op, "fault"))
    faults[f.attributes.name ?? ""] = faultElement(f, name, messages);
  const shape = { operation: name, style, binding, messages, schema, declared };
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

/** What {@link bodyShape} reads an operation's messages with. */
interface ShapeContext {
  operation: string;
  style: "document" | "rpc";
  binding: FoundBinding;
  messages: Messages;
  schema: CompiledSchema;
  declared: DeclaredElements;
}

/**
 * How one message of an operation travels in the Body (WSDL 1.1 §3.5, wsdl11soap12 §3.5): the
 * parts `soap:body parts=` names (all of them when it is absent, but those bound to a
 * `soap:header` of the same message, §3.7); in document style, each part directly in the Body (an
 * `element=` part as that element, a `type=` part as an unqualified element named after the
 * part); in rpc style, one wrapper element named after the operation (`operationResponse` for the
 * output) in the `namespace` of soap:body, with an unqualified accessor per part named after it.
 */
function bodyShape(
  bop: ParsedElement,
  io: ParsedElement,
  direction: "input" | "output",
  ctx: ShapeContext,
): { element: string; body: string[] } {
  const { operation, binding } = ctx;
  const message = messageParts(io, ctx.messages);
  const bound = wsdlChildren(bop, direction)[0];
  const soapBody = bound?.children.find((c) => c.namespace === binding.ns && c.localName === "body");
  let parts = message.parts;
  const listed = soapBody?.attributes.parts;
  if (listed !== undefined) {
    const names = listed.split(/[ \t\r\n]+/).filter((n) => n !== "");
    const byName = new Map(message.parts.map((p) => [p.name, p]));
    parts = names.map((n) => {
      const part = byName.get(n);
      if (!part)
        throw new SchemaCompileError(
          `operation "${operation}": ${binding.prefix}:body parts names "${n}", which message "${message.name}" does not have`,
        );
      return part;
    });
  } else {
    const inHeaders = new Set(
      (bound?.children ?? [])
        .filter((h) => h.namespace === binding.ns && h.localName === "header")
        .filter((h) => h.attributes.message !== undefined && qname(h, "message") === qname(io, "message"))
        .map((h) => h.attributes.part),
    );
    parts = parts.filter((p) => !inHeaders.has(p.name));
  }
  if (ctx.style === "rpc") {
    const namespace = soapBody?.attributes.namespace;
    if (namespace === undefined || namespace === "") {
      throw new SchemaCompileError(
        `operation "${operation}": rpc style needs ${binding.prefix}:body namespace= for the ${direction}'s wrapper element (WS-I Basic Profile 1.1 R2717)`,
      );
    }
    const local = direction === "input" ? operation : `${operation}Response`;
    const wrapper = clark(namespace, local);
    if (ctx.schema.hasElement(wrapper)) {
      throw new SchemaCompileError(
        `operation "${operation}": its rpc wrapper element ${wrapper} is also a global element of the schema`,
      );
    }
    const members = parts.map((p) => ({
      name: p.name,
      type: p.type ?? namedTypeOf(p, operation, ctx.schema),
    }));
    ctx.declared.add(namespace, local, members, operation);
    return { element: wrapper, body: [wrapper] };
  }
  const only = parts[0];
  if (parts.length === 1 && only?.element !== undefined)
    return { element: only.element, body: [only.element] };
  const body = parts.map((p) => p.element ?? p.name);
  if (new Set(body).size !== body.length) {
    throw new SchemaCompileError(
      `operation "${operation}": two parts of message "${message.name}" put the same element in the Body: they could not be told apart`,
    );
  }
  const local = direction === "input" ? operation : `${operation}Response`;
  ctx.declared.add(
    PARTS_NS,
    local,
    parts.map((p) =>
      p.element !== undefined ? { ref: p.element } : { name: p.name, type: p.type as string },
    ),
    operation,
  );
  return { element: clark(PARTS_NS, local), body };
}

/**
 * The namespace of the elements the loader declares for a document-style Body of several parts,
 * `type=` parts or none: their children are the Body's.
 */
const PARTS_NS = "urn:svc:soap-envelope:document-parts";

/** The named type of an rpc part's element: its accessor has that type (WSDL 1.1 §3.5). */
function namedTypeOf(part: Part, operation: string, schema: CompiledSchema): string {
  const decl = schemaComponents(schema)?.elements.get(part.element as string);
  const name = decl && TYPE_NAMES.get(decl.type);
  if (name === undefined) {
    throw new SchemaCompileError(
      `operation "${operation}": rpc part "${part.name}" names element ${part.element}, whose type is anonymous: give the part type= (WS-I Basic Profile 1.1 R2203)`,
    );
  }
  return name;
}

/** A member of a declared wrapper: a local element of a type, or a reference to a global element. */
type Member = { name: string; type: string } | { ref: string };

/**
 * The elements the loader declares from the WSDL: rpc wrappers and the wrappers of document-style
 * Bodies of several parts, as XSD documents compiled with the contract's schemas (one per
 * namespace, each referring to the contract's types and elements by Clark name).
 */
class DeclaredElements {
  private readonly byNamespace = new Map<string, Map<string, { members: Member[]; key: string }>>();

  add(namespace: string, local: string, members: Member[], operation: string): void {
    let elements = this.byNamespace.get(namespace);
    if (!elements) {
      elements = new Map();
      this.byNamespace.set(namespace, elements);
    }
    const key = JSON.stringify(members);
    const before = elements.get(local);
    if (before && before.key !== key) {
      throw new SchemaCompileError(
        `operation "${operation}": its ${namespace === PARTS_NS ? "Body" : `rpc wrapper {${namespace}}${local}`} differs from another binding's or operation's of the same name`,
      );
    }
    elements.set(local, { members, key });
  }

  sources(limits: ReturnType<typeof resolveLimits>): SchemaSource[] {
    const out: SchemaSource[] = [];
    for (const [namespace, elements] of this.byNamespace) {
      const prefixes = new Map<string, string>();
      const ref = (name: string) => {
        if (!name.startsWith("{")) return name;
        const close = name.indexOf("}");
        const ns = name.slice(1, close);
        let prefix = prefixes.get(ns);
        if (prefix === undefined) {
          prefix = `n${prefixes.size}`;
          prefixes.set(ns, prefix);
        }
        return `${prefix}:${name.slice(close + 1)}`;
      };
      let body = "";
      for (const [local, { members }] of elements) {
        const content = members
          .map((m) =>
            "ref" in m
              ? `<xs:element ref="${escapeXml(ref(m.ref))}"/>`
              : `<xs:element name="${escapeXml(m.name)}" type="${escapeXml(ref(m.type))}"/>`,
          )
          .join("");
        body += `<xs:element name="${escapeXml(local)}"><xs:complexType><xs:sequence>${content}</xs:sequence></xs:complexType></xs:element>`;
      }
      let head = `<xs:schema xmlns:xs="${XS_NS}"${namespace === "" ? "" : ` targetNamespace="${escapeXml(namespace)}"`}`;
      let imports = "";
      for (const [ns, prefix] of prefixes) {
        head += ` xmlns:${prefix}="${escapeXml(ns)}"`;
        if (ns !== namespace && ns !== XS_NS) imports += `<xs:import namespace="${escapeXml(ns)}"/>`;
      }
      const text = `${head}>${imports}${body}</xs:schema>`;
      out.push({
        root: parseXmlDocument(text, limits),
        location: `the WSDL's message parts in ${namespace || "no namespace"}`,
      });
    }
    return out;
  }
}

/**
 * What the binding says of one operation, before any type is read: document or rpc style;
 * soap12:body of literal or encoded use (the SOAP encoding of the binding's version), the same for
 * input and output; soap12:fault and header of literal use only (wsdl11soap12 §3.4-§3.7;
 * soap:body, soap:fault, soap:header, WSDL 1.1 §3.5-§3.7).
 */
function checkBindingOperation(bop: ParsedElement, binding: FoundBinding): void {
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

/** The SOAP encoding of each version: what `use="encoded"` is read and written in. */
export const SOAP_ENCODINGS: Readonly<Record<SoapVersion, string>> = {
  "1.1": "http://schemas.xmlsoap.org/soap/encoding/",
  "1.2": "http://www.w3.org/2003/05/soap-encoding",
};

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

/** The 1-based line of the first match of `pattern` in `text`. */
function lineOf(text: string, pattern: RegExp): number | undefined {
  const at = pattern.exec(text)?.index;
  if (at === undefined) return undefined;
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < at; i = text.indexOf("\n", i + 1)) line++;
  return line;
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

/** The element of the message part a header or headerfault names (WSDL 1.1 §3.7). */
function declaredPart(node: ParsedElement, operation: string, messages: Messages, prefix: string): string {
  const messageName = qname(node, "message");
  const declared = messages.get(messageName);
  if (declared === null) throw REPORTED;
  const part = declared?.parts.find((p) => p.name === node.attributes.part);
  if (!part) {
    throw new SchemaCompileError(
      `operation "${operation}": ${prefix}:${node.localName} names part "${node.attributes.part ?? ""}" of message ${messageName}, which is not declared`,
    );
  }
  // A type= part's block is named after the part, unqualified, as a document-style Body's part is.
  return part.element ?? part.name;
}

/**
 * The Body's first child (none for an empty Body) routes a request to its operation. Operations
 * that take the same one are told apart by their actions (SOAP 1.2 Part 2 §7.1.4, SOAP 1.1
 * §6.1.1): each needs its own `soapAction`, shared with no other operation.
 */
function checkRoutable(operations: readonly ContractOperation[]): void {
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
            : join(from, locationPath(value)).split("\\").join("/");
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

/** The served path of the copy read for `location` (resolved against `baseUrl`), if one was. */
function servedCopy(remote: RemoteCopies, location: string, baseUrl: string | undefined): string | undefined {
  try {
    return remote.served.get(new URL(location, baseUrl).href);
  } catch {
    return undefined;
  }
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
