import { request } from "node:http";
import { errorHandler } from "@svc/errors/express";
import { express4, express4Version, type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { preconditions } from "./express.js";

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

// The 304s a GET earns through the pipeline are in pipeline.test.ts and pipeline-bodies.test.ts;
// these are preconditions()'s own, written before the handler runs.
function routes(a: App): void {
  const current = () => ({ etag: '"v1"' });
  a.get(
    "/checked",
    (_req, res, next) => {
      res.setHeader("Vary", "Origin");
      res.setHeader("Content-Location", "/checked.json");
      res.setHeader("Content-Type", "application/json");
      res.setHeader("Cache-Control", "no-cache");
      next();
    },
    preconditions({ current }),
    (req, res) => {
      // The tag the 200 carries: weak when a coder in front would code it (RFC 9110 §8.8.3).
      res.setHeader("ETag", req.headers["accept-encoding"] === "gzip" ? 'W/"v1"' : '"v1"');
      res.end(JSON.stringify(big));
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
    beforeAll(async () => {
      const a = make();
      routes(a);
      plain = await listen(a);
    });
    afterAll(async () => {
      await plain.close();
    });

    it("preconditions() on a GET: its 304 keeps the fields already set, drops Content-Type", async () => {
      const { full, notModified } = await revalidate(`${plain.url}/checked`);
      expect(full.headers["cache-control"]).toBe("no-cache");
      expectSameValidatorsAndCacheFields(full, notModified);
    });

    it("preconditions() on a GET whose 200 is coded: its 304 repeats the tag the client holds", async () => {
      for (const ae of ["gzip", "identity"]) {
        const { full, notModified } = await revalidate(`${plain.url}/checked`, {
          "accept-encoding": ae,
        });
        expect(full.headers.etag).toBe(ae === "gzip" ? 'W/"v1"' : '"v1"');
        expectSameValidatorsAndCacheFields(full, notModified);
      }
    });
  });
}
