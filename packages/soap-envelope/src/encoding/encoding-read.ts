import { utf8Length } from "../xml/bytes.js";
import { clark, type ParsedElement, resolveQName } from "../xml/reader.js";
import { shown } from "../xml/shown.js";
import { trimXml } from "../xml/space.js";
import { SOAP_ENC_NS, SOAP12_ENC_NS } from "../xsd/builtin-docs.js";
import { SchemaValidationError } from "../xsd/errors.js";
import {
  type ComplexType,
  cachedElementParticles,
  type ElementDecl,
  REGISTRY,
  type SchemaRegistry,
  type SimpleType,
  SOAP_ARRAYS,
  type SoapArray,
  substitutable,
  TYPE_NAMES,
  XSI_NIL,
  XSI_TYPE,
} from "../xsd/model.js";
import {
  ANY_TYPE,
  canonical,
  claimsEncoding,
  type EncodingVersion,
  NAMES,
  type Names,
} from "./encoding-names.js";

/**
 * Limits of one read: the parser's, which a copied reference counts against as parsed elements
 * do, and the bytes the copies may add up to.
 */
export interface EncodedLimits {
  maxElements: number;
  maxDepth: number;
  maxExpandedBytes: number;
}

/**
 * One read's state: the Body's identified elements, the elements made, the bytes copied, the
 * references being followed.
 */
interface Reading {
  names: Names;
  version: EncodingVersion;
  registry: SchemaRegistry;
  ids: Map<string, ParsedElement>;
  limits: EncodedLimits;
  made: number;
  copied: number;
  /** The serialized size of each element copied so far, measured once. */
  sizes: Map<ParsedElement, number>;
  following: Set<ParsedElement>;
}

/**
 * The Body's children read as the literal form of the element `decl` declares: the element
 * itself when the Body holds it (rpc: the wrapper, its accessors the parts), else one made with the
 * Body's parts as children (document style). Independent elements (SOAP 1.1 §5.4.1: a
 * multi-reference value as a Body child, Apache Axis's `multiRef`) are the targets of references
 * only, never parts.
 * @throws {SchemaValidationError} for what the encoding does not allow (the caller's Sender fault)
 */
export function readEncoded(
  body: readonly ParsedElement[],
  decl: ElementDecl,
  holdsElement: boolean,
  version: EncodingVersion,
  limits: EncodedLimits,
): ParsedElement {
  const names = NAMES[version];
  const registry = REGISTRY.get(decl);
  if (registry === undefined) throw new Error("the declaration has no schema registry");
  const ids = new Map<string, ParsedElement>();
  const referenced = new Set<string>();
  const stack: ParsedElement[] = [...body];
  while (stack.length > 0) {
    const e = stack.pop() as ParsedElement;
    const id = e.attributes[names.id];
    if (id !== undefined) {
      const key = trimXml(id);
      if (ids.has(key)) throw new SchemaValidationError(e.localName, `id "${shown(key)}" is given twice`);
      ids.set(key, e);
    }
    const ref = e.attributes[names.ref];
    if (ref !== undefined) referenced.add(refTarget(ref, names, e.localName));
    for (const c of e.children) stack.push(c);
  }
  // SOAP 1.2 Part 2 §4.1: the rpc Body holds the wrapper alone, its graph nodes inside it.
  const roots =
    version === "1.1"
      ? body.filter((e) => {
          const id = e.attributes[names.id];
          return id === undefined || !referenced.has(trimXml(id));
        })
      : body;
  const reading: Reading = {
    names,
    version,
    registry,
    ids,
    limits,
    made: 0,
    copied: 0,
    sizes: new Map(),
    following: new Set(),
  };
  if (holdsElement) {
    const [root, extra] = roots;
    if (root === undefined || extra !== undefined) {
      throw new SchemaValidationError(
        decl.localName,
        `the Body must hold the one element ${decl.localName}${extra ? `, not also ${shown(extra.localName)}` : ""}${version === "1.1" ? " (and the multi-reference values it refers to)" : ""}`,
      );
    }
    return read(root, decl.type, decl.localName, 1, reading, root.localName);
  }
  const made: ParsedElement = {
    namespace: decl.namespace,
    localName: decl.localName,
    attributes: {},
    children: [...roots],
    text: "",
    scope: {},
    mixed: false,
  };
  return read(made, decl.type, decl.localName, 1, reading, decl.localName);
}

