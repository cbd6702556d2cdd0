import { parseMediaType as parseFieldMediaType } from "@svc/kernel";
import { asciiText, base64ToBytes } from "../xml/bytes.js";
import { XmlError } from "../xml/reader.js";
import { shown } from "../xml/shown.js";

/** The bounds a multipart/related body is read within (besides `limits.maxBytes`, the whole body's). */
export interface MultipartBounds {
  /** Most parts, the root included. */
  maxParts: number;
  /** Most bytes of one part's content, after its transfer encoding is undone. */
  maxPartBytes: number;
  /** Most bytes of one part's header section. */
  maxHeaderBytes: number;
}

/** One body part of a multipart/related package. */
export interface MimePart {
  /** The `Content-ID` without its angle brackets (RFC 2392 §2), undefined when the part has none. */
  contentId: string | undefined;
  /** The part's `Content-Type` as given, undefined when it has none (then `text/plain`, RFC 2045 §5.2). */
  contentType: string | undefined;
  /** The content, its transfer encoding undone. */
  body: Uint8Array;
}

/** A refusal of the package: the sender's (a Sender / Client fault). */
export function packageError(message: string): XmlError {
  return new XmlError("limit", message);
}

const CR = 0x0d;
const LF = 0x0a;
const DASH = 0x2d;

/**
 * Splits a multipart body into its parts (RFC 2046 §5.1.1): the preamble before the first
 * delimiter and the epilogue after the close delimiter are ignored, transport padding (spaces and
 * tabs) after a delimiter is allowed, a part's header section ends at the first empty line.
 * Every bound is checked as the body is walked, before a part's content is copied or decoded.
 *
 * @see https://www.rfc-editor.org/rfc/rfc2046#section-5.1.1 the delimiters and the close delimiter
 * @see https://www.rfc-editor.org/rfc/rfc2045#section-6 Content-Transfer-Encoding: 7bit, 8bit, binary, base64
 */
export function splitMultipart(bytes: Uint8Array, boundary: string, bounds: MultipartBounds): MimePart[] {
  // RFC 2046 §5.1.1: 1 to 70 characters of bchars, not ending with a space.
  if (!/^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/.test(boundary)) {
    throw packageError(`The multipart boundary "${shown(boundary, 80)}" is not one RFC 2046 §5.1.1 allows`);
  }
  const dashBoundary = asciiBytes(`--${boundary}`);
  // The first delimiter may open the body; every later one follows a CRLF.
  let at = bytes.length >= dashBoundary.length && startsAt(bytes, 0, dashBoundary) ? 0 : -1;
  if (at < 0) {
    const first = indexOf(bytes, asciiBytes(`\r\n--${boundary}`), 0);
    if (first < 0) throw packageError("The multipart body holds no delimiter of its boundary");
    at = first + 2;
  }
  const delimiter = asciiBytes(`\r\n--${boundary}`);
  const parts: MimePart[] = [];
  for (;;) {
    let pos = at + dashBoundary.length;
    if (bytes[pos] === DASH && bytes[pos + 1] === DASH) {
      if (parts.length === 0) throw packageError("The multipart body holds no part");
      return parts;
    }
    while (bytes[pos] === 0x20 || bytes[pos] === 0x09) pos++;
    if (bytes[pos] !== CR || bytes[pos + 1] !== LF) {
      throw packageError("A multipart delimiter is not followed by CRLF (RFC 2046 §5.1.1)");
    }
    pos += 2;
    if (parts.length === bounds.maxParts) {
      throw packageError(`The package has more than ${bounds.maxParts} parts (mtom.maxParts)`);
    }
    // The header section: up to an empty line, or none at all when the part begins with one.
    let headerEnd: number;
    let contentStart: number;
    if (bytes[pos] === CR && bytes[pos + 1] === LF) {
      headerEnd = pos;
      contentStart = pos + 2;
    } else {
      const blank = indexOf(bytes, CRLFCRLF, pos, pos + bounds.maxHeaderBytes + 4);
      if (blank < 0) {
        throw packageError(
          `A part's header section is not ended within ${bounds.maxHeaderBytes} bytes (mtom.maxHeaderBytes)`,
        );
      }
      headerEnd = blank;
      contentStart = blank + 4;
    }
    const next = indexOf(bytes, delimiter, contentStart);
    if (next < 0) throw packageError("The multipart body ends without its close delimiter (RFC 2046 §5.1.1)");
    const headers = readHeaders(asciiText(bytes.subarray(pos, headerEnd)));
    parts.push(partOf(headers, bytes.subarray(contentStart, next), bounds));
    at = next + 2;
  }
}

