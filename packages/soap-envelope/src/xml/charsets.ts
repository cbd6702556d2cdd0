import { xmlDeclaredEncoding } from "@svc/kernel";
import { asciiText } from "./bytes.js";
import { XmlError } from "./model.js";

/** The global `TextDecoder` (WHATWG Encoding), which every runtime has. */
export type Decoder = InstanceType<typeof TextDecoder>;

/** Whether `chunk`, the document's first bytes, is a byte order mark cut short (EF, EF BB, FE, FF). */
export function mayStartBom(chunk: Uint8Array): boolean {
  const length = chunk.byteLength;
  if (length === 1) return chunk[0] === 0xef || chunk[0] === 0xfe || chunk[0] === 0xff;
  return length === 2 && chunk[0] === 0xef && chunk[1] === 0xbb;
}

export function startsWithBom(chunk: Uint8Array): boolean {
  return (
    (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) ||
    (chunk[0] === 0xfe && chunk[1] === 0xff) ||
    (chunk[0] === 0xff && chunk[1] === 0xfe)
  );
}

const READ_AS_UTF8 = new Set(["utf-8", "utf8", "us-ascii", "ascii"]);

/**
 * A message without a `charset` parameter or a byte order mark is read as UTF-8; RFC 7303 §3.2
 * (with XML 1.0 §4.3.3 and Appendix F) then lets its encoding declaration name the encoding. One
 * that names another (`ISO-8859-1`, or `UTF-16` without the byte order mark §4.3.3 requires) would
 * be misread, its `é` (E9) refused or its `Ã©` (C3 A9) read as `é`: it is refused instead.
 */
export function refuseDeclaredEncoding(text: string): void {
  const name = xmlDeclaredEncoding(text);
  if (name !== undefined && !READ_AS_UTF8.has(name)) {
    throw new XmlError(
      "encoding",
      `The XML declaration names the encoding "${name}": send UTF-8, or UTF-16 with a byte order mark or a charset parameter`,
    );
  }
}

/** Characters of the document start `xmlDeclaredEncoding` reads (in @svc/errors). */
const DECLARATION_WINDOW = 512;

/**
 * {@link refuseDeclaredEncoding} once the document's start holds a whole XML declaration (its
 * `?>`), or none, or all the characters that are read for it; until then the text so far is
 * returned, to be checked again with the next read. Each read of a body is a chunk of whatever
 * size the network delivered: `<?xml version="1.0" encoding="ISO-8859-1"?>` split after
 * `<?xml` must be refused as it is when it arrives whole.
 */
export function checkDeclaredEncoding(start: string): string | undefined {
  const declared = start.length >= 5 ? start.startsWith("<?xml") : "<?xml".startsWith(start);
  if (declared && start.length < DECLARATION_WINDOW && !start.includes("?>")) return start;
  refuseDeclaredEncoding(start);
  return undefined;
}

/** The text of a chunk of US-ASCII bytes. */
export function latin1(chunk: Uint8Array): string {
  return asciiText(chunk);
}

export function decode(decoder: Decoder, chunk: Uint8Array, stream: boolean): string {
  try {
    return decoder.decode(chunk, { stream });
  } catch {
    throw new XmlError("encoding", `The message is not valid ${decoder.encoding.toUpperCase()}`);
  }
}

/**
 * XML 1.0 Appendix F.1: a byte order mark at the start of the document (`atStart`) decides
 * UTF-8 or UTF-16; otherwise the transport's charset (SOAP 1.2 Part 2 §7.1.4 lets the `charset`
 * parameter name it), else UTF-8. A BOM wins over a `charset` that disagrees with it: XML 1.0
 * Appendix F.2 leaves conflicting sources to the MIME type's specification, and RFC 7303 (§3.2,
 * §3.3) gives the BOM precedence over the charset parameter for XML media types, `+xml`
 * (application/soap+xml) included.
 */
export function pickDecoder(first: Uint8Array, charset: string | undefined, atStart: boolean): Decoder {
  if (atStart && first[0] === 0xfe && first[1] === 0xff) return takeDecoder("utf-16be");
  if (atStart && first[0] === 0xff && first[1] === 0xfe) return takeDecoder("utf-16le");
  if (atStart && first[0] === 0xef && first[1] === 0xbb && first[2] === 0xbf) return takeDecoder("utf-8");
  // A decoder picked after the first bytes (ASCII reads of a UTF-8 message) must not strip
  // EF BB BF as a byte order mark: there it is U+FEFF, a character of the document.
  if (!atStart) return takeDecoder("utf-8", true);
  const cs = charset?.toLowerCase();
  if (cs === "utf-16" || cs === "utf-16be") return takeDecoder("utf-16be");
  if (cs === "utf-16le") return takeDecoder("utf-16le");
  return takeDecoder("utf-8");
}

/** Idle fatal decoders by encoding: building one per message costs more than decoding it. */
const DECODER_POOL = new Map<string, Decoder[]>();

const DECODER_POOL_SIZE = 64;

function takeDecoder(encoding: "utf-8" | "utf-16be" | "utf-16le", keepBom = false): Decoder {
  // ignoreBOM false: a byte order mark at the start of the document is consumed, not passed to
  // the parser; ignoreBOM true (keepBom) for a decoder that starts mid-document.
  return (
    DECODER_POOL.get(poolKey(encoding, keepBom))?.pop() ??
    new TextDecoder(encoding, { fatal: true, ignoreBOM: keepBom })
  );
}

function poolKey(encoding: string, keepBom: boolean): string {
  return keepBom ? `${encoding}+bom` : encoding;
}

export function releaseDecoder(decoder: Decoder): void {
  const key = poolKey(decoder.encoding, decoder.ignoreBOM);
  let pool = DECODER_POOL.get(key);
  if (pool === undefined) {
    pool = [];
    DECODER_POOL.set(key, pool);
  }
  if (pool.length < DECODER_POOL_SIZE) pool.push(decoder);
}

/**
 * US-ASCII's name and aliases in the IANA Character Sets registry, lower-cased: charset names are
 * compared case-insensitively (RFC 2978 §2.3, RFC 9110 §8.3.2). RFC 7303 §3.2 lets `charset`
 * name it for an XML media type; every US-ASCII text is UTF-8 text (RFC 3629 §1).
 */
export const US_ASCII: ReadonlySet<string> = new Set([
  "us-ascii",
  "ansi_x3.4-1968",
  "iso-ir-6",
  "ansi_x3.4-1986",
  "iso_646.irv:1991",
  "iso646-us",
  "us",
  "ibm367",
  "cp367",
  "csascii",
]);

/** Encoding names (lower-cased) a receiver accepts in `charset` (anything else is a 415). */
export const SUPPORTED_CHARSETS: ReadonlySet<string> = new Set([
  "utf-8",
  "utf8",
  "utf-16",
  "utf-16le",
  "utf-16be",
  ...US_ASCII,
]);
