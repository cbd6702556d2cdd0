import { type HttpError, splitList } from "@svc/kernel";
import { nodeModules } from "./coder.js";
import { because } from "./diagnostics.js";
import { refused } from "./options.js";

/** A content coding the body parser can decode (RFC 9110 §8.4.1, RFC 7932 br, RFC 8878 zstd). */
export type RequestCoding = "gzip" | "deflate" | "br" | "zstd";

const CODINGS: readonly RequestCoding[] = ["gzip", "deflate", "br", "zstd"];

/** Codings stacked deeper than this (`gzip, br, gzip`) are refused: no client sends them. */
export const MAX_STACKED_CODINGS = 2;

/** The parts of `node:zlib` and `node:stream` decoding uses; zstd only where the runtime's zlib has it. */
interface Inflaters {
  createGunzip(): unknown;
  createInflate(): unknown;
  createBrotliDecompress(): unknown;
  createZstdDecompress?(): unknown;
}
/** A web stream transform: what `pipeThrough` takes. */
interface StreamPair {
  readable: ReadableStream<Uint8Array>;
  writable: WritableStream<Uint8Array>;
}
interface DuplexToWeb {
  Duplex: { toWeb(duplex: unknown): StreamPair };
}

function zlibParts(): { zlib: Inflaters; stream: DuplexToWeb } | undefined {
  const modules = nodeModules() as unknown as { zlib: Inflaters; stream: DuplexToWeb } | undefined;
  return typeof modules?.stream.Duplex?.toWeb === "function" ? modules : undefined;
}

/**
 * Whether the runtime's zlib decodes zstd (Node.js 22.15 and later, Bun): the same test of the
 * runtime's zlib as the response side's `compression()`.
 */
function hasZstd(): boolean {
  return typeof zlibParts()?.zlib.createZstdDecompress === "function";
}

const ACCEPTED =
  'an array of "gzip", "deflate", "br" and "zstd" (zstd where the runtime\'s zlib has it: Node.js 22.15 and later)';

/** The `contentCodings` option of `parseBody`, checked once. */
export function resolveRequestCodings(value: unknown): readonly RequestCoding[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw refused("parseBody", "contentCodings", value, ACCEPTED);
  for (const coding of value as unknown[]) {
    if (!CODINGS.includes(coding as RequestCoding)) {
      throw refused("parseBody", "contentCodings", coding, ACCEPTED);
    }
    // A configuration that names zstd where it cannot be decoded is refused here rather than
    // answering 415 to every zstd body.
    if (coding === "zstd" && !hasZstd()) {
      throw refused("parseBody", "contentCodings", coding, `${ACCEPTED}; this runtime's zlib has no zstd`);
    }
    if (coding !== "gzip" && coding !== "deflate" && zlibParts() === undefined) {
      throw refused("parseBody", "contentCodings", coding, `${ACCEPTED}; this runtime has no node:zlib`);
    }
  }
  return [...new Set(value as RequestCoding[])];
}

/**
 * The codings of a `Content-Encoding` in the order they were applied (RFC 9110 §8.4: "If one or
 * more encodings have been applied to a representation, the sender that applied the encodings
 * MUST generate a Content-Encoding header field that lists the content codings in the order in
 * which they were applied"), `identity` left out; `x-gzip` is gzip (§8.4.1.3). A string names the
 * coding refused: one not enabled, unknown, or a stack deeper than {@link MAX_STACKED_CODINGS}.
 */
export function requestCodings(
  contentEncoding: string,
  enabled: readonly RequestCoding[],
): RequestCoding[] | { refused: string } {
  const list = splitList(contentEncoding);
  if (list === undefined) return { refused: contentEncoding };
  const codings: RequestCoding[] = [];
  for (const item of list) {
    const name = item.toLowerCase();
    if (name === "identity") continue;
    const coding = (name === "x-gzip" ? "gzip" : name) as RequestCoding;
    if (!enabled.includes(coding)) return { refused: item };
    codings.push(coding);
  }
  if (codings.length > MAX_STACKED_CODINGS) return { refused: contentEncoding };
  return codings;
}

/** One decoding step as a web stream pair: the Compression Standard's where it has the coding. */
function decoder(coding: RequestCoding): StreamPair {
  // https://compression.spec.whatwg.org/#decompressionstream: "deflate" is the zlib format, which
  // RFC 9110 §8.4.1.2 names deflate.
  if ((coding === "gzip" || coding === "deflate") && typeof DecompressionStream === "function") {
    return new DecompressionStream(coding) as unknown as StreamPair;
  }
  const parts = zlibParts();
  if (parts === undefined) throw new Error(`no decoder for ${coding}`);
  const { zlib, stream } = parts;
  const inflater =
    coding === "gzip"
      ? zlib.createGunzip()
      : coding === "deflate"
        ? zlib.createInflate()
        : coding === "br"
          ? zlib.createBrotliDecompress()
          : (zlib.createZstdDecompress as () => unknown)();
  return stream.Duplex.toWeb(inflater);
}

/** Passes at most `limit` bytes, then fails the stream with `tooLarge()`: it cancels what feeds it. */
function bounded(limit: number, tooLarge: () => HttpError): TransformStream<Uint8Array, Uint8Array> {
  let size = 0;
  return new TransformStream({
    transform(chunk, controller) {
      size += chunk.byteLength;
      if (size > limit) controller.error(because(tooLarge(), "decoded-too-large"));
      else controller.enqueue(chunk);
    },
  });
}

/**
 * The decoded content of a coded body: `source` (the bytes as received, already bounded by the
 * caller) through each coding's decoder in reverse order of application, every step's output
 * bounded by `limit`, so a small body that decodes to gigabytes (a decompression bomb) is refused
 * once `limit` decoded bytes have been produced, with memory flat: each step is a stream with
 * backpressure, and refusing cancels the steps and the source.
 */
export function decodedContent(
  source: AsyncIterable<Uint8Array>,
  codings: readonly RequestCoding[],
  limit: number,
  tooLarge: () => HttpError,
): AsyncIterable<Uint8Array> {
  let stream = ReadableStream.from(source) as ReadableStream<Uint8Array>;
  for (const coding of [...codings].reverse()) {
    stream = stream.pipeThrough(decoder(coding)).pipeThrough(bounded(limit, tooLarge));
  }
  return stream as unknown as AsyncIterable<Uint8Array>;
}
