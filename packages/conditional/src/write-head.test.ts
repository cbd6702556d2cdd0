import type { IncomingMessage, ServerResponse } from "node:http";
import { request } from "node:http";
import { gunzipSync } from "node:zlib";
import { createNegotiator } from "@svc/negotiate";
import { type Listening, listen, type RawResponse, rawRequest as raw } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conditional } from "./conditional.js";
import { representationTag } from "./validators.js";

/** The tag `conditional()` gives a JSON body (RFC 9110 §8.8.3: labelled by its media type). */
const jsonTag = (body: string | Uint8Array) => representationTag("application/json", undefined, body);

// `res.writeHead(200, headers).end(body)` is how a plain node:http handler answers, and the README
// says conditional() takes plain node:http requests and responses. writeHead sent the head at
// once, so conditional() saw a response already started: no ETag, no default Cache-Control, and a
// 200 where RFC 9110 §13.1.1/§13.1.4 call for a 412 and §13.1.2/§13.1.3 for a 304.

const body = JSON.stringify({ id: 42, name: "Ada", notes: "x".repeat(1500) });
const MODIFIED = "Thu, 01 Jan 2026 00:00:00 GMT";

const revalidate = conditional();
let releaseEvents: () => void = () => {};
const negotiator = createNegotiator({ compression: { threshold: 500 } });

function handler(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? "/").split("?")[0];
  if (path?.startsWith("/coded")) negotiator.negotiate(req, res);
  revalidate(req, res, () => {
    if (path === "/dated") {
      res
        .writeHead(200, { "Content-Type": "application/json", "Last-Modified": MODIFIED })
        .end(req.method === "HEAD" ? undefined : body);
    } else if (path === "/streamed") {
      res.writeHead(200, "OK", ["Content-Type", "text/plain", "ETag", '"s1"']);
      res.write("hello ");
      res.end("world");
    } else if (path === "/events") {
      // A server-sent event stream: the head goes out with flushHeaders, the events much later.
      res.writeHead(200, { "Content-Type": "text/event-stream", ETag: '"e1"' });
      res.flushHeaders();
      void new Promise<void>((resolve) => {
        releaseEvents = resolve;
      }).then(() => res.end("data: 1\n\n"));
    } else if (path === "/missing") {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("no such thing");
    } else {
      res.writeHead(200, { "Content-Type": "application/json" }).end(body);
    }
  });
}

