import {
  addVary,
  type Body,
  type Coder,
  fieldText,
  HttpError,
  type PipelineRequest,
  type ResponseValue,
} from "@svc/kernel";
import { checkOptionNames, publishDecision } from "@svc/kernel/internal";
import { nativeOf, negotiateChannel, publishNotAcceptable } from "./diagnostics.js";
import { selectEncoding } from "./encoding.js";
import { headerString, isCompressible } from "./headers.js";
import { refused } from "./options.js";

/** Options of {@link compression}. */
export interface CompressionOptions {
  /**
   * Responses smaller than this many bytes are sent uncoded (unless the client refused
   * `identity`): coding them costs more than it saves.
   * @default 1024
   */
  threshold?: number;
  /** The zlib level of gzip and deflate, -1 (zlib's default) to 9. @default -1 */
  level?: number;
}

/** The codings offered, in server preference: RFC 7932 br, RFC 9110 §8.4.1.3 gzip, §8.4.1.2 deflate. */
const ZLIB_CODINGS: readonly string[] = Object.freeze(["br", "gzip", "deflate"]);
/**
 * With RFC 8878 zstd where the runtime's zlib has it (Node.js 22.15 and later, Bun): first, as it
 * codes faster than br at a like size.
 */
const ZSTD_CODINGS: readonly string[] = Object.freeze(["zstd", ...ZLIB_CODINGS]);
/** The codings of the Compression Standard's `CompressionStream`, which has no br. */
const WEB_CODINGS: readonly string[] = Object.freeze(["gzip", "deflate"]);
const NO_CODINGS: readonly string[] = Object.freeze([]);

/**
 * What codes content: the codings it can make, in server preference, and how. `encodeStream`
 * is absent where streamed content is sent as it is.
 *
 * @internal
 */
export interface Encoder {
  readonly codings: readonly string[];
  encodeBytes(coding: string, bytes: Uint8Array): Promise<Uint8Array>;
  encodeStream?(coding: string, body: NodeJS.ReadableStream): Body;
}

/** The parts of `node:zlib` and `node:stream` this file uses. */
type Zlib = Pick<
  typeof import("node:zlib"),
  | "brotliCompress"
  | "constants"
  | "createBrotliCompress"
  | "createDeflate"
  | "createGzip"
  | "deflate"
  | "gzip"
>;
type Streams = Pick<typeof import("node:stream"), "pipeline">;
/** zlib's zstd (Node.js 22.15 and later, Bun), which older runtimes' zlib and types lack. */
interface Zstd {
  zstdCompress?(bytes: Uint8Array, done: (err: Error | null, out: Uint8Array) => void): void;
  createZstdCompress?(): NodeJS.ReadWriteStream;
}

/**
 * node:zlib (and node:stream) where the runtime has them (Node.js, Bun, Deno, workerd with
 * `nodejs_compat`), through `process.getBuiltinModule`: an import would keep this entry from
 * loading where there is no Node.js.
 *
 * @see https://nodejs.org/api/process.html#processgetbuiltinmoduleid
 * @internal
 */
export function nodeModules(): { zlib: Zlib; stream: Streams } | undefined {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  if (typeof runtime?.getBuiltinModule !== "function") return undefined;
  try {
    const zlib = runtime.getBuiltinModule("node:zlib") as Zlib | undefined;
    const stream = runtime.getBuiltinModule("node:stream") as Streams | undefined;
    if (typeof zlib?.gzip !== "function" || typeof stream?.pipeline !== "function") return undefined;
    return { zlib, stream };
  } catch {
    return undefined;
  }
}

/**
 * zstd (where the runtime's zlib has it), br, gzip and deflate with node:zlib, bytes and streams;
 * `level` for gzip and deflate, brotli at quality 4, zstd at its default level (3).
 *
 * @internal
 */
