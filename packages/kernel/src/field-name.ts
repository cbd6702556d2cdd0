import { BoundedMemo } from "./bounded-memo.js";

/**
 * Field names as they are usually spelled: each hyphen-separated part capitalised, except the
 * acronyms of the fields the pipeline writes. Names are case-insensitive (RFC 9110 §5.1); the
 * spelling is only what people reading a trace expect.
 */
const SPELLED: Readonly<Record<string, string>> = {
  etag: "ETag",
  "www-authenticate": "WWW-Authenticate",
  "content-md5": "Content-MD5",
  "x-ratelimit-limit": "X-RateLimit-Limit",
  "x-ratelimit-remaining": "X-RateLimit-Remaining",
  "x-ratelimit-reset": "X-RateLimit-Reset",
  "x-correlation-id": "X-Correlation-ID",
  "api-supported-versions": "API-Supported-Versions",
  "api-deprecated-versions": "API-Deprecated-Versions",
  "api-version": "API-Version",
};

const spelled = new Map<string, string>(Object.entries(SPELLED));

/** `name` (lower case) spelled for the wire; a bounded cache of the names seen. */
export function fieldName(name: string): string {
  const known = spelled.get(name);
  if (known !== undefined) return known;
  let out = "";
  let upper = true;
  for (const ch of name) {
    out += upper ? ch.toUpperCase() : ch;
    upper = ch === "-";
  }
  if (spelled.size < 512) spelled.set(name, out);
  return out;
}

/**
 * `name` in lower case, as Fastify's `reply` and a Fetch `Headers` keep field names, from a small
 * held table: the names are the gates' own (`RateLimit-Policy`, `Deprecation`), and lowering one
 * on every request makes a new string a request that the header store then looks up by its
 * characters. A name already in lower case comes back as it is.
 */
export function lowerFieldName(name: string): string {
  return lowered.get(name);
}

const lowered = new BoundedMemo((name: string) => name.toLowerCase(), { limit: 256, maxKeyLength: 256 });
