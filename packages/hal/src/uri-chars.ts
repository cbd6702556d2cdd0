// RFC 3986 §3.3 to §3.5: a path is pchar and "/", a query and a fragment pchar, "/" and "?"; pchar
// = unreserved / pct-encoded / sub-delims / ":" / "@". Anything else, and a "%" that starts no
// pct-encoding, is no URI character there. With `reference`, "#" (the fragment's delimiter) and
// the "{" and "}" of an RFC 6570 template's expressions (a templated link's href) stay too.
const NOT_URI_CHAR = /[^A-Za-z0-9\-._~!$&'()*+,;=:@/?%]|%(?![0-9A-Fa-f]{2})/u;
const NOT_URI_CHARS = new RegExp(NOT_URI_CHAR.source, "gu");
const NOT_REFERENCE_CHAR = /[^A-Za-z0-9\-._~!$&'()*+,;=:@/?#{}%]|%(?![0-9A-Fa-f]{2})/u;
const NOT_REFERENCE_CHARS = new RegExp(NOT_REFERENCE_CHAR.source, "gu");

const utf8 = new TextEncoder();

function percentEncoded(c: string): string {
  let out = "";
  for (const byte of utf8.encode(c)) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  return out;
}

/**
 * A path (with its query, and with `reference` its fragment or template expressions) with every character a URI cannot
 * carry percent-encoded as UTF-8 (RFC 3986 §2.1, §2.5), the rest byte for byte. A "\" that a
 * WHATWG URL parser (browsers, fetch) reads as "/" would otherwise let a segment such as
 * `a\..\..\admin` climb out of its collection once §5.2.4 removes the dot segments it forms; a
 * space or a character outside ASCII makes an IRI, not the URI an href or `Location` must be.
 */
export function uriChars(part: string, reference = false): string {
  const not = reference ? NOT_REFERENCE_CHAR : NOT_URI_CHAR;
  if (!not.test(part)) return part;
  return part.replace(reference ? NOT_REFERENCE_CHARS : NOT_URI_CHARS, percentEncoded);
}

// RFC 6570 §3.2.1: "reserved ("+") and fragment ("#") expansions allow the set of characters in
// the union of ( unreserved / reserved / pct-encoded ) to be passed through without
// pct-encoding"; §3.1 copies a literal likewise. RFC 3986 §2.2 reserved = gen-delims / sub-delims.
const NOT_RESERVED_EXPANSION_CHAR = /[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]|%(?![0-9A-Fa-f]{2})/u;
const NOT_RESERVED_EXPANSION_CHARS = new RegExp(NOT_RESERVED_EXPANSION_CHAR.source, "gu");

/**
 * The text of a reserved or fragment expansion (or a template literal) with every character
 * outside unreserved, reserved and pct-encoded triplets percent-encoded as UTF-8, a "%" that
 * starts no triplet included (RFC 6570 §3.2.1, RFC 3986 §2.1, §2.4).
 */
export function reservedExpansionChars(text: string): string {
  if (!NOT_RESERVED_EXPANSION_CHAR.test(text)) return text;
  return text.replace(NOT_RESERVED_EXPANSION_CHARS, percentEncoded);
}
