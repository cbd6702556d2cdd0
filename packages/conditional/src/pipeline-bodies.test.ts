import { createReadStream, mkdtempSync, type ReadStream, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { gunzipSync, gzipSync } from "node:zlib";
import { errorHandler } from "@svc/errors/express";
import { createPipeline, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { compression } from "@svc/negotiate";
import { type Listening, listen, type RawResponse, rawRequest as raw } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluateIfRange, representationTag, validators } from "./index.js";

// Streamed, coded and ranged bodies, a reply's own ETag and its own 304, through the pipeline and a
// listening Express server (Express 4 in the "@svc/conditional (express 4)" project).

const quiet = { logger: { error: () => {} } };
const jsonTag = (body: string | Uint8Array) => representationTag("application/json", undefined, body);
const chunks = (...parts: (string | Uint8Array)[]) =>
  Readable.from(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));
const gzip = { "accept-encoding": "gzip" };
const identity = { "accept-encoding": "identity" };

describe("a reply's strong ETag on a coded response: preconditions compare the tag sent", () => {
  const rows = Array.from({ length: 60 }, (_, i) => ({ id: i, name: "Ada Lovelace" }));
  const csv = rows.map((r) => `${r.id},${r.name}\n`).join("");
  let server: Listening;

  beforeAll(async () => {
    const svc = expressAdapter(
      createPipeline({ validators: validators(), coding: compression({ threshold: 500 }) }),
    );
    const app = express();
    app.get(
      "/own",
      svc.handle(() => reply(rows, { headers: { ETag: '"v7"' } })),
    );
    app.get(
      "/computed",
      svc.handle(() => rows),
    );
    // Streamed, no length: coded for a gzip client.
    app.get(
      "/stream",
      svc.handle(() => {
        const half = csv.length >> 1;
        return reply.bytes(chunks(csv.slice(0, half), csv.slice(half)), "text/csv; charset=utf-8", {
          headers: { ETag: '"v7"' },
        });
      }),
    );
    // Under the threshold: left uncoded, so its tag stays strong, on the 200 and on its 304.
    app.get(
      "/small",
      svc.handle(() => reply.bytes("abcd", "text/plain", { headers: { ETag: '"s1"' } })),
    );
    app.use(errorHandler(quiet));
    server = await listen(app);
  });
  afterAll(() => server.close());

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

  it("a body left uncoded (under the threshold) keeps its strong tag", async () => {
    const res = await raw(`${server.url}/small`, "GET", gzip);
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(res.headers.etag).toBe('"s1"');
    expect((await raw(`${server.url}/small`, "GET", { ...gzip, "if-match": '"s1"' })).status).toBe(200);
    const fresh = await raw(`${server.url}/small`, "GET", { ...gzip, "if-none-match": '"s1"' });
    expect(fresh.status).toBe(304);
    expect(fresh.headers.etag).toBe('"s1"');
  });
});

