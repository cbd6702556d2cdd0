import { escapeXml } from "@svc/errors";
import { clark, type ParsedElement, parseXmlDocument, resolveLimits, resolveQName } from "../xml/reader.js";
import {
  type ComplexType,
  cachedElementParticles,
  type ElementDecl,
  REGISTRY,
  type SchemaRegistry,
  type SimpleType,
  TYPE_NAMES,
  XS_NS,
  XSI_NIL,
  XSI_NS,
  XSI_TYPE,
} from "../xsd/model.js";
import { ANY_TYPE, canonical, ENCODING_URI, type EncodingVersion, NAMES } from "./encoding-names.js";
import { arrayOf } from "./encoding-read.js";

export { claimsEncoding, ENCODING_URI, type EncodingVersion } from "./encoding-names.js";
export { type EncodedLimits, readEncoded } from "./encoding-read.js";

/**
 * The schema encoder's output for an encoded operation's output element: every accessor of a
 * named type with its `xsi:type`, arrays with their item type and size, the element with the
 * encoding's `encodingStyle`. `literal` is what {@link CompiledSchema.encode} wrote for `decl`.
 */
export function writeEncoded(literal: string, decl: ElementDecl, version: EncodingVersion): string {
  const root = parseXmlDocument(literal, WRITE_LIMITS);
  const registry = REGISTRY.get(decl);
  if (registry === undefined) throw new Error("the declaration has no schema registry");
  const w: Writing = { version, registry, out: "" };
  const env = NAMES[version].envelope;
  const declared = { xsi: XSI_NS, xsd: XS_NS, enc: ENCODING_URI[version], soapenv: env };
  let head = ` soapenv:encodingStyle="${ENCODING_URI[version]}"`;
  for (const [p, ns] of Object.entries(declared)) head = ` xmlns:${p}="${ns}"${head}`;
  write(root, decl.type, "", declared, head, w);
  return w.out;
}

/** The literal output is the encoder's own: bounded by the result it was given, not by a request's limits. */
const WRITE_LIMITS = resolveLimits({
  maxBytes: 1 << 30,
  maxDepth: 100_000,
  maxElements: 100_000_000,
  maxAttributes: 100_000,
});

interface Writing {
  version: EncodingVersion;
  registry: SchemaRegistry;
  out: string;
}

/** A type's QName written with the prefixes `head` declares, or a local declaration added to `decls`. */
function typeQName(name: string, decls: { text: string; n: number }): string {
  const at = name.indexOf("}");
  const ns = name.slice(1, at);
  const local = name.slice(at + 1);
  if (ns === XS_NS) return `xsd:${local}`;
  if (ns === "") return local;
  const prefix = `enc-t${decls.n++}`;
  decls.text += ` xmlns:${prefix}="${escapeXml(ns)}"`;
  return `${prefix}:${local}`;
}

function write(
  e: ParsedElement,
  declared: SimpleType | ComplexType,
  parentDefault: string,
  parentScope: Readonly<Record<string, string>>,
  head: string,
  w: Writing,
): void {
  // The namespace declarations the encoder wrote here (QName values' prefixes), kept.
  let attrs = head;
  if (e.namespace !== parentDefault) attrs += ` xmlns="${escapeXml(e.namespace)}"`;
  for (const p in e.scope) {
    if (p === "" || p === "xml" || e.scope[p] === parentScope[p]) continue;
    attrs += ` xmlns:${p}="${escapeXml(e.scope[p] as string)}"`;
  }
  const decls = { text: "", n: 0 };
  let type = declared;
  const nil = e.attributes[XSI_NIL] !== undefined;
  const given = e.attributes[XSI_TYPE];
  if (given !== undefined) {
    const q = resolveQName(given, e.scope);
    const candidate = q && w.registry.type(clark(q.namespace, q.localName));
    if (candidate) type = candidate;
  }
  for (const key in e.attributes) {
    const value = escapeXml(e.attributes[key] as string);
    if (key === XSI_TYPE) continue;
    if (key === XSI_NIL) attrs += ` xsi:nil="${value}"`;
    else if (key.startsWith("{")) {
      // The encoder declared the attribute's namespace on this element: its prefix is in scope.
      const at = key.indexOf("}");
      const ns = key.slice(1, at);
      let prefix: string | undefined;
      for (const p in e.scope) if (p !== "" && e.scope[p] === ns) prefix = p;
      if (prefix === undefined) {
        prefix = `enc-a${decls.n++}`;
        decls.text += ` xmlns:${prefix}="${escapeXml(ns)}"`;
      }
      attrs += ` ${prefix}:${key.slice(at + 1)}="${value}"`;
    } else attrs += ` ${key}="${value}"`;
  }
  const own = TYPE_NAMES.get(type);
  const typeName =
    own !== undefined ? canonical(own) : type.kind === "simple" ? `{${XS_NS}}${type.base}` : undefined;
  const array = arrayOf(type);
  let itemType: SimpleType | ComplexType | undefined;
  if (!nil && typeName !== undefined && typeName !== ANY_TYPE)
    attrs += ` xsi:type="${typeQName(typeName, decls)}"`;
  else if (!nil && typeName === ANY_TYPE && e.children.length === 0 && e.text !== "")
    attrs += ' xsi:type="xsd:string"';
  if (array !== undefined && !nil) {
    itemType = array.itemType === undefined ? undefined : w.registry.type(array.itemType);
    const item = array.itemType === undefined ? ANY_TYPE : canonical(array.itemType);
    const n = e.children.length;
    if (w.version === "1.1") attrs += ` enc:arrayType="${typeQName(item, decls)}[${n}]"`;
    else attrs += ` enc:itemType="${typeQName(item, decls)}" enc:arraySize="${n}"`;
  }
  const tag = e.localName;
  w.out += `<${tag}${attrs}${decls.text}>`;
  if (e.text !== "") w.out += escapeXml(e.text);
  const particles =
    type.kind === "complex" && type.content && array === undefined
      ? cachedElementParticles(type.content)
      : [];
  const anyType = w.registry.type(ANY_TYPE) as ComplexType;
  for (const child of e.children) {
    const childType =
      array !== undefined
        ? (itemType ?? anyType)
        : (particles.find((p) => p.decl.localName === child.localName && p.decl.namespace === child.namespace)
            ?.decl.type ?? anyType);
    write(child, childType, e.namespace, e.scope, "", w);
  }
  w.out += `</${tag}>`;
}
