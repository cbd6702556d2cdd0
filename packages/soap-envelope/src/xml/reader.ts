import { isAscii } from "node:buffer";
import { TextDecoder } from "node:util";
import { xmlDeclaredEncoding } from "@svc/kernel";
import { SaxesParser, type SaxesTagNS } from "saxes";
import { parseSimpleXml, parseSimpleXmlUntil, setAttribute, type XmlCheckpoint } from "./fast-scan.js";
import {
  type HeldContent,
  type ParsedElement,
  type ResolvedXmlLimits,
  resolveLimits,
  XmlError,
  type XmlParse,
  type XmlSource,
} from "./model.js";
import { deadlineQueue, type ReadDeadline } from "./read-deadline.js";
import { cutCharacters } from "./shown.js";
import { deferHeld, Pacer } from "./skip.js";
import { XML_NON_WHITESPACE } from "./space.js";

export type { XmlCheckpoint } from "./fast-scan.js";
export { XmlTemplates } from "./fast-scan.js";
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

const XMLNS_URI = "http://www.w3.org/2000/xmlns/";

/** Characters written to the streaming parser at once when it may stop: how far past a stop it parses. */
const STOP_SLICE = 4096;

/**
 * Parses a document with `saxes` (streaming, namespace-aware) into {@link ParsedElement}s,
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
    if (Buffer.byteLength(source) > limits.maxBytes) throw tooLarge(limits);
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
  let decoder: TextDecoder | undefined;
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
    let chunk = typeof raw === "string" ? Buffer.from(raw) : raw;
    bytes += chunk.byteLength;
    if (bytes > limits.maxBytes) throw tooLarge(limits);
    if (held !== undefined) {
      chunk = Buffer.concat([held, chunk]);
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
    const chunk = typeof raw === "string" ? Buffer.from(raw) : raw;
    bytes += chunk.byteLength;
    if (bytes > maxBytes) throw tooLargeBytes(maxBytes);
    chunks.push(chunk);
  };
  if (isEmitterStream(source)) await readEmitter(source, onChunk, timeoutMs);
  else await readIterable(source, onChunk, timeoutMs);
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks, bytes);
}

function tooLargeBytes(maxBytes: number): XmlError {
  return new XmlError("too-large", `The message is larger than ${maxBytes} bytes`);
}

/** Whether `chunk`, the document's first bytes, is a byte order mark cut short (EF, EF BB, FE, FF). */
function mayStartBom(chunk: Uint8Array): boolean {
  const length = chunk.byteLength;
  if (length === 1) return chunk[0] === 0xef || chunk[0] === 0xfe || chunk[0] === 0xff;
  return length === 2 && chunk[0] === 0xef && chunk[1] === 0xbb;
}

