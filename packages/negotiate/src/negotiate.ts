import { type IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import {
  appendVary,
  HttpError,
  type MediaTypeMatch,
  matchMediaType,
  type NextFunction,
  parseMediaType,
} from "@svc/errors";
import compression from "compression";
import onHeaders from "on-headers";
import { selectEncoding } from "./encoding.js";
import { selectLanguage } from "./language.js";
import {
  defaultRepresentations,
  isTextual,
  type Representation,
  type RepresentationBody,
  type RepresentContext,
} from "./representation.js";

/** Options of {@link negotiate}'s compression. */
export interface CompressionOptions {
  /**
   * Responses smaller than this many bytes are sent uncoded (unless the client refused `identity`).
   * @default 1024
   */
  threshold?: number;
  /**
   * zlib / brotli level; see the `compression` package.
   * @default the `compression` package's defaults (zlib default level, brotli quality 4)
   */
  level?: number;
}

/** Options of {@link negotiate}. */
export interface NegotiateOptions {
  /**
   * Representations offered by `res.represent`, in order of server preference (the first one is
   * sent when `Accept` is absent or `*\/*`).
   * @default [json, xml, csv, text, html]
   */
  representations?: readonly Representation[];
  /**
   * Language tags the app can answer in, first is the default. Empty: no language negotiation,
   * no `Content-Language`.
   * @default []
   */
  languages?: readonly string[];
  /**
   * Response compression through the `compression` package (br, gzip, deflate), or `false`.
   * zstd is not offered: Node 20 has no zstd in `zlib`, and `compression` does not produce it.
   * @default { threshold: 1024 }
   */
  compression?: CompressionOptions | false;
}

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
   * The status to send.
   * @default the response's current status (200)
   */
  status?: number;
}

/** The negotiation outcome, on `res.negotiation`. */
export interface Negotiation {
  /** The `Accept` decision among the middleware's representations, `undefined` when none fits. */
  readonly mediaType: MediaTypeMatch | undefined;
  /** The chosen language (`undefined` when the app offers none). */
  readonly language: string | undefined;
  /** The chosen content coding (`identity` when the response is sent uncoded). */
  readonly encoding: string;
  /** Whether compression would touch a response of this media type. */
  compressible(contentType: string | undefined): boolean;
  /**
   * The content coding a response of this type and size gets: what conditional requests need to
   * give a 304 or a HEAD the same validators as the full response.
   */
  codingFor(contentType: string | undefined, length: number | undefined): string;
}

/** What the middleware adds to a response. */
export interface NegotiatedResponse {
  negotiation: Negotiation;
  /**
   * Serializes `data` in the representation the client prefers and sends it, with `Content-Type`,
   * `Content-Language`, `Content-Length` and `Vary`. Failures (406, a serializer error) go to
   * Express's error handlers; the promise itself does not reject inside an Express app.
   */
  represent(data: unknown, options?: RepresentOptions): Promise<void>;
}

declare global {
  namespace Express {
    interface Response {
      /** Set by `@svc/negotiate`'s `negotiate()`. */
      negotiation: import("./negotiate.js").Negotiation;
      /** Set by `@svc/negotiate`'s `negotiate()`: sends `data` in the negotiated representation. */
      represent(data: unknown, options?: import("./negotiate.js").RepresentOptions): Promise<void>;
    }
  }
}

