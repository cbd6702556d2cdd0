import { concatBytes } from "../xml/bytes.js";
import { withBinaryHook } from "../xsd/encode-simple.js";
import { XOP_MEDIA_TYPE, XOP_NS } from "./xop.js";

/** An XOP package (SOAP MTOM's serialization) ready to send: its `Content-Type` and octets. */
export interface XopPackage {
  contentType: string;
  body: Uint8Array;
  /** Attachments in the package (the root part not counted). */
  attachments: number;
  /** Octets of those attachments. */
  attachmentBytes: number;
}

/** What encoding a message for an XOP package gives: the plain envelope, or the package. */
export type Optimized = { text: string; package?: undefined } | { text?: undefined; package: XopPackage };

const encoder = new TextEncoder();

/**
 * Encodes a message as an XOP package (SOAP MTOM): `encode` writes the Body's content, `wrap`
 * puts it in its envelope. Each `xs:base64Binary` value given as octets, of at least `threshold`
 * of them, that is an element's whole content goes in a part of its own, the element holding an
 * `xop:Include` of it (XOP 1.0 §3.1); smaller ones, and one in an attribute or a list, stay in
 * the envelope as base64. With no value taken out, the envelope is sent as it is (a package of
 * one part says nothing a plain message does not).
 *
 * @see https://www.w3.org/TR/xop10/#creating_xop_packages §3.1: optimized content is an element's base64 character children, replaced by an xop:Include
 * @see https://www.w3.org/TR/soap12-mtom/#xop-serialization SOAP MTOM §3: the package's root part is application/xop+xml, type the envelope's media type
 */
export function encodeOptimized(
  encode: () => string,
  wrap: (body: string) => string,
  threshold: number,
  soapType: "application/soap+xml" | "text/xml",
): Optimized {
  // Letters and digits only: a marker is valid base64, survives escaping, and cannot be a value's
  // text by chance (a random 122 bits each message).
  const nonce = globalThis.crypto.randomUUID().replaceAll("-", "");
  const values: { bytes: Uint8Array; lexical: string }[] = [];
  const body = withBinaryHook((bytes, lexical) => {
    if (bytes.byteLength < threshold) return lexical;
    values.push({ bytes, lexical });
    return `svcxop${nonce}n${values.length - 1}x`;
  }, encode);
  const envelope = wrap(body);
  if (values.length === 0) return { text: envelope };
  const id = `${nonce}@svc`;
  const parts: { cid: string; bytes: Uint8Array }[] = [];
  const marker = new RegExp(`svcxop${nonce}n(\\d+)x`, "g");
  const root = envelope.replace(marker, (whole, index: string, at: number) => {
    const value = values[Number(index)] as { bytes: Uint8Array; lexical: string };
    // Only an element's whole content is taken out; anywhere else the value stays base64.
    if (envelope[at - 1] !== ">" || envelope[at + whole.length] !== "<") return value.lexical;
    const cid = `${parts.length + 1}.${id}`;
    parts.push({ cid, bytes: value.bytes });
    return `<xop:Include xmlns:xop="${XOP_NS}" href="cid:${cid}"/>`;
  });
  if (parts.length === 0) return { text: root };
  return { package: xopPackage(root, `root.${id}`, soapType, parts, nonce) };
}

/**
 * The multipart/related body of a package (RFC 2387, RFC 2046 §5.1.1): the root part first, the
 * attachments in `binary` transfer encoding (RFC 2045 §6.2: HTTP carries octets as they are).
 */
function xopPackage(
  root: string,
  rootId: string,
  soapType: string,
  parts: readonly { cid: string; bytes: Uint8Array }[],
  nonce: string,
): XopPackage {
  // RFC 2046 §5.1.1: a boundary no part contains; the root is text whose markers held the nonce,
  // and the chance that an attachment's octets hold it is 2^-122 a part.
  const boundary = `uuid:${nonce}`;
  const chunks: Uint8Array[] = [
    encoder.encode(
      `--${boundary}\r\nContent-Type: ${XOP_MEDIA_TYPE}; charset=utf-8; type="${soapType}"\r\n` +
        `Content-Transfer-Encoding: 8bit\r\nContent-ID: <${rootId}>\r\n\r\n`,
    ),
    encoder.encode(root),
  ];
  let attachmentBytes = 0;
  for (const part of parts) {
    chunks.push(
      encoder.encode(
        `\r\n--${boundary}\r\nContent-Type: application/octet-stream\r\n` +
          `Content-Transfer-Encoding: binary\r\nContent-ID: <${part.cid}>\r\n\r\n`,
      ),
      part.bytes,
    );
    attachmentBytes += part.bytes.byteLength;
  }
  chunks.push(encoder.encode(`\r\n--${boundary}--\r\n`));
  const body = concatBytes(chunks);
  return {
    contentType: `multipart/related; type="${XOP_MEDIA_TYPE}"; start="<${rootId}>"; start-info="${soapType}"; boundary="${boundary}"`,
    body,
    attachments: parts.length,
    attachmentBytes,
  };
}
