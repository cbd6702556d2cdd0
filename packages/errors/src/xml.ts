import { isExtensionName, PROBLEM_MEMBERS, RECORD_MEMBERS } from "@svc/kernel/internal";
import { CUT_MARK, MAX_EXTENSION_DEPTH } from "./bounds.js";
import type { ErrorRecord, ProblemDetails } from "./record.js";

const XML_ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
  "\t": "&#9;",
  "\n": "&#10;",
  "\r": "&#13;",
};

// XML 1.0 §2.2 Char ::= #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF];
// with the `u` flag a lone surrogate is one code point outside every range, so it matches too.
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const NEEDS_ESCAPE = /[&<>"'\t\n\r]/g;
const NEEDS_WORK = /[&<>"'\t\n\r]|[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/**
 * Escapes a string for XML 1.0 character data and for a quoted attribute value alike: the one
 * escaper every `@svc` package writes XML with.
 *
 * - `&`, `<`, `>`, `"` and `'` become `&amp;` `&lt;` `&gt;` `&quot;` `&apos;` (XML 1.0 §2.4, §3.1).
 * - Tab, LF and CR become `&#9;` `&#10;` `&#13;`: a literal CR would be turned into LF by
 *   end-of-line handling (§2.11) and, in an attribute, a literal tab or LF into a space by
 *   attribute-value normalisation (§3.3.3); a character reference survives both.
 * - A character XML 1.0 does not allow at all (§2.2: C0 controls other than tab/LF/CR, lone
 *   surrogates, U+FFFE, U+FFFF) cannot be written even as a reference, so it is **replaced with
 *   U+FFFD** REPLACEMENT CHARACTER rather than refused (the text is usually a client-supplied
 *   path or message inside an error response, which must still be sent) or silently dropped
 *   (which could join two tokens and hide that anything was there).
 *
 * @example
 * escapeXml(`a<b & "c"\u0000`) // → "a&lt;b &amp; &quot;c&quot;\uFFFD"
 * @see https://www.w3.org/TR/xml/#charsets
 * @see https://www.w3.org/TR/xml/#AVNormalize
 */
export function escapeXml(text: string): string {
  if (!NEEDS_WORK.test(text)) return text;
  return text.replace(NOT_XML_CHAR, "\uFFFD").replace(NEEDS_ESCAPE, (c) => XML_ESCAPES[c] ?? c);
}

/**
 * A parsed XML element in a plain structural shape (the namespace-aware subset of the XML
 * Infoset element item): what `@svc/soap-envelope` hands header blocks out as and what
 * `@svc/auth`'s WS-Security check reads. Any parser producing this shape works.
 *
 * @example
 * // <wsse:Security xmlns:wsse="…"><wsse:UsernameToken>…</wsse:UsernameToken></wsse:Security>
 * const token = block.children.find((c) => c.localName === "UsernameToken");
 * @see https://www.w3.org/TR/xml-infoset/#infoitem.element
 */
export interface XmlElement {
  /** Namespace URI, `""` when none. */
  namespace: string;
  /** Local name, without prefix. */
  localName: string;
  /** `"{nsURI}local"` for qualified attributes, `"local"` for unqualified; namespace declarations excluded. */
  attributes: Record<string, string>;
  /** Child elements in document order. */
  children: XmlElement[];
  /** Concatenated direct text content (CDATA included). */
  text: string;
}

/**
 * OASIS WS-Security 1.0 secext namespace (`wsse`).
 * @see https://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0.pdf (§4)
 */
export const WSSE_NS = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd";
/**
 * OASIS WS-Security 1.0 utility namespace (`wsu`).
 * @see https://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0.pdf (§4)
 */
export const WSU_NS = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd";

function fieldErrorsXml(errors: ErrorRecord["errors"]): string {
  if (!errors) return "";
  const items = errors
    .map(
      (e) => `<error><field>${escapeXml(e.field)}</field><message>${escapeXml(e.message)}</message></error>`,
    )
    .join("");
  return `<errors>${items}</errors>`;
}

/** The XML Schema instance namespace, declared on the root when a member is nil. */
const XSI_NAMESPACE = "http://www.w3.org/2001/XMLSchema-instance";

/** What one document's serialization found on the way: whether it wrote an `xsi:nil`. */
interface XmlState {
  nil: boolean;
}

/**
 * An extension member as an element, as RFC 9457 Appendix B serialises problem details: an
 * array's members each in an `<i>` element, an object's members each in an element named after
 * the member (members whose names are not such a name, or start with `xml` in any case, which
 * XML 1.0 §2.3 reserves, are left out), other values as text.
 */
function elementXml(name: string, value: unknown, depth: number, state: XmlState): string {
  // The same value the JSON forms carry (RFC 9457 Appendix B maps the JSON object): `toJSON()`
  // first (a Date is its ISO text, not an empty element), and members JSON leaves out (a function,
  // a symbol, undefined) left out by membersXml; in an array JSON writes them as null.
  // `String(fn)` would send the function's source code.
  const json = jsonValue(value);
  // XML Schema Part 1 §2.6.2: "An element may be ·valid· without content if it has the attribute
  // xsi:nil with the value true." An empty element is the empty string, so null is written nil
  // and a client tells the two apart, as @svc/negotiate's XML representation writes it.
  if (json === null || json === undefined || typeof json === "function" || typeof json === "symbol") {
    state.nil = true;
    return `<${name} xsi:nil="true"/>`;
  }
  // Nested deeper than MAX_EXTENSION_DEPTH: cut as buildErrorRecord cuts the JSON forms' value, so
  // both forms carry the same structure (and a value built elsewhere, a cycle, cannot recurse
  // without end).
  if (typeof json === "object" && depth >= MAX_EXTENSION_DEPTH) return `<${name}>${CUT_MARK}</${name}>`;
  if (Array.isArray(json)) {
    // Every index up to `length`, as JSON writes it (ECMA-262 SerializeJSONArray: an empty slot is
    // `null`): `map` would skip an empty slot, and the items after it would move up a place. The
    // slot is then an `xsi:nil` item, as JSON's null is (XML Schema Part 1 §2.6.2).
    let items = "";
    for (let i = 0; i < json.length; i++) items += elementXml("i", json[i], depth + 1, state);
    return `<${name}>${items}</${name}>`;
  }
  if (typeof json === "object") {
    return `<${name}>${membersXml(Object.entries(json), state, depth + 1)}</${name}>`;
  }
  return `<${name}>${escapeXml(String(json))}</${name}>`;
}

function jsonValue(value: unknown): unknown {
  if (value !== null && (typeof value === "object" || typeof value === "bigint")) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") return toJSON.call(value);
  }
  return value;
}

function membersXml(members: Array<[string, unknown]>, state: XmlState, depth = 0): string {
  let xml = "";
  for (const [name, value] of members) {
    const json = jsonValue(value);
    if (json === undefined || typeof json === "function" || typeof json === "symbol") continue;
    // A name that is no XML name, or one XML 1.0 §2.3 reserves ("Names beginning with the string
    // "xml", or with any string which would match (('X'|'x') ('M'|'m') ('L'|'l')), are reserved"),
    // such as `xmlns` (Namespaces in XML 1.0 §3), has no element: left out, kept in JSON.
    if (isExtensionName(name)) xml += elementXml(name, json, depth, state);
  }
  return xml;
}

/**
 * The members of `object` that `known` does not name: its extension members, as elements, and the
 * attribute declaring the `xsi` prefix on the root when one of them is nil: Namespaces in XML 1.0
 * §3, on the root so that its scope (§6.1) covers every use, and only then, so a document without
 * null is as it was.
 */
function extensionsXml(object: object, known: ReadonlySet<string>): { xml: string; declare: string } {
  const state: XmlState = { nil: false };
  const xml = membersXml(
    Object.entries(object).filter(([name]) => !known.has(name)),
    state,
  );
  return { xml, declare: state.nil ? ` xmlns:xsi="${XSI_NAMESPACE}"` : "" };
}

/** The error record as `<error>…</error>`, same fields and order as the JSON record. */
export function errorRecordToXml(record: ErrorRecord): string {
  const extensions = extensionsXml(record, RECORD_MEMBERS);
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<error${extensions.declare}>` +
    `<timestamp>${escapeXml(record.timestamp)}</timestamp>` +
    `<status>${record.status}</status>` +
    `<error>${escapeXml(record.error)}</error>` +
    `<message>${escapeXml(record.message)}</message>` +
    `<path>${escapeXml(record.path)}</path>` +
    fieldErrorsXml(record.errors) +
    extensions.xml +
    "</error>"
  );
}

/**
 * Problem details in the RFC 9457 Appendix B XML form (namespace `urn:ietf:rfc:7807`).
 * @see https://www.rfc-editor.org/rfc/rfc9457#appendix-B
 */
export function problemDetailsToXml(problem: ProblemDetails): string {
  const extensions = extensionsXml(problem, PROBLEM_MEMBERS);
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<problem xmlns="urn:ietf:rfc:7807"${extensions.declare}>` +
    `<type>${escapeXml(problem.type)}</type>` +
    `<title>${escapeXml(problem.title)}</title>` +
    `<status>${problem.status}</status>` +
    `<detail>${escapeXml(problem.detail)}</detail>` +
    `<instance>${escapeXml(problem.instance)}</instance>` +
    `<timestamp>${escapeXml(problem.timestamp)}</timestamp>` +
    (problem.code ? `<code>${escapeXml(problem.code)}</code>` : "") +
    fieldErrorsXml(problem.errors) +
    extensions.xml +
    "</problem>"
  );
}
