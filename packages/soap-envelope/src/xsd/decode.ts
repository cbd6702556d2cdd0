import { clark, type ParsedElement, shown, type XmlElement } from "../xml/reader.js";
import { trimXml, XML_NON_WHITESPACE } from "../xml/space.js";
import {
  attributeNamespace,
  checkEncodingStyle,
  checkFixed,
  checkNoAttributes,
  decodeSimple,
  describeNs,
  knownAttributes,
  missingElement,
  SOAP_ENCODING_STYLE,
  SOAP_IGNORED,
  valueText,
  XSI_HINTS,
  XSI_PREFIX,
  xsiType,
} from "./decode-simple.js";
import { SchemaValidationError } from "./errors.js";
import {
  type AnyParticle,
  type ComplexType,
  canStart,
  type ElementDecl,
  type ElementParticle,
  emptiable,
  firstNames,
  type GroupParticle,
  type LongRepresentation,
  type Particle,
  REGISTRY,
  TYPE_NAMES,
  type Wildcard,
  wildcardAllows,
  XS_NS,
  XSI_NIL,
  XSI_NS,
  XSI_TYPE,
} from "./model.js";

export { decodeSimple } from "./decode-simple.js";

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
  let nilled = false;
  if (nil !== undefined) {
    const nilValue = trimXml(nil);
    const isNil = nilValue === "true" || nilValue === "1";
    // XML Schema Part 1 §3.2.7: xsi:nil is declared with type xs:boolean, and §3.2.4 (Attribute
    // Locally Valid) requires its value to be valid against it.
    if (!isNil && nilValue !== "false" && nilValue !== "0") {
      throw new SchemaValidationError(path, `xsi:nil="${shown(nil, 40)}" is not an xs:boolean`);
    }
    // §3.3.4, Element Locally Valid (Element) 3.1: "If {nillable} is false, then there must be no
    // attribute information item among the element information item's [attributes] whose
    // [namespace name] is identical to http://www.w3.org/2001/XMLSchema-instance and whose
    // [local name] is nil": xsi:nil="false" on a non-nillable element is invalid too.
    if (!decl.nillable) throw new SchemaValidationError(path, "is not nillable");
    if (isNil) {
      // §3.3.4 clause 3.2.1: a nilled element "must have no character or element information
      // item [children]": white space is character content too (`<note xsi:nil="true"> </note>`
      // would be null here and "  " to a reader that takes the text). Comments are not children.
      if (element.children.length > 0 || element.text !== "") {
        throw new SchemaValidationError(path, "has xsi:nil and content");
      }
      nilled = true;
    }
  }
  let type = decl.type;
  for (const key in element.attributes) {
    if (key === XSI_TYPE) type = xsiType(element, decl, path);
    else if (key.startsWith(XSI_PREFIX) && key !== XSI_NIL && !XSI_HINTS.has(key)) {
      throw new SchemaValidationError(
        path,
        `attribute xsi:${shown(key.slice(XSI_NS.length + 2))} is not supported`,
      );
    }
  }
  // Part 1 §3.3.4 clause 4.2 and §3.4.4 clause 1: an element of an abstract type is valid only
  // with an xsi:type naming a type derived from it that is not abstract.
  if (type.kind === "complex" && type.abstract) {
    throw new SchemaValidationError(
      path,
      `is of the abstract type ${TYPE_NAMES.get(type) ?? type.name}: xsi:type must name a type derived from it`,
    );
  }
  const scope = (element as Partial<ParsedElement>).scope;
  // A nilled element is null once its attributes are checked: xsi:nil exempts its content from
  // the type (§3.3.4 clause 3.2), not its attributes (§3.3.4 clause 5, Element Locally Valid
  // (Type): a simple type allows none but xsi:*; §3.4.4 clauses 3 and 4: a complex type's
  // undeclared attributes are refused and its required ones still required).
  if (type.kind === "simple") {
    checkNoAttributes(element, path);
    if (nilled) return null;
    if (element.children.length > 0) throw new SchemaValidationError(path, "must not contain elements");
    const text = valueText(element, decl, type, path);
    const value = decodeSimple(type, text, path, longAs, scope);
    // A value of a type derived by xsi:type is also one of the declared simple type (§3.14.6):
    // it keeps the declared type's JavaScript form (an xs:int in place of an xs:long stays a
    // bigint), the one the handler's types promise.
    return type !== decl.type && decl.type.kind === "simple"
      ? decodeSimple(decl.type, text, path, longAs, scope)
      : value;
  }
  const out: Record<string, unknown> = {};
  for (const a of type.attributes) {
    // Own attributes only: an absent `constructor` or `toString` is not Object.prototype's.
    const raw = Object.hasOwn(element.attributes, a.key) ? element.attributes[a.key] : a.defaultValue;
    if (raw === undefined) {
      if (a.required) throw new SchemaValidationError(`${path}/@${a.name}`, "is required");
      continue;
    }
    out[a.name] = decodeSimple(a.type, raw, `${path}/@${a.name}`, longAs, scope);
    if (a.fixed !== undefined) checkFixed(a.type, raw, a.fixed, `${path}/@${a.name}`);
  }
  let known: ReadonlySet<string> | undefined;
  let wild: Record<string, string> | undefined;
  for (const key in element.attributes) {
    known ??= knownAttributes(type);
    if (known.has(key) || SOAP_IGNORED.has(key) || XSI_HINTS.has(key) || key === XSI_TYPE) continue;
    if (key === SOAP_ENCODING_STYLE) checkEncodingStyle(element.attributes[key] ?? "", path);
    else if (type.anyAttribute && wildcardAllows(type.anyAttribute, attributeNamespace(key))) {
      // Part 1 §3.10.4: an attribute the wildcard allows, kept as written under its Clark name.
      wild ??= {};
      wild[key] = element.attributes[key] ?? "";
    } else throw new SchemaValidationError(path, `attribute "${shown(key)}" is not allowed`);
  }
  if (wild) out.$attributes = wild;
  if (nilled) return null;
  if (type !== decl.type) out.$type = TYPE_NAMES.get(type);
  if (type.simpleContent) {
    if (element.children.length > 0) throw new SchemaValidationError(path, "must not contain elements");
    out.$value = decodeSimple(
      type.simpleContent,
      valueText(element, decl, type.simpleContent, path),
      path,
      longAs,
      scope,
    );
    return out;
  }
  if (XML_NON_WHITESPACE.test(element.text)) {
    // Part 1 §3.4.4 clause 2.3: character data only where the type is mixed.
    if (!type.mixed) throw new SchemaValidationError(path, "must not contain text");
    out.$text = element.text;
  }
  const children = element.children;
  let index = 0;
  if (type.content) index = matchGroup(type.content, { children, out, path, longAs }, 0);
  const extra = children[index];
  if (extra) {
    throw new SchemaValidationError(
      path,
      `unexpected element ${shown(extra.localName)}${describeNs(extra.namespace)}`,
    );
  }
  return out;
}

