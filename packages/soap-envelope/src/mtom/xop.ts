import { parseMediaType as parseFieldMediaType } from "@svc/kernel";
import { bytesToBase64 } from "../xml/bytes.js";
import { SUPPORTED_CHARSETS } from "../xml/charsets.js";
import type { ResolvedXmlLimits, XmlSource } from "../xml/reader.js";
import { findElements, readBytes } from "../xml/reader.js";
import { shown } from "../xml/shown.js";
import { type MimePart, type MultipartBounds, packageError, splitMultipart, unbracket } from "./multipart.js";

/** The XOP namespace: `xop:Include` is its one element. */
export const XOP_NS = "http://www.w3.org/2004/08/xop/include";

/** The media type of an XOP package's root part (XOP 1.0 §4.1, its registration in Appendix A). */
export const XOP_MEDIA_TYPE = "application/xop+xml";

/** The `mtom` option, resolved: the bounds a package is read within, and when one is sent. */
export interface ResolvedMtom extends MultipartBounds {
  respond: "as-requested" | "always" | "never";
  threshold: number;
}

/** What reading a package gives: the envelope with every `xop:Include` replaced, and its figures. */
export interface XopMessage {
  /** The root part's text, each `xop:Include` replaced by its part's octets in base64. */
  text: string;
  /** Parts referenced by an `xop:Include` (each counted once). */
  attachments: number;
  /** Octets of those parts. */
  attachmentBytes: number;
}

/**
 * Reads a multipart/related XOP package (SOAP MTOM's serialization) within the bounds: the whole
 * body within `maxBytes` (413 past it, nothing buffered beyond), the parts within `bounds`, then
 * the root part's text with each `xop:Include` replaced by the base64 of the part its `href`
 * names, which is how XOP reconstructs the original infoset: the handler receives the octets as
 * the `xs:base64Binary` value they were. Every other refusal is the sender's (an `XmlError` of
 * kind `"limit"`, a Sender / Client fault).
 *
 * - the root part is the one `start` names (RFC 2387 §3.2: the first when `start` is absent),
 *   of type `application/xop+xml`;
 * - an `href` naming no part, or a Content-ID given twice: refused;
 * - a part no `xop:Include` names: read within the bounds and dropped;
 * - only the `xop:Include` elements of the root part's infoset are replaced (its text is read by
 *   the XML reader for them): the same characters in a CDATA section or a comment, or an
 *   `Include` of another namespace, stay what they are.
 *
 * @see https://www.w3.org/TR/xop10/#interpreting_xop_packages §3.2 reconstructing the infoset: each xop:Include replaced by its part's base64
 * @see https://www.w3.org/TR/xop10/#mime_multipart_packaging §4.1 the root part is application/xop+xml, the others referenced by cid: URLs
 * @see https://www.w3.org/TR/soap12-mtom/#mime-serialization SOAP MTOM §3 the MIME multipart/related serialization of a SOAP message
 * @see https://www.rfc-editor.org/rfc/rfc2387#section-3.2 the root part: `start`, else the first
 */
export async function readXopPackage(
  source: XmlSource,
  parameters: Readonly<Record<string, string>>,
  limits: ResolvedXmlLimits,
  bounds: ResolvedMtom,
  timeoutMs: number,
): Promise<XopMessage> {
  const boundary = parameters.boundary;
  if (boundary === undefined) throw packageError("Content-Type multipart/related has no boundary parameter");
  const bytes =
    typeof source === "string"
      ? new TextEncoder().encode(source)
      : await readBytes(source, limits.maxBytes, timeoutMs);
  const parts = splitMultipart(bytes, boundary, bounds);
  const byId = new Map<string, MimePart>();
  for (const part of parts) {
    if (part.contentId === undefined) continue;
    // RFC 2045 §7: Content-ID values "must be generated to be world-unique"; two parts of one
    // package under one id would make an href mean either.
    if (byId.has(part.contentId)) {
      throw packageError(`Two parts have the Content-ID <${shown(part.contentId, 80)}>`);
    }
    byId.set(part.contentId, part);
  }
  const start = parameters.start === undefined ? undefined : unbracket(parameters.start);
  const root = start === undefined ? parts[0] : byId.get(start);
  if (root === undefined) {
    throw packageError(`The start parameter names <${shown(start ?? "", 80)}>, which no part has`);
  }
  const media = root.contentType === undefined ? undefined : parseFieldMediaType(root.contentType);
  if (media === undefined || `${media.type}/${media.subtype}` !== XOP_MEDIA_TYPE) {
    throw packageError(`The root part's Content-Type must be ${XOP_MEDIA_TYPE} (XOP 1.0 §4.1)`);
  }
  let charset: string | undefined;
  for (const [name, value] of media.parameters) if (name === "charset") charset = value.toLowerCase();
  if (charset !== undefined && !SUPPORTED_CHARSETS.has(charset)) {
    throw packageError(`The root part's charset "${shown(charset, 40)}" is not supported`);
  }
  const xml = new TextDecoder(
    charset === undefined || /^(us-)?ascii$/.test(charset) ? "utf-8" : charset,
  ).decode(root.body);
  return include(xml, byId, root, limits);
}