function startsWithBom(chunk: Uint8Array): boolean {
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
function refuseDeclaredEncoding(text: string): void {
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
function checkDeclaredEncoding(start: string): string | undefined {
  const declared = start.length >= 5 ? start.startsWith("<?xml") : "<?xml".startsWith(start);
  if (declared && start.length < DECLARATION_WINDOW && !start.includes("?>")) return start;
  refuseDeclaredEncoding(start);
  return undefined;
}

function latin1(chunk: Uint8Array): string {
  return (
    Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
  ).toString("latin1");
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
  if (Buffer.byteLength(source) > limits.maxBytes) throw tooLarge(limits);
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
  if (Buffer.byteLength(source) > limits.maxBytes) throw tooLarge(limits);
  return parseWhole(source.charCodeAt(0) === 0xfeff ? source.slice(1) : source, limits);
}

interface EmitterStream {
  on(event: string, listener: (arg: never) => void): unknown;
  off(event: string, listener: (arg: never) => void): unknown;
  resume(): unknown;
}

function isEmitterStream(value: unknown): value is EmitterStream {
  const v = value as Partial<EmitterStream> | null;
  return typeof v?.on === "function" && typeof v.off === "function" && typeof v.resume === "function";
}

/**
 * Reads a Node stream through 'data' events. On a failure the listeners go and the stream stays
 * flowing, so the rest of the body is discarded rather than left in the socket, where closing
 * it would reset the connection before the client reads the fault. With `timeoutMs`, a stream
 * that has not ended in time fails the same way (RFC 9110 §15.5.9); its deadline is a link in a
 * shared, coarsely swept list (read-deadline.ts), not a timer of its own, so a message that
 * arrives in time pays two pointer updates for it.
 */
function readEmitter(
  stream: EmitterStream,
  onChunk: (chunk: Uint8Array | string) => void,
  timeoutMs: number | undefined,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const queue = timeoutMs === undefined ? undefined : deadlineQueue(timeoutMs);
    let deadline: ReadDeadline | undefined;
    const cleanup = () => {
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", onError);
      if (deadline !== undefined) queue?.remove(deadline);
    };
    const onData = (chunk: Uint8Array | string) => {
      try {
        onChunk(chunk);
      } catch (err) {
        cleanup();
        reject(err);
      }
    };
    // After 'end' the stream emits no more data: its listeners stay until it is collected
    // with the request, which saves removing three listeners per message.
    const onEnd = () => {
      if (deadline !== undefined) queue?.remove(deadline);
      resolve();
    };
    const onError = (err: unknown) => {
      cleanup();
      reject(
        new XmlError("malformed", `The message could not be read: ${(err as Error)?.message ?? "aborted"}`),
      );
    };
    stream.on("data", onData);
    stream.on("end", onEnd);
    stream.on("error", onError);
    if (queue !== undefined) {
      deadline = queue.add(() => {
        cleanup();
        reject(timedOut(queue.timeoutMs));
      });
    }
    stream.resume();
  });
}

/**
 * Reads any other async iterable of chunks, abandoning it (`return()`, which destroys a Node
 * stream) when it has not ended within `timeoutMs` (RFC 9110 §15.5.9). Not the path of
 * `soapEndpoint`, so a timer per read is fine here.
 */
async function readIterable(
  source: AsyncIterable<Uint8Array | string>,
  onChunk: (chunk: Uint8Array | string) => void,
  timeoutMs: number,
): Promise<void> {
  const iterator = source[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut(timeoutMs)), timeoutMs);
  });
  let done = false;
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), expired]);
      if (next.done) {
        done = true;
        return;
      }
      onChunk(next.value);
    }
  } finally {
    clearTimeout(timer);
    // Abandoned (timed out, or a chunk refused): the source need not produce the rest.
    if (!done) void Promise.resolve(iterator.return?.()).catch(() => {});
  }
}

function timedOut(timeoutMs: number): XmlError {
  return new XmlError("timeout", `The message did not arrive within ${timeoutMs} ms`);
}

function tooLarge(limits: ResolvedXmlLimits): XmlError {
  return new XmlError("too-large", `The message is larger than ${limits.maxBytes} bytes`);
}

