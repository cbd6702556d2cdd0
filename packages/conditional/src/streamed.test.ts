import { createReadStream, mkdtempSync, type ReadStream, rmSync, writeFileSync } from "node:fs";
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
  const files: ReadStream[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-conditional-"));
    writeFileSync(join(dir, "a.txt"), "x".repeat(4000));
    writeFileSync(join(dir, "big.txt"), "y".repeat(1 << 20));
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
    // A file piped by the handler: a 304 or 412 in its place must not leave it open.
    app.get("/file", (_req, res) => {
      res.setHeader("ETag", '"f1"');
      res.setHeader("Content-Type", "text/plain");
      const file = createReadStream(join(dir, "big.txt"));
      files.push(file);
      file.pipe(res);
    });
    app.use(errorHandler({ logger: { error: () => {} } }));
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
    const res = await fetch(`${server.url}/written`, {
      headers: { "If-Match": '"v2"', "Accept-Encoding": "identity" },
    });
    expect(res.status).toBe(412);
    expect(res.headers.get("etag")).toBe('"v1"');
    expect(((await res.json()) as { status: number }).status).toBe(412);
    // For a gzip client the streamed 200 would be coded and say W/"v1" (RFC 9110 §8.8.3): the 412
    // carries that tag, the one its preconditions were compared with.
    const gzip = await fetch(`${server.url}/written`, {
      headers: { "If-Match": '"v2"', "Accept-Encoding": "gzip" },
    });
    expect(gzip.status).toBe(412);
    expect(gzip.headers.get("etag")).toBe('W/"v1"');
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

  // The pipe stops at the discarded write and is unpiped when the response closes, but nothing
  // reads the file again: its descriptor stayed open, one per revalidation, until the process ran
  // out of them (EMFILE), as RFC 9110 §13.1.2's 304 is every client's routine answer.
  it.each([
    ['If-None-Match: "f1"', 304, { "If-None-Match": '"f1"' }],
    ['If-Match: "f2"', 412, { "If-Match": '"f2"' }],
  ] as const)(
    "a piped file, %s → %i, and the file is closed",
    async (_name, status, headers) => {
      files.length = 0;
      const res = await fetch(`${server.url}/file`, { headers });
      expect(res.status).toBe(status);
      await res.arrayBuffer();
      const file = files[0] as ReadStream;
      if (!file.closed) await new Promise<void>((resolve) => file.once("close", () => resolve()));
      expect(file.closed).toBe(true);
    },
    3000,
  );

  it("a piped file without preconditions → 200 with the whole file", async () => {
    const res = await fetch(`${server.url}/file`);
    expect(res.status).toBe(200);
    expect((await res.text()).length).toBe(1 << 20);
  });

  it("express.static, GET with a Range → 206 as before", async () => {
    const res = await fetch(`${server.url}/static/a.txt`, { headers: { Range: "bytes=0-9" } });
    expect(res.status).toBe(206);
    expect(await res.text()).toBe("x".repeat(10));
  });
});
