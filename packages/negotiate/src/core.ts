import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError } from "@svc/errors";
import { codingStep } from "./compress.js";
import { type Negotiation, negotiateRequest } from "./negotiation.js";
import { type NegotiateConfig, type NegotiateOptions, resolveConfig } from "./options.js";
import { NO_OPTIONS, type RepresentOptions, represent } from "./represent.js";

/** Content negotiation for any `node:http` server: what {@link negotiate} does, without a framework. */
export interface Negotiator {
  /** The options, checked and resolved. */
  readonly config: NegotiateConfig;
  /**
   * Reads `Accept-Encoding` and `Accept-Language`, puts the {@link Negotiation} on
   * `res.negotiation` and sets up the response's content coding (`node:zlib`, `Vary`, weak
   * `ETag` on coded bytes). Throws a 406 {@link HttpError} when no content coding is acceptable
   * (RFC 9110 §12.5.3).
   */
  negotiate(req: IncomingMessage, res: ServerResponse): Negotiation;
  /**
   * Serializes `data` in the representation the client prefers and sends it, with `Content-Type`,
   * `Content-Language`, `Content-Length` and `Vary`. Rejects with a 406 {@link HttpError} or the
   * serializer's error. Call {@link Negotiator.negotiate} first for the language and the coding.
   * A request that changes state (POST, PUT, PATCH, DELETE) gets the default representation
   * instead of a 406: its write has happened (RFC 9110 §12.5.1 lets `Accept` be disregarded).
   */
  represent(
    req: IncomingMessage,
    res: ServerResponse,
    data: unknown,
    options?: RepresentOptions,
  ): Promise<void>;
}

/**
 * The framework-free core of content negotiation (RFC 9110 §12): options resolved once, then per
 * request `negotiate(req, res)` and `represent(req, res, data)`. {@link negotiate} is its Express
 * adapter.
 *
 * @example
 * const negotiator = createNegotiator({ languages: ["en", "de"] });
 * createServer(async (req, res) => {
 *   negotiator.negotiate(req, res);
 *   await negotiator.represent(req, res, { id: 1 });
 * });
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12
 */
export function createNegotiator(options: NegotiateOptions = {}): Negotiator {
  const config = resolveConfig(options);
  const code = codingStep(config.compression);
  return {
    config,
    negotiate(req, res) {
      const negotiation = negotiateRequest(config, req, res);
      if (negotiation instanceof HttpError) throw negotiation;
      code(req.method, res, negotiation);
      return negotiation;
    },
    represent: (req, res, data, representOptions) =>
      represent(config, req, res, data, representOptions ?? NO_OPTIONS, undefined),
  };
}
