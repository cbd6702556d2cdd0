import type { IncomingMessage, ServerResponse } from "node:http";
import {
  checkBooleanOption,
  checkOptionNames,
  type NextFunction,
  type OptionError,
  optionError,
  refusedOption,
} from "@svc/errors";

/** Options of {@link cacheControl}: the directives of RFC 9111 §5.2.2 a route may want. */
export interface CacheControlOptions {
  /**
   * `public` (shared caches may store it, even when authenticated) or `private` (only the client's own cache).
   * @default neither
   */
  visibility?: "public" | "private";
  /**
   * `max-age` in seconds.
   * @default none
   */
  maxAge?: number;
  /**
   * `s-maxage` in seconds, for shared caches.
   * @default none
   */
  sMaxAge?: number;
  /**
   * `no-cache`: store, but revalidate (with the ETag) before every reuse.
   * @default false
   */
  noCache?: boolean;
  /**
   * `no-store`: never store (balances, personal data).
   * @default false
   */
  noStore?: boolean;
  /**
   * `must-revalidate`.
   * @default false
   */
  mustRevalidate?: boolean;
  /**
   * `immutable` (RFC 8246).
   * @default false
   */
  immutable?: boolean;
  /**
   * `stale-while-revalidate` in seconds (RFC 5861).
   * @default none
   */
  staleWhileRevalidate?: number;
  /**
   * `no-transform`: intermediaries (and compression) must not change the content.
   * @default false
   */
  noTransform?: boolean;
}

/** A refused option of {@link cacheControl}: `ERR_SVC_CONDITIONAL_<OPTION>`. */
function refused(option: string, given: unknown, accepted: string): OptionError {
  return refusedOption("conditional", option, given, accepted, `cacheControl: ${option}`);
}

const FLAG_OPTIONS = ["noCache", "noStore", "mustRevalidate", "immutable", "noTransform"] as const;
const DIRECTIVE_OPTIONS = ["visibility", "maxAge", "sMaxAge", "staleWhileRevalidate", ...FLAG_OPTIONS];

/** `<directive>=<seconds>` (RFC 9111 §1.2.2: delta-seconds, a non-negative integer). */
function seconds(
  option: keyof CacheControlOptions,
  directive: string,
  value: number | undefined,
): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw refused(option, value, `a non-negative integer of seconds (${directive})`);
  }
  return `${directive}=${value}`;
}

/**
 * Builds a `Cache-Control` value, rejecting contradictions (`no-store` with `max-age`) and bad numbers.
 *
 * @example formatCacheControl({ visibility: "public", maxAge: 3600 }) // → "public, max-age=3600"
 * @see https://www.rfc-editor.org/rfc/rfc9111#section-5.2.2
 */
export function formatCacheControl(options: CacheControlOptions): string {
  if (options === null || typeof options !== "object") {
    throw refused("options", options, "an object of directives");
  }
  checkOptionNames("conditional", options, DIRECTIVE_OPTIONS, "cacheControl");
  for (const flag of FLAG_OPTIONS) {
    checkBooleanOption("conditional", flag, options[flag], `cacheControl: ${flag}`);
  }
  if (
    options.visibility !== undefined &&
    options.visibility !== "public" &&
    options.visibility !== "private"
  ) {
    throw refused("visibility", options.visibility, '"public" or "private"');
  }
  if (
    options.noStore &&
    (options.maxAge !== undefined || options.sMaxAge !== undefined || options.immutable)
  ) {
    // RFC 9111 §5.2.2.5: no-store forbids storing what max-age, s-maxage and immutable describe.
    throw refused("noStore", options.noStore, "false when maxAge, sMaxAge or immutable is set");
  }
  const parts = [
    options.visibility,
    options.noStore ? "no-store" : undefined,
    options.noCache ? "no-cache" : undefined,
    seconds("maxAge", "max-age", options.maxAge),
    seconds("sMaxAge", "s-maxage", options.sMaxAge),
    seconds("staleWhileRevalidate", "stale-while-revalidate", options.staleWhileRevalidate),
    options.mustRevalidate ? "must-revalidate" : undefined,
    options.immutable ? "immutable" : undefined,
    options.noTransform ? "no-transform" : undefined,
  ].filter((p): p is string => p !== undefined);
  if (parts.length === 0) {
    throw optionError(
      "conditional",
      "options",
      "cacheControl: options must name at least one directive (visibility, maxAge, noCache, noStore, ...), got none",
    );
  }
  return parts.join(", ");
}

/**
 * Per-route cache policy: sets `Cache-Control` on the route's responses (a handler's own value wins).
 * Error responses (4xx, 5xx) do not get it, whoever writes them: those of the error handler carry
 * its `no-store`.
 *
 * @example
 * app.get("/countries", cacheControl({ visibility: "public", maxAge: 86400 }), listCountries);
 * app.get("/accounts/:id/balance", cacheControl({ noStore: true }), balance);
 * @see https://www.rfc-editor.org/rfc/rfc9111#section-5.2.2
 */
export function cacheControl(options: CacheControlOptions) {
  const value = formatCacheControl(options);
  return function cacheControlMiddleware(
    _req: IncomingMessage,
    res: ServerResponse,
    next: NextFunction,
  ): void {
    if (!res.headersSent && !res.hasHeader("cache-control")) {
      res.setHeader("Cache-Control", value);
      // The policy is the route's answer's, not an error's: a handler writing its own 503 or 404
      // (`res.status(503).send(...)`) kept it, and RFC 9111 §3 lets a cache store any final
      // status with explicit freshness, so a shared cache could serve the outage for max-age.
      // At the head (Node calls writeHead for every response), an error status drops the policy
      // if it is still this one.
      const writeHead = res.writeHead as (this: ServerResponse, ...args: unknown[]) => ServerResponse;
      res.writeHead = function writeHeadWithPolicy(this: ServerResponse, ...args: unknown[]) {
        const status = typeof args[0] === "number" ? args[0] : this.statusCode;
        if (status >= 400 && this.getHeader("cache-control") === value) this.removeHeader("cache-control");
        return writeHead.apply(this, args);
      } as ServerResponse["writeHead"];
    }
    next();
  };
}

/**
 * Sets `Last-Modified` (whole seconds, IMF-fixdate) unless the date is invalid; one in the future
 * is sent as now (RFC 9110 §8.8.2.1: an origin server must not send a date later than its own
 * `Date`). The message's `Date` is set to that same now, unless the response already has one (then
 * Last-Modified is held to it): Node writes `Date` from a per-second cache that a timer refreshes,
 * which names an earlier second than now after the event loop was busy past a second boundary.
 *
 * @example setLastModified(res, employee.updatedAt)
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8.2
 */
export function setLastModified(res: ServerResponse, date: Date, now: Date = new Date()): void {
  if (res.headersSent || Number.isNaN(date.getTime())) return;
  const given = res.getHeader("date");
  const origination = typeof given === "string" ? Date.parse(given) : Number.NaN;
  let limit = now.getTime();
  if (Number.isNaN(origination)) res.setHeader("Date", now.toUTCString());
  else limit = origination;
  res.setHeader("Last-Modified", (date.getTime() > limit ? new Date(limit) : date).toUTCString());
}
