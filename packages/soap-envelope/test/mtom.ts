import { createHash } from "node:crypto";
import { join } from "node:path";
import type { SoapEndpointOptions } from "@svc/soap-envelope";
import type { Mounts } from "@svc/test-utils/conformance";
import { FIXTURES, silentLogger } from "./helpers.js";
import { endpointMounts } from "./mounts.js";

export const UPLOAD_WSDL = join(FIXTURES, "upload.wsdl");
export const UPLOAD_TNS = "http://svc.example.com/ws/upload/v1";
export const UPLOAD_PATH = "/ws/upload";
export const XOP_NS = "http://www.w3.org/2004/08/xop/include";

/** What the upload handler received, in order. */
export const uploads: { name: string; content: Uint8Array; preview?: Uint8Array }[] = [];

export const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

export const uploadHandlers = () => ({
  upload: async (payload: unknown) => {
    const p = payload as { name: string; content: Uint8Array; preview?: Uint8Array };
    uploads.push(p);
    return { name: p.name, size: p.content.byteLength, sha256: sha256(p.content) };
  },
  download: async (payload: unknown) => {
    const p = payload as { name: string; size: number };
    const content = downloadContent(p.size);
    return {
      name: p.name,
      content,
      thumbnail: THUMBNAIL,
      digest: createHash("sha256").update(content).digest(),
    };
  },
});

/** The octets `download` answers for `size`: every byte value, CR, LF and a boundary-like line among them. */
export function downloadContent(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 7 + (i >> 8)) & 0xff;
  const line = Buffer.from("\r\n--uuid:0\r\n");
  if (size > line.length + 16) bytes.set(line, 16);
  return bytes;
}

/** The `download` answer's small `thumbnail`, under the default threshold (1024 octets). */
export const THUMBNAIL = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const options = (extra: Partial<SoapEndpointOptions>) => ({
  wsdl: UPLOAD_WSDL,
  handlers: uploadHandlers(),
  logger: silentLogger,
  limits: { maxBytes: 64 * 1024 },
  ...extra,
});

/** The upload endpoint at {@link UPLOAD_PATH} on each framework, errors through `fallbackErrors`. */
export const uploadMounts = (extra: Partial<SoapEndpointOptions> = {}): Mounts =>
  endpointMounts(UPLOAD_PATH, () => options(extra));

export interface Part {
  headers: Record<string, string>;
  body: string | Uint8Array;
}

/** A multipart body of `parts` with `boundary` (RFC 2046 §5.1.1), as clients write one. */
export function multipart(boundary: string, parts: readonly Part[]): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n`));
    for (const [name, value] of Object.entries(part.headers))
      chunks.push(Buffer.from(`${name}: ${value}\r\n`));
    chunks.push(Buffer.from("\r\n"), Buffer.from(part.body), Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

/** An upload envelope whose `content` (and `preview`, when given) is an `xop:Include` of a cid. */
export function uploadEnvelope(version: "1.1" | "1.2", contentCid: string, previewCid?: string): string {
  const env =
    version === "1.2"
      ? "http://www.w3.org/2003/05/soap-envelope"
      : "http://schemas.xmlsoap.org/soap/envelope/";
  const include = (cid: string) => `<xop:Include xmlns:xop="${XOP_NS}" href="cid:${cid}"/>`;
  const preview = previewCid === undefined ? "" : `<u:preview>${include(previewCid)}</u:preview>`;
  return `<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="${env}"><env:Body><u:UploadRequest xmlns:u="${UPLOAD_TNS}"><u:name>report.pdf</u:name><u:content>${include(contentCid)}</u:content>${preview}</u:UploadRequest></env:Body></env:Envelope>`;
}

/**
 * An upload envelope (SOAP 1.2) with `name` and `content` as given, markup and all, and the XOP
 * namespace bound to `xop` on the Envelope when `bound`.
 */
export function uploadEnvelopeOf(name: string, content: string, bound = false): string {
  const xop = bound ? ` xmlns:xop="${XOP_NS}"` : "";
  return `<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"${xop}><env:Body><u:UploadRequest xmlns:u="${UPLOAD_TNS}"><u:name>${name}</u:name><u:content>${content}</u:content></u:UploadRequest></env:Body></env:Envelope>`;
}

/** The Content-Type of an MTOM request (SOAP MTOM §3; SOAP 1.1: start-info text/xml). */
export function mtomType(
  version: "1.1" | "1.2",
  boundary: string,
  start = "<root@example>",
  action = "urn:upload",
): string {
  const info = version === "1.2" ? `application/soap+xml; action=\\"${action}\\"` : "text/xml";
  return `multipart/related; type="application/xop+xml"; start="${start}"; start-info="${info}"; boundary="${boundary}"`;
}

/** The root part of an MTOM package holding `xml`. */
export function rootPart(version: "1.1" | "1.2", xml: string, id = "<root@example>"): Part {
  const type = version === "1.2" ? "application/soap+xml" : "text/xml";
  return {
    headers: {
      "Content-Type": `application/xop+xml; charset=UTF-8; type="${type}"`,
      "Content-Transfer-Encoding": "8bit",
      "Content-ID": id,
    },
    body: xml,
  };
}

/** Every octet value, with CR LF and `--` in it: a binary part a text reader would mangle. */
export const BINARY = Uint8Array.from({ length: 1024 }, (_, i) => (i * 7 + (i >> 8)) & 0xff);
BINARY.set(Buffer.from("\r\n--MIME-b\r\n\r\n"), 100);

export interface ReadPart {
  /** Fields by lower-case name. */
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * A multipart/related answer split into its parts (RFC 2046 §5.1.1), the root the one `start`
 * names: the test's own reading, apart from the package's reader.
 */
export function readPackage(
  body: Buffer,
  contentType: string,
): { start: string; root: ReadPart; parts: ReadPart[] } {
  const boundary = /boundary="([^"]+)"/.exec(contentType)?.[1];
  const start = /start="([^"]+)"/.exec(contentType)?.[1];
  if (boundary === undefined || start === undefined)
    throw new Error(`no boundary or start in ${contentType}`);
  const delimiter = Buffer.from(`--${boundary}`);
  const all: ReadPart[] = [];
  let at = body.indexOf(delimiter);
  for (;;) {
    const after = at + delimiter.length;
    if (body.subarray(after, after + 2).toString() === "--") break;
    const headEnd = body.indexOf("\r\n\r\n", after);
    const next = body.indexOf(Buffer.from(`\r\n--${boundary}`), headEnd);
    const headers: Record<string, string> = {};
    for (const line of body
      .subarray(after + 2, headEnd)
      .toString("latin1")
      .split("\r\n")) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    all.push({ headers, body: body.subarray(headEnd + 4, next) });
    at = next + 2;
  }
  const root = all.find((p) => p.headers["content-id"] === start);
  if (root === undefined) throw new Error(`no part is ${start}`);
  return { start, root, parts: all.filter((p) => p !== root) };
}
