import { request } from "node:http";
import { gzipSync } from "node:zlib";
import { errorHandler } from "@svc/errors";
import { negotiate } from "@svc/negotiate";
import { express4, express4Version, type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conditional } from "./conditional.js";
import { preconditions } from "./preconditions-middleware.js";

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  length: number;
}

/** A raw request: fetch would decode bodies and hide Content-Encoding details. */
function raw(url: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let length = 0;
      res.on("data", (c: Buffer) => {
        length += c.length;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, length }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The 200 for `headers`, then the same request with `If-None-Match` set to the 200's ETag. */
async function revalidate(url: string, headers: Record<string, string> = {}) {
  const full = await raw(url, headers);
  expect(full.status).toBe(200);
  const notModified = await raw(url, { ...headers, "if-none-match": full.headers.etag as string });
  return { full, notModified };
}

/** RFC 9110 §15.4.5: the fields a 304 MUST carry when the 200 would have sent them. */
const KEPT = ["cache-control", "content-location", "etag", "expires", "vary"] as const;
/** Representation metadata a 304 leaves out. */
const DROPPED = ["content-type", "content-length", "content-encoding", "content-language"] as const;

function expectSameValidatorsAndCacheFields(full: Raw, notModified: Raw): void {
  expect(notModified.status).toBe(304);
  expect(notModified.length).toBe(0);
  for (const name of KEPT) expect([name, notModified.headers[name]]).toEqual([name, full.headers[name]]);
  expect(notModified.headers.date).toBeDefined();
  for (const name of DROPPED) expect([name, notModified.headers[name]]).toEqual([name, undefined]);
}

const big = Array.from({ length: 60 }, (_, i) => ({ id: i, name: "Ada Lovelace" }));

type App = ReturnType<typeof express>;

function routes(a: App): void {
  a.use(conditional());
  a.get("/cached", (_req, res) => {
    res.setHeader("Vary", "Origin");
    res.setHeader("Cache-Control", "public, max-age=60");
    res.setHeader("Content-Location", "/cached.json");
    res.setHeader("Expires", "Thu, 01 Jan 2037 00:00:00 GMT");
    res.json(big);
  });
  a.get("/own-tag", (_req, res) => {
    res.setHeader("ETag", '"v7"');
    res.json(big);
  });
  a.get("/own-tag-end", (_req, res) => {
    res.setHeader("ETag", '"v7"');
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify(big));
  });
  a.get("/precoded", (_req, res) => {
    res.setHeader("Content-Encoding", "gzip");
    res.setHeader("Content-Type", "application/json");
    res.end(gzipSync(JSON.stringify(big)));
  });
  a.get("/precoded-send", (_req, res) => {
    res.setHeader("Content-Encoding", "gzip");
    res.type("json").send(gzipSync(JSON.stringify(big)));
  });
  // Coded by the handler and streamed, with its own tag: the head goes out at the first write.
  a.get("/precoded-stream", (_req, res) => {
    const coded = gzipSync(JSON.stringify(big));
    res.setHeader("ETag", '"v9"');
    res.setHeader("Content-Encoding", "gzip");
    res.setHeader("Content-Type", "application/json");
    res.write(coded.subarray(0, 10));
    res.end(coded.subarray(10));
  });
  const current = () => ({ etag: '"v1"' });
  a.get(
    "/checked",
    (_req, res, next) => {
      res.setHeader("Vary", "Origin");
      res.setHeader("Content-Location", "/checked.json");
      res.setHeader("Content-Type", "application/json");
      next();
    },
    preconditions({ current }),
    (_req, res) => {
      res.setHeader("ETag", '"v1"');
      res.json(big);
    },
  );
  a.use(errorHandler({ logger: { error: () => {} } }));
}

for (const [name, make] of [
  ["Express 5", () => express()],
  [`Express ${express4Version}`, () => express4() as unknown as App],
] as const) {
  describe(`${name}: a 304 carries what the 200 would (RFC 9110 §15.4.5)`, () => {
    let plain: Listening;
    let compressing: Listening;
    beforeAll(async () => {
      const a = make();
      routes(a);
      plain = await listen(a);
      const b = make();
      b.use(negotiate({ compression: { threshold: 500 } }));
      routes(b);
      compressing = await listen(b);
    });
    afterAll(async () => {
      await plain.close();
      await compressing.close();
    });

    it("route sets Vary, Cache-Control, Content-Location, Expires; If-None-Match → 304 keeps them", async () => {
      for (const server of [plain, compressing]) {
        for (const ae of ["gzip", "identity"]) {
          const { full, notModified } = await revalidate(`${server.url}/cached`, { "accept-encoding": ae });
          expect(full.headers.vary).toContain("Origin");
          expectSameValidatorsAndCacheFields(full, notModified);
        }
      }
    });

    it("preconditions() on a GET: its 304 keeps the fields already set, drops Content-Type, gets the default Cache-Control", async () => {
      const { full, notModified } = await revalidate(`${plain.url}/checked`);
      expect(full.headers["cache-control"]).toBe("no-cache");
      expectSameValidatorsAndCacheFields(full, notModified);
    });

    // RFC 9110 §8.8.3, §15.4.5: the 304's ETag is the one the 200 to the same request carries.
    it.each(["/own-tag", "/own-tag-end", "/precoded", "/precoded-send", "/precoded-stream"])(
      "%s with compression, gzip and identity clients → the 304's ETag is the 200's",
      async (path) => {
        for (const server of [plain, compressing]) {
          for (const ae of ["gzip", "identity"]) {
            const { full, notModified } = await revalidate(`${server.url}${path}`, { "accept-encoding": ae });
            expectSameValidatorsAndCacheFields(full, notModified);
          }
        }
      },
    );

    it("preconditions() on a GET with compression: its 304 repeats the tag the client holds", async () => {
      for (const ae of ["gzip", "identity"]) {
        const { full, notModified } = await revalidate(`${compressing.url}/checked`, {
          "accept-encoding": ae,
        });
        expect(full.headers.etag).toBe(ae === "gzip" ? 'W/"v1"' : '"v1"');
        expectSameValidatorsAndCacheFields(full, notModified);
      }
    });

    it("a coded 200 never carries a strong tag (RFC 9110 §8.8.3)", async () => {
      for (const server of [plain, compressing]) {
        for (const path of ["/own-tag", "/precoded", "/precoded-send", "/precoded-stream"]) {
          const full = await raw(`${server.url}${path}`, { "accept-encoding": "gzip" });
          if (full.headers["content-encoding"] !== undefined) expect(full.headers.etag).toMatch(/^W\//);
        }
      }
    });
  });
}
