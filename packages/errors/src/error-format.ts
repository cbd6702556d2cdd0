import { matchMediaType } from "@svc/kernel";

/** The renderings an error can take. */
export type ErrorFormat = "json" | "problem+json" | "xml" | "problem+xml";

/**
 * What an error is rendered as when the client's `Accept` does not choose (no `Accept`, `*\/*`,
 * equal q-values, a header naming nothing the handler produces): `"record"`, the error record as
 * JSON (XML ranked record first), or `"problem"`, RFC 9457 problem details
 * (`application/problem+json`, and `application/problem+xml` ranked before the XML record).
 */
export type DefaultErrorFormat = "record" | "problem";

/**
 * Media types in server preference: the plain record first, so `*\/*` and no `Accept` get JSON.
 * Each carries its charset, so `Accept: application/json; charset=utf-8` matches it (RFC 9110
 * §12.5.1: a range with parameters only matches a type with those parameters).
 */
const RECORD_OFFERS: readonly [string, ErrorFormat][] = [
  ["application/json; charset=utf-8", "json"],
  ["application/problem+json; charset=utf-8", "problem+json"],
  ["application/xml; charset=utf-8", "xml"],
  ["text/xml; charset=utf-8", "xml"],
  ["application/problem+xml; charset=utf-8", "problem+xml"],
];
/**
 * The same media types with problem details first in each syntax: what the server prefers where
 * the client leaves the choice to it (RFC 9110 §12.5.1, equal q-values go to the server's order).
 */
const PROBLEM_OFFERS: readonly [string, ErrorFormat][] = [
  ["application/problem+json; charset=utf-8", "problem+json"],
  ["application/json; charset=utf-8", "json"],
  ["application/problem+xml; charset=utf-8", "problem+xml"],
  ["application/xml; charset=utf-8", "xml"],
  ["text/xml; charset=utf-8", "xml"],
];
const OFFER_TYPES: Readonly<Record<DefaultErrorFormat, readonly string[]>> = {
  record: RECORD_OFFERS.map(([type]) => type),
  problem: PROBLEM_OFFERS.map(([type]) => type),
};
const FORMAT_BY_TYPE = new Map(RECORD_OFFERS);

/**
 * Picks the error rendering from an `Accept` header value. An error never turns into a 406: when
 * the client accepts none of the renderings (or sends a malformed header), the JSON record is used.
 *
 * @example errorFormat("application/problem+json") // "problem+json"
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.1
 */
export function errorFormat(
  accept: string | undefined,
  preferred: DefaultErrorFormat = "record",
): ErrorFormat {
  return errorRendering(accept, preferred).format;
}

/**
 * Picks the error rendering and the `Content-Type` to label it with: the media type the client
 * accepted, so `Accept: text/xml` gets `text/xml` rather than an `application/xml` it did not list
 * (RFC 9110 §12.5.1). Never a 406: unmatched or malformed `Accept` gets the JSON record, or with
 * `preferred` `"problem"` JSON problem details (RFC 9457 §3), which also win wherever the client's
 * `Accept` leaves the choice to the server.
 *
 * @example errorRendering("text/xml") // { format: "xml", contentType: "text/xml; charset=utf-8" }
 * @example errorRendering(undefined, "problem") // { format: "problem+json", contentType: "application/problem+json; charset=utf-8" }
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.1
 */
export function errorRendering(
  accept: string | undefined,
  preferred: DefaultErrorFormat = "record",
): { format: ErrorFormat; contentType: string } {
  const fallback = preferred === "problem" ? PROBLEM_FALLBACK : RECORD_FALLBACK;
  if (!accept) return fallback;
  // The same selection @svc/negotiate makes for a success, so a client gets an error in the
  // representation it would have got the resource in (ties go to the server's order).
  // Only an offer's own type matches: a client's vendor type (`application/vnd.example.v2+xml`)
  // names a representation of the resource, not an error record, and labelling the record
  // `application/xml` would name a type the client did not accept. Such a client gets the JSON
  // record, as when nothing matches.
  const match = matchMediaType(accept, OFFER_TYPES[preferred], false);
  const format = match === undefined ? undefined : FORMAT_BY_TYPE.get(match.offer);
  return format && match ? { format, contentType: match.offer } : fallback;
}

/** The `Content-Type` of each rendering. */
export const ERROR_CONTENT_TYPES: Readonly<Record<ErrorFormat, string>> = {
  json: "application/json; charset=utf-8",
  "problem+json": "application/problem+json; charset=utf-8",
  xml: "application/xml; charset=utf-8",
  "problem+xml": "application/problem+xml; charset=utf-8",
};

const RECORD_FALLBACK = { format: "json", contentType: ERROR_CONTENT_TYPES.json } as const;
const PROBLEM_FALLBACK = {
  format: "problem+json",
  contentType: ERROR_CONTENT_TYPES["problem+json"],
} as const;
