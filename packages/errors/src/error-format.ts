import Negotiator from "negotiator";

/** The renderings an error can take. */
export type ErrorFormat = "json" | "problem+json" | "xml" | "problem+xml";

/** Media types in server preference: the plain record first, so `*\/*` and no `Accept` get JSON. */
const OFFERS: readonly [string, ErrorFormat][] = [
  ["application/json", "json"],
  ["application/problem+json", "problem+json"],
  ["application/xml", "xml"],
  ["text/xml", "xml"],
  ["application/problem+xml", "problem+xml"],
];
const OFFER_TYPES = OFFERS.map(([type]) => type);
const FORMAT_BY_TYPE = new Map(OFFERS);

/**
 * Picks the error rendering from an `Accept` header value. An error never turns into a 406: when
 * the client accepts none of the renderings (or sends a malformed header), the JSON record is used.
 *
 * @example errorFormat("application/problem+json") // "problem+json"
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.1
 */
export function errorFormat(accept: string | undefined): ErrorFormat {
  if (!accept) return "json";
  try {
    const best = new Negotiator({ headers: { accept } }).mediaType(OFFER_TYPES);
    return (best && FORMAT_BY_TYPE.get(best)) || "json";
  } catch {
    return "json";
  }
}

/** The `Content-Type` of each rendering. */
export const ERROR_CONTENT_TYPES: Readonly<Record<ErrorFormat, string>> = {
  json: "application/json; charset=utf-8",
  "problem+json": "application/problem+json; charset=utf-8",
  xml: "application/xml; charset=utf-8",
  "problem+xml": "application/problem+xml; charset=utf-8",
};