describe("conditional() on a handler that answers with res.writeHead(...).end(body)", () => {
  let node: Listening;
  let app: Listening;
  beforeAll(async () => {
    node = await listen(handler);
    const a = express();
    a.use(conditional());
    a.get("/doc", (_req, res) => void res.writeHead(200, { "Content-Type": "application/json" }).end(body));
    app = await listen(a);
  });
  afterAll(async () => {
    await node.close();
    await app.close();
  });

  it("GET → 200 with the strong ETag of the body and the default Cache-Control", async () => {
    const res = await raw(`${node.url}/doc`, "GET", {});
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe(body);
    expect(res.headers.etag).toBe(jsonTag(body));
    expect(res.headers["cache-control"]).toBe("no-cache");
    expect(res.headers["content-type"]).toBe("application/json");
  });

  it("If-None-Match: the body's tag → 304 without the representation's headers", async () => {
    const res = await raw(`${node.url}/doc`, "GET", { "if-none-match": jsonTag(body) });
    expect(res.status).toBe(304);
    expect(res.body.length).toBe(0);
    expect(res.headers.etag).toBe(jsonTag(body));
    expect(res.headers["content-type"]).toBeUndefined();
  });

  it('If-Match: "other" → 412 with the current ETag, not the 200', async () => {
    const res = await raw(`${node.url}/doc`, "GET", { "if-match": '"other"' });
    expect(res.status).toBe(412);
    expect(res.headers.etag).toBe(jsonTag(body));
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(JSON.parse(res.body.toString())).toMatchObject({ status: 412 });
  });

  it("If-Modified-Since: at the Last-Modified given to writeHead → 304, on GET and HEAD", async () => {
    expect((await raw(`${node.url}/dated`, "GET", { "if-modified-since": MODIFIED })).status).toBe(304);
    expect((await raw(`${node.url}/dated`, "HEAD", { "if-modified-since": MODIFIED })).status).toBe(304);
    const earlier = "Wed, 31 Dec 2025 00:00:00 GMT";
    expect((await raw(`${node.url}/dated`, "GET", { "if-unmodified-since": earlier })).status).toBe(412);
  });

  it("writeHead with a reason phrase and a raw header array, then writes: the handler's tag revalidates", async () => {
    const full = await raw(`${node.url}/streamed`, "GET", {});
    expect(full.status).toBe(200);
    expect(full.body.toString()).toBe("hello world");
    expect(full.headers.etag).toBe('"s1"');
    expect((await raw(`${node.url}/streamed`, "GET", { "if-none-match": '"s1"' })).status).toBe(304);
    expect((await raw(`${node.url}/streamed`, "GET", { "if-match": '"s2"' })).status).toBe(412);
  });

  it("with the negotiate core compressing: the weak form of the tag, gzip bytes of the body", async () => {
    const res = await raw(`${node.url}/coded`, "GET", { "accept-encoding": "gzip" });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(res.body).toString()).toBe(body);
    expect(res.headers.etag).toBe(`W/${jsonTag(body)}`);
    const again = await raw(`${node.url}/coded`, "GET", {
      "accept-encoding": "gzip",
      "if-none-match": res.headers.etag as string,
    });
    expect(again.status).toBe(304);
  });

  it("writeHead then flushHeaders: the head goes out before the first event; If-None-Match → 304", async () => {
    const res = await new Promise<RawResponse>((resolve, reject) => {
      const req = request(`${node.url}/events`, (r) => {
        // Only a head that went out lets the handler send its event.
        releaseEvents();
        const chunks: Buffer[] = [];
        r.on("data", (c: Buffer) => chunks.push(c));
        r.on("end", () =>
          resolve({ status: r.statusCode ?? 0, headers: r.headers, body: Buffer.concat(chunks) }),
        );
      });
      req.on("error", reject);
      req.end();
    });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe("data: 1\n\n");
    expect(res.headers.etag).toBe('"e1"');
    const current = await raw(`${node.url}/events`, "GET", { "if-none-match": '"e1"' });
    expect(current.status).toBe(304);
  }, 3000);

  it("a 404 written with writeHead is left alone", async () => {
    const res = await raw(`${node.url}/missing`, "GET", { "if-match": '"other"' });
    expect(res.status).toBe(404);
    expect(res.body.toString()).toBe("no such thing");
    expect(res.headers.etag).toBeUndefined();
  });

  it("an Express handler calling res.writeHead gets the same: tag, 304, 412", async () => {
    const res = await raw(`${app.url}/doc`, "GET", {});
    expect(res.headers.etag).toBe(jsonTag(body));
    expect((await raw(`${app.url}/doc`, "GET", { "if-none-match": jsonTag(body) })).status).toBe(304);
    expect((await raw(`${app.url}/doc`, "GET", { "if-match": '"other"' })).status).toBe(412);
  });
});

// Node sends a flat header array as given, a name twice as two field lines (two cookies). For a
// 2xx to a GET/HEAD, whose head conditional() holds back until the body, the array was set with
// setHeader, each name replacing the one before: `Set-Cookie: a=1` was lost.
describe("writeHead(200, [..., Set-Cookie, a=1, Set-Cookie, b=2]) on a GET or HEAD", () => {
  it.each(["GET", "HEAD"])("%s → both cookies, the body's tag and its 304", async (method) => {
    const revalidate = conditional();
    const server = await listen((req, res) =>
      revalidate(req, res, () => {
        res
          .writeHead(200, ["Content-Type", "application/json", "Set-Cookie", "a=1", "Set-Cookie", "b=2"])
          .end(req.method === "HEAD" ? undefined : body);
      }),
    );
    try {
      const res = await raw(server.url, method, {});
      expect(res.status).toBe(200);
      expect(res.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
      expect(res.headers["content-type"]).toBe("application/json");
      if (method === "GET") {
        expect(res.headers.etag).toBe(jsonTag(body));
        const again = await raw(server.url, method, { "if-none-match": jsonTag(body) });
        expect(again.status).toBe(304);
        expect(again.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
      }
    } finally {
      await server.close();
    }
  });
});
