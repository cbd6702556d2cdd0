import type { ServerResponse } from "node:http";

/**
 * RFC 9110 §15.4.5: "The server generating a 304 response MUST generate any of the following
 * header fields that would have been sent in a 200 (OK) response to the same request:
 * Content-Location, Date, ETag, and Vary; and Cache-Control and Expires", and "SHOULD NOT generate
 * representation metadata other than the above listed fields". These go; those stay.
 */
const NOT_MODIFIED_DROP = [
  "Content-Type",
  "Content-Length",
  "Content-Language",
  "Content-Range",
  "Transfer-Encoding",
  "Content-Encoding",
];

/**
 * Turns the headers of `res` into those of a 304: the representation metadata is removed, the
 * fields §15.4.5 lists (and the validators) are left as they were set.
 */
export function dropRepresentationMetadata(res: ServerResponse): void {
  for (const name of NOT_MODIFIED_DROP) res.removeHeader(name);
}
