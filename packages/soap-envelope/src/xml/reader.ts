import { concatBytes, isAscii, utf8Bytes, utf8Length } from "./bytes.js";
import {
  checkDeclaredEncoding,
  type Decoder,
  decode,
  latin1,
  mayStartBom,
  pickDecoder,
  refuseDeclaredEncoding,
  releaseDecoder,
  startsWithBom,
  US_ASCII,
} from "./charsets.js";
import type { XmlCheckpoint } from "./checkpoint.js";
import { parseSimpleXml, parseSimpleXmlUntil } from "./fast-scan.js";
import {
  type HeldContent,
  type ParsedElement,
  type ResolvedXmlLimits,
  XmlError,
  type XmlParse,
  type XmlSource,
} from "./model.js";
import { isEmitterStream, readEmitter, readIterable, tooLarge } from "./read-stream.js";
import { deferHeld } from "./skip.js";
import { BASE_SCOPE, TreeBuilder } from "./tree-builder.js";

export { SUPPORTED_CHARSETS } from "./charsets.js";

export type { XmlCheckpoint } from "./checkpoint.js";
export { type ElementSpan, findElements } from "./find-elements.js";
export {
  clark,
  type HeldContent,
  type ParsedElement,
  type ResolvedXmlLimits,
  resolveLimits,
  resolveQName,
  type XmlElement,
  XmlError,
  type XmlLimits,
  type XmlParse,
  type XmlSource,
} from "./model.js";
export { shown } from "./shown.js";
export { XmlTemplates } from "./templates.js";

/**
 * Parses a document with the XML reader the @svc packages share (`@svc/kernel/internal`: saxes,
 * streaming, namespace-aware, with one set of refusal rules) into {@link ParsedElement}s,
 * enforcing the byte, depth, attribute-count and element-count limits as data arrives.
 *
 * XML 1.0 §2.8: a document type declaration is refused outright (SOAP 1.2 Part 1 §5: "The XML
 * infoset of a SOAP message MUST NOT contain a document type declaration information item"), so
 * no entity is ever declared and entity expansion or external entities cannot happen.
 * Processing instructions are refused too (Part 1 §5: a receiver "SHOULD generate a SOAP fault
 * with the Value of Code set to env:Sender").
 *
 * With `timeoutMs`, a stream that has not ended that many milliseconds after the read started
 * (a client trickling its body) is abandoned: its listeners go, what was buffered is dropped and
 * the promise rejects with an {@link XmlError} of kind `"timeout"` (RFC 9110 §15.5.9, 408).
 */
export async function parseXml(
  source: XmlSource,
  limits: ResolvedXmlLimits,
  charset?: string,
  timeoutMs?: number,
): Promise<ParsedElement> {
  return (await readXml(source, limits, charset, timeoutMs, undefined)).root;
}

/**
 * {@link parseXml} that asks `checkpoint` as the document's first levels open: the whole source
 * is read (under the same limits and deadline), but a parse told to stop parses at most
 * {@link STOP_SLICE} characters past that point until its `rest()` is called.
 */
