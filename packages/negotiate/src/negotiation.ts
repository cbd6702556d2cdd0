import type { IncomingMessage, ServerResponse } from "node:http";
import { appendVary, HttpError, type MediaTypeMatch, matchMediaType, type Negotiation } from "@svc/errors";
import { selectEncoding } from "./encoding.js";
import { contentTypeOf, essence, hasDigest, headerString, isCompressible, noTransform } from "./headers.js";
import { selectLanguage } from "./language.js";
import type { NegotiateConfig } from "./options.js";

/** The negotiation outcome, on `res.negotiation`: the kernel's shared type, also read by `@svc/conditional`. */
export type { Negotiation };

const NO_CODINGS: readonly string[] = Object.freeze([]);

/** A response carrying its {@link Negotiation}. */
export type NegotiatingResponse = ServerResponse & { negotiation?: Negotiation };

/**
 * The media type the response is already labelled with, such as the vendor type @svc/versioning
 * chose: a client's structured-suffix type is echoed only if it is that one, so a v2 body is never
 * labelled `application/vnd.svc.v9+json` because the client listed v9 first.
 */
export function labelled(res: ServerResponse): string | undefined {
  const type = contentTypeOf(res);
  return type === undefined ? undefined : essence(type);
}

/**
 * One request's {@link Negotiation}: the `Accept` decision is only made when asked for (handlers
 * that call `res.represent` negotiate against their own candidates), the coding questions are
 * methods rather than closures per request.
 */
export class RequestNegotiation implements Negotiation {
  #mediaType: MediaTypeMatch | undefined | null = null;
  /** The last `Content-Type` removed from the response (a 304 drops it, §15.4.5). */
  removedType: string | undefined;

  constructor(
    readonly res: ServerResponse,
    private readonly accept: string | undefined,
    private readonly offered: readonly string[],
    readonly language: string | undefined,
    readonly encoding: string,
    private readonly compressing: boolean,
    readonly threshold: number,
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
      !noTransform(this.res) &&
      !hasDigest(this.res)
      ? this.encoding
      : "identity";
  }
}

/** The `res.negotiation` this package set, or `undefined` for one of another shape. */
export function negotiationOf(res: ServerResponse): RequestNegotiation | undefined {
  const n = (res as NegotiatingResponse).negotiation;
  return n instanceof RequestNegotiation ? n : undefined;
}

/** RFC 9110 §12.5.3: a 406 when the client refuses every coding offered, `identity` included. */
function noAcceptableCoding(config: NegotiateConfig, res: ServerResponse): HttpError {
  appendVary(res, "Accept-Encoding");
  const offered = config.compression?.codings ?? [];
  return HttpError.notAcceptable(
    `No acceptable content coding; available: ${[...offered, "identity"].join(", ")}`,
    { code: "not_acceptable" },
  );
}

/** The size from which a response is coded: any size when the client refused `identity`. */
function thresholdFor(config: NegotiateConfig, acceptEncoding: string | undefined, encoding: string): number {
  const identityRefused = encoding !== "identity" && selectEncoding(acceptEncoding, NO_CODINGS) === undefined;
  return identityRefused ? 0 : (config.compression?.threshold ?? 0);
}

/** RFC 9110 §12.5.4: the offered language the client prefers, else the first offered. */
function chooseLanguage(config: NegotiateConfig, acceptLanguage: string | undefined): string | undefined {
  if (config.languages.length === 0) return undefined;
  return selectLanguage(acceptLanguage, config.languages) ?? config.languages[0];
}

/**
 * Reads `Accept-Encoding` and `Accept-Language` once and puts the outcome on `res.negotiation`
 * (the `Accept` decision is made when asked for). Returns a 406 {@link HttpError} when no content
 * coding is acceptable (RFC 9110 §12.5.3), with `Vary: Accept-Encoding` already set.
 */
export function negotiateRequest(
  config: NegotiateConfig,
  req: IncomingMessage,
  res: ServerResponse,
): RequestNegotiation | HttpError {
  const acceptEncoding = headerString(req.headers["accept-encoding"]);
  const encoding = selectEncoding(acceptEncoding, config.compression?.codings ?? NO_CODINGS);
  if (encoding === undefined) return noAcceptableCoding(config, res);
  const negotiation = new RequestNegotiation(
    res,
    headerString(req.headers.accept),
    config.offeredMediaTypes,
    chooseLanguage(config, headerString(req.headers["accept-language"])),
    encoding,
    config.compression !== undefined,
    thresholdFor(config, acceptEncoding, encoding),
  );
  (res as NegotiatingResponse).negotiation = negotiation;
  return negotiation;
}
