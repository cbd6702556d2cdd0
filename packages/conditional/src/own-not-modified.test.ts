import type { IncomingMessage, ServerResponse } from "node:http";
import { createNegotiator } from "@svc/negotiate";
import { type Listening, listen, type RawResponse, rawRequest as raw } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conditional } from "./conditional.js";

// RFC 9110 §15.4.5: "The server generating a 304 response MUST generate any of the following
// header fields that would have been sent in a 200 (OK) response to the same request:
// Content-Location, Date, ETag, and Vary; and Cache-Control and Expires", and "SHOULD NOT generate
// representation metadata other than the above listed fields". conditional() made its own 304s
// (and a handler's `res.status(304).end()`) that way, but a handler's own 304 written with
// `res.writeHead(304, headers)` (or sent at a write or flushHeaders) went out as given: the full
// body's Content-Length, its Content-Type, Content-Encoding and Content-Language, and no default
// Cache-Control where the 200 had one.

const body = JSON.stringify({ id: 42, name: "Ada", notes: "x".repeat(1500) });
const TAG = '"v1"';

/** The fields of the 200: representation metadata and the fields §15.4.5 keeps. */
function fields(expires: boolean): Record<string, string> {
  return {
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(body)),
    "Content-Language": "en",
    "Content-Location": "/doc.json",
    ETag: TAG,
    Vary: "Origin",
    ...(expires ? { Expires: "Thu, 01 Jan 2037 00:00:00 GMT" } : {}),
  };
}

/** The ways a handler writes its own 304. */
const WAYS = [
  "writeHead-object",
  "writeHead-array",
  "setHeader-writeHead",
  "status-end",
  "write",
  "flush",
] as const;
type Way = (typeof WAYS)[number];

/**
 * `/<way>[/expires][/coded]`: with `If-None-Match`, the handler's own 304 written `way`; without,
 * the 200 with the same fields (and `/package/...` always the 200, for conditional() to answer).
 */
function handler(
  revalidate: ReturnType<typeof conditional>,
  negotiator: ReturnType<typeof createNegotiator>,
) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const parts = (req.url ?? "/").split("/");
    const way = parts[1] as Way | "package";
    if (parts.includes("coded")) negotiator.negotiate(req, res);
    revalidate(req, res, () => {
      const given = fields(parts.includes("expires"));
      if (way === "package" || req.headers["if-none-match"] === undefined) {
        for (const [name, value] of Object.entries(given)) res.setHeader(name, value);
        res.end(req.method === "HEAD" ? undefined : body);
        return;
      }
      if (way === "writeHead-object") res.writeHead(304, given).end();
      else if (way === "writeHead-array")
        res.writeHead(304, "Not Modified", Object.entries(given).flat()).end();
      else {
        for (const [name, value] of Object.entries(given)) res.setHeader(name, value);
        if (way === "setHeader-writeHead") res.writeHead(304).end();
        else {
          res.statusCode = 304;
          if (way === "write") res.write("");
          else if (way === "flush") res.flushHeaders();
          res.end();
        }
      }
    });
  };
}

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

describe("a handler's own 304 carries what conditional()'s own 304 carries (RFC 9110 §15.4.5)", () => {
  let server: Listening;
  let app: Listening;
  beforeAll(async () => {
    const h = handler(conditional(), createNegotiator({ compression: { threshold: 500 } }));
    server = await listen(h);
    const a = express();
    a.use((req, res) => h(req, res));
    app = await listen(a);
  });
  afterAll(async () => {
    await server.close();
    await app.close();
  });

  const rows = WAYS.flatMap((way) =>
    ["GET", "HEAD"].flatMap((method) =>
      ["", "/expires", "/coded"].map((variant) => ({ way, method, variant })),
    ),
  );

  it.each(rows)(
    "$way, $method, path suffix '$variant': the package's 304, field for field",
    async ({ way, method, variant }) => {
      for (const base of [server.url, app.url]) {
        const headers = { "if-none-match": TAG, "accept-encoding": "gzip" };
        const own = await raw(`${base}/${way}${variant}`, method, headers);
        const reference = await raw(`${base}/package${variant}`, method, headers);
        expect(reference.status).toBe(304);
        expect(own.status).toBe(304);
        expect(own.body.length).toBe(0);
        for (const name of DROPPED) expect([name, own.headers[name]]).toEqual([name, undefined]);
        expect(comparable(own)).toEqual(comparable(reference));
        // What §15.4.5 keeps is there: the 200's fields, and its default policy unless it set Expires.
        expect(own.headers["content-location"]).toBe("/doc.json");
        expect(own.headers.vary).toContain("Origin");
        if (variant === "/coded") {
          expect(own.headers.vary).toContain("Accept-Encoding");
          expect(own.headers.etag).toBe(`W/${TAG}`);
        } else expect(own.headers.etag).toBe(TAG);
        if (variant === "/expires") {
          expect(own.headers.expires).toBe("Thu, 01 Jan 2037 00:00:00 GMT");
          expect(own.headers["cache-control"]).toBeUndefined();
        } else expect(own.headers["cache-control"]).toBe("no-cache");
      }
    },
  );

  it("the 200 of each way still carries its representation metadata", async () => {
    for (const way of WAYS) {
      const full = await raw(`${server.url}/${way}`, "GET", {});
      expect(full.status).toBe(200);
      expect(full.headers["content-type"]).toBe("application/json");
      expect(full.headers["content-length"]).toBe(String(Buffer.byteLength(body)));
      expect(full.headers["content-language"]).toBe("en");
      expect(full.body.toString()).toBe(body);
    }
  });
});