export async function readXml(
  source: XmlSource,
  limits: ResolvedXmlLimits,
  charset: string | undefined,
  timeoutMs: number | undefined,
  checkpoint: XmlCheckpoint | undefined,
): Promise<XmlParse> {
  if (typeof source === "string") {
    if (utf8Length(source) > limits.maxBytes) throw tooLarge(limits);
    return parseWholeUntil(source.charCodeAt(0) === 0xfeff ? source.slice(1) : source, limits, checkpoint);
  }
  // The first chunk's text is held back: a message that arrives in one chunk (most do) is
  // parsed whole, by the fast path when it can; a longer one streams into saxes as it arrives.
  const cs = charset?.toLowerCase();
  // US-ASCII is UTF-8 without the bytes over 7F: read as UTF-8, and such a byte refused.
  const ascii = cs !== undefined && US_ASCII.has(cs);
  const utf8 = cs === undefined || cs === "utf-8" || cs === "utf8" || ascii;
  let builder: TreeBuilder | undefined;
  let first: string | undefined;
  let decoder: Decoder | undefined;
  let bytes = 0;
  // The text of an XML declaration not yet seen to its end: a read may end inside it.
  let declaration: string | undefined;
  // The document's first bytes while they may be the start of a byte order mark, which a read
  // may end inside as well: they decide the decoder together with the bytes that follow.
  let held: Uint8Array | undefined;
  // Text that arrived after the parse stopped at the checkpoint: parsed by `rest()`, if ever.
  let parked: string[] | undefined;
  const feed = (text: string) => {
    if (parked !== undefined) parked.push(text);
    else {
      const left = (builder as TreeBuilder).write(text);
      if (left !== undefined) parked = [left];
    }
  };
  const onChunk = (raw: Uint8Array | string) => {
    let chunk = typeof raw === "string" ? utf8Bytes(raw) : raw;
    bytes += chunk.byteLength;
    if (bytes > limits.maxBytes) throw tooLarge(limits);
    if (held !== undefined) {
      chunk = concatBytes([held, chunk]);
      held = undefined;
    }
    if (bytes === chunk.byteLength && mayStartBom(chunk)) {
      held = chunk;
      return;
    }
    take(chunk);
  };
  const take = (chunk: Uint8Array) => {
    let text: string;
    // ASCII is the same in UTF-8 and Latin-1, which Node decodes without a TextDecoder; a chunk
    // with any other byte, or in UTF-16, takes the decoder (which then stays for the message).
    if (decoder === undefined && utf8 && isAscii(chunk)) text = latin1(chunk);
    else {
      // Only the document's first bytes can be a byte order mark (XML 1.0 §4.3.3, Appendix F):
      // after ASCII reads, FF FE is invalid UTF-8, never a switch to UTF-16 mid-message.
      const atStart = bytes === chunk.byteLength;
      if (decoder === undefined && ascii && !(atStart && startsWithBom(chunk))) {
        // XML 1.0 §4.3.3: "It is a fatal error when an XML processor encounters a character
        // encoding that it is unable to process" / bytes not in the declared encoding. A BOM at
        // the start still wins over the charset parameter (RFC 7303 §3.3), as for any charset.
        throw new XmlError("encoding", "The message is not valid US-ASCII (a byte over 7F)");
      }
      decoder ??= pickDecoder(chunk, charset, atStart);
      text = decode(decoder, chunk, true);
    }
    if (builder === undefined && first === undefined) {
      if (charset === undefined && !startsWithBom(chunk)) declaration = checkDeclaredEncoding(text);
      first = text;
      return;
    }
    if (declaration !== undefined) declaration = checkDeclaredEncoding(declaration + text);
    if (builder === undefined) {
      builder = TreeBuilder.acquire(limits, checkpoint);
      feed(first ?? "");
    }
    feed(text);
  };
  if (source instanceof Uint8Array) onChunk(source);
  else if (isEmitterStream(source)) await readEmitter(source, onChunk, timeoutMs);
  else if (timeoutMs !== undefined) await readIterable(source, onChunk, timeoutMs);
  else for await (const raw of source) onChunk(raw);
  if (held !== undefined) take(held);
  if (declaration !== undefined) refuseDeclaredEncoding(declaration);
  let rest = "";
  if (decoder !== undefined) {
    rest = decode(decoder, EMPTY, false);
    // A decoder that completed a document has reset itself (WHATWG Encoding §7.2 decode():
    // without `stream` the state is flushed); one that failed midway is dropped.
    releaseDecoder(decoder);
  }
  if (builder === undefined) {
    return parseWholeUntil(first === undefined ? rest : first + rest, limits, checkpoint);
  }
  feed(rest);
  const skipped = builder.pacer?.held;
  if (parked === undefined) return deferred({ root: builder.close(), rest: undefined }, skipped, limits);
  const stopped = builder;
  const texts = parked;
  return deferred(
    {
      root: stopped.partialRoot(),
      rest: () => {
        stopped.resume();
        for (const text of texts) stopped.write(text);
        return stopped.close();
      },
    },
    skipped,
    limits,
  );
}

/** {@link deferHeld} reading held content under `limits`. */
function deferred(
  parse: XmlParse,
  held: readonly HeldContent[] | undefined,
  limits: ResolvedXmlLimits,
): XmlParse {
  if (held === undefined) return parse;
  return deferHeld(parse, held, (content, scope) => {
    const builder = TreeBuilder.acquire(limits);
    builder.within(scope);
    // The element stands for the held one: its depth and elements were counted when skipped.
    builder.write(`<w>${content}</w>`);
    return builder.close();
  });
}

const EMPTY = new Uint8Array(0);

