import { interned } from "../xml/interned.js";
import { shown, type XmlElement } from "../xml/reader.js";
import { XML_NON_WHITESPACE } from "../xml/space.js";
import { BUILTIN_INFO } from "./builtins.js";
import { decodeElement, matchGroup } from "./decode.js";
import { decodeSimple, describeNs, missingElement } from "./decode-simple.js";
import { SchemaValidationError } from "./errors.js";
import { canonicalInteger, collapseFast, enumerationLiteral, lexicalCheck } from "./lexical.js";
import {
  canStart,
  type ElementDecl,
  type ElementParticle,
  emptiable,
  type GroupParticle,
  type LongRepresentation,
  PerDeclaration,
  type SimpleType,
} from "./model.js";

// Compiled decoders: the walk above, specialised once per element declaration to what the
// declaration allows, so a message is not interpreted against the schema model. They decide,
// decode and fail exactly as decodeElement does: an element with any attribute, a type with
// attributes or simple content, and any content model but a sequence of elements occurring once
// are handed to decodeElement itself.

/** Decodes an element already known to carry the declaration's name; `path` as in decodeElement. */
export type ElementDecoder = (element: XmlElement, path: string) => unknown;

/** The compiled decoders of one schema (its `longAs`), filled as declarations are first used. */
export class Decoders extends PerDeclaration<ElementDecoder> {
  constructor(readonly longAs: LongRepresentation) {
    super();
  }

  protected compile(decl: ElementDecl): ElementDecoder {
    return compileDecoder(decl, this);
  }
}

function hasAttribute(attributes: Readonly<Record<string, string>>): boolean {
  for (const _ in attributes) return true;
  return false;
}

function compileDecoder(decl: ElementDecl, decoders: Decoders): ElementDecoder {
  const longAs = decoders.longAs;
  const interpret: ElementDecoder = (element, path) => decodeElement(element, decl, path, longAs);
  const type = decl.type;
  if (decl.valueConstraint !== undefined) return interpret;
  if (type.kind === "simple") {
    // A QName's value depends on the namespaces in scope, which decodeElement passes on.
    if (needsScope(type)) return interpret;
    const simple = simpleDecoder(type, longAs);
    return (element, path) => {
      // With no attribute neither xsi:nil nor any other can apply (decodeElement's first steps).
      if (hasAttribute(element.attributes)) return interpret(element, path);
      if (element.children.length > 0) throw new SchemaValidationError(path, "must not contain elements");
      return simple(element.text, path);
    };
  }
  // An abstract type refuses every element without xsi:type; a mixed one takes text.
  if (type.attributes.length > 0 || type.simpleContent || type.abstract || type.mixed) return interpret;
  const content = type.content;
  const sequence = content ? sequenceOfElements(content) : undefined;
  if (content && sequence === undefined) {
    // Another content model: decodeElement's matching, behind the same checks.
    return (element, path) => {
      if (hasAttribute(element.attributes)) return interpret(element, path);
      if (XML_NON_WHITESPACE.test(element.text))
        throw new SchemaValidationError(path, "must not contain text");
      const out: Record<string, unknown> = {};
      const children = element.children;
      const index = matchGroup(content, { children, out, path, longAs }, 0);
      unexpected(children, index, path);
      return out;
    };
  }
  const group = content as GroupParticle | undefined;
  const particles = sequence ?? [];
  const skippable = group !== undefined && emptiable(group);
  const steps = particles.map((p) => particleDecoder(p, decoders));
  return (element, path) => {
    if (hasAttribute(element.attributes)) return interpret(element, path);
    if (XML_NON_WHITESPACE.test(element.text)) throw new SchemaValidationError(path, "must not contain text");
    const out: Record<string, unknown> = {};
    const children = element.children;
    let index = 0;
    // matchGroup on a sequence occurring once: an emptiable one its first child cannot start
    // matches nothing at all.
    if (group !== undefined) {
      const first = children[0];
      if (!(skippable && (first === undefined || !canStart(group, first))))
        for (const step of steps) index = step(children, out, path, index);
    }
    unexpected(children, index, path);
    return out;
  };
}

