import { escapeXml } from "@svc/errors";
import { interned } from "../xml/interned.js";
import { BUILTIN_INFO } from "./builtins.js";
import { allowedKeys, encodeContent, encodeElement, nilElement } from "./encode.js";
import {
  describeValue,
  isPlainString,
  NEEDS_WORK,
  needsDeclarations,
  simpleEncoder,
} from "./encode-simple.js";
import { SchemaValidationError } from "./errors.js";
import { checkXmlChars, lexicalCheck } from "./lexical.js";
import { type ElementDecl, type ElementParticle, PerDeclaration } from "./model.js";

// Compiled encoders: encodeElement specialised once per element declaration (its tags written
// out, its simple types' conversions and checks chosen), writing and failing exactly as
// encodeElement does. A type with attributes or simple content is handed to encodeElement, and
// any content model but a sequence of elements occurring once to encodeGroup.

/** Encodes a value as an element of one declaration; arguments as encodeElement's. */
export type ElementEncoder = (value: unknown, parentNs: string, path: string) => string;

/** The compiled encoders of one schema, filled as declarations are first used. */
export class Encoders extends PerDeclaration<ElementEncoder> {
  protected compile(decl: ElementDecl): ElementEncoder {
    return compileEncoder(decl, this);
  }
}

function compileEncoder(decl: ElementDecl, encoders: Encoders): ElementEncoder {
  const type = decl.type;
  const interpret: ElementEncoder = (value, parentNs, path) => encodeElement(decl, value, parentNs, path);
  // The constructs encodeElement alone writes: attributes and simple content, `$type`
  // substitution, wildcard attributes, mixed text, xs:anyType's strings; QNames' declarations.
  if (
    type.kind === "complex" &&
    (type.attributes.length > 0 ||
      type.simpleContent ||
      type.derived !== undefined ||
      type.baseType?.kind === "complex" ||
      type.abstract ||
      type.anyAttribute ||
      type.mixed)
  )
    return interpret;
  if (type.kind === "simple" && needsDeclarations(type)) return interpret;
  const ns = decl.namespace;
  const name = decl.localName;
  const open = `<${name}`;
  const openNs = `<${name} xmlns="${escapeXml(ns)}"`;
  const close = `</${name}>`;
  const nillable = decl.nillable;
  if (type.kind === "simple" && isPlainString(type)) {
    const simple = simpleEncoder(type);
    const check = lexicalCheck(type);
    return (value, parentNs, path) => {
      const start = ns === parentNs ? open : openNs;
      if (value === null) return nilElement(start, nillable, path);
      if (typeof value !== "string") return `${start}>${escapeXml(simple(value, path))}${close}`;
      // simpleEncoder's checks and escapeXml, with one expression for what checkXmlChars looks
      // for and escapeXml replaces: a value without any of it (most) needs neither.
      if (!NEEDS_WORK.test(value)) {
        check(value, path);
        return `${start}>${value}${close}`;
      }
      checkXmlChars(value, path);
      check(value, path);
      return `${start}>${escapeXml(value)}${close}`;
    };
  }
  if (type.kind === "simple") {
    const simple = simpleEncoder(type);
    // A lexical form that passed its check holds no character to escape (XML 1.0 §2.4) unless
    // it is an xs:string's: the other built-ins' lexical spaces are digits, signs, `.`, `:`,
    // `T`, `Z` and the booleans' words (XML Schema Part 2 §3.2, §3.3).
    const needsEscape =
      type.variety !== "atomic" ||
      (BUILTIN_INFO[type.base].value === "string" && type.base !== "date" && type.base !== "dateTime");
    return (value, parentNs, path) => {
      const start = ns === parentNs ? open : openNs;
      if (value === null) return nilElement(start, nillable, path);
      const lexical = simple(value, path);
      return `${start}>${needsEscape ? escapeXml(lexical) : lexical}${close}`;
    };
  }
  const content = type.content;
  const sequence =
    content && content.kind === "sequence" && content.min === 1 && content.max === 1
      ? content.items
      : undefined;
  const steps =
    sequence?.every((item) => item.kind === "element") === true
      ? sequence.map((item) => particleEncoder(item as ElementParticle, ns, encoders))
      : undefined;
  const allowed = allowedKeys(type);
  return (value, parentNs, path) => {
    const start = ns === parentNs ? open : openNs;
    if (value === null) return nilElement(start, nillable, path);
    if (typeof value !== "object" || value === undefined || Array.isArray(value) || value instanceof Date) {
      throw new SchemaValidationError(path, `expected an object, got ${describeValue(value)}`);
    }
    const obj = value as Record<string, unknown>;
    let inner = "";
    if (steps !== undefined) {
      for (const step of steps) inner += step(obj, path);
    } else if (content) {
      inner = encodeContent(content, obj, ns, path);
    }
    for (const key of Object.keys(obj)) {
      if (!allowed.has(key) && obj[key] !== undefined)
        throw new SchemaValidationError(path, `"${key}" is not in the schema`);
    }
    return `${start}>${inner}${close}`;
  };
}

/** encodeParticle for one element particle inside an element of namespace `ns`. */
function particleEncoder(
  p: ElementParticle,
  ns: string,
  encoders: Encoders,
): (obj: Record<string, unknown>, path: string) => string {
  // Interned: it is the key of every value read (a key V8 does not hold interned is looked up
  // among the interned ones on each read).
  const name = interned(p.decl.localName);
  const { min, max } = p;
  let encode: ElementEncoder | undefined;
  if (!p.many) {
    // The child's path is the same string for the same parent path (an element's path only
    // varies inside a list): built once, not per value.
    let parentPath: string | undefined;
    let childPath = "";
    return (obj, path) => {
      const value = obj[name];
      if (path !== parentPath) {
        childPath = `${path}.${name}`;
        parentPath = path;
      }
      // One value or none: encodeParticle's checks on a list of zero or one.
      const count = value === undefined ? 0 : 1;
      if (count < min) throw new SchemaValidationError(childPath, "is required");
      if (count > max) throw new SchemaValidationError(childPath, `occurs at most ${max} times`);
      if (count === 0) return "";
      encode ??= encoders.for(p.decl);
      return encode(value, ns, childPath);
    };
  }
  return (obj, path) => {
    const value = obj[name];
    const childPath = `${path}.${name}`;
    const list = value === undefined ? [] : value;
    if (!Array.isArray(list)) {
      throw new SchemaValidationError(childPath, `expected an array, got ${describeValue(list)}`);
    }
    if (list.length < min) throw new SchemaValidationError(childPath, "is required");
    if (list.length > max) throw new SchemaValidationError(childPath, `occurs at most ${max} times`);
    encode ??= encoders.for(p.decl);
    let out = "";
    for (let i = 0; i < list.length; i++) out += encode(list[i], ns, `${childPath}[${i}]`);
    return out;
  };
}