/** The id a reference names: SOAP 1.1's `href="#id"` (a URI fragment), SOAP 1.2's `enc:ref="id"`. */
function refTarget(value: string, names: Names, path: string): string {
  const v = trimXml(value);
  if (names.ref !== "href") return v;
  if (!v.startsWith("#")) {
    throw new SchemaValidationError(
      path,
      `href="${shown(v)}" names no element of this message: only references within the Body ("#id") are followed`,
    );
  }
  return v.slice(1);
}

/**
 * An element read against its declared type: its reference followed, its `xsi:type` settled,
 * its children read against theirs, the encoding's attributes removed. `name` is the accessor's
 * (the referring element's) local name, kept when the value comes from elsewhere.
 */
function read(
  accessor: ParsedElement,
  declared: SimpleType | ComplexType,
  path: string,
  depth: number,
  r: Reading,
  localName: string,
  namespace = accessor.namespace,
): ParsedElement {
  if (++r.made > r.limits.maxElements) {
    throw new SchemaValidationError(
      path,
      `the references expand the message past ${r.limits.maxElements} elements (limits.maxElements)`,
    );
  }
  if (depth > r.limits.maxDepth) {
    throw new SchemaValidationError(
      path,
      `the references nest the value deeper than ${r.limits.maxDepth} elements (limits.maxDepth)`,
    );
  }
  let element = accessor;
  const ref = accessor.attributes[r.names.ref];
  let target: ParsedElement | undefined;
  if (ref !== undefined) {
    // SOAP 1.1 §5.4.1, SOAP 1.2 Part 2 §3.1.5.3: the referring accessor has no content of its own.
    if (accessor.children.length > 0 || trimXml(accessor.text) !== "") {
      throw new SchemaValidationError(path, "refers to another element and has content of its own");
    }
    const id = refTarget(ref, r.names, path);
    target = r.ids.get(id);
    if (target === undefined)
      throw new SchemaValidationError(
        path,
        `refers to "${shown(id)}", which no element of the Body has as its id`,
      );
    if (r.following.has(target)) {
      throw new SchemaValidationError(
        path,
        `refers to "${shown(id)}", an element it is inside of: a graph with a cycle has no value as a tree`,
      );
    }
    element = target;
    // Counted in bytes as well as elements: one element can hold a megabyte of text, and each
    // reference to it copies all of it (CWE-776).
    r.copied += sizeOf(target, r.sizes);
    if (r.copied > r.limits.maxExpandedBytes) {
      throw new SchemaValidationError(
        path,
        `the references expand the message past ${r.limits.maxExpandedBytes} bytes (limits.maxExpandedBytes)`,
      );
    }
  }
  if (target !== undefined) r.following.add(target);
  try {
    return readValue(accessor, element, declared, path, depth, r, localName, namespace);
  } finally {
    if (target !== undefined) r.following.delete(target);
  }
}

/**
 * About the bytes `e` takes as it was written (tags, attributes, text, descendants), remembered
 * in `sizes`: what a copy of it adds to the value read. References inside it count when followed.
 */
function sizeOf(e: ParsedElement, sizes: Map<ParsedElement, number>): number {
  let size = sizes.get(e);
  if (size !== undefined) return size;
  size = 2 * e.localName.length + 5 + utf8Length(e.text);
  for (const key in e.attributes) size += key.length + utf8Length(e.attributes[key] as string) + 4;
  for (const c of e.children) size += sizeOf(c, sizes);
  sizes.set(e, size);
  return size;
}

