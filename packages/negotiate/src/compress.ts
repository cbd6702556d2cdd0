import { ServerResponse } from "node:http";
import {
  type BrotliCompress,
  constants,
  createBrotliCompress,
  createDeflate,
  createGzip,
  type Deflate,
  type Gzip,
} from "node:zlib";
import { appendVary } from "@svc/errors";
import onHeaders from "on-headers";
import { contentTypeOf, headerString, isCoded, isCompressible, noTransform, weakenEtag } from "./headers.js";
import { negotiationOf, type RequestNegotiation } from "./negotiation.js";
import type { CompressionConfig } from "./options.js";

/**
 * Once the headers are final: a coded response (by this package, or a handler that sent coded
 * bytes itself) must not keep a strong tag of the identity bytes (RFC 9110 §8.8.3); and
 * `Vary: Accept-Encoding` goes on a response that would be coded for some client (compressible,
 * transformable), and on its 304: RFC 9110 §15.4.5 has a 304 carry the `Vary` the 200 would have
 * sent, but the code that turns a response into a 304 (`send` behind `res.sendFile` and
 * `express.static`, Express's `res.send`, `conditional()`) removes `Content-Type` first, so the
 * type is taken from what was removed.
 */
function varyOnCoding(this: ServerResponse): void {
  if (isCoded(this)) weakenEtag(this);
  let contentType = contentTypeOf(this);
  if (contentType === undefined && this.statusCode === 304) contentType = negotiationOf(this)?.removedType;
  if (isCompressible(contentType) && !noTransform(this)) appendVary(this, "Accept-Encoding");
}

/** Where the response keeps the `removeHeader` that {@link removeHeaderNotingType} took the place of. */
const REMOVE_HEADER = Symbol("@svc/negotiate removeHeader");

type NotingResponse = ServerResponse & { [REMOVE_HEADER]?: ServerResponse["removeHeader"] };

/** The response's `removeHeader`, remembering a removed `Content-Type` for {@link varyOnCoding}. */
function removeHeaderNotingType(this: NotingResponse, name: string): void {
  const n = negotiationOf(this);
  if (n !== undefined && name.length === 12 && name.toLowerCase() === "content-type") {
    const type = headerString(this.getHeader(name));
    if (type !== undefined) n.removedType = type;
  }
  (this[REMOVE_HEADER] ?? ServerResponse.prototype.removeHeader).call(this, name);
}

/** RFC 9110 §15: 204 and 304 have no content to code; 1xx are not final. */
function hasContent(res: ServerResponse): boolean {
  return res.statusCode !== 204 && res.statusCode !== 304 && res.statusCode >= 200;
}

/**
 * The content coding a response gets once its headers are final, or `identity`: not on a response
 * without content, nor on one a handler coded itself (RFC 9110 §8.4), nor on one carrying a
 * `Content-Range` (a 206 or 416 from `res.sendFile` / `express.static`): its byte offsets count the
 * selected representation's data (§14.1.2, §14.4), which a coding would change into other bytes,
 * so a gzip of the identity slice labelled `bytes 0-4999/10000` corrupts a resumed download.
 */
function finalCoding(res: ServerResponse, n: RequestNegotiation, bodyLength: number | undefined): string {
  if (!hasContent(res) || isCoded(res) || res.hasHeader("content-range")) return "identity";
  const declared = Number(res.getHeader("content-length"));
  return n.codingFor(contentTypeOf(res), Number.isFinite(declared) ? declared : bodyLength);
}

/**
 * RFC 9110 §9.3.2: the server SHOULD send the same header fields in response to HEAD as it would
 * for GET. A HEAD whose GET would be coded gets the GET's Content-Encoding (so also the weak ETag)
 * and Vary; Content-Length, which the coded GET does not send (it is chunked), is dropped (§8.6
 * lets HEAD omit it).
 */
function codeHeadLikeGet(this: ServerResponse): void {
  const n = negotiationOf(this);
  const coding = n === undefined ? "identity" : finalCoding(this, n, undefined);
  if (coding !== "identity") {
    this.setHeader("Content-Encoding", coding);
    this.removeHeader("content-length");
    this.removeHeader("accept-ranges");
  }
  varyOnCoding.call(this);
}

/** A coder for RFC 9110 §8.4.1.2 gzip, §8.4.1.3 deflate, RFC 7932 br (quality 4). */
type Coder = Gzip | Deflate | BrotliCompress;

function createCoder(coding: string, level: number | undefined): Coder {
  if (coding === "br") return createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 4 } });
  const options = level === undefined ? {} : { level };
  return coding === "gzip" ? createGzip(options) : createDeflate(options);
}

type Listener = (...args: unknown[]) => void;
type Callback = (error?: Error | null) => void;