const CRLFCRLF = new Uint8Array([CR, LF, CR, LF]);

/** A part's fields (RFC 5322 §2.2: name, colon, value; a line starting with a space or tab folds). */
function readHeaders(text: string): Map<string, string[]> {
  const fields = new Map<string, string[]>();
  let last: string[] | undefined;
  for (const line of text.split("\r\n")) {
    if ((line.startsWith(" ") || line.startsWith("\t")) && last !== undefined) {
      last[last.length - 1] += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) throw packageError(`A part's header line is not a field: "${shown(line, 80)}"`);
    const name = line.slice(0, colon).trim().toLowerCase();
    last = fields.get(name) ?? [];
    last.push(line.slice(colon + 1).trim());
    fields.set(name, last);
  }
  return fields;
}

/** One field's value; a field given twice is refused (which one counts would be up to each reader). */
function single(fields: Map<string, string[]>, name: string): string | undefined {
  const values = fields.get(name);
  if (values === undefined) return undefined;
  if (values.length > 1) throw packageError(`A part gives ${name} more than once`);
  return values[0];
}

function partOf(fields: Map<string, string[]>, raw: Uint8Array, bounds: MultipartBounds): MimePart {
  const id = single(fields, "content-id");
  const contentType = single(fields, "content-type");
  const media = contentType === undefined ? undefined : parseFieldMediaType(contentType);
  if (contentType !== undefined && media === undefined) {
    throw packageError(`A part's Content-Type "${shown(contentType, 80)}" is not a media type`);
  }
  if (media?.type === "multipart" || (media?.type === "message" && media.subtype !== "global")) {
    // XOP 1.0 §4.1: each part other than the root holds one attachment's octets, never a package.
    throw packageError(`A part of type ${media.type}/${media.subtype} is not accepted: parts are not nested`);
  }
  const coding = (single(fields, "content-transfer-encoding") ?? "binary").toLowerCase();
  let body: Uint8Array;
  if (coding === "binary" || coding === "8bit" || coding === "7bit") {
    if (raw.byteLength > bounds.maxPartBytes) throw partTooLarge(bounds);
    body = raw;
  } else if (coding === "base64") {
    // 4 characters carry 3 octets; line breaks and padding make the text longer, never shorter.
    if (Math.floor((raw.byteLength * 3) / 4) > bounds.maxPartBytes + 3 * 1024) {
      throw partTooLarge(bounds);
    }
    const text = asciiText(raw).replace(/[\r\n\t ]+/g, "");
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) {
      throw packageError("A base64 part holds characters outside RFC 2045 §6.8's alphabet");
    }
    body = base64ToBytes(text);
    if (body.byteLength > bounds.maxPartBytes) throw partTooLarge(bounds);
  } else {
    throw packageError(
      `Content-Transfer-Encoding "${shown(coding, 40)}" is not accepted: binary, 8bit, 7bit or base64`,
    );
  }
  return { contentId: id === undefined ? undefined : unbracket(id), contentType, body };
}

function partTooLarge(bounds: MultipartBounds): XmlError {
  return packageError(`A part is larger than ${bounds.maxPartBytes} bytes (mtom.maxPartBytes)`);
}

/** `<id>` → `id` (RFC 2392 §2: the Content-ID is an addr-spec in angle brackets). */
export function unbracket(id: string): string {
  const t = id.trim();
  return t.startsWith("<") && t.endsWith(">") ? t.slice(1, -1) : t;
}

function asciiBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

function startsAt(bytes: Uint8Array, at: number, needle: Uint8Array): boolean {
  for (let i = 0; i < needle.length; i++) if (bytes[at + i] !== needle[i]) return false;
  return true;
}

/** The first index of `needle` in `bytes` from `from`, ending before `end`; -1 when absent. */
function indexOf(bytes: Uint8Array, needle: Uint8Array, from: number, end = bytes.length): number {
  const first = needle[0] as number;
  const last = Math.min(end, bytes.length) - needle.length;
  let i = from;
  while (i <= last) {
    i = bytes.indexOf(first, i);
    if (i < 0 || i > last) return -1;
    if (startsAt(bytes, i, needle)) return i;
    i++;
  }
  return -1;
}
