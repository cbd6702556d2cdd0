import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { errorHandler } from "@svc/errors/express";
import { type Listening, listen, rawRequest as raw } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { preconditions } from "./express.js";

// RFC 9110 §13.2.2 step 5: "When the method is GET and both Range and If-Range are present,
// evaluate the If-Range precondition: if true and the Range is applicable to the selected
// representation, respond 206 (Partial Content); otherwise, ignore the Range header field and
// respond 200 (OK)". preconditions() ran steps 1 to 4 and left step 5 to whatever served the range:
// behind it, express.static and res.sendFile (send) served a 206 for the weak tag send had sent
// itself, a list of tags, and any date not earlier than Last-Modified (§13.1.5 wants an exact,
// strong match). preconditions() evaluates step 5 on the current validators with evaluateIfRange and,
// when it is false, removes the Range field so that whatever serves the range sends the whole.

const CONTENT = "0123456789abcdefghij";
const PAST = new Date("2020-01-01T00:00:00Z");
const LM = PAST.toUTCString();
const RANGE = "bytes=0-3";

describe("If-Range behind preconditions() alone (RFC 9110 §13.2.2 step 5, §13.1.5)", () => {
  let server: Listening;
  let dir: string;
  let weakTag: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-conditional-pre-if-range-"));
    writeFileSync(join(dir, "a.txt"), CONTENT);
    utimesSync(join(dir, "a.txt"), PAST, PAST);
    const current = () => ({ etag: '"s1"', lastModified: PAST });
    const app = express();
    // express.static behind preconditions(), its own weak ETag and Last-Modified.
    app.use("/static", preconditions({ current }), express.static(dir));
    // res.sendFile with the application's strong tag, which send keeps.
    app.get("/file", preconditions({ current }), (_req, res) => {
      res.setHeader("ETag", '"s1"');
      res.sendFile(join(dir, "a.txt"));
    });
    app.use(errorHandler({ logger: { error: () => {} } }));
    server = await listen(app);
    weakTag = (await raw(`${server.url}/static/a.txt`, "GET", {})).headers.etag as string;
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const expectRange = (
    res: { status: number; body: Buffer; headers: Record<string, unknown> },
    status: number,
  ) => {
    expect(res.status).toBe(status);
    expect(res.body.toString()).toBe(status === 206 ? "0123" : CONTENT);
    expect(res.headers["content-range"]).toBe(status === 206 ? `bytes 0-3/${CONTENT.length}` : undefined);
  };

  it("express.static: the weak tag send gave the 200 never satisfies If-Range → whole 200", async () => {
    expect(weakTag).toMatch(/^W\/"/);
    for (const ifRange of [weakTag, weakTag.replace("W/", "w/"), `${weakTag}, ${weakTag}`]) {
      const res = await raw(`${server.url}/static/a.txt`, "GET", { range: RANGE, "if-range": ifRange });
      expect(res.headers.etag).toBe(weakTag);
      expectRange(res, 200);
    }
  });

  it.each([
    [LM, 206],
    ["Wednesday, 01-Jan-20 00:00:00 GMT", 206],
    ["Wed, 01 Jan 2020 00:00:01 GMT", 200],
    ["Thu, 01 Jan 2025 00:00:00 GMT", 200],
    ["Tue, 31 Dec 2019 23:59:59 GMT", 200],
    ["2020-01-01T00:00:00Z", 200],
    [`${LM}, ${LM}`, 200],
  ])(`express.static, Last-Modified ${LM}: If-Range %j → %i`, async (ifRange, status) => {
    const res = await raw(`${server.url}/static/a.txt`, "GET", { range: RANGE, "if-range": ifRange });
    expect(res.headers["last-modified"]).toBe(LM);
    expectRange(res, status);
  });

  it.each([
    ["/file", '"s1"', 206],
    ["/file", 'W/"s1"', 200],
    ["/file", '"s2"', 200],
    ["/file", '"s2", "s1"', 200],
    ["/file", '"s1", "s1"', 200],
    ["/file", '"s1"x', 200],
    ["/file", "*", 200],
    ["/file", "", 200],
    ["/file", "Thu, 01 Jan 2025 00:00:00 GMT", 200],
    ["/file", LM, 206],
  ])('%s, strong ETag "s1": If-Range %j → %i', async (path, ifRange, status) => {
    const res = await raw(`${server.url}${path}`, "GET", { range: RANGE, "if-range": ifRange });
    expect(res.headers.etag).toBe('"s1"');
    expectRange(res, status);
  });

  it("If-Range without Range is ignored; Range without If-Range gets its 206", async () => {
    for (const ifRange of ['"s2"', "nonsense"]) {
      const full = await raw(`${server.url}/file`, "GET", { "if-range": ifRange });
      expect([ifRange, full.status, full.body.toString()]).toEqual([ifRange, 200, CONTENT]);
    }
    expectRange(await raw(`${server.url}/file`, "GET", { range: RANGE }), 206);
    expectRange(await raw(`${server.url}/static/a.txt`, "GET", { range: RANGE }), 206);
  });

  it("steps 1 to 4 still come first: a false If-Match is a 412, a current If-None-Match a 304", async () => {
    const failed = await raw(`${server.url}/file`, "GET", {
      range: RANGE,
      "if-range": '"s1"',
      "if-match": '"s0"',
    });
    expect(failed.status).toBe(412);
    const current = await raw(`${server.url}/file`, "GET", {
      range: RANGE,
      "if-range": '"s1"',
      "if-none-match": '"s1"',
    });
    expect([current.status, current.body.length]).toEqual([304, 0]);
  });
});
