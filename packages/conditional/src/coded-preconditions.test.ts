import { gunzipSync } from "node:zlib";
import { errorHandler } from "@svc/errors";
import { negotiate } from "@svc/negotiate";
import { type Listening, listen, rawRequest as raw } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conditional } from "./conditional.js";
import { representationTag } from "./validators.js";

/** The tag `conditional()` gives a JSON body (RFC 9110 §8.8.3: labelled by its media type). */
const jsonTag = (body: string | Uint8Array) => representationTag("application/json", undefined, body);

// A handler's own strong ETag on a body @svc/negotiate then codes was made weak for the response
// (RFC 9110 §8.8.3: the gzip bytes are another representation, whose tag is W/), but If-Match and
// If-None-Match were compared with the strong form before: `Accept-Encoding: gzip`,
// `If-Match: "v7"` got a 200 saying `ETag: W/"v7"`, a validator that fails the strong comparison
// (§8.8.3.2) the request just passed, while a computed tag (weak from the start) gave a 412. The
// preconditions are now evaluated on the tag the response sends for that representation
// (§13.1.1: If-Match compares the selected representation's current entity tag, strongly).
const rows = Array.from({ length: 60 }, (_, i) => ({ id: i, name: "Ada", department: "R&D" }));
const csv = `${rows.map((r) => `${r.id},${r.name},${r.department}`).join("\n")}\n`;

describe("a handler's strong ETag on a coded response: preconditions compare the tag sent", () => {
  let server: Listening;

  beforeAll(async () => {
    const app = express();
    app.use(negotiate({ compression: { threshold: 500 } }));
    app.use(conditional());
    app.get("/own", (_req, res) => {
      res.set("ETag", '"v7"');
      res.json(rows);
    });
    app.get("/computed", (_req, res) => res.json(rows));
    // Streamed, no length: coded for a gzip client.
    app.get("/stream", (req, res) => {
      res.setHeader("ETag", '"v7"');
      res.setHeader("Content-Type", "text/csv; charset=utf-8");
      if (req.method === "HEAD") return void res.end();
      const half = csv.length >> 1;
      res.write(csv.slice(0, half));
      res.end(csv.slice(half));
    });
    // Streamed with a declared length under the threshold: @svc/negotiate leaves it uncoded, so
    // its tag stays strong, on the 200 and on its 304.
    app.get("/small-stream", (_req, res) => {
      res.setHeader("ETag", '"s1"');
      res.setHeader("Content-Type", "text/plain");
      res.setHeader("Content-Length", "4");
      res.write("ab");
      res.end("cd");
    });
    app.use(errorHandler({ logger: { error: () => {} } }));
    server = await listen(app);
  });

  afterAll(() => server.close());

  const gzip = { "accept-encoding": "gzip" };
  const identity = { "accept-encoding": "identity" };

  it.each(["/own", "/stream"])('%s, gzip: the 200 says W/"v7"', async (path) => {
    const res = await raw(`${server.url}${path}`, "GET", gzip);
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe("gzip");
    expect(res.headers.etag).toBe('W/"v7"');
    expect(gunzipSync(res.body).length).toBeGreaterThan(0);
  });

  it.each(["/own", "/stream"])(
    '%s, gzip, If-Match: "v7" → 412 carrying W/"v7", not a 200 saying W/"v7"',
    async (path) => {
      for (const method of ["GET", "HEAD"]) {
        const res = await raw(`${server.url}${path}`, method, { ...gzip, "if-match": '"v7"' });
        expect(res.status).toBe(412);
        expect(res.headers.etag).toBe('W/"v7"');
      }
    },
  );

  it.each(["/own", "/stream"])(
    '%s, gzip, If-Match: W/"v7" → 412 (a weak tag never matches strongly)',
    async (path) => {
      const res = await raw(`${server.url}${path}`, "GET", { ...gzip, "if-match": 'W/"v7"' });
      expect(res.status).toBe(412);
      expect(res.headers.etag).toBe('W/"v7"');
    },
  );

  it.each(["/own", "/stream"])('%s, identity, If-Match: "v7" → 200 with the strong "v7"', async (path) => {
    const res = await raw(`${server.url}${path}`, "GET", { ...identity, "if-match": '"v7"' });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(res.headers.etag).toBe('"v7"');
    const weak = await raw(`${server.url}${path}`, "GET", { ...identity, "if-match": 'W/"v7"' });
    expect(weak.status).toBe(412);
    expect(weak.headers.etag).toBe('"v7"');
  });

  it.each(["/own", "/stream"])(
    '%s, If-None-Match: "v7" or W/"v7" → 304 with the tag of the 200',
    async (path) => {
      for (const [ae, sent] of [
        [gzip, 'W/"v7"'],
        [identity, '"v7"'],
      ] as const) {
        for (const named of ['"v7"', 'W/"v7"']) {
          const res = await raw(`${server.url}${path}`, "GET", { ...ae, "if-none-match": named });
          expect(res.status).toBe(304);
          expect(res.headers.etag).toBe(sent);
        }
      }
    },
  );

  it("a computed tag behaves the same: gzip, If-Match of the identity tag → 412", async () => {
    const tag = jsonTag(JSON.stringify(rows));
    const res = await raw(`${server.url}/computed`, "GET", { ...gzip, "if-match": tag });
    expect(res.status).toBe(412);
    expect(res.headers.etag).toBe(`W/${tag}`);
    expect((await raw(`${server.url}/computed`, "GET", { ...identity, "if-match": tag })).status).toBe(200);
  });

  it("a stream @svc/negotiate leaves uncoded (declared length under the threshold) keeps its strong tag", async () => {
    const res = await raw(`${server.url}/small-stream`, "GET", gzip);
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(res.headers.etag).toBe('"s1"');
    expect((await raw(`${server.url}/small-stream`, "GET", { ...gzip, "if-match": '"s1"' })).status).toBe(
      200,
    );
    const fresh = await raw(`${server.url}/small-stream`, "GET", { ...gzip, "if-none-match": '"s1"' });
    expect(fresh.status).toBe(304);
    expect(fresh.headers.etag).toBe('"s1"');
  });
});

describe("bytes the handler coded itself, without @svc/negotiate", () => {
  it('Content-Encoding: gzip with ETag "v7": the 200 says W/"v7", so If-Match: "v7" → 412', async () => {
    const app = express();
    app.use(conditional());
    app.get("/pre-coded", (_req, res) => {
      res.set({ ETag: '"v7"', "Content-Type": "text/plain", "Content-Encoding": "gzip" });
      res.send(Buffer.from([0x1f, 0x8b]));
    });
    app.use(errorHandler({ logger: { error: () => {} } }));
    const server = await listen(app);
    try {
      const res = await raw(`${server.url}/pre-coded`, "GET", {});
      expect(res.headers.etag).toBe('W/"v7"');
      const ifMatch = await raw(`${server.url}/pre-coded`, "GET", { "if-match": '"v7"' });
      expect(ifMatch.status).toBe(412);
      expect(ifMatch.headers.etag).toBe('W/"v7"');
      const fresh = await raw(`${server.url}/pre-coded`, "GET", { "if-none-match": '"v7"' });
      expect(fresh.status).toBe(304);
      expect(fresh.headers.etag).toBe('W/"v7"');
    } finally {
      await server.close();
    }
  });
});