/**
 * The whole of a body, read as {@link readXml} reads one (a Node stream through its events, with
 * the shared deadline; any other async iterable with a timer): at most `maxBytes`, else an
 * {@link XmlError} of kind `"too-large"`; not ended within `timeoutMs`, one of kind `"timeout"`.
 */
export async function readBytes(
  source: Exclude<XmlSource, string>,
  maxBytes: number,
  timeoutMs: number,
): Promise<Uint8Array> {
  if (source instanceof Uint8Array) {
    if (source.byteLength > maxBytes) throw tooLargeBytes(maxBytes);
    return source;
  }
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  const onChunk = (raw: Uint8Array | string) => {
    const chunk = typeof raw === "string" ? utf8Bytes(raw) : raw;
    bytes += chunk.byteLength;
    if (bytes > maxBytes) throw tooLargeBytes(maxBytes);
    chunks.push(chunk);
  };
  if (isEmitterStream(source)) await readEmitter(source, onChunk, timeoutMs);
  else await readIterable(source, onChunk, timeoutMs);
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : concatBytes(chunks, bytes);
}

function tooLargeBytes(maxBytes: number): XmlError {
  return new XmlError("too-large", `The message is larger than ${maxBytes} bytes`);
}

/** A whole document: the fast path of xml/fast-scan.ts when it applies, else saxes. */
function parseWhole(text: string, limits: ResolvedXmlLimits): ParsedElement {
  return parseSimpleXml(text, limits, BASE_SCOPE) ?? parseWithSaxes(text, limits);
}

/** {@link parseWhole} asking `checkpoint`; a stopped fast parse that gives up later is parsed again by saxes. */
function parseWholeUntil(
  text: string,
  limits: ResolvedXmlLimits,
  checkpoint: XmlCheckpoint | undefined,
): XmlParse {
  if (checkpoint === undefined) return { root: parseWhole(text, limits), rest: undefined };
  const fast = parseSimpleXmlUntil(text, limits, BASE_SCOPE, checkpoint, () =>
    parseWithSaxes(text, limits, checkpoint),
  );
  if (fast !== undefined) return deferred(fast, fast.held, limits);
  const builder = TreeBuilder.acquire(limits, checkpoint);
  const left = builder.write(text);
  const held = builder.pacer?.held;
  if (left === undefined) return deferred({ root: builder.close(), rest: undefined }, held, limits);
  return deferred(
    {
      root: builder.partialRoot(),
      rest: () => {
        builder.resume();
        builder.write(left);
        return builder.close();
      },
    },
    held,
    limits,
  );
}

/** A whole document through saxes alone (the fast path's tests compare against it), never stopping. */
export function parseWithSaxes(
  text: string,
  limits: ResolvedXmlLimits,
  checkpoint?: XmlCheckpoint,
): ParsedElement {
  const builder = TreeBuilder.acquire(limits, checkpoint);
  builder.resume();
  builder.write(text);
  return builder.close();
}

/** The fast path of xml/fast-scan.ts with this module's base scope, for its tests. */
export function parseSimple(text: string, limits: ResolvedXmlLimits): ParsedElement | undefined {
  return parseSimpleXml(text, limits, BASE_SCOPE);
}

/**
 * A contract document (WSDL, XSD) at start-up: {@link parseXmlString}, but processing instructions
 * are skipped (XML 1.0 §2.6: they are for applications, and a WSDL may carry an
 * `<?xml-stylesheet?>` for browsers); DTDs are still refused, so no entity is ever expanded.
 */
export function parseXmlDocument(source: string, limits: ResolvedXmlLimits): ParsedElement {
  if (utf8Length(source) > limits.maxBytes) throw tooLarge(limits);
  const text = source.charCodeAt(0) === 0xfeff ? source.slice(1) : source;
  const fast = parseSimpleXml(text, limits, BASE_SCOPE);
  if (fast !== undefined) return fast;
  const builder = TreeBuilder.acquire(limits);
  builder.allowInstructions = true;
  builder.write(text);
  return builder.close();
}

/** Synchronous {@link parseXml} of a whole string (contracts loaded at start-up). */
export function parseXmlString(source: string, limits: ResolvedXmlLimits): ParsedElement {
  if (utf8Length(source) > limits.maxBytes) throw tooLarge(limits);
  return parseWhole(source.charCodeAt(0) === 0xfeff ? source.slice(1) : source, limits);
}