function readValue(
  accessor: ParsedElement,
  element: ParsedElement,
  declared: SimpleType | ComplexType,
  path: string,
  depth: number,
  r: Reading,
  localName: string,
  namespace: string,
): ParsedElement {
  const attributes: Record<string, string> = {};
  // The value's namespaces (a prototype chain, as the parser builds them), and one of its own.
  const scope = Object.create(element.scope) as Record<string, string>;
  // The referring accessor's own attributes (an xsi:type on it) count with the value's.
  for (const source of element === accessor ? [element] : [element, accessor]) {
    for (const key in source.attributes) {
      const value = source.attributes[key] as string;
      if (r.names.own.has(key)) continue;
      if (key === r.names.encodingStyle) {
        if (!claimsEncoding(value, r.version) && trimXml(value) !== "")
          throw new SchemaValidationError(
            path,
            `encodingStyle="${shown(value, 200)}": the operation reads the SOAP ${r.version} encoding`,
          );
        continue;
      }
      if (key === XSI_TYPE) {
        const q = resolveQName(value, source.scope);
        if (q === undefined)
          throw new SchemaValidationError(path, `xsi:type="${shown(value)}": its prefix is not declared`);
        attributes[key] = clark(q.namespace, q.localName);
        continue;
      }
      attributes[key] = value;
    }
  }
  let type = declared;
  const declaredName = TYPE_NAMES.get(declared);
  const array = arrayOf(declared);
  const named = attributes[XSI_TYPE];
  const written = (element.attributes[XSI_TYPE] ?? accessor.attributes[XSI_TYPE]) as string;
  if (named !== undefined) {
    const name = canonical(named);
    delete attributes[XSI_TYPE];
    const same = declaredName !== undefined && name === canonical(declaredName);
    // SOAP 1.1 §5.4.2: an array's accessor may name the generic SOAP-ENC Array.
    const generic =
      array !== undefined && (name === `{${SOAP_ENC_NS}}Array` || name === `{${SOAP12_ENC_NS}}Array`);
    if (!same && !generic) {
      const candidate = r.registry.type(name);
      if (candidate === undefined)
        throw new SchemaValidationError(path, `xsi:type="${shown(written)}" names no type of the schema`);
      if (declaredName !== ANY_TYPE) {
        const why = substitutable(candidate, declared);
        if (why !== undefined)
          throw new SchemaValidationError(
            path,
            `xsi:type="${shown(written)}" cannot replace ${declaredName ?? "the declared type"}: ${why}`,
          );
      }
      type = candidate;
      // Kept, as a prefixed QName the schema's decoder resolves in the element's scope.
      const at = name.indexOf("}");
      scope["enc-t"] = name.slice(1, at);
      attributes[XSI_TYPE] = `enc-t:${name.slice(at + 1)}`;
    }
  }
  const made: ParsedElement = {
    namespace,
    localName,
    attributes,
    children: [],
    text: element.text,
    scope,
    mixed: element.mixed,
  };
  if (attributes[XSI_NIL] !== undefined) {
    made.children = element.children;
    return made;
  }
  const itemArray = arrayOf(type);
  if (itemArray !== undefined) {
    made.children = readMembers(element, type as ComplexType, itemArray, path, depth, r);
    return made;
  }
  if (type.kind === "simple" || type.simpleContent) {
    made.children = element.children;
    return made;
  }
  const isAny = TYPE_NAMES.get(type) === ANY_TYPE;
  const particles = type.content ? cachedElementParticles(type.content) : [];
  made.children = element.children.map((child, i) => {
    const p = isAny
      ? undefined
      : particles.find((q) => q.decl.localName === child.localName && q.decl.namespace === child.namespace);
    const childType = p?.decl.type ?? r.registry.type(ANY_TYPE);
    if (childType === undefined) return child;
    return read(child, childType, `${path}/${child.localName}[${i + 1}]`, depth + 1, r, child.localName);
  });
  return made;
}

/** The array a type is: a restriction of SOAP-ENC's `Array`, or `Array` itself (any members). */
export function arrayOf(type: SimpleType | ComplexType): SoapArray | undefined {
  if (type.kind !== "complex") return undefined;
  const own = SOAP_ARRAYS.get(type);
  if (own !== undefined) return own;
  const name = TYPE_NAMES.get(type);
  return name === `{${SOAP_ENC_NS}}Array` || name === `{${SOAP12_ENC_NS}}Array`
    ? { itemType: undefined, member: undefined }
    : undefined;
}

/**
 * An array's members (SOAP 1.1 §5.4.2, SOAP 1.2 Part 2 §3.1.6): the item type and size the wire
 * gives (`SOAP-ENC:arrayType="xsd:string[3]"`; `enc:itemType`, `enc:arraySize`) checked against the
 * declared item type and the members; each member read as the item type and named as the
 * restriction names its member element. A partially transmitted or sparse array (SOAP 1.1
 * §5.4.2.1, §5.4.2.2: `offset`, `position`) and an array of arrays are refused.
 */
