import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError, type NextFunction } from "@svc/errors";
import { codingStep } from "./compress.js";
import { labelJsonBodies } from "./media-type-hint.js";
import { type Negotiation, negotiateRequest } from "./negotiation.js";
import { type NegotiateOptions, resolveConfig } from "./options.js";
import { NO_OPTIONS, type RepresentOptions, represent } from "./represent.js";

export { weakenEtag } from "./headers.js";
export type { Negotiation } from "./negotiation.js";
export type { CompressionOptions, NegotiateOptions } from "./options.js";
export type { RepresentOptions } from "./represent.js";

/** What the middleware adds to a response. */
export interface NegotiatedResponse {
  negotiation: Negotiation;
  /**
   * Serializes `data` in the representation the client prefers and sends it, with `Content-Type`,
   * `Content-Language`, `Content-Length` and `Vary`. Failures (406, a serializer error) go to
   * Express's error handlers; the promise itself does not reject inside an Express app. For a
   * request that changes state (POST, PUT, PATCH, DELETE), whose handler has already written,
   * `Accept` is disregarded rather than refused: the default representation (RFC 9110 §12.5.1).
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

/**
 * Content negotiation middleware (RFC 9110 §12), the Express adapter of {@link createNegotiator}:
 * reads `Accept`, `Accept-Language` and `Accept-Encoding` once per request, exposes the outcome as
 * `res.negotiation`, adds `res.represent(data)`, and compresses responses with `node:zlib`.
 *
 * - `Accept-Encoding` refusing everything we can send (`identity;q=0` and no br/gzip/deflate)
 *   → 406 at once (RFC 9110 §12.5.3); when only `identity` is refused, small responses are
 *   compressed too.
 * - A coded response never keeps a strong `ETag` of the identity bytes: it is made weak.
 * - Failures of `res.represent` go to `next(err)` of this middleware, so to the error handlers
 *   mounted after it.
 * - `res.json(body)` of a body naming its own `+json` type (a HAL resource of `@svc/hal`, see
 *   `MEDIA_TYPE`) is sent as that type (`application/hal+json`) when the client accepts it.
 * - Mount it before `conditional()` from `@svc/conditional` and before the routes.
 *
 * @example
 * app.use(negotiate({ languages: ["en", "de"] }));
 * app.get("/employees/:id", async (req, res) => res.represent(await load(req.params.id)));
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12
 */
export function negotiate(options: NegotiateOptions = {}) {
  const config = resolveConfig(options);
  const code = codingStep(config.compression);
  return function negotiateMiddleware(req: IncomingMessage, res: ServerResponse, next: NextFunction): void {
    const negotiation = negotiateRequest(config, req, res);
    if (negotiation instanceof HttpError) {
      next(negotiation);
      return;
    }
    (res as ServerResponse & NegotiatedResponse).represent = (data, representOptions) =>
      represent(config, req, res, data, representOptions ?? NO_OPTIONS, next);
    labelJsonBodies(req, res);
    code(req.method, res, negotiation);
    next();
  };
}
