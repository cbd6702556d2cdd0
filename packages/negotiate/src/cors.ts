import type { IncomingMessage, ServerResponse } from "node:http";
import type { NextFunction } from "@svc/errors";
import { appendVary, isToken } from "@svc/kernel";
import { checkOptionNames, describeValue } from "@svc/kernel/internal";
import cors from "cors";
import { optionError } from "./options.js";

/** Options of {@link crossOrigin}. */
export interface CrossOriginOptions {
  /**
   * The origins allowed to read responses, each a serialized origin (`https://app.example`,
   * `http://localhost:5173`: scheme, host and port only). Not `*`, not `null`.
   */
  origins: readonly string[];
  /**
   * Response header names a script of an allowed origin may read beyond the CORS-safelisted ones
   * (`Access-Control-Expose-Headers`).
   * @default []
   */
  exposedHeaders?: readonly string[];
  /**
   * Seconds a browser may cache a preflight's answer (`Access-Control-Max-Age`).
   * @default no Access-Control-Max-Age (the browser's default, 5 seconds)
   */
  maxAge?: number;
}

/** A serialized origin (RFC 6454 §6.2) of an http(s) URL: what a browser sends in `Origin`. */
function isSerializedOrigin(value: unknown): value is string {
  if (typeof value !== "string" || !URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === "https:" || url.protocol === "http:") && url.origin === value;
}

function resolveOrigins(origins: unknown): readonly string[] {
  if (!Array.isArray(origins) || origins.length === 0) {
    throw optionError(
      "origins",
      `crossOrigin: origins must be a non-empty array of origins such as "https://app.example", got ${describeValue(origins)}`,
    );
  }
  for (const origin of origins) {
    if (!isSerializedOrigin(origin)) {
      throw optionError(
        "origins",
        `crossOrigin: origins must hold serialized http(s) origins (scheme://host[:port], no path or trailing slash), got ${describeValue(origin)}`,
      );
    }
  }
  return origins;
}

function resolveExposedHeaders(headers: unknown): readonly string[] {
  if (headers === undefined) return [];
  if (!Array.isArray(headers) || headers.some((h) => typeof h !== "string" || !isToken(h))) {
    throw optionError(
      "exposedHeaders",
      `crossOrigin: exposedHeaders must be an array of header field names (RFC 9110 §5.1 tokens), got ${describeValue(headers)}`,
    );
  }
  return headers;
}

function resolveMaxAge(maxAge: unknown): number | undefined {
  if (maxAge === undefined) return undefined;
  if (typeof maxAge !== "number" || !Number.isSafeInteger(maxAge) || maxAge < 0) {
    throw optionError(
      "maxAge",
      `crossOrigin: maxAge must be a non-negative whole number of seconds, got ${describeValue(maxAge)}`,
    );
  }
  return maxAge;
}

/**
 * CORS for a fixed list of origins (Fetch standard §3.2, the CORS protocol): a request whose
 * `Origin` is allowed gets `Access-Control-Allow-Origin` (and `Access-Control-Expose-Headers`),
 * and a preflight from it (`OPTIONS` with `Access-Control-Request-Method`) is answered 204 by the
 * `cors` package with the allowed methods, headers and `Access-Control-Max-Age`; an `OPTIONS`
 * without `Access-Control-Request-Method` is an actual request and goes on to the routes. Any other request, one without `Origin`
 * (not a CORS request) or from another origin, gets no CORS header at all, only `Vary: Origin`,
 * since the answer differs by origin (RFC 9110 §12.5.5); a preflight from another origin goes on
 * to the routes (its `OPTIONS` answer carries no permission).
 *
 * Works as Express middleware and from plain `node:http` (`(req, res, next)`). Options are
 * checked at construction: refusals are `TypeError`s with `code` `ERR_SVC_NEGOTIATE_ORIGINS`,
 * `ERR_SVC_NEGOTIATE_EXPOSED_HEADERS` or `ERR_SVC_NEGOTIATE_MAX_AGE`.
 *
 * @example
 * app.use(crossOrigin({ origins: ["https://app.example"], exposedHeaders: ["ETag"], maxAge: 600 }));
 * @see https://fetch.spec.whatwg.org/#http-cors-protocol
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.5
 */
export function crossOrigin(options: CrossOriginOptions) {
  if (options === undefined) {
    throw optionError(
      "options",
      "crossOrigin: options must be an object { origins, exposedHeaders?, maxAge? }, got undefined",
    );
  }
  checkOptionNames("negotiate", options, ["origins", "exposedHeaders", "maxAge"], "crossOrigin");
  const origins = resolveOrigins(options.origins);
  const exposedHeaders = resolveExposedHeaders(options.exposedHeaders);
  const maxAge = resolveMaxAge(options.maxAge);
  const allowed = new Set(origins);
  const exposed = exposedHeaders.join(",");
  const preflight = cors({
    origin: [...origins],
    ...(exposedHeaders.length > 0 ? { exposedHeaders: [...exposedHeaders] } : {}),
    ...(maxAge === undefined ? {} : { maxAge }),
  });
  return function crossOriginMiddleware(req: IncomingMessage, res: ServerResponse, next: NextFunction): void {
    const origin = req.headers.origin;
    if (origin !== undefined && allowed.has(origin)) {
      // Fetch standard §3.2.2: a CORS-preflight request "uses `OPTIONS` as method and includes"
      // `Access-Control-Request-Method`. The `cors` package answers every OPTIONS as one, so an
      // actual OPTIONS request (fetch(url, { method: "OPTIONS" })) never reached its route.
      if (req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined) {
        preflight(req, res, next);
        return;
      }
      // §3.2.3: the response to a CORS request names the origin it may be shared with.
      res.setHeader("Access-Control-Allow-Origin", origin);
      if (exposed !== "") res.setHeader("Access-Control-Expose-Headers", exposed);
    }
    appendVary(res, "Origin");
    next();
  };
}