function readMembers(
  element: ParsedElement,
  type: ComplexType,
  array: SoapArray,
  path: string,
  depth: number,
  r: Reading,
): ParsedElement[] {
  const enc = r.names.encoding;
  if (element.attributes[`{${enc}}offset`] !== undefined)
    throw new SchemaValidationError(path, "a partially transmitted array (SOAP-ENC:offset) is not supported");
  for (const m of element.children) {
    if (m.attributes[`{${enc}}position`] !== undefined)
      throw new SchemaValidationError(path, "a sparse array (SOAP-ENC:position) is not supported");
  }
  let wireItem: string | undefined;
  let size: number | undefined;
  if (r.version === "1.1") {
    const raw = element.attributes[`{${enc}}arrayType`];
    if (raw !== undefined) {
      const m = /^\s*([^\s[\]]+)((?:\[[\s,]*\])*)\[([\d\s,]*)\]\s*$/.exec(raw);
      const q = m ? resolveQName(m[1] as string, element.scope) : undefined;
      if (!m || !q)
        throw new SchemaValidationError(
          path,
          `SOAP-ENC:arrayType="${shown(raw)}" is not an array type (SOAP 1.1 §5.4.2)`,
        );
      if (m[2] !== "")
        throw new SchemaValidationError(
          path,
          `SOAP-ENC:arrayType="${shown(raw)}": arrays of arrays are not supported`,
        );
      wireItem = clark(q.namespace, q.localName);
      const dims = (m[3] as string).split(",").map((d) => d.trim());
      if (dims.some((d) => d !== "")) {
        if (dims.some((d) => d === ""))
          throw new SchemaValidationError(
            path,
            `SOAP-ENC:arrayType="${shown(raw)}" gives only some of its dimensions`,
          );
        size = dims.reduce((n, d) => n * Number(d), 1);
      }
    }
  } else {
    const item = element.attributes[`{${enc}}itemType`];
    if (item !== undefined) {
      const q = resolveQName(item, element.scope);
      if (!q)
        throw new SchemaValidationError(path, `enc:itemType="${shown(item)}": its prefix is not declared`);
      wireItem = clark(q.namespace, q.localName);
    }
    const raw = element.attributes[`{${enc}}arraySize`];
    if (raw !== undefined) {
      const dims = trimXml(raw).split(/[ \t\r\n]+/);
      if (!dims.every((d, i) => /^\d+$/.test(d) || (d === "*" && i === 0)))
        throw new SchemaValidationError(
          path,
          `enc:arraySize="${shown(raw)}" is not an array size (SOAP 1.2 Part 2 §3.1.6)`,
        );
      if (dims[0] !== "*") size = dims.reduce((n, d) => n * Number(d), 1);
    }
  }
  let itemType = array.itemType === undefined ? undefined : r.registry.type(array.itemType);
  if (wireItem !== undefined) {
    const wire = r.registry.type(canonical(wireItem));
    if (wire === undefined)
      throw new SchemaValidationError(
        path,
        `the array's item type ${shown(wireItem)} is not a type of the schema`,
      );
    if (itemType !== undefined && canonical(wireItem) !== canonical(array.itemType as string)) {
      const why = substitutable(wire, itemType);
      if (why !== undefined)
        throw new SchemaValidationError(
          path,
          `the array's item type ${shown(wireItem)} cannot replace ${array.itemType}: ${why}`,
        );
    }
    itemType ??= wire;
  }
  if (size !== undefined && size !== element.children.length) {
    throw new SchemaValidationError(
      path,
      `the array declares ${size} member(s) and holds ${element.children.length}`,
    );
  }
  const memberDecl =
    array.member !== undefined && type.content
      ? cachedElementParticles(type.content).find((p) => p.decl.localName === array.member)?.decl
      : undefined;
  const anyType = r.registry.type(ANY_TYPE) as ComplexType;
  return element.children.map((m, i) => {
    const memberType = memberDecl?.type ?? itemType ?? anyType;
    const made = read(
      m,
      memberType,
      `${path}/${m.localName}[${i + 1}]`,
      depth + 1,
      r,
      memberDecl?.localName ?? m.localName,
      memberDecl?.namespace ?? m.namespace,
    );
    // Members the restriction does not name are the base's xs:any (lax): typed by the item type.
    const name = itemType === undefined ? undefined : TYPE_NAMES.get(itemType);
    if (
      memberDecl === undefined &&
      name !== undefined &&
      name !== ANY_TYPE &&
      made.attributes[XSI_TYPE] === undefined
    ) {
      const at = name.indexOf("}");
      made.attributes[XSI_TYPE] = `enc-t:${name.slice(at + 1)}`;
      const scope = Object.create(made.scope) as Record<string, string>;
      scope["enc-t"] = name.slice(1, at);
      return { ...made, scope };
    }
    return made;
  });
}
