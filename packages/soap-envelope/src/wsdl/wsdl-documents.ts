import { optionError as codedOptionError } from "@svc/kernel/internal";
import { ABSOLUTE_URI, optionError } from "../options.js";
import { host } from "../platform/host.js";
import type { DocumentTree } from "../platform/host-types.js";
import { type ParsedElement, parseXmlDocument, resolveLimits, XmlError } from "../xml/reader.js";
import { builtinSchemaText } from "../xsd/builtin-docs.js";
import { SchemaCompileError, type SchemaSource, type Tolerance, XS_NS } from "../xsd/schema.js";
import {
  type Definitions,
  type LoadContractOptions,
  type RemoteCopies,
  rootName,
  WSDL_NS,
  type WsdlDocument,
  wsdlChildren,
} from "./contract-model.js";
import { declarationFirst, wsdlInNoNamespace } from "./document-defects.js";
import { memoryDocuments } from "./memory-documents.js";

/**
 * Reads and parses the WSDL (a path, or the document's text) and checks its document element. Its
 * documents are read from `tree`: the given ones (`contract.documents`), else the file system.
 */
export function readWsdl(
  wsdl: string,
  options: LoadContractOptions,
  schemaLocations: ReadonlyMap<string, string>,
  given: DocumentTree | undefined,
  tolerance: Tolerance,
): WsdlDocument {
  const limits = resolveLimits({
    maxBytes: 16 * 1024 * 1024,
    maxDepth: 128,
    maxElements: 1_000_000,
    maxAttributes: 256,
  });
  const isText = wsdl.trimStart().startsWith("<");
  if (given === undefined && host.files === undefined && !isText) {
    throw codedOptionError(
      "soap-envelope",
      "wsdl",
      `@svc/soap-envelope: wsdl names the file ${wsdl}, but this build, for workerd, workers and browsers, reads no file: give the contract's documents in memory, contract: { documents: { "service.wsdl": wsdlText, ... } } with wsdl: "service.wsdl" (or the WSDL's text)`,
    );
  }
  // Where there is no file system, a WSDL given as text has its imports refused by name.
  const tree = given ?? host.files ?? memoryDocuments({}, "contract.documents");
  const wsdlPath = isText
    ? tree.join(tree.resolve(options.baseDir ?? tree.cwd()), "inline.wsdl")
    : tree.resolve(wsdl);
  const location = isText ? "WSDL" : wsdl;
  let wsdlText: string;
  try {
    wsdlText = isText ? wsdl : tree.read(wsdlPath);
  } catch (err) {
    const named = given === undefined ? `the file ${wsdlPath}` : `${tree.shown(wsdlPath)}`;
    const asked =
      given === undefined
        ? "the path of a WSDL 1.1 file or its text"
        : "the name of one of the documents given";
    throw codedOptionError(
      "soap-envelope",
      "wsdl",
      `@svc/soap-envelope: wsdl names ${named}, which cannot be read (${fileProblem(err)}); give ${asked}`,
    );
  }
  wsdlText = declarationFirst(wsdlText, location, tolerance);
  const root = parse(wsdlText, location, limits);
  tolerance.document(root, wsdlText, location);
  wsdlInNoNamespace(root, location, tolerance);
  if (root.namespace !== WSDL_NS || root.localName !== "definitions") {
    throw new SchemaCompileError(
      `${location}: the document element must be wsdl:definitions (WSDL 1.1), not {${root.namespace}}${root.localName}`,
    );
  }
  const baseDir = tree.dirname(wsdlPath);
  const importRoot = options.importRoot === undefined ? baseDir : tree.resolve(options.importRoot);
  if (outside(tree, importRoot, baseDir)) {
    throw optionError(
      "importRoot",
      options.importRoot,
      `a folder holding the WSDL's folder ${tree.shown(baseDir)}`,
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
    schemaLocations: new Map([...schemaLocations].map(([url, file]) => [url, tree.resolve(file)])),
    tree,
    remote: { served: new Map(), urls: new Map() },
    tolerance,
  };
}

/** wsdl:types: inline schemas and, transitively, the documents they import or include. */
export function loadSchemaSources(
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
        if (!included) checkImportedNamespace(child, namespaces.get(file), location, doc.tolerance);
        continue;
      }
      seen.add(key);
      const rel = doc.tree.relative(doc.baseDir, file);
      let text: string;
      try {
        text = doc.tree.read(file);
      } catch (err) {
        throw new SchemaCompileError(
          `${location}: xs:${child.localName} schemaLocation="${child.attributes.schemaLocation}" names ${doc.tree.shown(file)}, which cannot be read (${fileProblem(err)})`,
        );
      }
      text = declarationFirst(text, rel, doc.tolerance);
      const imported = parse(text, rel, doc.limits);
      doc.tolerance.document(imported, text, rel);
      namespaces.set(file, imported.attributes.targetNamespace);
      if (!included)
        checkImportedNamespace(child, imported.attributes.targetNamespace, location, doc.tolerance);
      schemaFiles.set(servedPath(doc.tree, rel), text);
      if (found.url !== undefined) remember(doc.remote, found.url, servedPath(doc.tree, rel));
      sources.push({ root: imported, location: rel, ...(included ? { includedInto: tns } : {}) });
      loadImports(imported, found.base, rel, imported.attributes.targetNamespace ?? (included ? tns : ""));
    }
  };
  for (const def of defs) {
    for (const t of wsdlChildren(def.root, "types")) {
      for (const schema of t.children) {
        if (schema.namespace === XS_NS && schema.localName === "import" && !doc.tolerance.strict) {
          // WSDL 1.1 §2.2 holds schemas in wsdl:types: an xs:import straight in it names one
          // schema document all the same, read as a schema that imports it would read it.
          doc.tolerance.pass(
            "types-import",
            `${def.location} wsdl:types: {${XS_NS}}import is not supported`,
            `the xs:import is read as a schema's import of ${schema.attributes.schemaLocation ?? `namespace "${schema.attributes.namespace ?? ""}"`}`,
            schema,
            def.location,
          );
          loadImports({ ...t, children: [schema] }, def.base, `${def.location} wsdl:types`, "");
          continue;
        }
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
    const rel = doc.tree.relative(doc.baseDir, file);
    schemaFiles.set(servedPath(doc.tree, rel), text);
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
 * take it: the document's own targetNamespace names its components. A tolerant load takes a
 * mismatch the same way: the document's targetNamespace is the one thing its components can be
 * named in, whatever the import says.
 * @see https://www.w3.org/TR/xmlschema-1/#src-import
 */
function checkImportedNamespace(
  child: ParsedElement,
  targetNamespace: string | undefined,
  location: string,
  tolerance: Tolerance,
) {
  const expected = child.attributes.namespace;
  if (expected === undefined || expected === targetNamespace) return;
  const has =
    targetNamespace === undefined ? "has no targetNamespace" : `has targetNamespace="${targetNamespace}"`;
  const named = child.attributes.schemaLocation;
  tolerance.pass(
    "import-namespace",
    `${location}: xs:import namespace="${expected}" names schemaLocation="${named}", which ${has} (XML Schema Part 1 §4.2.3: the two must be the same)`,
    `the components of ${named} are in its own ${targetNamespace === undefined ? "no namespace" : `targetNamespace "${targetNamespace}"`}; namespace="${expected}" is ignored`,
    child,
    location,
  );
}

/** An XSD a `wsdl:import` names, parsed, or what is wrong with it. */
type ImportedSchema =
  | { root: ParsedElement; file: string; text: string; base: string }
  | { error: SchemaCompileError; file: string; text: string };

/** A file's path from the WSDL's folder as it is served (`?xsd=`): `/`-separated. */
function servedPath(tree: DocumentTree, rel: string): string {
  return tree.normalize(rel).split("\\").join("/");
}

/** The WSDL's own definitions. */
export function mainDefinitions(doc: WsdlDocument): Definitions {
  return { root: doc.root, text: doc.wsdlText, tns: doc.tns, location: doc.location, base: doc.baseDir };
}

/**
 * The WSDL's definitions and, transitively, those its `wsdl:import`s name (WSDL 1.1 §2.1.1): local
 * files in the WSDL's folder, each read once; an imported XSD joins the schemas. Each imported
 * document keeps its own target namespace for the names it defines (WSDL 1.1 §2.1); the import's
 * `namespace` is a hint WS-I BP R2005 asks to agree with it, not checked here. The imported WSDLs
 * are served as the XSDs are (`?xsd=sub.wsdl`).
 */
export function importDefinitions(doc: WsdlDocument): {
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
      const rel = doc.tree.relative(doc.baseDir, file);
      if (seen.has(file)) continue;
      seen.add(file);
      let text: string;
      try {
        text = doc.tree.read(file);
      } catch (err) {
        throw new SchemaCompileError(
          `${def.location}: wsdl:import location="${loc}" names ${doc.tree.shown(file)}, which cannot be read (${fileProblem(err)})`,
        );
      }
      text = declarationFirst(text, rel, doc.tolerance);
      let root: ParsedElement;
      try {
        root = parse(text, rel, doc.limits);
        doc.tolerance.document(root, text, rel);
      } catch (err) {
        // Said with the types (loadSchemaSources), after the binding's problems, as for an XSD.
        if (!(err instanceof SchemaCompileError)) throw err;
        schemas.push({ error: err, file, text });
        continue;
      }
      if (url !== undefined) remember(doc.remote, url, servedPath(doc.tree, rel));
      wsdlInNoNamespace(root, rel, doc.tolerance);
      if (root.namespace === XS_NS && root.localName === "schema") {
        schemas.push({ root, file, text, base });
        continue;
      }
      if (root.namespace !== WSDL_NS || root.localName !== "definitions") {
        throw new SchemaCompileError(
          `${rel}: a wsdl:import names a document whose element is {${root.namespace}}${root.localName}, neither wsdl:definitions nor xs:schema`,
        );
      }
      files.set(servedPath(doc.tree, rel), text);
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
  let loc = child.attributes.schemaLocation;
  if (loc === undefined) {
    // An import by namespace alone: the schema compiler resolves it (a sibling schema, or one
    // it knows), xsd/schema-documents.ts.
    if (child.localName === "import") return undefined;
    // Part 1 §4.2.1: schemaLocation is required on xs:include; no other attribute names the file.
    const named = Object.keys(child.attributes).filter((k) => k !== "id" && !k.startsWith("{"));
    const problem = `${location}: xs:include without schemaLocation cannot be resolved (XML Schema Part 1 §4.2.1 requires it${named.length > 0 ? `; ${named.map((k) => `${k}=`).join(", ")} is not an attribute of xs:include` : ""})`;
    // WSDL's own imports name their document with location= (WSDL 1.1 §2.1.1): an include with
    // that attribute alone names one document, and a tolerant load reads it.
    const written = child.attributes.location;
    if (written === undefined || written === "") throw new SchemaCompileError(problem);
    doc.tolerance.pass(
      "include-location",
      problem,
      `location="${written}" is read as schemaLocation`,
      child,
      location,
    );
    loc = written;
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
    const file = doc.tree.resolve(base, locationPath(loc));
    if (outside(doc.tree, doc.importRoot, file)) {
      throw new SchemaCompileError(`${said.location}: ${said.local} is outside ${rootName(doc)}`);
    }
    return { file, base: doc.tree.dirname(file) };
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
  if (outside(doc.tree, doc.importRoot, file)) {
    throw new SchemaCompileError(
      `${said.location}: ${said.local}: the schemaLocations option names ${doc.tree.shown(file)} for ${url}, which is outside ${rootName(doc)}`,
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
function outside(tree: DocumentTree, root: string, path: string): boolean {
  const rel = tree.relative(root, path);
  return rel === ".." || rel.startsWith(`..${tree.sep}`) || tree.isAbsolute(rel);
}

/** The served path of the copy read for `location` (resolved against `baseUrl`), if one was. */
export function servedCopy(
  remote: RemoteCopies,
  location: string,
  baseUrl: string | undefined,
): string | undefined {
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
export function locationPath(location: string): string {
  return location.replace(/(?:%[0-9A-Fa-f]{2})+/g, (escaped) => {
    try {
      return decodeURIComponent(escaped);
    } catch {
      return escaped;
    }
  });
}

/** An attribute value's text with its character and predefined entity references replaced. */
export function unescapeAttribute(raw: string): string {
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