function decode(decoder: TextDecoder, chunk: Uint8Array, stream: boolean): string {
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
function pickDecoder(first: Uint8Array, charset: string | undefined, atStart: boolean): TextDecoder {
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
const DECODER_POOL = new Map<string, TextDecoder[]>();
const DECODER_POOL_SIZE = 64;

function takeDecoder(encoding: "utf-8" | "utf-16be" | "utf-16le", keepBom = false): TextDecoder {
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

function releaseDecoder(decoder: TextDecoder): void {
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
const US_ASCII: ReadonlySet<string> = new Set([
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

/**
 * Builds the element tree from saxes events. Creating a saxes parser and attaching its handlers
 * costs more than parsing a small envelope, so builders are pooled: a builder goes back to the
 * pool only after a document parsed to the end (saxes resets itself in `close()`); one that
 * failed midway is dropped with whatever state it was in.
 */
class TreeBuilder {
  private readonly parser: SaxesParser<{
    xmlns: true;
    defaultXMLVersion: "1.0";
    forceXMLVersion: true;
    resolvePrefix: (prefix: string) => string | undefined;
  }>;
  private readonly stack: ParsedElement[] = [];
  /**
   * Per open element, whether its text so far holds character data (not only XML white space).
   * Kept as a flag so a child's start tag need not re-scan the parent's accumulated text: that
   * re-scan was quadratic in the children (5,000 children each after 100 spaces: 1.25e9
   * characters scanned for a 0.5 MB message).
   */
  private readonly textShown: boolean[] = [];
  private root: ParsedElement | undefined;
  private elements = 0;
  private attributeCount = 0;
  /** Namespace declarations in scope, and how many each open element made. */
  private namespaces = 0;
  private readonly declared: number[] = [];
  private limits: ResolvedXmlLimits = DEFAULT_LIMITS;
  private checkpoint: XmlCheckpoint | undefined;
  /** Whether the checkpoint may still stop this parse, and whether it did. */
  private mayStop = false;
  private stopped = false;
  /** How many children the open child of the document element may have. */
  private childLimit = Number.POSITIVE_INFINITY;
  /** Whether processing instructions are skipped rather than refused (contracts, not messages). */
  allowInstructions = false;
  /** The namespaces in scope around the document: an element's, when its content is parsed alone. */
  private baseScope = BASE_SCOPE;
  /**
   * While the checkpoint may stop the parse and skip content ({@link XmlCheckpoint.skipContent}):
   * what writes saxes the text up to each header block's start tag, so that the block's content
   * can be held instead of parsed (xml/skip.ts).
   */
  pacer: Pacer | undefined;
  /** The element whose content the checkpoint would skip, and saxes' position after its start tag. */
  private skip: { element: ParsedElement; at: number } | undefined;

  constructor() {
    // XML 1.0 (Fifth Edition) §2.8: a 1.0 processor "will process [a document declaring another
    // 1.x version] as a 1.0 document"; SOAP 1.2 Part 1 §5 requires a message serializable as XML
    // 1.0. Read as XML 1.1 (saxes' choice from the declaration), `&#1;` would hand a C0 control
    // character to a handler and `xmlns:p=""` would undeclare a prefix.
    this.parser = new SaxesParser({
      xmlns: true,
      defaultXMLVersion: "1.0",
      forceXMLVersion: true,
      // Asked only for a prefix the document does not declare.
      resolvePrefix: (prefix) => this.baseScope[prefix],
    });
    this.parser.on("doctype", () => {
      throw new XmlError("dtd", "A document type declaration is not allowed in a SOAP message");
    });
    this.parser.on("processinginstruction", () => {
      if (this.allowInstructions) return;
      throw new XmlError("pi", "A processing instruction is not allowed in a SOAP message");
    });
    this.parser.on("opentagstart", () => {
      this.elements++;
      if (this.elements > this.limits.maxElements) {
        throw new XmlError("limit", `The message has more than ${this.limits.maxElements} elements`);
      }
      if (this.stack.length >= this.limits.maxDepth) {
        throw new XmlError("limit", `The message nests elements deeper than ${this.limits.maxDepth}`);
      }
    });
    this.parser.on("attribute", () => {
      this.attributeCount++;
      if (this.attributeCount > this.limits.maxAttributes) {
        throw new XmlError("limit", `An element has more than ${this.limits.maxAttributes} attributes`);
      }
    });
    this.parser.on("opentag", (tag) => {
      this.attributeCount = 0;
      this.open(tag);
    });
    this.parser.on("closetag", () => {
      this.stack.pop();
      this.namespaces -= this.declared[this.stack.length] ?? 0;
    });
    const onText = (text: string) => {
      const depth = this.stack.length - 1;
      const top = this.stack[depth];
      if (top === undefined) return;
      top.text += text;
      // Only this chunk is scanned, once; the flag remembers it for the children still to come.
      if (!this.textShown[depth] && XML_NON_WHITESPACE.test(text)) this.textShown[depth] = true;
      if (top.children.length > 0 && this.textShown[depth]) top.mixed = true;
    };
    this.parser.on("text", onText);
    this.parser.on("cdata", onText);
  }

  /** A builder ready for a new document under `limits`, from the pool when one is free. */
  static acquire(limits: ResolvedXmlLimits, checkpoint?: XmlCheckpoint): TreeBuilder {
    const builder = BUILDER_POOL.pop() ?? new TreeBuilder();
    builder.limits = limits;
    if (checkpoint !== undefined) {
      builder.checkpoint = checkpoint;
      builder.mayStop = checkpoint.stops;
      if (checkpoint.stops && checkpoint.skipContent !== undefined) builder.pacer = new Pacer();
    }
    return builder;
  }

  /**
   * Parses the next document as content found in place under `scope`: its prefixes resolve there
   * and its declarations count against `limits.maxNamespaces` (one per binding made on the way).
   */
  within(scope: Readonly<Record<string, string>>): void {
    this.baseScope = scope;
    for (let s: object | null = scope; s !== null && s !== BASE_SCOPE; s = Object.getPrototypeOf(s))
      this.namespaces += Object.keys(s).length;
  }

  /** The document element as far as it is built (after a stop). */
  partialRoot(): ParsedElement {
    return this.root as ParsedElement;
  }

  /** Continues a stopped parse: the checkpoint no longer stops it. */
  resume(): void {
    this.mayStop = false;
    this.stopped = false;
    this.pacer = undefined;
  }

  /** The checkpoint's questions for an element opening at depth 1 or 2. */
  private watch(
    checkpoint: XmlCheckpoint,
    element: ParsedElement,
    parent: ParsedElement,
    depth: 1 | 2,
  ): void {
    if (depth === 1) this.childLimit = checkpoint.maxChildren(element, parent.children.length - 1);
    else if (parent.children.length > this.childLimit) {
      throw new XmlError("limit", checkpoint.tooManyChildren(parent, this.childLimit));
    }
    if (this.mayStop && !this.stopped && checkpoint.stopBefore(element, parent, depth)) this.stopped = true;
  }

  private open(tag: SaxesTagNS): void {
    const parent = this.stack[this.stack.length - 1];
    const parentScope = parent?.scope ?? this.baseScope;
    let scope = parentScope;
    let own: Record<string, string> | undefined;
    let declared = 0;
    for (const prefix in tag.ns) {
      // Namespaces in XML 1.0 §3: "The prefix xml is by definition bound to the namespace name
      // http://www.w3.org/XML/1998/namespace. It MAY, but need not, be declared" (saxes refuses
      // any other name for it). The base scope holds that binding, frozen: assigning it again
      // threw, and a namespace-well-formed message was refused as not well-formed.
      if (prefix === "xml") continue;
      own ??= Object.create(parentScope) as Record<string, string>;
      own[prefix] = tag.ns[prefix] ?? "";
      declared++;
    }
    if (own) scope = own;
    this.namespaces += declared;
    if (this.namespaces > this.limits.maxNamespaces) {
      throw new XmlError(
        "limit",
        `The message has more than ${this.limits.maxNamespaces} namespace declarations in scope`,
      );
    }
    this.declared[this.stack.length] = declared;
    const attributes: Record<string, string> = {};
    const tagAttributes = tag.attributes;
    for (const key in tagAttributes) {
      const attr = tagAttributes[key];
      if (attr === undefined || attr.uri === XMLNS_URI || attr.name === "xmlns") continue;
      setAttribute(attributes, attr.uri ? `{${attr.uri}}${attr.local}` : attr.local, attr.value);
    }
    const element: ParsedElement = {
      namespace: tag.uri,
      localName: tag.local,
      attributes,
      children: [],
      text: "",
      scope,
      mixed: false,
    };
    if (parent) {
      if (this.textShown[this.stack.length - 1]) parent.mixed = true;
      parent.children.push(element);
      const depth = this.stack.length;
      if (depth < 3 && this.checkpoint !== undefined) {
        this.watch(this.checkpoint, element, parent, depth as 1 | 2);
        if (
          depth === 2 &&
          this.pacer !== undefined &&
          !this.stopped &&
          !tag.isSelfClosing &&
          this.checkpoint.skipContent?.(element, parent)
        ) {
          this.skip = { element, at: this.parser.position };
        }
      }
    } else {
      this.root = element;
    }
    this.textShown[this.stack.length] = false;
    this.stack.push(element); // saxes emits closetag for self-closing tags too
  }

  /**
   * Parses `text`. While the checkpoint may stop the parse, in slices of {@link STOP_SLICE}
   * characters: once it has stopped, the text not yet parsed is returned (`""` when none is left).
   */
  write(text: string): string | undefined {
    if (text.length === 0) return this.stopped ? "" : undefined;
    try {
      if (!this.mayStop) {
        this.parser.write(text);
        return undefined;
      }
      if (this.pacer !== undefined) return this.pacer.write(text, this, STOP_SLICE);
      for (let at = 0; at < text.length; at += STOP_SLICE) {
        this.parser.write(at === 0 && text.length <= STOP_SLICE ? text : text.slice(at, at + STOP_SLICE));
        if (this.stopped) return text.slice(at + STOP_SLICE);
      }
      return undefined;
    } catch (err) {
      throw asXmlError(err);
    }
  }

  // What the pacer asks (PacedParser).
  parse(text: string): void {
    this.parser.write(text);
  }

  get hasStopped(): boolean {
    return this.stopped;
  }

  takeSkip(): { element: ParsedElement; at: number } | undefined {
    const skip = this.skip;
    this.skip = undefined;
    return skip;
  }

  countSkipped(elements: number, deepest: number): void {
    this.elements += elements;
    if (this.elements > this.limits.maxElements) {
      throw new XmlError("limit", `The message has more than ${this.limits.maxElements} elements`);
    }
    if (deepest > this.limits.maxDepth) {
      throw new XmlError("limit", `The message nests elements deeper than ${this.limits.maxDepth}`);
    }
  }

  /** Ends the document and returns its root; the builder goes back to the pool. */
  close(): ParsedElement {
    try {
      this.parser.close();
    } catch (err) {
      throw asXmlError(err);
    }
    const root = this.root;
    if (!root) throw new XmlError("malformed", "The message is not an XML document");
    // saxes has reset itself (close() ends with its own init); reset what is ours.
    this.root = undefined;
    this.elements = 0;
    this.attributeCount = 0;
    this.namespaces = 0;
    this.stack.length = 0;
    this.textShown.length = 0;
    this.limits = DEFAULT_LIMITS;
    this.checkpoint = undefined;
    this.mayStop = false;
    this.stopped = false;
    this.childLimit = Number.POSITIVE_INFINITY;
    this.allowInstructions = false;
    this.pacer = undefined;
    this.skip = undefined;
    this.baseScope = BASE_SCOPE;
    if (BUILDER_POOL.length < BUILDER_POOL_SIZE) BUILDER_POOL.push(this);
    return root;
  }
}

const DEFAULT_LIMITS: ResolvedXmlLimits = resolveLimits();
/** Idle builders kept for reuse; more than this many concurrent parses create fresh ones. */
const BUILDER_POOL_SIZE = 64;
const BUILDER_POOL: TreeBuilder[] = [];

const BASE_SCOPE: Readonly<Record<string, string>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, string>, {
    xml: "http://www.w3.org/XML/1998/namespace",
  }),
);

function asXmlError(err: unknown): XmlError {
  if (err instanceof XmlError) return err;
  const message = cutCharacters(err instanceof Error ? err.message : String(err), 200);
  // saxes reports "line:column: message"; the text is safe to echo (no document content).
  const at = /^(\d+):(\d+): (.*)$/s.exec(message);
  const position = at ? { line: Number(at[1]), column: Number(at[2]), problem: at[3] as string } : undefined;
  return new XmlError("malformed", `The message is not well-formed XML: ${message}`, position);
}
