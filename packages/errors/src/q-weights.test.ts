import { matchMediaType, parseMediaRanges, parseQList } from "@svc/kernel";
import { listen } from "@svc/test-utils";
import { afterEach, describe, expect, it } from "vitest";
import { errorHandler } from "./express.js";
import { HttpError } from "./index.js";

// RFC 9110 §12.4.2: `weight = OWS ";" OWS "q=" qvalue`, one per member: §12.5.1
// `Accept = #( media-range [ weight ] )`, §12.5.3 `Accept-Encoding = #( codings [ weight ] )`,
// §12.5.4 `Accept-Language = #( language-range [ weight ] )`. A member with two weights matches
// none of these: it is invalid, and ignored like any other invalid member (`q=2`, `q=abc`), by
// every parser of the package alike, whichever weight comes first.

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

const OFFERS = ["application/json", "application/xml"];

/**
 * `/coding` answers the members `parseQList` reads from `Accept-Encoding`; `/thing` is negotiated
 * by `matchMediaType` (a 406 record when nothing is acceptable); `/missing` is a 404 record whose
 * format the error handler negotiates.
 */
async function serve(): Promise<string> {
  const handleError = errorHandler({ logger: { error() {} } });
  const server = await listen((req, res) => {
    const fail = (err: unknown) => handleError(err, req, res, () => res.destroy());
    if (req.url === "/coding") {
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify(parseQList(req.headers["accept-encoding"] ?? "")));
      return;
    }
    if (req.url !== "/thing") return fail(HttpError.notFound("No such thing"));
    const match = matchMediaType(req.headers.accept, OFFERS);
    if (match === undefined) return fail(HttpError.notAcceptable());
    res.setHeader("Content-Type", match.mediaType);
    res.end("thing");
  });
  closers.push(server.close);
  return server.url;
}

describe("a member with two q weights is invalid and ignored", () => {
  it.each([
    // Two weights, in either order, in either case (parameter names are case-insensitive).
    ["gzip;q=0.1;q=1, br;q=0.5", [{ value: "br", q: 0.5 }]],
    ["gzip;q=1;q=0.1, br;q=0.5", [{ value: "br", q: 0.5 }]],
    ["gzip;q=0.5;Q=0.5, br", [{ value: "br", q: 1 }]],
    ["gzip ; q=0 ; q=0, identity", [{ value: "identity", q: 1 }]],
    // An invalid weight followed by a valid one was kept with the valid one.
    ["gzip;q=2;q=1, br;q=0.5", [{ value: "br", q: 0.5 }]],
    ["gzip;q=abc;q=0.9", []],
    // Good members as they were: one weight, none, other parameters.
    [
      "gzip;q=0.5, br",
      [
        { value: "gzip", q: 0.5 },
        { value: "br", q: 1 },
      ],
    ],
    ["gzip;level=9;q=0.3", [{ value: "gzip", q: 0.3 }]],
    ["gzip;Q=0", [{ value: "gzip", q: 0 }]],
  ])("Accept-Encoding: %s → %j", async (header, expected) => {
    const url = await serve();
    const res = await fetch(`${url}/coding`, { headers: { "Accept-Encoding": header } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(expected);
  });

  it.each([
    // The first weight was taken and the second dropped as an extension: xml at q=1 won.
    ["application/xml;q=1;q=0, application/json;q=0.5", 200, "application/json"],
    ["application/xml;q=1;Q=0.1, application/json;q=0.5", 200, "application/json"],
    // A q=0 that said "not acceptable" then a weight: both ignored, json's own q decides.
    ["application/json;q=0;q=1, application/xml;q=0.1", 200, "application/xml"],
    // Alone, the member leaves nothing: the field is disregarded, the first offer.
    ["application/xml;q=1;q=1", 200, "application/json"],
    // One weight, then an extension parameter (RFC 7231 accept-ext): as before.
    ["application/xml;q=1;ext=1, application/json;q=0.5", 200, "application/xml"],
    ["application/xml;q=0.4, application/json;q=0.5", 200, "application/json"],
    ["application/xml, application/json;q=0", 200, "application/xml"],
    ["application/json;q=0, application/xml;q=0", 406, undefined],
  ])("GET /thing, Accept: %s → %i %s", async (accept, status, contentType) => {
    const url = await serve();
    const res = await fetch(`${url}/thing`, { headers: { Accept: accept } });
    expect(res.status).toBe(status);
    if (contentType !== undefined) expect(res.headers.get("content-type")).toBe(contentType);
    else expect(((await res.json()) as { status: number }).status).toBe(406);
  });

  it.each([
    ["application/xml;q=1;q=0, application/json;q=0.5", "application/json; charset=utf-8"],
    [
      "application/problem+xml;q=1;q=0.1, application/problem+json;q=0.5",
      "application/problem+json; charset=utf-8",
    ],
    ["application/problem+xml;q=1, application/problem+json;q=0.5", "application/problem+xml; charset=utf-8"],
  ])("a 404 record, Accept: %s → %s", async (accept, contentType) => {
    const url = await serve();
    const res = await fetch(`${url}/missing`, { headers: { Accept: accept } });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe(contentType);
    expect(await res.text()).toContain("No such thing");
  });

  it("parseMediaRanges drops the member and keeps the others", () => {
    expect(parseMediaRanges("text/html;q=0.1;q=1, text/plain;q=0.2")?.map((r) => [r.essence, r.q])).toEqual([
      ["text/plain", 0.2],
    ]);
    expect(parseMediaRanges("text/html;q=0.1;q=1")).toBeUndefined();
  });
});
