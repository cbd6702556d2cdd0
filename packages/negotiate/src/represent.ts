import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { appendVary, HttpError, type MediaTypeMatch, matchMediaType, type NextFunction } from "@svc/errors";
import { essence, headerString } from "./headers.js";
import { hintedLabel, mediaTypeHint } from "./media-type-hint.js";
import { labelled, type Negotiation } from "./negotiation.js";
import { type NegotiateConfig, refused, validateRepresentations } from "./options.js";
import {
  isTextual,
  type Representation,
  type RepresentationBody,
  type RepresentContext,
} from "./representation.js";

/** Options of `res.represent` for one response. */
export interface RepresentOptions {
  /**
   * Replaces the app's representations for this response (`[json, pdf]`).
   * @default the middleware's `representations`
   */
  representations?: readonly Representation[];
  /**
   * Extra representations for this response, after the others in server preference.
   * @default []
   */
  add?: readonly Representation[];
  /**
   * Keeps only these media types of the app's (or `representations`') set, before `add` applies.
   * @default all
   */
  only?: readonly string[];
  /**
   * The status to send: a final status, 200..599 (RFC 9110 §15); anything else is a `TypeError`
   * with code `ERR_SVC_NEGOTIATE_STATUS`, passed to `next(err)`.
   * @default the response's current status (200)
   */
  status?: number;
}

/** Methods that change no state (RFC 9110 §9.2.1): their 406 refuses nothing that already happened. */
const SAFE: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);

/** No per-response options. */
export const NO_OPTIONS: RepresentOptions = Object.freeze({});

/** The representations this response may take, in server preference (RFC 9110 §12.1). */
function candidatesFor(
  base: readonly Representation[],
  data: unknown,
  options: RepresentOptions,
): readonly Representation[] {
  let set = options.representations ?? base;
  if (options.representations) validateRepresentations(set, "res.represent", true);
  if (options.only) {
    const only = new Set(options.only.map(essence));
    set = set.filter((r) => only.has(essence(r.mediaType)));
  }
  if (options.add) {
    validateRepresentations(options.add, "res.represent", true);
    set = [...set, ...options.add];
  }
  return set.filter((r) => r.canRepresent?.(data) ?? true);
}

/** RFC 9110 §15.5.7: none of the representations is acceptable. */
function notAcceptable(offers: readonly string[]): HttpError {
  const available = [...new Set(offers.map(essence))];
  return HttpError.notAcceptable(
    available.length > 0
      ? `None of the available representations is acceptable: ${available.join(", ")}`
      : "This resource has no representation for this data",
    { code: "not_acceptable" },
  );
}

/** The `Content-Type` of the chosen representation, with `charset=utf-8` for text (RFC 9110 §8.3). */
function contentTypeFor(match: MediaTypeMatch): string {
  const offerHasParams = match.mediaType === essence(match.offer) && match.offer.includes(";");
  const contentType = offerHasParams ? match.offer : match.mediaType;
  return isTextual(match.mediaType) && !/;\s*charset=/i.test(contentType)
    ? `${contentType}; charset=utf-8`
    : contentType;
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === "function";
}

function isStream(body: RepresentationBody): body is NodeJS.ReadableStream {
  return typeof (body as NodeJS.ReadableStream).pipe === "function";
}

/**
 * Pipes a streamed body into the response, settling when the response is done. A response closed
 * before the body was all read (the client went away mid-download, or the response was ended in
 * its place, as a 304) destroys the body: `pipe` only unpipes it, and a paused file stream or
 * database cursor nobody reads again kept its descriptor or connection open, one per such request.
 */
function sendStream(res: ServerResponse, body: NodeJS.ReadableStream): Promise<void> {
  res.removeHeader("content-length");
  const stream = body instanceof Readable ? body : Readable.from(body as AsyncIterable<unknown>);
  return new Promise<void>((resolve, reject) => {
    stream.once("error", reject);
    res.once("finish", resolve);
    res.once("close", () => {
      if (!stream.readableEnded) stream.destroy();
      resolve();
    });
    stream.pipe(res);
  });
}

/** Sends a whole body with its `Content-Length` (RFC 9110 §8.6). */
function sendBytes(res: ServerResponse, body: string | Uint8Array): void {
  const bytes =
    typeof body === "string"
      ? Buffer.from(body, "utf8")
      : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  res.setHeader("Content-Length", bytes.length);
  // The bytes go to end() on HEAD too: Node drops them, and ETag code later in the chain sees them.
  res.end(bytes);
}

/**
 * RFC 9110 §15.3.5: a 204 has no content, so nothing to label or frame; §8.6: "A server MUST NOT
 * send a Content-Length header field in any response with a status code of ... 204". A 205 has
 * none either (§15.3.6).
 */