describe("bytes the reply coded itself (its own Content-Encoding)", () => {
  const big = Array.from({ length: 60 }, (_, i) => ({ id: i, name: "Ada Lovelace" }));
  let plain: Listening;
  let compressing: Listening;
  beforeAll(async () => {
    const routes = (withCoding: boolean) => {
      const svc = expressAdapter(
        createPipeline({
          validators: validators(),
          ...(withCoding ? { coding: compression({ threshold: 500 }) } : {}),
        }),
      );
      const a = express();
      a.get(
        "/pre-coded",
        svc.handle(() =>
          reply.bytes(Buffer.from([0x1f, 0x8b]), "text/plain", {
            headers: { ETag: '"v7"', "Content-Encoding": "gzip" },
          }),
        ),
      );
      a.get(
        "/precoded",
        svc.handle(() =>
          reply.bytes(gzipSync(JSON.stringify(big)), "application/json", {
            headers: { "Content-Encoding": "gzip" },
          }),
        ),
      );
      a.get(
        "/precoded-stream",
        svc.handle(() => {
          const coded = gzipSync(JSON.stringify(big));
          return reply.bytes(chunks(coded.subarray(0, 10), coded.subarray(10)), "application/json", {
            headers: { ETag: '"v9"', "Content-Encoding": "gzip" },
          });
        }),
      );
      a.use(errorHandler(quiet));
      return listen(a);
    };
    plain = await routes(false);
    compressing = await routes(true);
  });
  afterAll(async () => {
    await plain.close();
    await compressing.close();
  });

  it('Content-Encoding: gzip with ETag "v7": the 200 says W/"v7", so If-Match: "v7" → 412', async () => {
    for (const server of [plain, compressing]) {
      const res = await raw(`${server.url}/pre-coded`, "GET", {});
      expect(res.headers.etag).toBe('W/"v7"');
      const ifMatch = await raw(`${server.url}/pre-coded`, "GET", { "if-match": '"v7"' });
      expect(ifMatch.status).toBe(412);
      expect(ifMatch.headers.etag).toBe('W/"v7"');
      const fresh = await raw(`${server.url}/pre-coded`, "GET", { "if-none-match": '"v7"' });
      expect(fresh.status).toBe(304);
      expect(fresh.headers.etag).toBe('W/"v7"');
    }
  });

  // RFC 9110 §8.8.3, §15.4.5: the 304's ETag is the one the 200 to the same request carries.
  it.each(["/precoded", "/precoded-stream"])(
    "%s, gzip and identity clients → coded once, a weak tag, and the 304's ETag is the 200's",
    async (path) => {
      for (const server of [plain, compressing]) {
        for (const ae of ["gzip", "identity"]) {
          const full = await raw(`${server.url}${path}`, "GET", { "accept-encoding": ae });
          expect(full.headers["content-encoding"]).toBe("gzip");
          expect(JSON.parse(gunzipSync(full.body).toString())).toEqual(big);
          expect(full.headers.etag).toMatch(/^W\//);
          const notModified = await raw(`${server.url}${path}`, "GET", {
            "accept-encoding": ae,
            "if-none-match": full.headers.etag as string,
          });
          expect(notModified.status).toBe(304);
          expect(notModified.headers.etag).toBe(full.headers.etag);
          for (const name of ["content-type", "content-length", "content-encoding", "content-language"])
            expect([name, notModified.headers[name]]).toEqual([name, undefined]);
        }
      }
    },
  );
});

describe("streamed replies", () => {
  let server: Listening;
  let dir: string;
  const files: ReadStream[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-conditional-"));
    writeFileSync(join(dir, "big.txt"), "y".repeat(1 << 20));
    const svc = expressAdapter(
      createPipeline({ validators: validators(), coding: compression({ threshold: 500 }) }),
    );
    const app = express();
    app.get(
      "/written",
      svc.handle(() =>
        reply.bytes(chunks("hello ", "wor", "ld"), "text/plain", { headers: { ETag: '"v1"' } }),
      ),
    );
    app.get(
      "/piped",
      svc.handle(() =>
        reply.bytes(chunks("hello ", "world"), "text/plain", {
          headers: { ETag: '"v1"' },
          lastModified: new Date("Thu, 01 Jan 2026 00:00:00 GMT"),
        }),
      ),
    );
    // A file: a 304 or 412 in its place must not leave it open.
    app.get(
      "/file",
      svc.handle(() => {
        const file = createReadStream(join(dir, "big.txt"));
        files.push(file);
        return reply.bytes(file, "text/plain", { headers: { ETag: '"f1"' } });
      }),
    );
    app.use(errorHandler(quiet));
    server = await listen(app);
  });

  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ETag "v1", If-None-Match: "v1" → 304 without a body', async () => {
    const res = await fetch(`${server.url}/written`, {
      headers: { "If-None-Match": '"v1"', "Accept-Encoding": "identity" },
    });
    expect(res.status).toBe(304);
    expect(await res.text()).toBe("");
    expect(res.headers.get("etag")).toBe('"v1"');
    expect(res.headers.get("content-type")).toBeNull();
  });

  it('ETag "v1", If-Match: "v2" → 412 error record with the current ETag', async () => {
    const res = await fetch(`${server.url}/written`, {
      headers: { "If-Match": '"v2"', "Accept-Encoding": "identity" },
    });
    expect(res.status).toBe(412);
    expect(res.headers.get("etag")).toBe('"v1"');
    expect(((await res.json()) as { status: number }).status).toBe(412);
    // For a gzip client the streamed 200 would be coded and say W/"v1" (RFC 9110 §8.8.3): the 412
    // carries that tag, the one its preconditions were compared with.
    const coded = await fetch(`${server.url}/written`, {
      headers: { "If-Match": '"v2"', "Accept-Encoding": "gzip" },
    });
    expect(coded.status).toBe(412);
    expect(coded.headers.get("etag")).toBe('W/"v1"');
  });

  it('ETag "v1", If-None-Match: W/"v1" (the compressed 200\'s tag) → 304 with W/"v1"', async () => {
    const res = await fetch(`${server.url}/piped`, {
      headers: { "If-None-Match": 'W/"v1"', "Accept-Encoding": "gzip" },
    });
    expect(res.status).toBe(304);
    expect(res.headers.get("etag")).toBe('W/"v1"');
    expect(res.headers.get("vary")).toContain("Accept-Encoding");
  });

  it("If-Unmodified-Since before its Last-Modified → 412", async () => {
    const res = await fetch(`${server.url}/piped`, {
      headers: { "If-Unmodified-Since": "Wed, 31 Dec 2025 00:00:00 GMT" },
    });
    expect(res.status).toBe(412);
  });

  it("without preconditions → 200 with the body", async () => {
    const res = await fetch(`${server.url}/piped`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("hello world");
  });

  // A 304 is every client's routine answer (RFC 9110 §13.1.2): a file left open per revalidation
  // runs the process out of descriptors (EMFILE).
  it.each([
    ['If-None-Match: "f1"', 304, { "If-None-Match": '"f1"' }],
    ['If-Match: "f2"', 412, { "If-Match": '"f2"' }],
  ] as const)(
    "a file, %s → %i, and the file is closed",
    async (_name, status, headers) => {
      files.length = 0;
      const res = await fetch(`${server.url}/file`, { headers });
      expect(res.status).toBe(status);
      await res.arrayBuffer();
      const file = files[0] as ReadStream;
      if (!file.closed) await new Promise<void>((resolve) => file.once("close", () => resolve()));
      expect(file.closed).toBe(true);
    },
    10_000,
  );

  it("a file without preconditions → 200 with the whole file", async () => {
    const res = await fetch(`${server.url}/file`, { headers: { "Accept-Encoding": "identity" } });
    expect(res.status).toBe(200);
    expect((await res.text()).length).toBe(1 << 20);
  });
});

