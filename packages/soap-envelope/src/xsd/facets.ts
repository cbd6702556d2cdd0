import type { ParsedElement } from "../xml/reader.js";
import { BUILTIN_INFO, builtinLexical, primitiveOf } from "./builtins.js";
import { type SchemaDoc, unsupported, where, xsChildren } from "./components.js";
import { SchemaCompileError } from "./errors.js";
import { applyWhiteSpace, collapse, DECIMAL_RE } from "./lexical.js";
import type { Facets, SimpleType } from "./model.js";
import { compileXsdPattern, type XsdPattern, XsdPatternError } from "./regex.js";

/**
 * The facets of an `xs:restriction` of `base` (XML Schema 1.0 Part 2 §4.3): the base's facets
 * with this step's added. Enumeration values and patterns of one step are alternatives; the
 * pattern steps of a derivation must all match (Part 2 §4.3.4).
 */
export function restrictFacets(node: ParsedElement, doc: SchemaDoc, base: SimpleType, name: string): Facets {
  const facets: Facets = { ...base.facets, patterns: [...base.facets.patterns] };
  const patterns: XsdPattern[] = [];
  const enumeration: string[] = [];
  const kind = base.variety === "atomic" ? BUILTIN_INFO[base.base].value : undefined;
  const decimalFamily = kind === "decimal" || kind === "int" || kind === "bigint";
  const float = kind === "float";
  // Part 2 §4.1.5: the length facets apply to strings, URIs, binary types (and lists, QNames).
  const primitive = base.variety === "atomic" ? primitiveOf(base.base) : undefined;
  const lengthApplies =
    primitive === "string" ||
    primitive === "anySimpleType" ||
    primitive === "anyURI" ||
    kind === "bytes" ||
    kind === "qname";
  for (const f of xsChildren(node, doc.location)) {
    if (f.localName === "annotation" || f.localName === "simpleType") continue;
    // Part 1 §3.4.2: a simpleContent restriction's attribute uses follow its facets (complex-types.ts).
    if (f.localName === "attribute" || f.localName === "attributeGroup" || f.localName === "anyAttribute")
      continue;
    const value = f.attributes.value;
    if (value === undefined) throw new SchemaCompileError(`${where(f, doc)}: facet without a value`);
    // Part 2 §4.1.5: a union takes pattern and enumeration only; a list those and the lengths.
    if (
      (base.variety === "union" && !["enumeration", "pattern"].includes(f.localName)) ||
      (base.variety === "list" && !LIST_FACETS.has(f.localName))
    ) {
      throw new SchemaCompileError(
        `${where(f, doc)}: xs:${f.localName} does not apply to a ${base.variety} type`,
      );
    }
    switch (f.localName) {
      case "whiteSpace":
        break; // the compiler reads it with the type (xsd/simple-types.ts)
      case "enumeration":
        enumeration.push(applyWhiteSpace(base.variety === "union" ? "collapse" : base.whiteSpace, value));
        break;
      case "pattern":
        patterns.push(xsdPattern(value, doc, name));
        break;
      case "length":
      case "minLength":
      case "maxLength":
      case "totalDigits":
      case "fractionDigits": {
        const n = Number(value);
        if (!Number.isSafeInteger(n) || n < 0)
          throw new SchemaCompileError(`${where(f, doc)}: ${value} is not a count`);
        if (f.localName.endsWith("Digits") && !decimalFamily) {
          throw new SchemaCompileError(
            `${where(f, doc)}: xs:${f.localName} applies to xs:decimal and its derived types only`,
          );
        }
        if (f.localName.endsWith("ength") && base.variety === "atomic" && !lengthApplies) {
          throw new SchemaCompileError(
            `${where(f, doc)}: xs:${f.localName} does not apply to xs:${base.base}`,
          );
        }
        facets[f.localName] = n;
        break;
      }
      case "minInclusive":
      case "maxInclusive":
      case "minExclusive":
      case "maxExclusive":
        if (!decimalFamily && !float && primitive !== "duration") {
          throw new SchemaCompileError(
            `${where(f, doc)}: xs:${f.localName} is supported on xs:decimal, xs:float, xs:double, xs:duration and their derived types only`,
          );
        }
        if (
          !(float
            ? builtinLexical("double", collapse(value))
            : primitive === "duration"
              ? builtinLexical("duration", collapse(value))
              : DECIMAL_RE.test(collapse(value)))
        )
          throw new SchemaCompileError(`${where(f, doc)}: ${value} is not a number`);
        facets[f.localName] = collapse(value);
        break;
      default:
        throw unsupported(f, doc, name);
    }
  }
  if (patterns.length > 0) facets.patterns.push(patterns);
  if (enumeration.length > 0) facets.enumeration = enumeration;
  return facets;
}

const LIST_FACETS = new Set(["length", "minLength", "maxLength", "enumeration", "pattern", "whiteSpace"]);

/**
 * Compiles a `pattern` facet (XML Schema Part 2 §4.3.4) for the linear-time engine; a pattern
 * that is invalid or cannot be translated stops the contract from loading, naming the type.
 */
function xsdPattern(pattern: string, doc: SchemaDoc, typeName: string): XsdPattern {
  try {
    return compileXsdPattern(pattern);
  } catch (err) {
    if (!(err instanceof XsdPatternError)) throw err;
    throw new SchemaCompileError(
      `${doc.location}: xs:pattern "${pattern}" of type "${typeName}" cannot be used: ${err.message}`,
    );
  }
}
