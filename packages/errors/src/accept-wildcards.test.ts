import { matchMediaType, parseMediaRanges } from "@svc/kernel";
import { listen } from "@svc/test-utils";
import { afterEach, describe, expect, it } from "vitest";
import { errorHandler } from "./express.js";
import { HttpError } from "./index.js";

// RFC 9110 §12.5.1: media-range = ( "*/*" / ( type "/" "*" ) / ( type "/" subtype ) ) parameters,
// and "The asterisk "*" character is used to group media types into ranges, with "*/*" indicating
// all media types and "type/*" indicating all subtypes of that type." A `*` anywhere else names
// no range, and no media type either (RFC 6838 §4.2: names have no `*`).

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

const OFFERS = ["application/json", "application/xml", "text/xml"];

/**
 * A node:http server that negotiates `/thing` with the package's public `matchMediaType` (a 406
 * record when nothing is acceptable, as @svc/negotiate answers) and fails `/missing` with a 404
 * whose record format the error handler negotiates.
 */
async function serve(): Promise<string> {
  const handleError = errorHandler({ logger: { error() {} } });
  const server = await listen((req, res) => {
    const fail = (err: unknown) => handleError(err, req, res, () => res.destroy());
    if (req.url !== "/thing") return fail(HttpError.notFound("No such thing"));
    const match = matchMediaType(req.headers.accept, OFFERS);
    if (match === undefined) return fail(HttpError.notAcceptable(`Available: ${OFFERS.join(", ")}`));
    res.setHeader("Content-Type", match.mediaType);
    res.end("thing");
  });
  closers.push(server.close);
  return server.url;
}

describe("Accept with a * that is no wildcard: the member is ignored, like any invalid member", () => {
  // An invalid member is dropped (`text/html;q=2, text/plain` → text/plain); a field with no valid
  // member left is disregarded, as if absent: the server's first choice (RFC 9110 §12.5.1 lets a
  // server disregard the field).
  it.each([
    ["*/json", 200, "application/json"],
    ["*/json;q=1", 200, "application/json"],
    ["*/xml", 200, "application/json"],
    ["*/", 200, "application/json"],
    ["*", 200, "application/json"],
    ["**/*", 200, "application/json"],
    ["**/**", 200, "application/json"],
    ["text/**", 200, "application/json"],
    ["text/x*ml", 200, "application/json"],
    ["application/vnd.*+json", 200, "application/json"],
    // Beside a valid range, only the valid range counts.
    ["*/json, text/xml;q=0.5", 200, "text/xml"],
    ["**/*, text/xml;q=0.5", 200, "text/xml"],
    ["text/**, application/xml;q=0.1", 200, "application/xml"],
    ["text/**, application/json;q=0", 406, undefined],
    // The wildcards RFC 9110 has.
    ["*/*;q=1", 200, "application/json"],
    ["*/*;q=0", 406, undefined],
    ["text/*", 200, "text/xml"],
    ["text/*;q=0, */*;q=0.1", 200, "application/json"],
    // The structured-suffix wildcard clients send is a range of their own making: kept, and
    // nothing offered here is of a +json type (RFC 6838 §4.2.8), so it alone is a 406.
    ["application/*+json", 406, undefined],
  ])("GET /thing, Accept: %s → %i %s", async (accept, status, contentType) => {
    const url = await serve();
    const res = await fetch(`${url}/thing`, { headers: { Accept: accept } });
    expect(res.status).toBe(status);
    if (contentType !== undefined) expect(res.headers.get("content-type")).toBe(contentType);
    else expect((await res.json()) as { status: number }).toMatchObject({ status: 406 });
  });

  // The error handler's own negotiation of the record: never a 406, and a `*` that is no wildcard
  // never picks a rendering.
  it.each([
    ["*/json", "application/json; charset=utf-8"],
    ["*/xml", "application/json; charset=utf-8"],
    ["**/*", "application/json; charset=utf-8"],
    ["text/**", "application/json; charset=utf-8"],
    ["*/json, application/xml;q=0.5", "application/xml; charset=utf-8"],
    ["*/json, application/problem+xml;q=0.5", "application/problem+xml; charset=utf-8"],
    ["**/*, text/xml;q=0.5", "text/xml; charset=utf-8"],
    ["text/*", "text/xml; charset=utf-8"],
  ])("a 404 record, Accept: %s → %s", async (accept, contentType) => {
    const url = await serve();
    const res = await fetch(`${url}/missing`, { headers: { Accept: accept } });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe(contentType);
  });

  it.each([
    "*/json",
    "*/",
    "*",
    "**/*",
    "**/**",
    "text/**",
    "text/x*ml",
    "application/vnd.*+json",
    "*/*+json",
  ])("parseMediaRanges(%j) → undefined (no valid member)", (accept) => {
    expect(parseMediaRanges(accept)).toBeUndefined();
  });

  it("parseMediaRanges keeps */*, type/* and type/*+suffix", () => {
    expect(parseMediaRanges("*/*;q=1, text/*, application/*+json")?.map((r) => r.essence)).toEqual([
      "*/*",
      "text/*",
      "application/*+json",
    ]);
  });
});