// RFC 9110 §13.1.5 and §13.2.2 step 5: a GET with Range and If-Range gets the range only when the
// If-Range condition holds; a handler that serves ranges asks evaluateIfRange, on the validators it
// sends, after the pipeline's other preconditions (a 412 or 304 still comes first).
describe("If-Range in a handler that serves ranges", () => {
  const CONTENT = "0123456789abcdefghij";
  const PAST = new Date("2020-01-01T00:00:00Z");
  const FUTURE = new Date("2099-01-01T00:00:00Z");
  const lm = PAST.toUTCString();
  const range = "bytes=0-3";
  let server: Listening;

  beforeAll(async () => {
    const svc = expressAdapter(createPipeline({ validators: validators() }));
    const app = express();
    const serve = (etag: string, lastModified: Date) =>
      svc.handle((req: express.Request) => {
        const headers = { ETag: etag, "Accept-Ranges": "bytes" };
        const ifRange = req.headers["if-range"];
        const ranged = req.headers.range === range && evaluateIfRange(ifRange, { etag, lastModified });
        if (!ranged) return reply.bytes(CONTENT, "text/plain", { headers, lastModified });
        return reply.bytes(CONTENT.slice(0, 4), "text/plain", {
          status: 206,
          headers: { ...headers, "Content-Range": `bytes 0-3/${CONTENT.length}` },
          lastModified,
        });
      });
    app.get("/strong.txt", serve('"s1"', PAST));
    app.get("/weak.txt", serve('W/"w1"', PAST));
    app.get("/future.txt", serve('"s1"', FUTURE));
    app.use(errorHandler(quiet));
    server = await listen(app);
  });
  afterAll(() => server.close());

  const expectRange = (res: RawResponse, status: number) => {
    expect(res.status).toBe(status);
    expect(res.body.toString()).toBe(status === 206 ? "0123" : CONTENT);
    expect(res.headers["content-range"]).toBe(status === 206 ? `bytes 0-3/${CONTENT.length}` : undefined);
  };

  it("a weak ETag never satisfies If-Range → 200, whole", async () => {
    for (const ifRange of ['W/"w1"', 'w/"w1"', 'W/"w1", W/"w1"']) {
      expectRange(await raw(`${server.url}/weak.txt`, "GET", { range, "if-range": ifRange }), 200);
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
    [lm, 206],
    // The same instant in the obsolete formats (§5.6.7): an HTTP-date all the same.
    ["Wednesday, 01-Jan-20 00:00:00 GMT", 206],
    ["Wed Jan  1 00:00:00 2020", 206],
    // "the If-Range comparison is by exact match, including when the validator is an HTTP-date".
    ["Wed, 01 Jan 2020 00:00:01 GMT", 200],
    ["Thu, 01 Jan 2025 00:00:00 GMT", 200],
    ["Tue, 31 Dec 2019 23:59:59 GMT", 200],
    ["Sun, 30 Feb 2020 00:00:00 GMT", 200],
    ["Wed, 01 Jan 2020 24:00:00 GMT", 200],
    ["2020-01-01T00:00:00Z", 200],
    [`${lm}, ${lm}`, 200],
  ])('ETag "s1", Last-Modified 2020-01-01: If-Range: %j → %i', async (ifRange, status) => {
    const res = await raw(`${server.url}/strong.txt`, "GET", { range, "if-range": ifRange });
    expect(res.headers.etag).toBe('"s1"');
    expect(res.headers["last-modified"]).toBe(lm);
    expectRange(res, status);
  });

  it("a Last-Modified not at least a second before the Date is no strong validator (§8.8.2.2) → 200", async () => {
    const res = await raw(`${server.url}/future.txt`, "GET", { range, "if-range": FUTURE.toUTCString() });
    expectRange(res, 200);
  });

  it("two If-Range field lines, each the current tag, are no entity-tag → 200", async () => {
    expectRange(await raw(`${server.url}/strong.txt`, "GET", { range, "if-range": ['"s1"', '"s1"'] }), 200);
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

  it("Range without If-Range gets its 206", async () => {
    expectRange(await raw(`${server.url}/strong.txt`, "GET", { range }), 206);
  });

  it("steps 1 to 4 still come first: a false If-Match is a 412, a current If-None-Match a 304", async () => {
    const failed = await raw(`${server.url}/strong.txt`, "GET", {
      range,
      "if-range": '"s1"',
      "if-match": '"s0"',
    });
    expect(failed.status).toBe(412);
    const current = await raw(`${server.url}/strong.txt`, "GET", {
      range,
      "if-range": '"s1"',
      "if-none-match": '"s1"',
    });
    expect([current.status, current.body.length]).toEqual([304, 0]);
  });
});

// RFC 9110 §15.4.5: "The server generating a 304 response MUST generate any of the following
// header fields that would have been sent in a 200 (OK) response to the same request:
// Content-Location, Date, ETag, and Vary; and Cache-Control and Expires", and "SHOULD NOT generate
// representation metadata other than the above listed fields".
describe("a reply's own 304 carries what the pipeline's own 304 carries", () => {
  const body = JSON.stringify({ id: 42, name: "Ada", notes: "x".repeat(1500) });
  const TAG = '"v1"';
  const fields = (expires: boolean): Record<string, string> => ({
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(body)),
    "Content-Language": "en",
    "Content-Location": "/doc.json",
    ETag: TAG,
    Vary: "Origin",
    ...(expires ? { Expires: "Thu, 01 Jan 2037 00:00:00 GMT" } : {}),
  });
  let server: Listening;
  beforeAll(async () => {
    const svc = expressAdapter(createPipeline({ validators: validators() }));
    const app = express();
    // `/own[/expires]`: with If-None-Match, the reply's own 304; `/package[/expires]`: always the
    // 200, for the pipeline to answer.
    const route = svc.handle((req: express.Request) => {
      const given = fields(req.params.expires === "expires");
      if (req.params.way === "package" || req.headers["if-none-match"] === undefined)
        return reply.bytes(body, "application/json", { headers: given });
      return reply.bytes(body, "application/json", { status: 304, headers: given });
    });
    // Two routes, not "/:way{/:expires}", which Express 4 does not read.
    app.all("/:way", route);
    app.all("/:way/:expires", route);
    server = await listen(app);
  });
  afterAll(() => server.close());

  /** The header fields of a response, without those of the connection and Date (a clock's). */
  function comparable(res: RawResponse): Record<string, unknown> {
    const { date, connection, "keep-alive": _k, ...rest } = res.headers;
    expect(date).toBeDefined();
    return rest;
  }
  const DROPPED = [
    "content-type",
    "content-length",
    "content-encoding",
    "content-language",
    "transfer-encoding",
  ];

  it.each(["GET", "HEAD"].flatMap((method) => ["", "/expires"].map((variant) => ({ method, variant }))))(
    "$method, path suffix '$variant': the pipeline's 304, field for field",
    async ({ method, variant }) => {
      const headers = { "if-none-match": TAG };
      const own = await raw(`${server.url}/own${variant}`, method, headers);
      const reference = await raw(`${server.url}/package${variant}`, method, headers);
      expect(reference.status).toBe(304);
      expect(own.status).toBe(304);
      expect(own.body.length).toBe(0);
      for (const name of DROPPED) expect([name, own.headers[name]]).toEqual([name, undefined]);
      expect(comparable(own)).toEqual(comparable(reference));
      expect(own.headers["content-location"]).toBe("/doc.json");
      expect(own.headers.vary).toContain("Origin");
      expect(own.headers.etag).toBe(TAG);
      if (variant === "/expires") {
        expect(own.headers.expires).toBe("Thu, 01 Jan 2037 00:00:00 GMT");
        expect(own.headers["cache-control"]).toBeUndefined();
      } else expect(own.headers["cache-control"]).toBe("no-cache");
    },
  );

  it("the 200 still carries its representation metadata", async () => {
    const full = await raw(`${server.url}/own`, "GET", {});
    expect(full.status).toBe(200);
    expect(full.headers["content-type"]).toBe("application/json");
    expect(full.headers["content-length"]).toBe(String(Buffer.byteLength(body)));
    expect(full.headers["content-language"]).toBe("en");
    expect(full.body.toString()).toBe(body);
  });

  // A 304 answers "a conditional GET or HEAD request" (§15.4.5); to another method it is the
  // reply's mistake, its status and tag left as given, but it has no content (RFC 9112 §6.3) and
  // no representation metadata, and the connection stays in step.
  it.each(["POST", "PUT", "PATCH", "DELETE"])(
    "%s, a reply's own 304: no representation metadata, ETag as set, no default Cache-Control",
    async (method) => {
      const res = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
        (resolve, reject) => {
          const req = request(
            `${server.url}/own`,
            { method, headers: { "accept-encoding": "gzip", "if-none-match": TAG } },
            (r) => {
              let text = "";
              r.setEncoding("latin1");
              r.on("data", (d: string) => (text += d));
              r.on("end", () => resolve({ status: r.statusCode ?? 0, headers: r.headers, body: text }));
            },
          );
          req.on("error", reject);
          req.end();
        },
      );
      expect(res.status).toBe(304);
      expect(res.body).toBe("");
      expect({
        length: res.headers["content-length"],
        type: res.headers["content-type"],
        encoding: res.headers["content-encoding"],
        language: res.headers["content-language"],
        transfer: res.headers["transfer-encoding"],
      }).toEqual({});
      expect(res.headers.etag).toBe(TAG);
      expect(res.headers["cache-control"]).toBeUndefined();
      expect(res.headers["content-location"]).toBe("/doc.json");
      const next = await raw(`${server.url}/package`, "GET", identity);
      expect([next.status, next.body.toString()]).toEqual([200, body]);
    },
  );
});

// RFC 9110 §8.8.3: entity-tag = [ weak ] opaque-tag, opaque-tag = DQUOTE *etagc DQUOTE. A reply's
// `ETag: abc` is no validator: it is dropped, with one warning (SVC_CONDITIONAL_INVALID_ETAG), and
// a body with bytes is tagged from them (RFC 9110 §5.5).
describe("a reply's ETag that is no entity-tag", () => {
  const INVALID = ["abc", "7", '"a b"', "W/abc", 'w/"abc"', '"abc', '"a"b"', '"a", "b"'];
  const body = { id: 42, name: "Ada" };
  const tagOfBody = jsonTag(JSON.stringify(body));
  const big = Array.from({ length: 60 }, (_, i) => ({ ...body, id: i }));
  const warnings: { code: string | undefined; message: string }[] = [];
  const onWarning = (w: Error & { code?: string }) => {
    if (w.code?.startsWith("SVC_CONDITIONAL")) warnings.push({ code: w.code, message: w.message });
  };
  let server: Listening;

  beforeAll(async () => {
    process.on("warning", onWarning);
    const svc = expressAdapter(
      createPipeline({ validators: validators(), coding: compression({ threshold: 500 }) }),
    );
    const app = express();
    const tag = (req: express.Request) => String(req.query.tag);
    app.get(
      "/json",
      svc.handle((req: express.Request) => reply(body, { headers: { ETag: tag(req) } })),
    );
    app.get(
      "/big",
      svc.handle((req: express.Request) => reply(big, { headers: { ETag: tag(req) } })),
    );
    app.get(
      "/stream",
      svc.handle((req: express.Request) =>
        reply.bytes(chunks("a", "b"), "text/plain", { headers: { ETag: tag(req) } }),
      ),
    );
    app.get(
      "/weak",
      svc.handle(() => reply(body, { headers: { ETag: 'W/"v7"' } })),
    );
    app.all(
      "/status/:status",
      svc.handle((req: express.Request) =>
        reply.empty({
          status: Number(req.params.status),
          headers: { ETag: tag(req), Location: "/things/1" },
        }),
      ),
    );
    app.use(errorHandler(quiet));
    server = await listen(app);
  });
  afterAll(async () => {
    process.off("warning", onWarning);
    await server.close();
  });

  const url = (path: string, tag: string) => `${server.url}${path}?tag=${encodeURIComponent(tag)}`;

  it.each(INVALID)("ETag %s → not sent; the body gets its strong tag instead", async (tag) => {
    const res = await raw(url("/json", tag), "GET", identity);
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe(tagOfBody);
    const head = await raw(url("/json", tag), "HEAD", identity);
    expect(head.headers.etag).toBe(tagOfBody);
  });

  it.each(INVALID)("ETag %s → revalidation and If-Match work on the tag sent", async (tag) => {
    const fresh = await raw(url("/json", tag), "GET", { ...identity, "if-none-match": tagOfBody });
    expect(fresh.status).toBe(304);
    expect(fresh.headers.etag).toBe(tagOfBody);
    for (const named of ["abc", '"abc"']) {
      const stale = await raw(url("/json", tag), "GET", { ...identity, "if-none-match": named });
      expect(stale.status).toBe(200);
      // A 412 carries the tag a retry can pass (RFC 9110 §13.1.1), not the invalid one.
      const failed = await raw(url("/json", tag), "GET", { ...identity, "if-match": named });
      expect(failed.status).toBe(412);
      expect(failed.headers.etag).toBe(tagOfBody);
    }
    const passed = await raw(url("/json", tag), "GET", { ...identity, "if-match": tagOfBody });
    expect(passed.status).toBe(200);
  });

  it("a coded response gets the weak form of the computed tag, and its 304 too", async () => {
    const tag = jsonTag(JSON.stringify(big));
    const gz = await raw(url("/big", "abc"), "GET", gzip);
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gz.headers.etag).toBe(`W/${tag}`);
    const fresh = await raw(url("/big", "abc"), "GET", { ...gzip, "if-none-match": `W/${tag}` });
    expect(fresh.status).toBe(304);
    expect(fresh.headers.etag).toBe(`W/${tag}`);
    // Small, under the 500-byte threshold: uncoded, strong.
    expect((await raw(url("/json", "abc"), "GET", gzip)).headers.etag).toBe(tagOfBody);
  });

  it("a valid weak tag of the reply is kept", async () => {
    const res = await raw(`${server.url}/weak`, "GET", {});
    expect(res.headers.etag).toBe('W/"v7"');
    expect((await raw(`${server.url}/weak`, "GET", { "if-none-match": '"v7"' })).status).toBe(304);
  });

  it("a streamed body: the invalid tag is not sent, and no tag stands in for it", async () => {
    const res = await raw(url("/stream", "abc"), "GET", identity);
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe("ab");
    expect(res.headers.etag).toBeUndefined();
    const again = await raw(url("/stream", "abc"), "GET", { ...identity, "if-none-match": "abc" });
    expect(again.status).toBe(200);
    const ifMatch = await raw(url("/stream", "abc"), "GET", { ...identity, "if-match": "abc" });
    expect(ifMatch.status).toBe(412);
    expect(ifMatch.headers.etag).toBeUndefined();
  });

  const STATUSES = [
    ["GET", 404],
    ["HEAD", 404],
    ["GET", 304],
    ["POST", 201],
    ["PUT", 200],
    ["PATCH", 200],
    ["DELETE", 204],
    ["POST", 303],
  ] as const;
  const BAD = ["abc", "7", '"a b"', "W/abc", 'w/"abc"', '"a", "b"'];
  const VALID = ['"v7"', 'W/"v7"', '""', '"a,b"', '"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk"'];

  it.each(STATUSES)(
    "%s → a reply of status %d with an ETag that is no entity-tag → not sent",
    async (method, status) => {
      for (const tag of BAD) {
        const res = await raw(url(`/status/${status}`, tag), method, {});
        expect(res.status, tag).toBe(status);
        expect(res.headers.etag, tag).toBeUndefined();
        // Only the ETag goes; the rest of the reply's fields are its own.
        expect(res.headers.location, tag).toBe("/things/1");
      }
    },
  );

  it.each(STATUSES)(
    "%s → a reply of status %d with a valid ETag → sent exactly as given",
    async (method, status) => {
      for (const tag of VALID) {
        const res = await raw(url(`/status/${status}`, tag), method, {});
        expect(res.status, tag).toBe(status);
        expect(res.headers.etag, tag).toBe(tag);
        expect(res.headers.location, tag).toBe("/things/1");
      }
    },
  );

  it("warns once per validators(), with the stable code SVC_CONDITIONAL_INVALID_ETAG, naming the value", () => {
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.code).toBe("SVC_CONDITIONAL_INVALID_ETAG");
    expect(warnings[0]?.message).toMatch(/is not an entity-tag/);
    expect(warnings[0]?.message).toMatch(/RFC 9110 §8\.8\.3/);
  });
});

describe("a redirect with a field given twice", () => {
  it("POST → reply of 303 with two Set-Cookie lines → both cookies, and its ETag", async () => {
    const svc = expressAdapter(createPipeline({ validators: validators() }));
    const app = express();
    app.post(
      "/",
      svc.handle(() =>
        reply.empty({ status: 303, headers: { Location: "/", "Set-Cookie": ["a=1", "b=2"], ETag: '"v1"' } }),
      ),
    );
    const server = await listen(app);
    try {
      const res = await raw(`${server.url}/`, "POST", {});
      expect(res.status).toBe(303);
      expect(res.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
      expect(res.headers.etag).toBe('"v1"');
    } finally {
      await server.close();
    }
  });
});
