import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { errorHandler } from "@svc/errors";
import { negotiate } from "@svc/negotiate";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conditional } from "./conditional.js";

// A streamed body (res.write, a pipe, express.static) sends its headers at the first write, before
// res.end: the preconditions are evaluated there, as for a body given to res.end (RFC 9110 §13.1.1,
// §13.1.2: "the origin server MUST NOT perform the requested method if the condition evaluates to
// false").
describe("conditional(): streamed responses", () => {
  let server: Listening;
  let dir: string;
  let writesAfter = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-conditional-"));
    writeFileSync(join(dir, "a.txt"), "x".repeat(4000));
    const app = express();
    app.use(negotiate({ compression: { threshold: 500 } }));
    app.use(conditional());
    app.use("/static", express.static(dir));
    app.get("/written", (_req, res) => {
      res.setHeader("ETag", '"v1"');
      res.setHeader("Content-Type", "text/plain");
      res.write("hello ");
      // The handler goes on writing; after a 304 or 412 those bytes must go nowhere, without
      // a write-after-end error.
      if (res.write("wor") === true) writesAfter++;
      res.end("ld");
    });
    app.get("/piped", (_req, res) => {
      res.setHeader("ETag", '"v1"');
      res.setHeader("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT");
      res.setHeader("Content-Type", "text/plain");
      Readable.from(["hello ", "world"]).pipe(res);
    });
    app.use(errorHandler());
    server = await listen(app);
  });

  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('res.write with ETag "v1", If-None-Match: "v1" → 304 without a body', async () => {
    const res = await fetch(`${server.url}/written`, {
      headers: { "If-None-Match": '"v1"', "Accept-Encoding": "identity" },
    });
    expect(res.status).toBe(304);
    expect(await res.text()).toBe("");
    expect(res.headers.get("etag")).toBe('"v1"');
    expect(res.headers.get("content-type")).toBeNull();
    expect(writesAfter).toBe(0);
  });

  it('res.write with ETag "v1", If-Match: "v2" → 412 error record with the current ETag', async () => {
    const res = await fetch(`${server.url}/written`, { headers: { "If-Match": '"v2"' } });
    expect(res.status).toBe(412);
    expect(res.headers.get("etag")).toBe('"v1"');
    expect(((await res.json()) as { status: number }).status).toBe(412);
  });

  it('a pipe with ETag "v1", If-None-Match: W/"v1" (the compressed 200\'s tag) → 304 with W/"v1"', async () => {
    const res = await fetch(`${server.url}/piped`, {
      headers: { "If-None-Match": 'W/"v1"', "Accept-Encoding": "gzip" },
    });
    expect(res.status).toBe(304);
    expect(res.headers.get("etag")).toBe('W/"v1"');
    expect(res.headers.get("vary")).toContain("Accept-Encoding");
  });

  it("a pipe, If-Unmodified-Since before its Last-Modified → 412", async () => {
    const res = await fetch(`${server.url}/piped`, {
      headers: { "If-Unmodified-Since": "Wed, 31 Dec 2025 00:00:00 GMT" },
    });
    expect(res.status).toBe(412);
  });

  it("a pipe without preconditions → 200 with the body", async () => {
    const res = await fetch(`${server.url}/piped`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("hello world");
  });

  it("express.static, If-Match naming its weak ETag → 412 (strong comparison, RFC 9110 §13.1.1)", async () => {
    const first = await fetch(`${server.url}/static/a.txt`);
    const etag = first.headers.get("etag") as string;
    expect(etag.startsWith("W/")).toBe(true);
    await first.arrayBuffer();
    const res = await fetch(`${server.url}/static/a.txt`, { headers: { "If-Match": etag } });
    expect(res.status).toBe(412);
  });

  it("express.static, GET with a Range → 206 as before", async () => {
    const res = await fetch(`${server.url}/static/a.txt`, { headers: { Range: "bytes=0-9" } });
    expect(res.status).toBe(206);
    expect(await res.text()).toBe("x".repeat(10));
  });
});
