import { parseItem } from "structured-headers";

/** The outcome of reading an `Idempotency-Key` request header. */
export type ParsedIdempotencyKey =
  | { readonly kind: "absent" }
  | { readonly kind: "invalid"; readonly reason: string }
  | { readonly kind: "valid"; readonly key: string };

/**
 * Longest key accepted, in characters (Stripe's limit, which clients already respect).
 *
 * @example if (key.length > MAX_KEY_LENGTH) reject();
 * @see https://docs.stripe.com/api/idempotent_requests
 */
export const MAX_KEY_LENGTH = 255;

/** Printable ASCII without space, DQUOTE and comma: what a bare (unquoted) key may contain. */
const BARE_KEY = /^[\x21\x23-\x2b\x2d-\x7e]+$/;

/**
 * Reads an `Idempotency-Key` header value.
 *
 * draft-ietf-httpapi-idempotency-key-header §2: "Idempotency-Key is an Item Structured Header
 * [RFC8941]. Its value MUST be a String." The quoted form is parsed with the RFC 8941/9651
 * parser of `structured-headers`; parameters are allowed and ignored. Many clients (Stripe's
 * among them) send the key unquoted, and a UUID is not even a valid sf-token, so a bare value
 * of printable ASCII without spaces, quotes or commas is accepted as the key too. Either way
 * the key is 1 to 255 characters. Several field lines (or a list) are invalid: one request has
 * one key.
 *
 * @example
 * parseIdempotencyKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"') // { kind: "valid", key: "8e03…" }
 * parseIdempotencyKey("8e03978e-40d5-43e8-bc93-6894a57f9324")   // the same key, bare
 * parseIdempotencyKey('"a", "b"')                                // { kind: "invalid", … }
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-idempotency-key-header#section-2
 */
export function parseIdempotencyKey(header: string | readonly string[] | undefined): ParsedIdempotencyKey {
  if (header === undefined) return { kind: "absent" };
  if (typeof header !== "string") {
    if (header.length === 0) return { kind: "absent" };
    if (header.length > 1) return { kind: "invalid", reason: "more than one Idempotency-Key field" };
    return parseIdempotencyKey(header[0]);
  }
  // RFC 8941 §4.2: leading and trailing SP are discarded before parsing.
  const value = trimSpaces(header);
  if (value === "") return { kind: "invalid", reason: "Idempotency-Key is empty" };
  let key: string;
  if (value.startsWith('"')) {
    let item: ReturnType<typeof parseItem>;
    try {
      item = parseItem(value);
    } catch {
      return { kind: "invalid", reason: "Idempotency-Key is not a valid Structured Field String" };
    }
    const [bare] = item;
    if (typeof bare !== "string") {
      return { kind: "invalid", reason: "Idempotency-Key must be a String" };
    }
    key = bare;
  } else {
    if (!BARE_KEY.test(value)) {
      return {
        kind: "invalid",
        reason:
          "Idempotency-Key must be a quoted string or printable characters without spaces, quotes or commas",
      };
    }
    key = value;
  }
  if (key.length === 0) return { kind: "invalid", reason: "Idempotency-Key is empty" };
  if (key.length > MAX_KEY_LENGTH) {
    return { kind: "invalid", reason: `Idempotency-Key is longer than ${MAX_KEY_LENGTH} characters` };
  }
  return { kind: "valid", key };
}

/**
 * `value` without leading and trailing SP and HTAB, in one pass. A regular expression such as
 * `/[ \t]+$/` retries from every character of an inner run of spaces (`a`, 16,000 spaces, `b`,
 * which fits in Node.js's default header size), quadratic work: about 150 ms of CPU for one
 * request's header.
 */
function trimSpaces(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isSpace(value.charCodeAt(start))) start++;
  while (end > start && isSpace(value.charCodeAt(end - 1))) end--;
  return value.slice(start, end);
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09;
}