function sendNoContent(res: ServerResponse): void {
  res.removeHeader("content-type");
  res.removeHeader("content-language");
  res.removeHeader("content-length");
  res.removeHeader("transfer-encoding");
  // RFC 9110 §15.3.6: "a server MUST NOT generate content in a 205 response", and does one of
  // "a) indicate a zero-length body for the response by including a Content-Length header field
  // with a value of 0" (Node, unlike for a 204, would frame a 205 as chunked or with the length
  // of what it was given).
  if (res.statusCode === 205) res.setHeader("Content-Length", 0);
  res.end();
}

/**
 * `status` is a final status, 200..599 (RFC 9110 §15): a 1xx is interim, "terminated by the end
 * of the header section" (§15.2), so the client goes on waiting for a final response that never
 * comes (and a 101 claims a protocol switch without the `Upgrade` field §15.2.2 requires); Node
 * refuses anything outside 100..999 only once the response is half-written.
 */
function checkStatus(status: unknown): void {
  if (typeof status !== "number" || !Number.isInteger(status) || status < 200 || status > 599) {
    throw refused("res.represent", "status", status, "a final status code, a whole number from 200 to 599");
  }
}

/**
 * Sends `data` in the representation the client prefers (RFC 9110 §12.5.1), with `Content-Type`,
 * `Content-Language`, `Content-Length` and `Vary`. A failure (406, a serializer error, a stream
 * failing mid-body) goes to `fail`, and is thrown without it.
 */
export async function represent(
  config: NegotiateConfig,
  req: IncomingMessage,
  res: ServerResponse & { negotiation?: Negotiation },
  data: unknown,
  options: RepresentOptions,
  fail: NextFunction | undefined,
): Promise<void> {
  try {
    if (options.status !== undefined) checkStatus(options.status);
    const candidates = candidatesFor(config.representations, data, options);
    appendVary(res, "Accept");
    if (config.varyLanguage) appendVary(res, "Accept-Language");
    const offers = candidates.map((r) => r.mediaType);
    let accept = headerString(req.headers.accept);
    const label = labelled(res);
    // A client's structured-suffix type (`application/problem+json`) matches the JSON or XML
    // representation only when the representation declares itself to be of that type (RFC 9110
    // §8.3, RFC 6838 §4.2.8): the vendor type the response is already labelled with
    // (@svc/versioning), else the type the body names for itself (a HAL resource).
    let match = matchMediaType(accept, offers, label ?? mediaTypeHint(data));
    // A request that changes state has run its handler by now: a 406 would refuse a response whose
    // side effect already happened (and a client retrying it would write again). RFC 9110
    // §12.5.1 lets the server "disregard the header field by treating the response as if it is
    // not subject to content negotiation": the default representation that can carry the data.
    if (match === undefined && !SAFE.has(req.method ?? "GET")) {
      accept = undefined;
      match = matchMediaType(accept, offers, label ?? mediaTypeHint(data));
    }
    const chosen = match === undefined ? undefined : candidates[offers.indexOf(match.offer)];
    if (match === undefined || chosen === undefined) throw notAcceptable(offers);
    // A body naming its own `+json` type (a HAL resource: application/hal+json) is labelled so
    // when the JSON representation was chosen for the generic type (RFC 6838 §4.2.8).
    if (label === undefined && match.mediaType === essence(match.offer)) {
      const own = hintedLabel(accept, match.mediaType, data);
      if (own !== undefined) match = { ...match, mediaType: own };
    }
    const language = res.negotiation?.language;
    const context: RepresentContext = { mediaType: match.mediaType, language, req, res };
    const serialized = chosen.serialize(data, context);
    // The built-in serializers return the body itself: awaiting a plain value would still cost a
    // microtask turn on every response, so only a promise (an async serializer) is awaited.
    const body = isPromiseLike(serialized) ? await serialized : serialized;
    if (res.headersSent) throw new Error("res.represent: the response has already started");
    res.setHeader("Content-Type", contentTypeFor(match));
    if (language !== undefined) res.setHeader("Content-Language", language);
    if (options.status !== undefined) res.statusCode = options.status;
    if (res.statusCode === 204 || res.statusCode === 205) {
      // A stream it will never read (an open file) is released.
      if (isStream(body)) (body as { destroy?: () => void }).destroy?.();
      return sendNoContent(res);
    }
    if (isStream(body)) {
      // RFC 9110 §9.3.2: a HEAD response has the GET's header fields and no content. Node drops
      // what is written to it, so piping the stream read a whole file or export (or an endless
      // feed, for ever) per HEAD only to discard it; the GET would be chunked, so no length either.
      if (req.method === "HEAD") {
        (body as { destroy?: () => void }).destroy?.();
        res.removeHeader("content-length");
        res.end();
      } else await sendStream(res, body);
    } else sendBytes(res, body);
  } catch (err) {
    // Inside Express (`fail` is the middleware's next) the promise never rejects: Express 4 does
    // not catch a handler's rejected promise, and an unhandled rejection ends a Node 20 process. A
    // failure after the response started goes to next(err) as well: the error handler logs it and
    // Express, finding the headers sent, closes the connection instead of answering twice.
    if (fail !== undefined) fail(err);
    else throw err;
  }
}