/** One complex element's content being matched: its children, the object they decode into. */
export interface ContentMatch {
  children: readonly XmlElement[];
  out: Record<string, unknown>;
  path: string;
  longAs: LongRepresentation;
}

/** Matches a particle against the children from index `i` on; returns the index after its match. */
function matchParticle(p: Particle, m: ContentMatch, i: number): number {
  const { children, out, path, longAs } = m;
  if (p.kind === "any") return matchAny(p, m, i);
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
  if (count < p.min)
    throw missingElement(path, `element ${p.decl.localName}${describeNs(p.decl.namespace)}`, children[i]);
  if (p.many && count === 0 && out[p.decl.localName] === undefined) out[p.decl.localName] = [];
  return i;
}

/**
 * An `xs:any` particle (Part 1 §3.10.4): each child in its namespaces, up to maxOccurs, becomes
 * an entry `{ name, value }` of the value's `$any` list, in document order.
 */
function matchAny(p: AnyParticle, m: ContentMatch, i: number): number {
  const { children, out, path, longAs } = m;
  let count = 0;
  while (count < p.max) {
    const child = children[i];
    if (!child || !wildcardAllows(p.wildcard, child.namespace)) break;
    const list = (out.$any as unknown[] | undefined) ?? [];
    out.$any = list;
    list.push({
      name: clark(child.namespace, child.localName),
      value: decodeWildcard(child, p.wildcard, `${path}/${child.localName}`, longAs),
    });
    i++;
    count++;
  }
  if (count < p.min) throw missingElement(path, `an element of ${describeWildcard(p.wildcard)}`, children[i]);
  return i;
}

function describeWildcard(w: Wildcard): string {
  const ns = w.namespaces;
  if (ns.kind === "any") return "any namespace";
  if (ns.kind === "not") return `a namespace other than ${shown(ns.namespace)}`;
  return `the namespaces ${ns.namespaces.map((n) => (n === "" ? "(none)" : shown(n))).join(", ")}`;
}

/**
 * An element a wildcard matched (Part 1 §3.10.1 {process contents}): `skip`, not validated, as
 * its tree; `strict` and `lax`, by the global declaration of its name; `lax` without one (and
 * `strict` with an `xsi:type`), as xs:anyType, whose own wildcards are lax.
 */
export function decodeWildcard(
  child: XmlElement,
  wildcard: Wildcard,
  path: string,
  longAs: LongRepresentation,
): unknown {
  if (wildcard.process === "skip") return untyped(child);
  const registry = REGISTRY.get(wildcard);
  const decl = registry?.element(clark(child.namespace, child.localName));
  if (decl) return decodeElement(child, decl, path, longAs);
  if (wildcard.process === "strict" && child.attributes[XSI_TYPE] === undefined) {
    throw new SchemaValidationError(
      path,
      `element ${shown(child.localName)}${describeNs(child.namespace)} is not declared (xs:any processContents="strict")`,
    );
  }
  const untypedDecl: ElementDecl = {
    namespace: child.namespace,
    localName: child.localName,
    clark: clark(child.namespace, child.localName),
    type: registry?.type(ANY_TYPE) as ComplexType,
    nillable: true,
  };
  if (registry) REGISTRY.set(untypedDecl, registry);
  return decodeElement(child, untypedDecl, path, longAs);
}

const ANY_TYPE = `{${XS_NS}}anyType`;

/** An element not validated (processContents="skip"): its attributes, children and text as written. */
function untyped(element: XmlElement): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let attributes: Record<string, string> | undefined;
  for (const key in element.attributes) {
    attributes ??= {};
    attributes[key] = element.attributes[key] ?? "";
  }
  if (attributes) out.$attributes = attributes;
  if (element.children.length > 0) {
    out.$any = element.children.map((c) => ({ name: clark(c.namespace, c.localName), value: untyped(c) }));
  }
  if (XML_NON_WHITESPACE.test(element.text)) out.$text = element.text;
  return out;
}

export function matchGroup(g: GroupParticle, m: ContentMatch, i: number): number {
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
          `expected one of ${names}${child ? `, found ${shown(child.localName)}` : ""}`,
        );
      }
      i = matchParticle(alt, m, i);
    }
    if (i === before) break;
  }
  return i;
}
