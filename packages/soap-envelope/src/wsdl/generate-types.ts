import { refusedOption } from "@svc/kernel/internal";
import { checkSchemaLocations } from "../options.js";
import { parseXmlDocument, resolveLimits } from "../xml/reader.js";
import type { LongRepresentation } from "../xsd/model.js";
import { type Contract, loadContract } from "./contract.js";
import { IDENTIFIER, type ResolvedGenerateOptions, TypeWriter, typeName } from "./type-writer.js";

// TypeScript declarations for a contract's operations, written from the same compiled schema the
// service decodes and encodes with, so the types say what the runtime does: a handler's payload
// is what the decoder produces (`xs:long` as `bigint` or `string` per `longAs`, `minOccurs="0"`
// as an optional property, `maxOccurs` > 1 as an array, `nillable` as `| null`, an enumeration
// as a union of its literals), its result what the encoder accepts (`xs:long` also as a number or
// a numeric string, `xs:date` / `xs:dateTime` also as a `Date`); a one-way operation has no
// `output` and its handler returns nothing.

/** Options of {@link generateTypes}. */
export interface GenerateTypesOptions {
  /**
   * Directory relative `schemaLocation`s resolve against when the WSDL is given as text.
   * @default process.cwd()
   */
  baseDir?: string;
  /**
   * How the service decodes `xs:long` (its `contract.longAs` option): the payload types follow.
   * @default "bigint"
   */
  longAs?: LongRepresentation;
  /**
   * The folder the contract's imports may read from, holding the WSDL's folder (the service's
   * `contract.importRoot`).
   * @default the WSDL's folder
   */
  importRoot?: string;
  /**
   * Local copies of the documents the contract imports by URL (the service's
   * `contract.schemaLocations`): nothing is fetched.
   * @default {}
   */
  schemaLocations?: Readonly<Record<string, string>>;
  /**
   * Prefix of the generated `<name>Operations`, `<name>Handlers` and `<name>FaultDetails` types.
   * @default the `name` of `wsdl:definitions`, else of its first `wsdl:service`, else `"Service"`
   */
  name?: string;
  /**
   * The module the generated file imports `SoapHandlers` from.
   * @default "@svc/soap-envelope"
   */
  importFrom?: string;
  /**
   * What the header comment names as the source (a file name).
   * @default "the WSDL"
   */
  source?: string;
}

const OPTION_KEYS = new Set([
  "baseDir",
  "longAs",
  "importRoot",
  "schemaLocations",
  "name",
  "importFrom",
  "source",
]);

/**
 * Writes a TypeScript module declaring, for each operation of a WSDL 1.1 contract (SOAP 1.2 or
 * SOAP 1.1 binding, document/literal), the type of the payload its handler receives and of the result it
 * returns, and `<Name>Handlers`, the handler map `createSoapService<<Name>Operations>()` checks.
 * The contract goes through the same loader and schema compiler as the service, so what the
 * service refuses at start-up is refused here too (a {@link SchemaCompileError}).
 *
 * The declarations compile under `strict`, `noUncheckedIndexedAccess` and
 * `exactOptionalPropertyTypes`. Facets (`pattern`, `maxLength`, ranges) are not types: they are
 * named in comments and checked when the service encodes a result.
 *
 * @example
 * const ts = generateTypes(readFileSync("contracts/customer.wsdl", "utf8"), { baseDir: "contracts" });
 * writeFileSync("src/customer.types.ts", ts);
 * @see https://www.w3.org/TR/xmlschema-1/
 */
export function generateTypes(wsdl: string, options: GenerateTypesOptions = {}): string {
  const resolved = resolveGenerateOptions(wsdl, options);
  const contract = loadContract(wsdl, {
    ...(resolved.baseDir === undefined ? {} : { baseDir: resolved.baseDir }),
    ...(resolved.importRoot === undefined ? {} : { importRoot: resolved.importRoot }),
    ...(options.schemaLocations === undefined ? {} : { schemaLocations: options.schemaLocations }),
    longAs: resolved.longAs,
  });
  const name = resolved.name ?? typeName(contractName(contract) ?? "Service");
  return new TypeWriter(contract.schema, resolved.longAs, name).write(contract, resolved);
}

function resolveGenerateOptions(wsdl: unknown, options: GenerateTypesOptions): ResolvedGenerateOptions {
  const label = (option: string) => `generateTypes: ${option}`;
  if (typeof wsdl !== "string" || wsdl.trim() === "") {
    throw refusedOption("soap-envelope", "wsdl", wsdl, "the WSDL text or a path", label("wsdl"));
  }
  if (typeof options !== "object" || options === null) {
    throw refusedOption("soap-envelope", "options", options, "an object", label("options"));
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) {
      throw refusedOption(
        "soap-envelope",
        "options",
        key,
        `one of ${[...OPTION_KEYS].join(", ")}`,
        label("an option name"),
      );
    }
  }
  const {
    baseDir,
    importRoot,
    longAs = "bigint",
    name,
    importFrom = "@svc/soap-envelope",
    source = "the WSDL",
  } = options;
  if (baseDir !== undefined && (typeof baseDir !== "string" || baseDir === "")) {
    throw refusedOption("soap-envelope", "baseDir", baseDir, "a directory path", label("baseDir"));
  }
  if (importRoot !== undefined && (typeof importRoot !== "string" || importRoot === "")) {
    throw refusedOption("soap-envelope", "importRoot", importRoot, "a directory path", label("importRoot"));
  }
  if (longAs !== "bigint" && longAs !== "string") {
    throw refusedOption("soap-envelope", "longAs", longAs, '"bigint" or "string"', label("longAs"));
  }
  checkSchemaLocations(options.schemaLocations, "schemaLocations", label("schemaLocations"));
  if (name !== undefined && (typeof name !== "string" || !IDENTIFIER.test(name))) {
    throw refusedOption("soap-envelope", "name", name, "a TypeScript identifier", label("name"));
  }
  if (typeof importFrom !== "string" || importFrom === "") {
    throw refusedOption("soap-envelope", "importFrom", importFrom, "a module specifier", label("importFrom"));
  }
  if (typeof source !== "string") {
    throw refusedOption("soap-envelope", "source", source, "a string", label("source"));
  }
  return { baseDir, importRoot, longAs, name, importFrom, source };
}

/** `wsdl:definitions/@name`, else the first `wsdl:service/@name`. */
function contractName(contract: Contract): string | undefined {
  const root = parseXmlDocument(
    contract.wsdlText,
    resolveLimits({ maxBytes: 16 * 1024 * 1024, maxDepth: 128 }),
  );
  const service = root.children.find((c) => c.localName === "service" && c.namespace === root.namespace);
  return root.attributes.name || service?.attributes.name || undefined;
}
