import { SchemaValidationError } from "./schema-errors.js";
import {
  type ComplexType,
  canStart,
  type ElementDecl,
  type ElementParticle,
  emptiable,
  firstNames,
  type GroupParticle,
  type LongRepresentation,
  type Particle,
  type SimpleType,
  XSI_NIL,
  XSI_NS,
} from "./schema-model.js";
import type { XmlElement } from "./xml.js";
import { checkLexical, collapse } from "./xsd-lexical.js";

/**
 * Validates an element against its declaration and decodes it into a plain object: attributes
 * and child elements by local name, simple content as `$value`, `xsi:nil` as `null`.
 * @throws {SchemaValidationError} when it does not match, `path` naming where
 */
export function decodeElement(
  element: XmlElement,
  decl: ElementDecl,
  path: string,
  longAs: LongRepresentation,
): unknown {
  const nil = element.attributes[XSI_NIL];
  if (nil !== undefined && (nil.trim() === "true" || nil.trim() === "1")) {
    if (!decl.nillable) throw new SchemaValidationError(path, "is not nillable");
    if (element.children.length > 0 || /\S/.test(element.text)) {
      throw new SchemaValidationError(path, "has xsi:nil and content");
    }
    return null;
  }
  for (const key in element.attributes) {
    if (key.startsWith(XSI_PREFIX) && key !== XSI_NIL) {
      throw new SchemaValidationError(path, `attribute xsi:${key.slice(XSI_NS.length + 2)} is not supported`);
    }
  }
  const type = decl.type;
  if (type.kind === "simple") {
    checkNoAttributes(element, path);
    if (element.children.length > 0) throw new SchemaValidationError(path, "must not contain elements");
    return decodeSimple(type, element.text, path, longAs);
  }
  const out: Record<string, unknown> = {};
  for (const a of type.attributes) {
    const raw = element.attributes[a.key] ?? a.defaultValue;
    if (raw === undefined) {
      if (a.required) throw new SchemaValidationError(`${path}/@${a.name}`, "is required");
      continue;
    }
    out[a.name] = decodeSimple(a.type, raw, `${path}/@${a.name}`, longAs);
  }
  let known: ReadonlySet<string> | undefined;
  for (const key in element.attributes) {
    known ??= knownAttributes(type);
    if (!known.has(key)) throw new SchemaValidationError(path, `attribute "${key}" is not allowed`);
  }
  if (type.simpleContent) {
    if (element.children.length > 0) throw new SchemaValidationError(path, "must not contain elements");
    out.$value = decodeSimple(type.simpleContent, element.text, path, longAs);
    return out;
  }
  if (/\S/.test(element.text)) throw new SchemaValidationError(path, "must not contain text");
  const children = element.children;
  let index = 0;
  if (type.content) index = matchGroup(type.content, { children, out, path, longAs }, 0);
  const extra = children[index];
  if (extra) {
    throw new SchemaValidationError(
      path,
      `unexpected element ${extra.localName}${describeNs(extra.namespace)}`,
    );
  }
  return out;
}

/** One complex element's content being matched: its children, the object they decode into. */
interface ContentMatch {
  children: readonly XmlElement[];
  out: Record<string, unknown>;
  path: string;
  longAs: LongRepresentation;
}

/** Matches a particle against the children from index `i` on; returns the index after its match. */
function matchParticle(p: Particle, m: ContentMatch, i: number): number {
  const { children, out, path, longAs } = m;
  if (p.kind !== "element") return matchGroup(p, m, i);
  let count = 0;
  while (count < p.max) {
    const child = children[i];
    if (!child || child.localName !== p.decl.localName || child.namespace !== p.decl.namespace) break;
    const value = decodeElement(child, p.decl, `${path}/${p.decl.localName}`, longAs);
    if (p.many) {
      const list = (out[p.decl.localName] as unknown[] | undefined) ?? [];
      list.push(value);
      out[p.decl.localName] = list;
    } else {
      out[p.decl.localName] = value;
    }
    i++;
    count++;
  }
  if (count < p.min) {
    const found = children[i];
    throw new SchemaValidationError(
      path,
      `expected element ${p.decl.localName}${describeNs(p.decl.namespace)}${found ? `, found ${found.localName}${describeNs(found.namespace)}` : ""}`,
    );
  }
  if (p.many && count === 0 && out[p.decl.localName] === undefined) out[p.decl.localName] = [];
  return i;
}

function matchGroup(g: GroupParticle, m: ContentMatch, i: number): number {
  const { children, out, path, longAs } = m;
  if (g.kind === "all") {
    const seen = new Set<ElementParticle>();
    for (;;) {
      const child = children[i];
      if (!child) break;
      const p = g.items.find(
        (item): item is ElementParticle =>
          item.kind === "element" &&
          item.decl.localName === child.localName &&
          item.decl.namespace === child.namespace,
      );
      if (!p || seen.has(p)) break;
      seen.add(p);
      out[p.decl.localName] = decodeElement(child, p.decl, `${path}/${p.decl.localName}`, longAs);
      i++;
    }
    if (seen.size > 0 || g.min > 0) {
      for (const item of g.items) {
        if (item.kind === "element" && item.min > 0 && !seen.has(item)) {
          throw new SchemaValidationError(
            path,
            `expected element ${item.decl.localName}${describeNs(item.decl.namespace)}`,
          );
        }
      }
    }
    return i;
  }
  for (let occ = 0; occ < g.max; occ++) {
    const child = children[i];
    const starts = child !== undefined && canStart(g, child);
    if (!starts && (occ >= g.min || emptiable(g))) break;
    const before = i;
    if (g.kind === "sequence") {
      for (const item of g.items) i = matchParticle(item, m, i);
    } else {
      const alt = child ? g.items.find((item) => canStart(item, child)) : undefined;
      if (!alt) {
        const names = g.items.flatMap((item) => [...firstNames(item)]).join(", ");
        throw new SchemaValidationError(
          path,
          `expected one of ${names}${child ? `, found ${child.localName}` : ""}`,
        );
      }
      i = matchParticle(alt, m, i);
    }
    if (i === before) break;
  }
  return i;
}

function decodeSimple(type: SimpleType, raw: string, path: string, longAs: LongRepresentation): unknown {
  const lexical = type.base === "string" ? raw : collapse(raw);
  checkLexical(type, lexical, path);
  switch (type.base) {
    case "long":
      return longAs === "bigint" ? BigInt(lexical) : BigInt(lexical).toString();
    case "int":
      return Number(lexical);
    case "boolean":
      return lexical === "true" || lexical === "1";
    default:
      return lexical;
  }
}

function describeNs(ns: string): string {
  return ns ? ` {${ns}}` : "";
}

const XSI_PREFIX = `{${XSI_NS}}`;

const KNOWN_ATTRIBUTES = new WeakMap<ComplexType, ReadonlySet<string>>();

/** The attribute keys an element of a complex type may carry (its attributes, `xsi:nil`), once per type. */
function knownAttributes(type: ComplexType): ReadonlySet<string> {
  let known = KNOWN_ATTRIBUTES.get(type);
  if (known === undefined) {
    known = new Set([XSI_NIL, ...type.attributes.map((a) => a.key)]);
    KNOWN_ATTRIBUTES.set(type, known);
  }
  return known;
}

function checkNoAttributes(element: XmlElement, path: string): void {
  for (const key in element.attributes) {
    if (key !== XSI_NIL) throw new SchemaValidationError(path, `attribute "${key}" is not allowed`);
  }
}
