import { type SchemaDoc, unsupported, where, xsChildren } from "./schema-components.js";
import { SchemaCompileError } from "./schema-errors.js";
import type { Facets, SimpleType } from "./schema-model.js";
import type { ParsedElement } from "./xml.js";
import { collapse, DECIMAL_RE } from "./xsd-lexical.js";
import { compileXsdPattern, type XsdPattern, XsdPatternError } from "./xsd-regex.js";

/**
 * The facets of an `xs:restriction` of `base` (XML Schema 1.0 Part 2 §4.3): the base's facets
 * with this step's added. Enumeration values and patterns of one step are alternatives; the
 * pattern steps of a derivation must all match (Part 2 §4.3.4).
 */
export function restrictFacets(node: ParsedElement, doc: SchemaDoc, base: SimpleType, name: string): Facets {
  const facets: Facets = { ...base.facets, patterns: [...base.facets.patterns] };
  const patterns: XsdPattern[] = [];
  const enumeration: string[] = [];
  for (const f of xsChildren(node, doc.location)) {
    if (f.localName === "annotation" || f.localName === "simpleType") continue;
    const value = f.attributes.value;
    if (value === undefined) throw new SchemaCompileError(`${where(f, doc)}: facet without a value`);
    switch (f.localName) {
      case "enumeration":
        enumeration.push(base.base === "string" ? value : collapse(value));
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
        if (
          f.localName.endsWith("Digits") &&
          base.base !== "decimal" &&
          base.base !== "long" &&
          base.base !== "int"
        ) {
          throw new SchemaCompileError(`${where(f, doc)}: xs:${f.localName} applies to numeric types only`);
        }
        facets[f.localName] = n;
        break;
      }
      case "minInclusive":
      case "maxInclusive":
      case "minExclusive":
      case "maxExclusive":
        if (base.base !== "decimal" && base.base !== "long" && base.base !== "int") {
          throw new SchemaCompileError(
            `${where(f, doc)}: xs:${f.localName} is supported on xs:decimal, xs:long and xs:int only`,
          );
        }
        if (!DECIMAL_RE.test(collapse(value)))
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