/**
 * The root's text with each `xop:Include` element replaced by the base64 of its part: an element
 * of the XOP namespace as the reader resolves its prefix where it stands, never text that reads
 * like one.
 * @see https://www.w3.org/TR/xop10/#xop_include XOP 1.0 §2.1: the element information item, in the infoset
 */
function include(
  xml: string,
  byId: ReadonlyMap<string, MimePart>,
  root: MimePart,
  limits: ResolvedXmlLimits,
): XopMessage {
  const used = new Set<MimePart>();
  let expanded = 0;
  let attachmentBytes = 0;
  // No element is named Include without those characters: nothing to read for.
  const spans = xml.includes("Include") ? findElements(xml, limits, XOP_NS, "Include") : [];
  const text: string[] = [];
  let at = 0;
  for (const { start, end, attributes } of spans) {
    const url = attributes.href;
    // XOP 1.0 §2.1: href is a cid: URL (RFC 2392) naming a part of the package.
    if (url === undefined || !/^cid:/i.test(url)) {
      throw packageError("An xop:Include has no href attribute with a cid: URL (XOP 1.0 §2.1)");
    }
    let id: string;
    try {
      id = decodeURIComponent(url.slice(4));
    } catch {
      throw packageError(`The xop:Include href "${shown(url, 80)}" is not a cid: URL (RFC 2392)`);
    }
    const part = byId.get(id);
    if (part === undefined || part === root) {
      throw packageError(
        `An xop:Include names <${shown(id, 80)}>, which is not an attachment of the package`,
      );
    }
    const base64 = bytesToBase64(part.body);
    expanded += base64.length;
    if (expanded > limits.maxExpandedBytes) {
      throw packageError(
        `The attachments expand the message past ${limits.maxExpandedBytes} bytes (limits.maxExpandedBytes)`,
      );
    }
    if (!used.has(part)) {
      used.add(part);
      attachmentBytes += part.body.byteLength;
    }
    text.push(xml.slice(at, start), base64);
    at = end;
  }
  text.push(xml.slice(at));
  return { text: text.join(""), attachments: used.size, attachmentBytes };
}

/**
 * The SOAP version a multipart/related Content-Type carries, from its `type` and `start-info`
 * parameters (SOAP MTOM §3.2 / the SOAP 1.1 Binding for MTOM: `type="application/xop+xml"`,
 * `start-info` the envelope's media type); undefined when it is not an XOP package of SOAP.
 *
 * @see https://www.w3.org/TR/soap12-mtom/#mime-serialization SOAP MTOM §3 the package's Content-Type
 */
export function xopEnvelopeType(
  parameters: Readonly<Record<string, string>>,
): { soap11: boolean; action: string | undefined } | undefined {
  if (parameters.type?.toLowerCase() !== XOP_MEDIA_TYPE) return undefined;
  const info = parameters["start-info"];
  const parsed = info === undefined ? undefined : parseFieldMediaType(info);
  if (parsed === undefined) return undefined;
  const type = `${parsed.type}/${parsed.subtype}`;
  if (type !== "text/xml" && type !== "application/soap+xml") return undefined;
  let action = parameters.action;
  for (const [name, value] of parsed.parameters) if (name === "action") action ??= value;
  return { soap11: type === "text/xml", action };
}
