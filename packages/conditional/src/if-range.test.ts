import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Listening, listen, rawRequest as raw } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conditional } from "./conditional.js";

// RFC 9110 §13.1.5 and §13.2.2 step 5: a GET with Range and If-Range gets the range only when the
// If-Range condition is true: an entity-tag matching the selected representation's ETag by the
// strong comparison (§8.8.3.2; a weak tag never does), or an HTTP-date that exactly matches its
// Last-Modified and is a strong validator (§8.8.2.2). Otherwise "A recipient of an If-Range header
// field MUST ignore the Range header field": the full 200. express.static (send) behind
// conditional() served the range for the weak tag it had sent itself (a substring test), for any
// date not earlier than Last-Modified, for a Last-Modified not yet a second old, and for values that
// are no entity-tag (`W/"…"x`, a list of two tags).

const CONTENT = "0123456789abcdefghij";
const PAST = new Date("2020-01-01T00:00:00Z");
const FUTURE = new Date("2099-01-01T00:00:00Z");

describe("If-Range through conditional() and express.static (RFC 9110 §13.1.5)", () => {
  let server: Listening;
  let dir: string;
  let weakTag: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-conditional-if-range-"));
    for (const name of ["a.txt", "future.txt", "strong.txt"]) writeFileSync(join(dir, name), CONTENT);
    utimesSync(join(dir, "a.txt"), PAST, PAST);
    utimesSync(join(dir, "strong.txt"), PAST, PAST);
    // Last-Modified later than the message's Date (send does not clamp it): never a strong date.
    utimesSync(join(dir, "future.txt"), FUTURE, FUTURE);
    const app = express();
    app.use(conditional());
    // A strong tag of the handler's own, which send keeps.
    app.use("/strong.txt", (_req, res, next) => {
      res.setHeader("ETag", '"s1"');
      next();
    });
    app.use(express.static(dir));
    server = await listen(app);
    weakTag = (await raw(`${server.url}/a.txt`, "GET", {})).headers.etag as string;
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const lm = PAST.toUTCString();
  const range = "bytes=0-3";

  it("the weak tag send gave the 200 never satisfies If-Range → 200, whole", async () => {
    expect(weakTag).toMatch(/^W\/"/);
    for (const ifRange of [weakTag, weakTag.replace("W/", "w/")]) {
      const res = await raw(`${server.url}/a.txt`, "GET", { range, "if-range": ifRange });
      expect([ifRange, res.status, res.body.toString()]).toEqual([ifRange, 200, CONTENT]);
      expect(res.headers["content-range"]).toBeUndefined();
    }
  });

  it.each([
    ['"s1"', 206],
    ['W/"s1"', 200],
    ['w/"s1"', 200],
    ['"s2"', 200],
    ['"s1"x', 200],
    ['"s1", "s1"', 200],
    ['"s2", "s1"', 200],
    ['"s1', 200],
    ["s1", 200],
    ["*", 200],
    ["", 200],
    [" \t", 200],
    ['"s1"\u00a0', 200],
  ])('a strong ETag "s1", If-Range: %j → %i', async (ifRange, status) => {
    const res = await raw(`${server.url}/strong.txt`, "GET", { range, "if-range": ifRange });
    expect(res.status).toBe(status);
    expect(res.body.toString()).toBe(status === 206 ? "0123" : CONTENT);
    if (status === 206) expect(res.headers["content-range"]).toBe(`bytes 0-3/${CONTENT.length}`);
  });

  it.each([
    [lm, 206],
    // The same instant in the obsolete formats (§5.6.7): an HTTP-date all the same.
    ["Wednesday, 01-Jan-20 00:00:00 GMT", 206],
    ["Wed Jan  1 00:00:00 2020", 206],
    // "the If-Range comparison is by exact match, including when the validator is an HTTP-date".
    ["Wed, 01 Jan 2020 00:00:01 GMT", 200],
    ["Thu, 01 Jan 2025 00:00:00 GMT", 200],
    ["Tue, 31 Dec 2019 23:59:59 GMT", 200],
    // No dates: out of range, malformed, two of them.
    ["Sun, 30 Feb 2020 00:00:00 GMT", 200],
    ["Wed, 01 Jan 2020 24:00:00 GMT", 200],
    ["2020-01-01T00:00:00Z", 200],
    [`${lm}, ${lm}`, 200],
  ])(`Last-Modified ${PAST.toUTCString()}, If-Range: %j → %i`, async (ifRange, status) => {
    const res = await raw(`${server.url}/a.txt`, "GET", { range, "if-range": ifRange });
    expect(res.headers["last-modified"]).toBe(lm);
    expect(res.status).toBe(status);
    expect(res.body.toString()).toBe(status === 206 ? "0123" : CONTENT);
  });

  it("a Last-Modified not at least a second before the Date is no strong validator (§8.8.2.2) → 200", async () => {
    const res = await raw(`${server.url}/future.txt`, "GET", { range, "if-range": FUTURE.toUTCString() });
    expect(res.headers["last-modified"]).toBe(FUTURE.toUTCString());
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe(CONTENT);
  });

  it("two If-Range field lines, each the current tag, are no entity-tag → 200", async () => {
    const res = await raw(`${server.url}/strong.txt`, "GET", { range, "if-range": ['"s1"', '"s1"'] });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe(CONTENT);
  });

  it("If-Range without Range is ignored: 200, or the 304 If-None-Match earns", async () => {
    for (const ifRange of ['"s2"', 'W/"s1"', "nonsense"]) {
      const full = await raw(`${server.url}/strong.txt`, "GET", { "if-range": ifRange });
      expect([ifRange, full.status, full.body.toString()]).toEqual([ifRange, 200, CONTENT]);
      const current = await raw(`${server.url}/strong.txt`, "GET", {
        "if-range": ifRange,
        "if-none-match": '"s1"',
      });
      expect([ifRange, current.status]).toEqual([ifRange, 304]);
    }
  });

  it("Range without If-Range still gets its 206", async () => {
    const res = await raw(`${server.url}/a.txt`, "GET", { range });
    expect(res.status).toBe(206);
    expect(res.body.toString()).toBe("0123");
  });
});
