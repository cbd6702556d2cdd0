// Tables run twice: on the validators step's core (src/validators-core.test.ts) and through the
// Express adapter's listening server (src/field-whitespace.test.ts, src/quoted-comma.test.ts).

/** U+00A0 (byte A0, obs-text): no OWS in RFC 9110 §5.6.3, though `String.prototype.trim()` drops it. */
export const NBSP = "\u00a0";
/** The resource's Last-Modified, and a date before it. */
export const MODIFIED = "Thu, 01 Jan 2026 00:00:00 GMT";
export const EARLIER = "Wed, 31 Dec 2025 00:00:00 GMT";

/**
 * A precondition with U+00A0 beside `*` or the date: neither `*` nor an HTTP-date. Method, path
 * (`/required` requires a precondition), fields, status: 204 is a write that went ahead.
 */
export const NBSP_PRECONDITIONS: readonly [string, string, Record<string, string>, number][] = [
  ["GET", "/r", { "if-none-match": `${NBSP}*` }, 200],
  ["GET", "/r", { "if-none-match": `*${NBSP}` }, 200],
  ["HEAD", "/r", { "if-none-match": `${NBSP}*` }, 200],
  ["GET", "/r", { "if-match": `${NBSP}*` }, 412],
  ["PUT", "/r", { "if-match": `${NBSP}*` }, 412],
  ["PUT", "/r", { "if-match": `*${NBSP}` }, 412],
  ["PUT", "/r", { "if-none-match": `${NBSP}*` }, 204],
  ["PUT", "/required", { "if-none-match": `${NBSP}*` }, 428],
  ["GET", "/r", { "if-modified-since": `${MODIFIED}${NBSP}` }, 200],
  ["GET", "/r", { "if-modified-since": `${NBSP}${MODIFIED}` }, 200],
  ["GET", "/r", { "if-unmodified-since": `${NBSP}${EARLIER}` }, 200],
  ["PUT", "/r", { "if-unmodified-since": `${EARLIER}${NBSP}` }, 204],
  ["PUT", "/required", { "if-unmodified-since": `${NBSP}${MODIFIED}` }, 428],
];

/** Values naming the current tag ("v1") only inside another member: no member is "v1". */
export const HIDDEN_TAGS = [
  '"x,"v1"',
  'W/"x,"v1"',
  '"x,"v1", "y"',
  '"a"b",c"v1"',
  '"x,y,z,"v1"',
  // An odd number of `"a,` pairs up as `"a,"a` members up to the last, `"a,"v1"`.
  `${'"a,'.repeat(2001)}"v1"`,
];

/** Values with a malformed member and then the current tag ("v1") as a member of its own. */
export const LISTED_TAGS = ['"x,"y, "v1"', '"v1"x, "v1"', '"a,b", "v1"', '"a b", "v1"'];
