import { BUILTIN_INFO, floatValue } from "../xsd/builtins.js";
import type { SchemaComponents } from "../xsd/compile.js";
import {
  type ComplexType,
  type ElementDecl,
  emptiable,
  type Facets,
  type GroupParticle,
  type LongRepresentation,
  type SimpleType,
  TYPE_NAMES,
  VALUE_FACETS,
  XS_NS,
} from "../xsd/model.js";
import { type CompiledSchema, schemaComponents } from "../xsd/schema.js";
import type { Contract } from "./contract.js";

const ANY_TYPE = `{${XS_NS}}anyType`;

/** Decoded: what handlers receive. Init: what handlers may return (what the encoder accepts). */
type Mode = "decoded" | "init";

export interface ResolvedGenerateOptions {
  baseDir: string | undefined;
  importRoot: string | undefined;
  longAs: LongRepresentation;
  name: string | undefined;
  importFrom: string;
  source: string;
}

export const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** The global types the generated file refers to, which its own declarations must not shadow. */
const GLOBAL_NAMES = ["Date", "Record", "Uint8Array"];

/** A PascalCase identifier from an XML name (`get-customer.v1` → `GetCustomerV1`). */
export function typeName(xmlName: string): string {
  const pascal = xmlName
    .split(/[^A-Za-z0-9_$]+/)
    .filter(Boolean)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
  return /^[A-Za-z_$]/.test(pascal) ? pascal : `_${pascal}`;
}