function toBuffer(chunk: unknown, encoding: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return Buffer.from(String(chunk), typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
}

function byteLength(chunk: unknown, encoding: unknown): number {
  if (chunk == null) return 0;
  if (chunk instanceof Uint8Array) return chunk.byteLength;
  return Buffer.byteLength(
    String(chunk),
    typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8",
  );
}

/**
 * Codes one response's body through a `node:zlib` stream: `write`/`end` go to the coder once the
 * headers are final and the coding is decided; the coder's output goes to the socket with
 * backpressure (the coder pauses until the response drains, and `drain` listeners such as
 * `pipe`'s listen on the coder).
 */
class BodyCoder {
  readonly write: (chunk: unknown, encoding?: unknown, cb?: Callback) => boolean;
  readonly end: (chunk?: unknown, encoding?: unknown, cb?: Callback) => ServerResponse;
  readonly on: (event: string | symbol, listener: Listener) => ServerResponse;
  stream: Coder | undefined;
  decided = false;
  ended = false;
  closed = false;
  bodyLength: number | undefined;
  drains: Listener[] = [];

  constructor(
    readonly res: ServerResponse,
    readonly negotiation: RequestNegotiation,
    readonly level: number | undefined,
  ) {
    this.write = res.write as BodyCoder["write"];
    this.end = res.end as BodyCoder["end"];
    this.on = res.on as (event: string | symbol, listener: Listener) => ServerResponse;
  }

  /** Runs when the headers are being written: picks the coding and starts the coder. */
  decide(): void {
    this.decided = true;
    const { res } = this;
    const coding = finalCoding(res, this.negotiation, this.bodyLength);
    if (coding !== "identity" && !this.closed) {
      const stream = createCoder(coding, this.level);
      this.stream = stream;
      res.setHeader("Content-Encoding", coding);
      res.removeHeader("content-length");
      // The coded bytes are produced on the fly and no range of them is ever served (a range
      // request gets the identity bytes, above): do not advertise ranges of them (§14.3).
      res.removeHeader("accept-ranges");
      stream.on("data", (chunk: Buffer) => {
        if (this.write.call(res, chunk) === false) stream.pause();
      });
      stream.on("end", () => this.end.call(res));
      this.on.call(res, "drain", () => stream.resume());
    }
    const target = this.stream;
    for (const listener of this.drains) {
      if (target) target.on("drain", listener);
      else this.on.call(res, "drain", listener);
    }
    this.drains.length = 0;
  }

  /** Starts the headers (deciding the coding) if no one has yet. */
  startHeaders(chunk: unknown, encoding: unknown, ending: boolean): void {
    const { res } = this;
    if (res.headersSent) return;
    if (ending && res.getHeader("content-length") === undefined)
      this.bodyLength = byteLength(chunk, encoding);
    res.writeHead(res.statusCode);
  }
}

/** Puts a {@link BodyCoder} between the handler and the socket of one response. */
function installCoder(res: ServerResponse, negotiation: RequestNegotiation, level: number | undefined): void {
  const coder = new BodyCoder(res, negotiation, level);
  coder.on.call(res, "close", () => {
    coder.closed = true;
    coder.stream?.destroy();
  });
  onHeaders(res, function decideCoding(this: ServerResponse) {
    coder.decide();
    varyOnCoding.call(this);
  });
  res.write = function write(this: ServerResponse, chunk: unknown, encoding?: unknown, cb?: Callback) {
    if (coder.ended) return false;
    coder.startHeaders(chunk, encoding, false);
    const callback = typeof encoding === "function" ? (encoding as Callback) : cb;
    if (coder.stream) return coder.stream.write(toBuffer(chunk, encoding), callback);
    return coder.write.call(this, chunk, encoding, callback);
  } as ServerResponse["write"];
  res.end = function end(this: ServerResponse, chunk?: unknown, encoding?: unknown, cb?: Callback) {
    if (typeof chunk === "function") [cb, chunk, encoding] = [chunk as Callback, undefined, undefined];
    else if (typeof encoding === "function") [cb, encoding] = [encoding as Callback, undefined];
    if (coder.ended) return this;
    coder.startHeaders(chunk, encoding, true);
    const stream = coder.stream;
    if (!stream) return coder.end.call(this, chunk, encoding, cb);
    coder.ended = true;
    if (cb) this.once("finish", cb);
    if (chunk != null) stream.end(toBuffer(chunk, encoding));
    else stream.end();
    return this;
  } as ServerResponse["end"];
  res.on = function on(this: ServerResponse, type: string | symbol, listener: Listener) {
    if (type !== "drain" || (coder.decided && !coder.stream)) return coder.on.call(this, type, listener);
    if (coder.stream) coder.stream.on(type, listener);
    else coder.drains.push(listener);
    return this;
  } as ServerResponse["on"];
  // A 'drain' listener is removed where `on` put it: `res.off` and the wrapper of
  // `res.once` / `events.once(res, "drain")`, which removes itself from the response once called,
  // otherwise left it on the coder, called on every later drain, one more kept per await.
  const removeListener = res.removeListener;
  res.removeListener = res.off = function off(
    this: ServerResponse,
    type: string | symbol,
    listener: Listener,
  ) {
    if (type === "drain") {
      coder.stream?.removeListener(type, listener);
      const queued = coder.drains.findIndex(
        (l) => l === listener || (l as { listener?: Listener }).listener === listener,
      );
      if (queued !== -1) coder.drains.splice(queued, 1);
    }
    return removeListener.call(this, type, listener);
  } as ServerResponse["removeListener"];
  (res as ServerResponse & { flush?: () => void }).flush = () => coder.stream?.flush();
}

/**
 * The coding step of one response (RFC 9110 §8.4, §12.5.3): `Vary: Accept-Encoding` where some
 * client would get a coding, a weak `ETag` on coded bytes, a HEAD given its GET's coding, and the
 * body coded with `node:zlib` when the negotiated coding is not `identity`.
 * Answers {@link MOUNTED_AFTER_CONDITIONAL} when it left the body uncoded for that reason.
 */
function applyCoding(
  compression: CompressionConfig | undefined,
  method: string | undefined,
  res: ServerResponse,
  negotiation: RequestNegotiation,
): typeof MOUNTED_AFTER_CONDITIONAL | undefined {
  if (compression === undefined) return undefined;
  // Once per response. negotiate() may be mounted twice, for the app and again for a route with
  // its own representations (as halJson's example of @svc/hal does): a second removeHeader
  // wrapper, whose original was the first one reached through the newer `res.negotiation`, called
  // itself until the stack overflowed; and a second coder, on top of whatever the app mounted
  // between the two (conditional()), sent the headers before that middleware saw the body. The
  // first coding step codes the body; the wrapper notes the type on whichever negotiation is
  // current.
  const noting = res as NotingResponse;
  if (noting[REMOVE_HEADER] !== undefined) return undefined;
  // conditional() mounted before this coder: coded, its headers would go out before conditional()
  // saw the body (no ETag, no 304 or 412). Correct over small: the body goes uncoded, and the
  // middleware warns once.
  if ((res as ServerResponse & { [REVALIDATED]?: unknown })[REVALIDATED] !== undefined)
    return MOUNTED_AFTER_CONDITIONAL;
  noting[REMOVE_HEADER] = res.removeHeader;
  res.removeHeader = removeHeaderNotingType;
  // Nothing will be coded: the response still varies on Accept-Encoding where a client accepting a
  // coding would have got one (RFC 9110 §12.5.5).
  if (negotiation.encoding === "identity") onHeaders(res, varyOnCoding);
  else if (method === "HEAD") onHeaders(res, codeHeadLikeGet);
  else installCoder(res, negotiation, compression.level);
  return undefined;
}

/**
 * The mark `conditional()` of `@svc/conditional` leaves on a response it watches (a registered
 * symbol: neither package imports the other).
 */
const REVALIDATED = Symbol.for("@svc/conditional");

/**
 * `conditional()` mounted before a compressing `negotiate()`: the coder, wrapped around it, would
 * send the headers before `conditional()` saw the body, so a client accepting a coding got a 200
 * with no ETag and no default Cache-Control, and a 200 where its conditions call for a 412 (RFC
 * 9110 §13.1.1) or a 304 (§13.1.2), while the same resource's HEAD carried the ETag (§9.3.2). No
 * order of the wrappers can be set from here: such a response is sent uncoded, validators intact.
 */
const MOUNTED_AFTER_CONDITIONAL = Symbol("mounted after conditional()");

const MOUNT_ORDER_WARNING =
  "@svc/negotiate: negotiate() (or createNegotiator().negotiate) with compression runs after conditional(), so responses are " +
  "sent uncompressed to keep their ETag and 304/412; mount negotiate() first, then conditional() " +
  "(app.use(negotiate()); app.use(conditional());)";

/**
 * The coding step of one negotiator ({@link applyCoding} with its compression), which warns once,
 * the first time it finds `conditional()` came first (code `SVC_NEGOTIATE_MOUNT_ORDER`): the same
 * for `createNegotiator().negotiate` and the `negotiate()` middleware, so neither turns
 * compression off in silence.
 */
export function codingStep(
  compression: CompressionConfig | undefined,
): (method: string | undefined, res: ServerResponse, negotiation: RequestNegotiation) => void {
  let warned = false;
  return (method, res, negotiation) => {
    if (applyCoding(compression, method, res, negotiation) !== MOUNTED_AFTER_CONDITIONAL || warned) return;
    warned = true;
    process.emitWarning(MOUNT_ORDER_WARNING, { code: "SVC_NEGOTIATE_MOUNT_ORDER" });
  };
}