export function zlibEncoder(
  { zlib, stream }: { zlib: Zlib & Zstd; stream: Streams },
  level: number | undefined,
): Encoder {
  const options = level === undefined ? {} : { level };
  const brotli = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } };
  const { zstdCompress, createZstdCompress } = zlib;
  const zstd = typeof zstdCompress === "function" && typeof createZstdCompress === "function";
  return {
    codings: zstd ? ZSTD_CODINGS : ZLIB_CODINGS,
    encodeBytes(coding, bytes) {
      return new Promise<Uint8Array>((resolve, reject) => {
        const done = (err: Error | null, out: Uint8Array) => (err ? reject(err) : resolve(out));
        if (coding === "zstd" && zstd) zstdCompress.call(zlib, bytes, done);
        else if (coding === "br") zlib.brotliCompress(bytes, brotli, done);
        else if (coding === "gzip") zlib.gzip(bytes, options, done);
        else zlib.deflate(bytes, options, done);
      });
    },
    encodeStream(coding, body) {
      const coder =
        coding === "zstd" && zstd
          ? createZstdCompress.call(zlib)
          : coding === "br"
            ? zlib.createBrotliCompress(brotli)
            : coding === "gzip"
              ? zlib.createGzip(options)
              : zlib.createDeflate(options);
      // pipeline(): a source failing mid-body fails the coded stream too, so the response is cut
      // rather than ended as if complete.
      stream.pipeline(body, coder, () => {});
      return coder;
    },
  };
}

/**
 * gzip and deflate with the Compression Standard's `CompressionStream` ("deflate" is the zlib
 * format, as RFC 9110 §8.4.1.2 names it), whole bytes only: no br, and no level.
 *
 * @see https://compression.spec.whatwg.org/#compressionstream
 * @internal
 */
export function webEncoder(): Encoder {
  return {
    codings: WEB_CODINGS,
    async encodeBytes(coding, bytes) {
      const coded = new Blob([bytes as Uint8Array<ArrayBuffer>])
        .stream()
        .pipeThrough(new CompressionStream(coding === "gzip" ? "gzip" : "deflate"));
      return new Uint8Array(await new Response(coded).arrayBuffer());
    },
  };
}

/** Whether the response's `Cache-Control` forbids transforming it (RFC 9111 §5.2.2.6 no-transform). */
function noTransform(request: PipelineRequest, value: ResponseValue): boolean {
  const own = value.fields["cache-control"];
  const cc = own === null ? undefined : (fieldText(own) ?? fieldText(request.preset?.("cache-control")));
  return cc !== undefined && /(?:^|,)\s*no-transform\s*(?:,|$)/i.test(cc);
}

/** A digest of the identity bytes (RFC 9530) would no longer describe coded ones. */
function hasDigest(value: ResponseValue): boolean {
  return (
    value.fields["content-digest"] != null ||
    value.fields["repr-digest"] != null ||
    value.fields.digest != null
  );
}

/**
 * The pipeline's content coding step (`createPipeline({ coding: compression() })` of
 * `@svc/kernel`): zstd (where the runtime has it: Node.js 22.15 and later, Bun), br, gzip or
 * deflate by `Accept-Encoding` (RFC 9110 §12.5.3), for compressible
 * media types (text, JSON, XML, their `+json`/`+xml` types, CSV, SVG) from `threshold` bytes.
 *
 * - The coding is decided before the validators, so a coded response's tag is weak (§8.8.3), and
 *   its 304 and its HEAD carry the fields the coded 200 would (§9.3.2, §15.4.5).
 * - `Vary: Accept-Encoding` on every response that would be coded for some client.
 * - `Accept-Encoding` refusing every coding, `identity` included → 406 before the handler runs;
 *   refusing only `identity` → coded at any size.
 * - Never coded: a response without content, one whose handler set its own `Content-Encoding` or
 *   `Content-Range` (its offsets count identity bytes, §14.4), `Cache-Control: no-transform`, or a
 *   digest of its bytes.
 *
 * @example
 * const svc = expressAdapter(createPipeline({ coding: compression({ threshold: 1024 }) }));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.4
 */
export function compression(options: CompressionOptions = {}): Coder {
  const modules = nodeModules();
  return codingStep(options, (level) => (modules ? zlibEncoder(modules, level) : webEncoder()));
}

/**
 * {@link compression} with the encoder given: its codings are the ones offered.
 *
 * @internal
 */