function propertyKey(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

/** A comment's text, unable to close the comment early. */
function commentText(text: string): string {
  return text.replaceAll("*/", "*\\/");
}

/**
 * A line comment's text, unable to end the line: ECMA-262 §12.3 line terminators (CR, LF, U+2028,
 * U+2029; a file name may hold any of them) are written as their escapes.
 */
function lineCommentText(text: string): string {
  return text.replace(/[\r\n\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** One property of an object type, before rendering. */
interface Property {
  key: string;
  type: string;
  optional: boolean;
  doc: string | undefined;
}

export class TypeWriter {
  /** Declarations written so far, in the order they were first needed. */
  private readonly declarations: string[] = [];
  /** Declared type name per type object and mode. */
  private readonly names = new Map<object, Partial<Record<Mode, string>>>();
  private readonly taken = new Set<string>();
  /** Complex types that get a declaration of their own: named global ones and those of global elements. */
  private readonly declared = new Map<object, { base: string; clark: string }>();
  private readonly enums = new Map<SimpleType, string>();
  /** The local name of the imported `SoapHandlers`. */
  private readonly soapHandlers: string;

  constructor(
    schema: CompiledSchema,
    private readonly longAs: LongRepresentation,
    private readonly service: string,
  ) {
    const components = schemaComponents(schema) as SchemaComponents;
    for (const suffix of ["Operations", "Handlers", "FaultDetails"]) this.taken.add(`${service}${suffix}`);
    // The names the file refers to besides its own declarations: a schema type named `Date` or
    // `Record` must not shadow the global the `xs:dateTime` results and empty types are written
    // with, and the imported SoapHandlers is renamed when the service is called `Soap`.
    this.soapHandlers = this.claim("SoapHandlers");
    for (const used of GLOBAL_NAMES) this.taken.add(used);
    for (const [clark, type] of components.types) {
      if (type.kind === "complex") this.declared.set(type, { base: typeName(type.name), clark });
    }
    for (const [clark, decl] of components.elements) {
      if (decl.type.kind === "complex" && !this.declared.has(decl.type)) {
        this.declared.set(decl.type, { base: typeName(decl.localName), clark });
      }
    }
    for (const [clark, type] of components.types) {
      if (type.kind === "simple" && type.facets.enumeration !== undefined) {
        const name = this.claim(typeName(type.name));
        this.enums.set(type, name);
        this.declarations.push(
          `/** ${commentText(clark)}: an enumeration of xs:${type.base}. */\nexport type ${name} = ${this.enumeration(type)};`,
        );
      }
    }
  }

  write(contract: Contract, options: ResolvedGenerateOptions): string {
    const operations: string[] = [];
    const faultDetails = new Map<string, string>();
    for (const op of contract.operations) {
      const input = this.elementType(this.element(contract, op.input), "decoded");
      // A one-way operation has no output: SoapHandlers makes its handler return void.
      const output =
        op.output === undefined
          ? ""
          : `; output: ${this.elementType(this.element(contract, op.output), "init")}`;
      const doc = [
        `${op.name}: input ${op.input}`,
        op.output === undefined
          ? "one-way (WSDL 1.1 §2.4.1): no output, the handler returns nothing"
          : `output ${op.output}`,
        ...(op.soapAction ? [`soapAction "${op.soapAction}"`] : []),
        ...(Object.keys(op.faults).length > 0 ? [`faults: ${Object.keys(op.faults).join(", ")}`] : []),
      ];
      operations.push(
        `  /** ${commentText(doc.join("; "))} */\n  ${propertyKey(op.name)}: { input: ${input}${output} };`,
      );
      for (const clark of Object.values(op.faults)) {
        const decl = this.element(contract, clark);
        if (!faultDetails.has(decl.localName))
          faultDetails.set(decl.localName, this.elementType(decl, "init"));
      }
    }
    const s = this.service;
    const lines = [
      `// Generated by svc-soap-types from ${lineCommentText(options.source)}: do not edit, generate again when the contract changes.`,
      `// xs:long is decoded as ${this.longAs === "bigint" ? "bigint" : "a decimal string"} (longAs: "${this.longAs}").`,
      `import type { ${this.soapHandlers === "SoapHandlers" ? "SoapHandlers" : `SoapHandlers as ${this.soapHandlers}`} } from ${JSON.stringify(options.importFrom)};`,
      "",
      ...this.declarations.flatMap((d) => [d, ""]),
      "/** Each operation's payload (what its handler receives) and result (what it may return). */",
      `export type ${s}Operations = {`,
      ...operations,
      "};",
      "",
      `/** The handlers of the contract: \`createSoapService<${s}Operations>({ handlers })\` checks them against it. */`,
      `export type ${s}Handlers = ${this.soapHandlers}<${s}Operations>;`,
      "",
      "/** The declared faults' detail entries, by element name (`new SoapFault({ detail })`). */",
      `export type ${s}FaultDetails = {`,
      ...[...faultDetails].map(([key, type]) => `  ${propertyKey(key)}: ${type};`),
      "};",
      "",
    ];
    return lines.join("\n");
  }

  private element(contract: Contract, clark: string): ElementDecl {
    const decl = (schemaComponents(contract.schema) as SchemaComponents).elements.get(clark);
    if (!decl) throw new Error(`element ${clark} is not declared`); // loadContract checked it
    return decl;
  }

  private claim(base: string): string {
    let name = base;
    for (let i = 2; this.taken.has(name); i++) name = `${base}${i}`;
    this.taken.add(name);
    return name;
  }

  /** The type of an element's value: its type, `| null` when nillable (`xsi:nil`). */
  private elementType(decl: ElementDecl, mode: Mode, indent = ""): string {
    const type = this.typeOf(decl.type, mode, indent);
    return decl.nillable ? `${type} | null` : type;
  }

  private typeOf(type: SimpleType | ComplexType, mode: Mode, indent: string): string {
    if (type.kind === "simple") return this.simple(type, mode);
    // xs:anyType: any content, and an xsi:type may make it any value of any type.
    if (TYPE_NAMES.get(type) === ANY_TYPE) return "unknown";
    // A type with derived global types: an instance may be of any of them (`xsi:type`, `$type`).
    if (type.derived !== undefined && type.derived.length > 0) {
      // A derived type's values carry `$type` (the decoder sets it, the encoder needs it).
      const options = [type, ...type.derived]
        .filter((t) => !t.abstract)
        .map((t) =>
          t === type
            ? this.declaredType(t, mode, indent)
            : `(${this.declaredType(t, mode, indent)} & { $type: ${JSON.stringify(TYPE_NAMES.get(t))} })`,
        );
      return options.length === 0
        ? "never"
        : options.length === 1
          ? (options[0] as string)
          : `(${options.join(" | ")})`;
    }
    return this.declaredType(type, mode, indent);
  }

  private declaredType(type: ComplexType, mode: Mode, indent: string): string {
    const own = this.declared.get(type);
    if (!own) return this.objectType(type, mode, indent);
    const known = this.names.get(type)?.[mode];
    if (known !== undefined) return known;
    const name = this.claim(mode === "decoded" ? own.base : `${own.base}Init`);
    this.names.set(type, { ...this.names.get(type), [mode]: name });
    // Claimed before the body is written: a recursive reference finds the name.
    const body = this.objectType(type, mode, "");
    const doc =
      mode === "decoded"
        ? `${own.clark}, as a handler receives it.`
        : `${own.clark}, as a handler may return it (what the encoder accepts).`;
    this.declarations.push(`/** ${commentText(doc)} */\nexport type ${name} = ${body};`);
    return name;
  }

  private objectType(type: ComplexType, mode: Mode, indent: string): string {
    const properties: Property[] = [];
    for (const a of type.attributes) {
      // A default value is filled in by the decoder, so the property is always there.
      const present = mode === "decoded" ? a.required || a.defaultValue !== undefined : a.required;
      properties.push({
        key: a.name,
        type: this.simple(a.type, mode),
        optional: !present,
        doc: `attribute, ${describeSimple(a.type)}`,
      });
    }
    if (type.simpleContent) {
      properties.push({
        key: "$value",
        type: this.simple(type.simpleContent, mode),
        optional: false,
        doc: `simple content, ${describeSimple(type.simpleContent)}`,
      });
    } else if (type.content) {
      this.groupProperties(type.content, mode, false, properties, `${indent}  `);
    }
    if (type.anyAttribute) {
      properties.push({
        key: "$attributes",
        type: "Record<string, string>",
        optional: true,
        doc: "attributes of xs:anyAttribute, by Clark name ({namespace}local)",
      });
    }
    if (type.mixed)
      properties.push({ key: "$text", type: "string", optional: true, doc: "mixed content: the text" });
    if (properties.length === 0) return "Record<string, never>";
    const inner = `${indent}  `;
    const rendered = properties.map((p) => {
      const doc = p.doc === undefined ? "" : `${inner}/** ${commentText(p.doc)} */\n`;
      const optional = p.optional ? "?" : "";
      // exactOptionalPropertyTypes: the encoder treats `undefined` as absent, the decoder never writes it.
      const type = p.optional && mode === "init" ? `${p.type} | undefined` : p.type;
      return `${doc}${inner}${propertyKey(p.key)}${optional}: ${type};`;
    });
    return `{\n${rendered.join("\n")}\n${indent}}`;
  }

  /**
   * The properties of a content model. `optional` says an enclosing particle may match nothing:
   * a choice (one alternative is there), a group with `minOccurs="0"` or, for the decoder, a
   * sequence that can be empty and so is skipped when its first element is absent.
   */
  private groupProperties(
    g: GroupParticle,
    mode: Mode,
    optional: boolean,
    out: Property[],
    indent: string,
  ): void {
    const inner =
      optional ||
      g.kind === "choice" ||
      g.min === 0 ||
      (mode === "decoded" && g.kind === "sequence" && emptiable(g));
    for (const item of g.items) {
      if (item.kind === "any") {
        if (!out.some((p) => p.key === "$any")) {
          out.push({
            key: "$any",
            type: `${mode === "init" ? "readonly " : ""}{ name: string; value: unknown }[]`,
            optional: true,
            doc: "elements of xs:any, in document order: Clark name and value",
          });
        }
        continue;
      }
      if (item.kind !== "element") {
        this.groupProperties(item, mode, inner, out, indent);
        continue;
      }
      const decl = item.decl;
      const value = this.elementType(decl, mode, indent);
      const element = decl.nillable ? `(${value})` : value;
      const type = !item.many ? value : mode === "decoded" ? `${element}[]` : `readonly ${element}[]`;
      // The decoder writes [] for a repeated element it reached; the encoder takes a missing list as [].
      const absent = item.many ? inner || (mode === "init" && item.min === 0) : inner || item.min === 0;
      const doc = elementDoc(item.decl, item.min, item.max);
      const previous = out.find((p) => p.key === decl.localName);
      if (previous) {
        // One name in alternatives of a choice is one property (the compiler refuses the name
        // anywhere else twice: xsd/property-names.ts).
        if (previous.type !== type) previous.type = `${previous.type} | ${type}`;
        previous.optional &&= absent;
        continue;
      }
      out.push({ key: decl.localName, type, optional: absent, doc });
    }
  }

  private simple(type: SimpleType, mode: Mode): string {
    const named = this.enums.get(type);
    if (named !== undefined) return named;
    if (type.facets.enumeration !== undefined && type.variety === "atomic") return this.enumeration(type);
    if (type.variety === "list") {
      const item = this.simple(type.itemType as SimpleType, mode);
      const element = item.includes(" ") ? `(${item})` : item;
      return mode === "decoded" ? `${element}[]` : `readonly ${element}[] | string`;
    }
    if (type.variety === "union") {
      const members = new Set((type.memberTypes ?? []).flatMap((m) => this.simple(m, mode).split(" | ")));
      return [...members].join(" | ");
    }
    switch (BUILTIN_INFO[type.base].value) {
      case "boolean":
        return "boolean";
      case "int":
        return "number";
      case "bigint":
        if (mode === "init") return "bigint | number | string";
        return this.longAs === "bigint" ? "bigint" : "string";
      case "decimal":
        // Exact: decoded as the lexical form, never a binary floating-point number.
        return mode === "init" ? "string | number | bigint" : "string";
      case "float":
        return "number";
      case "bytes":
        return mode === "init" ? "Uint8Array | string" : "Uint8Array";
      default:
        if (type.base === "date" || type.base === "dateTime")
          return mode === "init" ? "string | Date" : "string";
        return "string";
    }
  }

  /** An enumeration as the union of its values, as the decoder returns them. */
  private enumeration(type: SimpleType): string {
    const values = new Set<string>();
    const kind = BUILTIN_INFO[type.base].value;
    for (const v of type.facets.enumeration ?? []) {
      if (kind === "int") values.add(String(Number(v)));
      else if (kind === "bigint")
        values.add(this.longAs === "bigint" ? `${BigInt(v)}n` : JSON.stringify(BigInt(v).toString()));
      else if (kind === "boolean") values.add(v === "true" || v === "1" ? "true" : "false");
      else if (kind === "float") {
        const n = floatValue(v);
        if (!Number.isFinite(n)) return "number";
        values.add(String(n));
      } else if (kind === "bytes") return "Uint8Array";
      else values.add(JSON.stringify(v));
    }
    return values.size === 0 ? "never" : [...values].join(" | ");
  }
}

function elementDoc(decl: ElementDecl, min: number, max: number): string {
  const parts = [decl.type.kind === "simple" ? describeSimple(decl.type) : `element of ${decl.type.name}`];
  if (min !== 1 || max !== 1)
    parts.push(`occurs ${min} to ${max === Number.POSITIVE_INFINITY ? "unbounded" : max}`);
  if (decl.nillable) parts.push("nillable");
  return parts.join(", ");
}

/** `xs:string, maxLength 254, pattern [^@\s]+@...`: the facets the types cannot express. */
function describeSimple(type: SimpleType): string {
  const f: Facets = type.facets;
  const parts = [
    type.variety === "list"
      ? `list of ${describeSimple(type.itemType as SimpleType)}`
      : type.variety === "union"
        ? `union of ${(type.memberTypes ?? []).map((m) => m.name).join(", ")}`
        : `xs:${type.base}`,
  ];
  for (const key of VALUE_FACETS) {
    if (f[key] !== undefined) parts.push(`${key} ${f[key]}`);
  }
  for (const step of f.patterns) parts.push(`pattern ${step.map((p) => p.source).join(" | ")}`);
  return parts.join(", ");
}
