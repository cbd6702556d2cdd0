import type { IncomingMessage, ServerResponse } from "node:http";
import { appendVary, type Negotiation, type NextFunction } from "@svc/errors";
import fresh from "fresh";
import { strongEtag } from "./entity-tag.js";

/** Options of {@link conditional}. */
export interface ConditionalOptions {
  /**
   * `Cache-Control` for successful GET/HEAD responses that set none themselves, or `false` to
   * leave them without one. `no-cache` lets clients and caches store the response but makes them
   * revalidate it (cheaply, with the ETag) before each reuse.
   * @default "no-cache"
   */
  defaultCacheControl?: string | false;
}

type Body = string | Uint8Array;
type End = ServerResponse["end"];

/** Headers a 304 keeps (RFC 9110 §15.4.5); representation metadata besides these goes. */
const NOT_MODIFIED_DROP = [
  "Content-Type",
  "Content-Length",
  "Content-Language",
  "Content-Range",
  "Transfer-Encoding",
  "Content-Encoding",
];

function isBody(value: unknown): value is Body {
  return typeof value === "string" || value instanceof Uint8Array;
}

function headerText(res: ServerResponse, name: string): string | undefined {
  const v = res.getHeader(name);
  return v === undefined ? undefined : Array.isArray(v) ? v.join(", ") : String(v);
}

/**
 * The request headers `fresh` should weigh at an origin server: without `Cache-Control`, which
 * `fresh` (written for Express's cache semantics) reads as "never 304" on `no-cache`. RFC 9110
 * §13.1.2 says an origin server MUST evaluate `If-None-Match`, and a request's `no-cache` asks
 * for exactly that validation (RFC 9111 §5.2.1.4); fetch() adds it to every conditional request.
 */
function conditionalHeaders(req: IncomingMessage): IncomingMessage["headers"] {
  if (req.headers["cache-control"] === undefined) return req.headers;
  const { "cache-control": _directives, ...rest } = req.headers;
  return rest;
}

/**
 * The kernel's {@link Negotiation} a negotiation middleware (`@svc/negotiate`) left on the
 * response, if one is mounted (and nothing else took the name).
 */
function oracle(res: ServerResponse): Negotiation | undefined {
  const n = (res as ServerResponse & { negotiation?: Partial<Negotiation> }).negotiation;
  return typeof n?.codingFor === "function" && typeof n.compressible === "function"
    ? (n as Negotiation)
    : undefined;
}

/**
 * Strong, per-representation ETags and 304 revalidation for GET and HEAD, replacing Express's
 * weak default tag:
 *
 * - the tag is computed (with the `etag` package) from the identity bytes the handler sends, so
 *   the JSON and the XML of one resource differ; a handler's own `ETag` is kept;
 * - when the response is (or, for HEAD and 304, would be) content-coded by `@svc/negotiate`, the tag
 *   is made weak: the identity bytes' strong tag must not label gzip bytes (RFC 9110 §8.8.3);
 * - `If-None-Match` (weak comparison, lists, `*`) or, without it, `If-Modified-Since` against
 *   `Last-Modified` → 304 with no body, keeping `ETag`, `Cache-Control`, `Content-Location`,
 *   `Date`, `Expires`, `Vary` (RFC 9110 §15.4.5), through the `fresh` package;
 * - successful responses without `Cache-Control` get `defaultCacheControl`.
 *
 * Mount it after `negotiate()` and before the routes; it works with `res.send`/`res.json` and
 * with `res.represent`. Streamed bodies get no computed tag.
 *
 * @example
 * app.use(negotiate());
 * app.use(conditional());
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13
 */
export function conditional(options: ConditionalOptions = {}) {
  const defaultCacheControl = options.defaultCacheControl ?? "no-cache";
  if (
    defaultCacheControl !== false &&
    (typeof defaultCacheControl !== "string" || defaultCacheControl.trim() === "")
  ) {
    throw new TypeError("conditional: defaultCacheControl must be a non-empty string or false");
  }

  return function conditionalMiddleware(req: IncomingMessage, res: ServerResponse, next: NextFunction): void {
    // Every 2xx body gets a strong tag (Express would add its weak one); only GET and HEAD can
    // be answered with a 304 or get the default cache policy.
    const safe = req.method === "GET" || req.method === "HEAD";
    const successful = () => res.statusCode >= 200 && res.statusCode < 300;
    // What the full response would have looked like, for a 304 or HEAD made from it.
    let contentType: string | undefined;
    let length: number | undefined;

    const label = (body: Body, fallbackType: string) => {
      contentType = headerText(res, "Content-Type") ?? fallbackType;
      length = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
      if (!successful()) return;
      if (safe && defaultCacheControl !== false && !res.hasHeader("Cache-Control"))
        res.setHeader("Cache-Control", defaultCacheControl);
      if (res.hasHeader("ETag")) return;
      const tag = strongEtag(body);
      const coding = oracle(res)?.codingFor(contentType, length) ?? "identity";
      res.setHeader("ETag", coding === "identity" ? tag : `W/${tag}`);
    };
    const keepVary = () => {
      // The full response would have varied on Accept-Encoding; its 304 must say so too.
      if (oracle(res)?.compressible(contentType)) appendVary(res, "Accept-Encoding");
    };

    // Express's res.send: tag the body before Express would add its weak tag; Express then runs
    // `fresh` itself and turns the response into a 304 with the right headers stripped.
    const target = res as ServerResponse & { send?: (body?: unknown) => unknown };
    const send = target.send;
    if (typeof send === "function") {
      target.send = function sendWithEtag(this: ServerResponse, body?: unknown) {
        if (isBody(body)) label(body, typeof body === "string" ? "text/html" : "application/octet-stream");
        return send.call(this, body);
      };
    }

    const end = res.end as (...args: unknown[]) => ServerResponse;
    res.end = function endWithEtag(this: ServerResponse, ...args: unknown[]): ServerResponse {
      const chunk = args[0];
      if (!this.headersSent) {
        if (isBody(chunk) && chunk.length > 0 && contentType === undefined) {
          label(chunk, "application/octet-stream");
        }
        if (!safe) {
          // Nothing to revalidate on unsafe methods: preconditions() answers those.
        } else if (this.statusCode === 304) {
          for (const name of NOT_MODIFIED_DROP) this.removeHeader(name);
          keepVary();
        } else if (
          successful() &&
          contentType !== undefined &&
          // Without either precondition header `fresh` is false: nothing to compare.
          (req.headers["if-none-match"] !== undefined || req.headers["if-modified-since"] !== undefined)
        ) {
          const etag = headerText(this, "ETag");
          const lastModified = headerText(this, "Last-Modified");
          const validators: Record<string, string> = {};
          if (etag !== undefined) validators.etag = etag;
          if (lastModified !== undefined) validators["last-modified"] = lastModified;
          if (Object.keys(validators).length > 0 && fresh(conditionalHeaders(req), validators)) {
            for (const name of NOT_MODIFIED_DROP) this.removeHeader(name);
            this.statusCode = 304;
            keepVary();
            return end.call(this) as ServerResponse;
          }
        }
      }
      return end.apply(this, args);
    } as End;

    next();
  };
}