export function codingStep(
  options: CompressionOptions,
  encoderFor: (level: number | undefined) => Encoder,
): Coder {
  checkOptionNames("negotiate", options, ["threshold", "level"], "compression");
  const { threshold = 1024, level } = options;
  if (typeof threshold !== "number" || !Number.isSafeInteger(threshold) || threshold < 0) {
    throw refused("compression", "threshold", threshold, "a non-negative integer (bytes)");
  }
  // zlib's levels: -1 (its default), 0 (none) to 9 (best); anything else fails every deflate.
  if (
    level !== undefined &&
    (typeof level !== "number" || !Number.isInteger(level) || level < -1 || level > 9)
  ) {
    throw refused("compression", "level", level, "an integer from -1 to 9 (zlib levels)");
  }
  const encoder = encoderFor(level);
  const CODINGS = encoder.codings;
  const OFFERED = Object.freeze([...CODINGS, "identity"]);
  /**
   * The request each body about to be coded belongs to, while a subscriber listens: `encode` is
   * given the body alone, and runs only for a body that is sent coded (not for a 304 or a HEAD,
   * decided after the coding), so `coded` is published there.
   */
  const codedFor = new WeakMap<object, object | undefined>();

  return {
    preflight(request) {
      const acceptEncoding = headerString(request.view.headers["accept-encoding"]);
      if (selectEncoding(acceptEncoding, CODINGS) !== undefined) return;
      if (negotiateChannel.hasSubscribers) publishNotAcceptable(request.native, OFFERED);
      throw HttpError.notAcceptable(
        `No acceptable content coding; available: ${[...CODINGS, "identity"].join(", ")}`,
        { code: "not_acceptable", headers: { Vary: "Accept-Encoding" } },
      );
    },

    choose(request, value, length) {
      const status = value.status;
      if (status === 204 || status === 304 || status < 200) return "identity";
      const own = fieldText(value.fields["content-encoding"]);
      if (own !== undefined && own.trim().toLowerCase() !== "identity") {
        // Bytes the handler coded itself: a strong tag of the identity bytes no longer names
        // them (RFC 9110 §8.8.3).
        const tag = fieldText(value.fields.etag);
        if (tag?.startsWith('"')) value.fields.etag = `W/${tag}`;
        return "identity";
      }
      if (value.fields["content-range"] != null) return "identity";
      // Streamed content where only whole bytes can be coded goes as it is.
      if (
        encoder.encodeStream === undefined &&
        value.body !== undefined &&
        !(value.body instanceof Uint8Array)
      )
        return "identity";
      if (!isCompressible(fieldText(value.fields["content-type"])) || noTransform(request, value))
        return "identity";
      // It would be coded for a client that asks: the choice depended on Accept-Encoding.
      addVary(value.vary, "Accept-Encoding");
      if (hasDigest(value)) return "identity";
      const acceptEncoding = headerString(request.view.headers["accept-encoding"]);
      const coding = selectEncoding(acceptEncoding, CODINGS) ?? "identity";
      if (coding === "identity") return coding;
      const identityRefused = selectEncoding(acceptEncoding, NO_CODINGS) === undefined;
      if (!identityRefused && length !== undefined && length < threshold) return "identity";
      // The coded bytes are made on the fly, and no range of them is served (§14.3).
      if (value.fields["accept-ranges"] != null) value.fields["accept-ranges"] = null;
      if (negotiateChannel.hasSubscribers && typeof value.body === "object")
        codedFor.set(value.body, nativeOf(request.native));
      return coding;
    },

    encode(coding, body): Body | Promise<Body> {
      if (negotiateChannel.hasSubscribers && codedFor.has(body)) {
        const request = codedFor.get(body);
        codedFor.delete(body);
        publishDecision(negotiateChannel, { request, decision: "coded", coding });
      }
      if (body instanceof Uint8Array) return encoder.encodeBytes(coding, body);
      if (encoder.encodeStream === undefined)
        throw new Error(`@svc/negotiate: no ${coding} coder for a stream`);
      return encoder.encodeStream(coding, body);
    },
  };
}

export type { PipelineRequest };