const CODINGS = ["br", "gzip", "deflate"] as const;
const COMPRESSIBLE =
  /^(?:text\/|application\/(?:[a-z0-9.!#$&^_-]+\+)?(?:json|xml)$|application\/(?:javascript|csv|x-www-form-urlencoded)$|image\/svg\+xml$)/;

function essence(contentType: string): string {
  return (contentType.split(";")[0] ?? "").trim().toLowerCase();
}

/** Answers by Content-Type value: a server sends a handful of them, asked several times per response. */
const compressibleCache = new Map<string, boolean>();

function isCompressible(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  let answer = compressibleCache.get(contentType);
  if (answer === undefined) {
    answer = COMPRESSIBLE.test(essence(contentType));
    // Bounded: handlers setting arbitrary types only ever cost a clear().
    if (compressibleCache.size >= 200) compressibleCache.clear();
    compressibleCache.set(contentType, answer);
  }
  return answer;
}

function noTransform(res: ServerResponse): boolean {
  const cc = res.getHeader("Cache-Control");
  // RFC 9111 §5.2.2.6: no-transform forbids changing the content coding.
  return typeof cc === "string" && /(?:^|,)\s*no-transform\s*(?:,|$)/i.test(cc);
}

/**
 * The media type the response is already labelled with, such as the vendor type @svc/versioning
 * chose: a client's structured-suffix type is echoed only if it is that one, so a v2 body is never
 * labelled `application/vnd.svc.v9+json` because the client listed v9 first.
 */
function labelled(res: ServerResponse): string | undefined {
  const type = headerString(res.getHeader("Content-Type") as string | string[] | undefined);
  return type === undefined ? undefined : essence(type);
}

function headerString(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}

function isStream(body: RepresentationBody): body is NodeJS.ReadableStream {
  return typeof (body as NodeJS.ReadableStream).pipe === "function";
}

/**
 * One request's {@link Negotiation}: the `Accept` decision is only made when asked for (handlers
 * that call `res.represent` negotiate against their own candidates), the coding questions are
 * methods rather than closures per request.
 */
class RequestNegotiation implements Negotiation {
  #mediaType: MediaTypeMatch | undefined | null = null;
  /** The response's `removeHeader` before {@link removeHeaderNotingType} took its place. */
  removeHeader: ServerResponse["removeHeader"] | undefined;
  /** The last `Content-Type` removed from the response (a 304 drops it, §15.4.5). */
  removedType: string | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly accept: string | undefined,
    private readonly offered: readonly string[],
    readonly language: string | undefined,
    readonly encoding: string,
    private readonly compressing: boolean,
    private readonly threshold: number,
  ) {}

  get mediaType(): MediaTypeMatch | undefined {
    if (this.#mediaType === null)
      this.#mediaType = matchMediaType(this.accept, this.offered, labelled(this.res));
    return this.#mediaType;
  }

  compressible(contentType: string | undefined): boolean {
    return this.compressing && isCompressible(contentType);
  }

  codingFor(contentType: string | undefined, length: number | undefined): string {
    return this.compressing &&
      this.encoding !== "identity" &&
      isCompressible(contentType) &&
      (length === undefined || length >= this.threshold) &&
      !noTransform(this.res)
      ? this.encoding
      : "identity";
  }
}

/**
 * Once the headers are final: a coded response (by compression, or a handler that sent coded
 * bytes itself) must not keep a strong tag of the identity bytes (RFC 9110 §8.8.3).
 */
function weakenIfCoded(this: ServerResponse): void {
  const coding = this.getHeader("Content-Encoding");
  if (coding !== undefined && String(coding).toLowerCase() !== "identity") weakenEtag(this);
}

/**
 * `Vary: Accept-Encoding` on a response `compression` would consider (compressible, transformable),
 * and on its 304: RFC 9110 §15.4.5 has a 304 carry the `Vary` the 200 would have sent, but the
 * code that turns a response into a 304 (`send` behind `res.sendFile` and `express.static`,
 * Express's `res.send`, `conditional()`) removes `Content-Type` first, so the type is taken from
 * what was removed.
 */
function varyOnCoding(this: ServerResponse): void {
  weakenIfCoded.call(this);
  let contentType = headerString(this.getHeader("Content-Type") as string | string[] | undefined);
  if (contentType === undefined && this.statusCode === 304) {
    const n = (this as ServerResponse & Partial<NegotiatedResponse>).negotiation;
    if (n instanceof RequestNegotiation) contentType = n.removedType;
  }
  if (isCompressible(contentType) && !noTransform(this)) appendVary(this, "Accept-Encoding");
}

/** The response's `removeHeader`, remembering a removed `Content-Type` for {@link varyOnCoding}. */
function removeHeaderNotingType(this: ServerResponse, name: string): void {
  const n = (this as ServerResponse & Partial<NegotiatedResponse>).negotiation;
  if (!(n instanceof RequestNegotiation) || n.removeHeader === undefined) {
    ServerResponse.prototype.removeHeader.call(this, name);
    return;
  }
  if (name.length === 12 && name.toLowerCase() === "content-type") {
    const type = headerString(this.getHeader(name) as string | string[] | undefined);
    if (type !== undefined) n.removedType = type;
  }
  n.removeHeader.call(this, name);
}

/**
 * RFC 9110 §9.3.2: the server SHOULD send the same header fields in response to HEAD as it would
 * for GET. `compression` leaves HEAD alone, so a HEAD whose GET would be gzipped otherwise goes out
 * with the identity Content-Length and no Content-Encoding. This gives it the GET's
 * Content-Encoding (so also the weak ETag, made once the headers are final) and Vary; Content-Length, which
 * the coded GET does not send (it is chunked), is dropped (§8.6 lets HEAD omit it).
 */
function codeHeadLikeGet(res: ServerResponse, negotiation: Negotiation): void {
  if (res.statusCode === 204 || res.statusCode === 304) return;
  const existing = res.getHeader("Content-Encoding");
  if (existing !== undefined && String(existing).toLowerCase() !== "identity") return;
  const declared = res.getHeader("Content-Length");
  const length = declared === undefined ? undefined : Number(declared);
  const contentType = headerString(res.getHeader("Content-Type") as string | string[] | undefined);
  const coding = negotiation.codingFor(contentType, Number.isFinite(length) ? length : undefined);
  if (coding === "identity") return;
  res.setHeader("Content-Encoding", coding);
  res.removeHeader("Content-Length");
  appendVary(res, "Accept-Encoding");
}

/** An identity representation's strong tag no longer identifies coded bytes (RFC 9110 §8.8.3). */
export function weakenEtag(res: ServerResponse): void {
  const tag = res.getHeader("ETag");
  if (typeof tag === "string" && tag.startsWith('"')) res.setHeader("ETag", `W/${tag}`);
}

function validateRepresentations(list: readonly Representation[], where: string): void {
  for (const r of list) {
    if (!r || typeof r.mediaType !== "string" || typeof r.serialize !== "function") {
      throw new TypeError(`${where}: every representation needs a mediaType string and a serialize function`);
    }
    const parsed = parseMediaType(r.mediaType);
    if (parsed === undefined || parsed.type === "*" || parsed.subtype === "*") {
      throw new TypeError(`${where}: "${r.mediaType}" is not a concrete media type`);
    }
  }
}

/**
 * Content negotiation middleware (RFC 9110 §12): reads `Accept`, `Accept-Language` and
 * `Accept-Encoding` once per request, exposes the outcome as `res.negotiation`, adds
 * `res.represent(data)`, and compresses responses with the `compression` package.
 *
 * - `Accept-Encoding` refusing everything we can send (`identity;q=0` and no br/gzip/deflate)
 *   → 406 at once (RFC 9110 §12.5.3); when only `identity` is refused, small responses are
 *   compressed too.
 * - A coded response never keeps a strong `ETag` of the identity bytes: it is made weak.
 * - Mount it before `conditional()` from `@svc/conditional` and before the routes.
 *
 * @example
 * app.use(negotiate({ languages: ["en", "de"] }));
 * app.get("/employees/:id", async (req, res) => res.represent(await load(req.params.id)));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12
 */
export function negotiate(options: NegotiateOptions = {}) {
  const representations = options.representations ?? defaultRepresentations;
  validateRepresentations(representations, "negotiate");
  if (representations.length === 0) throw new TypeError("negotiate: representations must not be empty");
  const languages = options.languages ?? [];
  for (const l of languages) {
    if (typeof l !== "string" || !/^[a-z]{1,8}(?:-[a-z0-9]{1,8})*$/i.test(l)) {
      throw new TypeError(`negotiate: "${String(l)}" is not a language tag`);
    }
  }
  const compressOptions = options.compression === false ? undefined : (options.compression ?? {});
  const threshold = compressOptions?.threshold ?? 1024;
  if (!Number.isInteger(threshold) || threshold < 0) {
    throw new TypeError("negotiate: compression.threshold must be a non-negative integer");
  }
  const offeredMediaTypes = representations.map((r) => r.mediaType);
  const offeredCodings: readonly string[] = compressOptions ? CODINGS : [];
  const filter = (_req: IncomingMessage, res: ServerResponse) =>
    isCompressible(headerString(res.getHeader("Content-Type") as string | string[] | undefined));
  const level = compressOptions?.level === undefined ? {} : { level: compressOptions.level };
  const compress = compressOptions ? compression({ threshold, filter, ...level }) : undefined;
  // For clients that refuse identity, any size is compressed rather than refused.
  const compressAll = compressOptions ? compression({ threshold: 0, filter, ...level }) : undefined;

  return function negotiateMiddleware(req: IncomingMessage, res: ServerResponse, next: NextFunction): void {
    const acceptEncoding = headerString(req.headers["accept-encoding"]);
    const encoding = selectEncoding(acceptEncoding, offeredCodings);
    if (encoding === undefined) {
      appendVary(res, "Accept-Encoding");
      next(
        HttpError.notAcceptable(
          `No acceptable content coding; available: ${[...offeredCodings, "identity"].join(", ")}`,
          { code: "not_acceptable" },
        ),
      );
      return;
    }
    const identityRefused = encoding !== "identity" && selectEncoding(acceptEncoding, []) === undefined;
    const language =
      languages.length > 0
        ? (selectLanguage(headerString(req.headers["accept-language"]), languages) ?? languages[0])
        : undefined;
    const accept = headerString(req.headers.accept);
    const effectiveThreshold = identityRefused ? 0 : threshold;

    const negotiation = new RequestNegotiation(
      res,
      accept,
      offeredMediaTypes,
      language,
      encoding,
      compress !== undefined,
      effectiveThreshold,
    );
    const target = res as ServerResponse & NegotiatedResponse;
    target.negotiation = negotiation;
    target.represent = (data, representOptions) =>
      represent(req, target, data, representOptions ?? {}, representations, languages.length > 1);

    if (!compress || !compressAll) {
      next();
      return;
    }
    negotiation.removeHeader = res.removeHeader;
    res.removeHeader = removeHeaderNotingType;
    if (encoding === "identity") {
      // Nothing will be coded, so the compression machinery is skipped; the response still varies
      // on Accept-Encoding where a client accepting a coding would have got one (RFC 9110
      // §12.5.5), as `compression` says for the responses it looks at. A handler's own
      // Content-Encoding is checked there too, once the headers are final.
      onHeaders(res, varyOnCoding);
      next();
      return;
    }
    // Registered before compression's own listener, so it runs after it (on-headers calls
    // listeners in reverse order) and sees the Content-Encoding compression or the handler set.
    // `varyOnCoding` adds the Vary that `compression` adds too, and the one of a 304, which
    // `compression`'s filter (by Content-Type) does not see.
    onHeaders(res, varyOnCoding);
    if (req.method === "HEAD") {
      // Registered before compression's own listener, so it runs after it (on-headers calls
      // listeners in reverse order) and sees the Vary that compression added.
      onHeaders(res, function headAsGet(this: ServerResponse) {
        codeHeadLikeGet(this, negotiation);
      });
    }
    // `compression` negotiates again with its own rules, which break ties differently
    // ("identity, deflate": identity there, deflate here). It is handed the coding chosen here,
    // the one `codingFor` reports, so GET, HEAD, 304s and ETags agree. It reads nothing else of
    // the request than the method and Accept-Encoding.
    const decided = { method: req.method, headers: { "accept-encoding": encoding } };
    (identityRefused ? compressAll : compress)(decided as never, res as never, next);
  };
}

async function represent(
  req: IncomingMessage,
  res: ServerResponse & NegotiatedResponse,
  data: unknown,
  options: RepresentOptions,
  base: readonly Representation[],
  varyLanguage: boolean,
): Promise<void> {
  try {
    let set = options.representations ?? base;
    if (options.representations) validateRepresentations(set, "res.represent");
    if (options.only) {
      const only = new Set(options.only.map(essence));
      set = set.filter((r) => only.has(essence(r.mediaType)));
    }
    if (options.add) {
      validateRepresentations(options.add, "res.represent");
      set = [...set, ...options.add];
    }
    const candidates = set.filter((r) => r.canRepresent?.(data) ?? true);
    appendVary(res, "Accept");
    if (varyLanguage) appendVary(res, "Accept-Language");
    const offers = candidates.map((r) => r.mediaType);
    const match = matchMediaType(headerString(req.headers.accept), offers, labelled(res));
    const chosen = match === undefined ? undefined : candidates[offers.indexOf(match.offer)];
    if (match === undefined || chosen === undefined) {
      const available = [...new Set(offers.map(essence))];
      throw HttpError.notAcceptable(
        available.length > 0
          ? `None of the available representations is acceptable: ${available.join(", ")}`
          : "This resource has no representation for this data",
        { code: "not_acceptable" },
      );
    }
    const language = res.negotiation?.language;
    const context: RepresentContext = { mediaType: match.mediaType, language, req, res };
    const body = await chosen.serialize(data, context);
    if (res.headersSent) throw new Error("res.represent: the response has already started");

    const offerHasParams = match.mediaType === essence(match.offer) && match.offer.includes(";");
    let contentType = offerHasParams ? match.offer : match.mediaType;
    if (isTextual(match.mediaType) && !/;\s*charset=/i.test(contentType)) contentType += "; charset=utf-8";
    res.setHeader("Content-Type", contentType);
    if (language !== undefined) res.setHeader("Content-Language", language);
    if (options.status !== undefined) res.statusCode = options.status;

    if (isStream(body)) {
      res.removeHeader("Content-Length");
      const stream = body instanceof Readable ? body : Readable.from(body as AsyncIterable<unknown>);
      await new Promise<void>((resolve, reject) => {
        stream.once("error", reject);
        res.once("finish", resolve);
        res.once("close", resolve);
        stream.pipe(res);
      });
      return;
    }
    const bytes =
      typeof body === "string"
        ? Buffer.from(body, "utf8")
        : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    res.setHeader("Content-Length", bytes.length);
    // The bytes go to end() on HEAD too: Node drops them, and ETag code later in the chain sees them.
    res.end(bytes);
  } catch (err) {
    const forward = (req as IncomingMessage & { next?: NextFunction }).next;
    if (typeof forward === "function" && !res.headersSent) forward(err);
    else throw err;
  }
}
