import { checkLongAs, checkObject } from "../options.js";
import { interned } from "../xml/interned.js";
import { clark, type XmlElement } from "../xml/reader.js";
import { type ContractLoad, compileComponents, type SchemaComponents } from "./compile.js";
import { Decoders } from "./decode-compiled.js";
import { Encoders } from "./encode-compiled.js";
import { SchemaValidationError } from "./errors.js";
import type { ElementDecl, LongRepresentation } from "./model.js";
import type { SchemaSource } from "./schema-documents.js";

// The schema compiler's entry: compiling is in xsd/compile.ts, validating decoding in
// schema-decode.ts, encoding in schema-encode.ts, lexical forms and facets in xsd/lexical.ts.

export type { ContractLoad } from "./compile.js";
export { type ContractDefect, type DefectClass, Tolerance } from "./defects.js";
export { SchemaCompileError, SchemaValidationError } from "./errors.js";
export { compareDecimal } from "./lexical.js";
export { type BuiltinType, type LongRepresentation, XS_NS } from "./model.js";
export type { SchemaSource } from "./schema-documents.js";
export type { ExpectedGlobal } from "./stand-ins.js";

/** Options of {@link compileSchemas}. */
export interface CompileOptions {
  /**
   * How `xs:long` (and `xs:integer`, `xs:unsignedLong` and the other integer types whose values
   * may pass 2^53) is decoded: a `bigint` (exact, not JSON-serializable as is) or the canonical
   * decimal `string`. Either way no precision is lost.
   * @default "bigint"
   */
  longAs?: LongRepresentation;
}

/**
 * Compiles the XML Schema 1.0 that document/literal services use into validating decoders and
 * ordered encoders. Every unsupported construct throws {@link SchemaCompileError}.
 *
 * Supported: global and local elements (`ref`, `minOccurs`, `maxOccurs`, `nillable`, `form`,
 * `block`), complex types with `sequence`, `all`, `choice`, `xs:group`, attributes (and
 * `xs:attributeGroup`, global ones by `ref`), `xs:any` / `xs:anyAttribute`, `mixed`, `abstract`,
 * `simpleContent` / `complexContent` by extension or restriction, simple types by restriction
 * (every facet), `xs:list` and `xs:union`, every built-in of XML Schema Part 2 and `xs:anyType`,
 * identity constraints (read, not enforced), `xsi:type` naming a declared derivation, and
 * `xs:import` by namespace of another source of the set or of the built-in xml / SOAP-ENC
 * documents.
 *
 * @example
 * const schema = compileSchemas([{ root: parseXmlString(xsdText, limits), location: "customer.xsd" }]);
 * const payload = schema.decode(bodyElement);
 * @see https://www.w3.org/TR/xmlschema-1/
 */
export function compileSchemas(
  sources: readonly SchemaSource[],
  options: CompileOptions = {},
): CompiledSchema {
  checkObject(options, "options", ["longAs"]);
  checkLongAs(options.longAs, "longAs", "compileSchemas: longAs");
  return new CompiledSchema(sources, options.longAs ?? "bigint");
}

/** {@link compileSchemas} for a contract's loader: with its tolerance and what its WSDL names. */
export function compileContractSchemas(
  sources: readonly SchemaSource[],
  longAs: LongRepresentation | undefined,
  load: ContractLoad,
): CompiledSchema {
  // Read by the constructor, which runs synchronously: no other compile can see it.
  contractLoad = load;
  try {
    return new CompiledSchema(sources, longAs ?? "bigint");
  } finally {
    contractLoad = undefined;
  }
}

/** The load {@link compileContractSchemas} compiles for, while it does. */
let contractLoad: ContractLoad | undefined;

/** The compiled components behind each schema, for the type generator (not part of the public API). */
const COMPONENTS = new WeakMap<CompiledSchema, SchemaComponents & { longAs: LongRepresentation }>();

/** The global elements and named types a schema was compiled from, and its `longAs`. */
export function schemaComponents(
  schema: CompiledSchema,
): (SchemaComponents & { longAs: LongRepresentation }) | undefined {
  return COMPONENTS.get(schema);
}

/** The compiled schema set: global elements with their decoders and encoders. */
export class CompiledSchema {
  private readonly elements: ReadonlyMap<string, ElementDecl>;
  private readonly decoders: Decoders;
  private readonly encoders = new Encoders();
  /** The global elements by namespace, then local name: found without building a Clark name. */
  private readonly byNamespace = new Map<string, Map<string, ElementDecl>>();

  constructor(sources: readonly SchemaSource[], longAs: LongRepresentation) {
    this.decoders = new Decoders(longAs);
    const components = compileComponents(sources, contractLoad);
    this.elements = components.elements;
    for (const [key, decl] of this.elements) {
      if (key !== clark(decl.namespace, decl.localName)) continue;
      // Interned keys: a message's names (interned by the parse's templates) are then found
      // without reading their characters.
      let local = this.byNamespace.get(decl.namespace);
      if (local === undefined) {
        local = new Map();
        this.byNamespace.set(interned(decl.namespace), local);
      }
      local.set(interned(decl.localName), decl);
    }
    COMPONENTS.set(this, { ...components, longAs });
  }

  /** Clark names (`{ns}local`) of every global element. */
  get elementNames(): string[] {
    return [...this.elements.keys()];
  }

  /** Whether a global element of this name exists. */
  hasElement(clarkName: string): boolean {
    return this.elements.has(clarkName);
  }

  /**
   * Validates an element against its global declaration and decodes it into a plain object.
   * @throws {SchemaValidationError} when it does not match
   */
  decode(element: XmlElement): unknown {
    const decl =
      this.byNamespace.get(element.namespace)?.get(element.localName) ??
      this.elements.get(clark(element.namespace, element.localName));
    if (!decl) throw new SchemaValidationError(element.localName, "is not a global element of the schema");
    return this.decoders.for(decl)(element, element.localName);
  }

  /**
   * Validates a value against a global element and serializes it, children in schema order.
   * @throws {SchemaValidationError} when the value does not match
   */
  encode(clarkName: string, value: unknown): string {
    const decl = this.elements.get(clarkName);
    if (!decl) throw new SchemaValidationError(clarkName, "is not a global element of the schema");
    return this.encoders.for(decl)(value, "", decl.localName);
  }
}