/** The element particles of a sequence occurring exactly once, when it holds nothing else. */
function sequenceOfElements(g: GroupParticle): ElementParticle[] | undefined {
  if (g.kind !== "sequence" || g.min !== 1 || g.max !== 1) return undefined;
  const out: ElementParticle[] = [];
  for (const item of g.items) {
    if (item.kind !== "element") return undefined;
    out.push(item);
  }
  return out;
}

type ParticleStep = (
  children: readonly XmlElement[],
  out: Record<string, unknown>,
  path: string,
  i: number,
) => number;

/** matchParticle for one element particle, its element's decoder compiled on first use. */
function particleDecoder(p: ElementParticle, decoders: Decoders): ParticleStep {
  // Interned: each child's names are compared with them, and `localName` keys the value.
  const localName = interned(p.decl.localName);
  const namespace = interned(p.decl.namespace);
  const { min, max, many } = p;
  let decode: ElementDecoder | undefined;
  // The child's path is the same string for the same parent path: built once, not per element.
  let parentPath: string | undefined;
  let childPath = "";
  return (children, out, path, i) => {
    let count = 0;
    while (count < max) {
      const child = children[i];
      if (!child || child.localName !== localName || child.namespace !== namespace) break;
      decode ??= decoders.for(p.decl);
      if (path !== parentPath) {
        childPath = `${path}/${localName}`;
        parentPath = path;
      }
      const value = decode(child, childPath);
      if (many) {
        const list = (out[localName] as unknown[] | undefined) ?? [];
        list.push(value);
        out[localName] = list;
      } else {
        out[localName] = value;
      }
      i++;
      count++;
    }
    if (count < min) throw missingElement(path, `element ${localName}${describeNs(namespace)}`, children[i]);
    if (many && count === 0 && out[localName] === undefined) out[localName] = [];
    return i;
  };
}

function unexpected(children: readonly XmlElement[], index: number, path: string): void {
  const extra = children[index];
  if (extra) {
    throw new SchemaValidationError(
      path,
      `unexpected element ${shown(extra.localName)}${describeNs(extra.namespace)}`,
    );
  }
}

/** decodeSimple for one type, its lexical check chosen once. */
function simpleDecoder(type: SimpleType, longAs: LongRepresentation): (raw: string, path: string) => unknown {
  const generic = (raw: string, path: string) => decodeSimple(type, raw, path, longAs, undefined);
  if (type.variety !== "atomic") return generic;
  const check = lexicalCheck(type);
  switch (type.base) {
    case "string":
      if (type.whiteSpace !== "preserve") return generic;
      return (raw, path) => {
        check(raw, path);
        return raw;
      };
    case "long":
      return longAs === "bigint"
        ? (raw, path) => {
            const lexical = collapseFast(raw);
            check(lexical, path);
            return BigInt(canonicalInteger(lexical));
          }
        : (raw, path) => {
            const lexical = collapseFast(raw);
            check(lexical, path);
            return canonicalInteger(lexical);
          };
    case "int":
      return (raw, path) => {
        const lexical = collapseFast(raw);
        check(lexical, path);
        return Number(canonicalInteger(lexical));
      };
    case "boolean":
      return (raw, path) => {
        const lexical = collapseFast(raw);
        check(lexical, path);
        return lexical === "true" || lexical === "1";
      };
    case "decimal": {
      // An enumerated xs:decimal decodes to the literal it equals, as decodeSimple does.
      const enumerated = type.facets.enumeration !== undefined;
      return (raw, path) => {
        const lexical = collapseFast(raw);
        check(lexical, path);
        return enumerated ? (enumerationLiteral(type, lexical) ?? lexical) : lexical;
      };
    }
    case "date":
    case "dateTime":
      return (raw, path) => {
        const lexical = collapseFast(raw);
        check(lexical, path);
        return lexical;
      };
    default:
      return generic;
  }
}

/** Whether decoding a type's values needs the namespaces in scope (a QName among its values). */
function needsScope(type: SimpleType): boolean {
  if (type.variety === "list") return needsScope(type.itemType as SimpleType);
  if (type.variety === "union") return (type.memberTypes ?? []).some(needsScope);
  return BUILTIN_INFO[type.base].value === "qname";
}
