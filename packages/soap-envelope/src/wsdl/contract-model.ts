import type { DocumentTree } from "../platform/host-types.js";
import { clark, type ParsedElement, type resolveLimits, resolveQName } from "../xml/reader.js";
import {
  type CompiledSchema,
  type ContractDefect,
  type LongRepresentation,
  SchemaCompileError,
  type Tolerance,
} from "../xsd/schema.js";

export const WSDL_NS = "http://schemas.xmlsoap.org/wsdl/";

export const SOAP12_BINDING_NS = "http://schemas.xmlsoap.org/wsdl/soap12/";

export const SOAP11_BINDING_NS = "http://schemas.xmlsoap.org/wsdl/soap/";

/**
 * The transports of SOAP over HTTP a binding may name: WSDL 1.1 §3.3's, and the SOAP 1.2 HTTP
 * binding's own name (SOAP 1.2 Part 2 §7), which contracts such as WS-Discovery's and Apache CXF's
 * SOAP 1.2 samples give.
 * @see https://www.w3.org/TR/soap12-part2/#soapinhttp
 */
export const HTTP_TRANSPORTS: readonly string[] = [
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
  /**
   * The defects of the contract a tolerant load (`strict: false`) passed over, in the order met,
   * each with its file, line, class and what was assumed in its place (what messages are
   * validated against); empty for a strict load, which refuses each.
   */
  defects: readonly ContractDefect[];
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
   * The contract's documents in memory, by name (`{ "service.wsdl": wsdlText, "types.xsd":
   * xsdText }`), instead of files: `wsdl` then names one of them, and every import
   * (`wsdl:import`, `xs:import`, `xs:include`) and `schemaLocations` copy names one by its path
   * relative to the document it is in, as it would name a file (`"common/types.xsd"`,
   * `"../common/types.xsd"`). Nothing else is read: an import naming a document not given is
   * refused at start-up, naming it, and nothing is fetched. `importRoot` and `baseDir` name
   * folders of these names (`importRoot: "."`: all of them). The way to give a contract where
   * there is no file system (workerd, browsers), or one bundled with the code.
   * @default undefined (files)
   */
  documents?: Readonly<Record<string, string>>;
  /**
   * Directory relative imports are resolved against when `wsdl` is the document's text.
   * @default process.cwd() (the root of `documents` when given)
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
  /**
   * `false` loads a contract despite the defects a receiver can still serve unambiguously (an
   * `xs:import` whose namespace is not the imported schema's, a type, element or message named but
   * not declared, a binding operation its port type lacks, ...; README: Real-world contracts):
   * each is logged once through `logger` and listed in {@link Contract.defects} with its file,
   * line and what was assumed, and messages are validated against that. What would leave the
   * receiver to choose between two meanings, or be unsafe (a document that is not
   * namespace-well-formed, a DTD, an import outside `importRoot`, a remote location without a
   * local copy), is refused either way.
   * @default true (every defect refused, naming it)
   */
  strict?: boolean;
  /**
   * Where a tolerant load logs each defect it passes over, one `warn(obj, msg)` line each (`error`
   * when the logger has no `warn`); pino fits.
   * @default fallbackLogger of @svc/errors (a JSON line on stderr)
   */
  logger?: DefectLogger;
}

/** A logger the defects of a tolerant load are written to: `warn` (or `error`) as pino's. */
export interface DefectLogger {
  /** Called once per defect, when present. */
  warn?(obj: object, msg?: string): void;
  /** Called once per defect when there is no `warn`. */
  error(obj: object, msg?: string): void;
}

/** The WSDL document as read: its text, parsed root and where relative imports resolve from. */
export interface WsdlDocument {
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
  /** Where its documents are read: the file system, or `contract.documents`. */
  tree: DocumentTree;
  /** Whether the load refuses each defect or passes over it (`strict`), and those it passed. */
  tolerance: Tolerance;
}

/** The local copies read for documents imported by URL, as they are served. */
export interface RemoteCopies {
  /** Normalised URL → the copy's served path. */
  served: Map<string, string>;
  /** Served path → the URL it stands for: relative locations inside it resolve against that. */
  urls: Map<string, string>;
}

/**
 * One `wsdl:definitions`: the WSDL's own, then those it imports (`wsdl:import`, WSDL 1.1 §2.1.1),
 * each naming its components in its own target namespace.
 */
export interface Definitions {
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
export interface Part {
  name: string;
  /** Clark name of the part's element (`element=`). */
  element?: string;
  /** Clark name of the part's type (`type=`). */
  type?: string;
}

/** Message name → its parts, in document order; null when refused. */
export type Messages = ReadonlyMap<string, { name: string; parts: Part[] } | null>;

/** Thrown for a construct that names a message already reported: nothing more to say. */
export const REPORTED = new SchemaCompileError("reported with the message it names", []);

/** How a problem names the folder imports may read from. */
export function rootName(doc: WsdlDocument): string {
  return doc.importRoot === doc.baseDir
    ? "the WSDL's directory (the importRoot option names a folder holding it)"
    : `importRoot ${doc.tree.shown(doc.importRoot)}`;
}

/** `step`'s SchemaCompileError with each problem prefixed by `location`, the document it is about. */
export function located<T>(location: string, step: () => T): T {
  try {
    return step();
  } catch (err) {
    if (!(err instanceof SchemaCompileError)) throw err;
    const problems = err.problems.map((p) => `${location}: ${p}`);
    throw new SchemaCompileError(problems.length === 1 ? (problems[0] as string) : err.message, problems);
  }
}

/** The Clark name of the QName in attribute `attr` of `node`, resolved in the node's scope. */
export function qname(node: ParsedElement, attr: string): string {
  const raw = node.attributes[attr];
  const q = raw === undefined ? undefined : resolveQName(raw, node.scope);
  if (!q)
    throw new SchemaCompileError(
      `wsdl:${node.localName} "${node.attributes.name ?? ""}": ${attr} is missing or its prefix is undeclared`,
    );
  return clark(q.namespace, q.localName);
}

/**
 * The Clark name of the QName in `node`'s `attr` that names one of `declared` (WSDL 1.1 §2.1). A
 * tolerant load reads a QName that names none of them, or whose prefix is not declared, as the one
 * declared name of the same local name: with none or several, nothing says which was meant, and
 * the load is refused as a strict one is (`refused(name, near)` says why).
 */
export function byLocalName(
  node: ParsedElement,
  attr: string,
  declared: Iterable<string>,
  tolerance: Tolerance,
  location: string,
  refused: (name: string, near: string[]) => string,
): string {
  const raw = node.attributes[attr] ?? "";
  let name: string;
  let problem: string | undefined;
  const names = [...declared];
  try {
    name = location === "" ? qname(node, attr) : located(location, () => qname(node, attr));
  } catch (err) {
    if (tolerance.strict || !(err instanceof SchemaCompileError) || raw === "") throw err;
    name = raw.slice(raw.indexOf(":") + 1);
    problem = err.problems[0] as string;
  }
  if (problem === undefined && names.includes(name)) return name;
  const local = name.slice(name.indexOf("}") + 1);
  const near = names.filter((k) => k.endsWith(`}${local}`) || k === local);
  problem ??= refused(name, near);
  if (near.length !== 1) throw new SchemaCompileError(problem);
  const found = near[0] as string;
  tolerance.pass(
    "wsdl-name",
    problem,
    `${attr}="${raw}" names the one declared of that local name, ${found}`,
    node,
    location,
  );
  return found;
}

/** A `wsdl:binding` this node may serve: its SOAP version and the namespace of its extension elements. */
export interface FoundBinding {
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
export interface Binding extends FoundBinding {
  portType: ParsedElement | undefined;
  operations: ParsedElement[];
}

/** The SOAP encoding of each version: what `use="encoded"` is read and written in. */
export const SOAP_ENCODINGS: Readonly<Record<SoapVersion, string>> = {
  "1.1": "http://schemas.xmlsoap.org/soap/encoding/",
  "1.2": "http://www.w3.org/2003/05/soap-encoding",
};

/** The 1-based line of the first match of `pattern` in `text`. */
export function lineOf(text: string, pattern: RegExp): number | undefined {
  const at = pattern.exec(text)?.index;
  if (at === undefined) return undefined;
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < at; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

export function wsdlChildren(node: ParsedElement, localName: string): ParsedElement[] {
  return node.children.filter((c) => c.namespace === WSDL_NS && c.localName === localName);
}
