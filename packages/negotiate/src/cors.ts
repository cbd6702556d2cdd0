import { type Answer, isToken, type Passage, type RequestView } from "@svc/kernel";
import { checkOptionNames, describeValue } from "@svc/kernel/internal";
import { optionError } from "./options.js";

/** Options of `crossOrigin()`. */
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
 * The methods a preflight allows (`Access-Control-Allow-Methods`): the `cors` package's default
 * list, which this package answered with before its decision became a gate.
 */
const ALLOWED_METHODS = "GET,HEAD,PUT,PATCH,POST,DELETE";

/**
 * CORS for a fixed list of origins (Fetch standard §3.2, the CORS protocol) as a framework-free
 * `Gate` of `@svc/kernel`: a {@link RequestView} in, the decision out.
 *
 * - A preflight (`OPTIONS` with `Access-Control-Request-Method`) from an allowed origin is an
 *   `Answer`: 204 with `Access-Control-Allow-Origin`, `-Allow-Methods`, `-Allow-Headers` (the
 *   requested ones), `-Max-Age`, `-Expose-Headers` and `Vary: Origin, Access-Control-Request-Headers`;
 *   no `Content-Length`, which RFC 9110 §8.6 forbids on a 204.
 * - Any other request from an allowed origin (an `OPTIONS` without
 *   `Access-Control-Request-Method` included: an actual request) is a `Passage` with
 *   `Access-Control-Allow-Origin`, `Access-Control-Expose-Headers` and `Vary: Origin`.
 * - A request without `Origin` (not a CORS request) or from another origin is a `Passage` with
 *   `Vary: Origin` only, since the answer differs by origin (RFC 9110 §12.5.5); a preflight from
 *   another origin goes on to the routes (its `OPTIONS` answer carries no permission).
 *
 * The framework adapters apply it: `crossOrigin()` (Express, `(req, res, next)`), and
 * `crossOrigin()` of `@svc/negotiate/node`, `/fastify` and `/fetch`. Options are checked here:
 * refusals are `TypeError`s with `code` `ERR_SVC_NEGOTIATE_ORIGINS`,
 * `ERR_SVC_NEGOTIATE_EXPOSED_HEADERS` or `ERR_SVC_NEGOTIATE_MAX_AGE`.
 *
 * @example
 * const gate = crossOriginGate({ origins: ["https://app.example"] });
 * gate({ method: "GET", headers: { origin: "https://app.example" } });
 * // { fields: { "Access-Control-Allow-Origin": "https://app.example" }, vary: ["Origin"] }
 * @see https://fetch.spec.whatwg.org/#http-cors-protocol
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.5
 */
export function crossOriginGate(
  options: CrossOriginOptions,
): (view: RequestView, native?: unknown) => Passage | Answer {
  if (options === undefined) {
    throw optionError(
      "options",
      "crossOrigin: options must be an object { origins, exposedHeaders?, maxAge? }, got undefined",
    );
  }
  checkOptionNames("negotiate", options, ["origins", "exposedHeaders", "maxAge"], "crossOrigin");
  const allowed = new Set(resolveOrigins(options.origins));
  const exposed = resolveExposedHeaders(options.exposedHeaders).join(",");
  const maxAge = resolveMaxAge(options.maxAge);
  const exposing: Record<string, string> = exposed === "" ? {} : { "Access-Control-Expose-Headers": exposed };
  const notShared = Object.freeze({ vary: Object.freeze(["Origin"]) });
  return function crossOriginDecision(view: RequestView): Passage | Answer {
    const origin = view.headers.origin;
    if (typeof origin !== "string" || !allowed.has(origin)) return notShared;
    // Fetch standard §3.2.2: a CORS-preflight request "uses `OPTIONS` as method and includes"
    // `Access-Control-Request-Method`; an OPTIONS without it is an actual request
    // (fetch(url, { method: "OPTIONS" })), for its route.
    if (
      view.method?.toUpperCase() === "OPTIONS" &&
      view.headers["access-control-request-method"] !== undefined
    ) {
      const requested = view.headers["access-control-request-headers"];
      const headers = Array.isArray(requested) ? requested.join(",") : requested;
      return {
        answer: {
          status: 204,
          fields: {
            "access-control-allow-origin": origin,
            "access-control-allow-methods": ALLOWED_METHODS,
            ...(headers === undefined || headers === "" ? {} : { "access-control-allow-headers": headers }),
            ...(maxAge === undefined ? {} : { "access-control-max-age": String(maxAge) }),
            ...(exposed === "" ? {} : { "access-control-expose-headers": exposed }),
          },
          vary: ["Origin", "Access-Control-Request-Headers"],
          body: undefined,
        },
      };
    }
    // §3.2.3: the response to a CORS request names the origin it may be shared with.
    return { fields: { "Access-Control-Allow-Origin": origin, ...exposing }, vary: ["Origin"] };
  };
}
