import { Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { fetchAdapter, toResponse, withPassage } from "../src/fetch.js";
import { createPipeline, type ResponseValue, reply } from "../src/index.js";

// Cloudflare Workers code a Response's body by its Content-Encoding unless it was built with
// `encodeBody: "manual"`; Node ignores the member. What a Response was built with is recorded here
// by a Response that keeps each init it is given.

const json = Buffer.from(JSON.stringify({ items: Array.from({ length: 50 }, (_, id) => ({ id })) }));
const gzipped = gzipSync(json);

function value(fields: ResponseValue["fields"], body: ResponseValue["body"]): ResponseValue {
  return { status: 200, fields, vary: [], body };
}

describe("@svc/kernel/fetch: the init of a Response around coded content", () => {
  const inits: unknown[] = [];
  beforeEach(() => {
    const Native = globalThis.Response;
    class Recording extends Native {
      constructor(body?: ConstructorParameters<typeof Native>[0], init?: ResponseInit) {
        super(body, init);
        inits.push(init);
      }
    }
    vi.stubGlobal("Response", Recording);
    inits.length = 0;
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("Content-Encoding: gzip, whole bytes → built with encodeBody manual, and the Response says so", () => {
    const response = toResponse(value({ "content-encoding": "gzip" }, gzipped), "GET");
    expect(inits).toEqual([expect.objectContaining({ encodeBody: "manual", status: 200 })]);
    expect((response as { encodeBody?: unknown }).encodeBody).toBe("manual");
  });

  it("Content-Encoding: br, a stream → built with encodeBody manual", () => {
    toResponse(value({ "content-encoding": "br" }, Readable.from([gzipped])), "GET");
    expect(inits).toEqual([expect.objectContaining({ encodeBody: "manual" })]);
  });

  it("Content-Encoding: gzip on a HEAD → built with encodeBody manual (the fields only)", () => {
    toResponse(value({ "content-encoding": "gzip" }, gzipped), "HEAD");
    expect(inits).toEqual([expect.objectContaining({ encodeBody: "manual" })]);
  });

  it("no Content-Encoding, or identity → built without encodeBody", () => {
    for (const fields of [{}, { "content-encoding": "identity" }]) {
      inits.length = 0;
      const response = toResponse(value(fields, json), "GET");
      expect(inits).toHaveLength(1);
      expect(inits[0]).not.toHaveProperty("encodeBody");
      expect((response as { encodeBody?: unknown }).encodeBody).toBeUndefined();
    }
  });

  it("new Response(response.body, response), as Hono rebuilds c.res → still encodeBody manual", () => {
    const response = toResponse(value({ "content-encoding": "gzip" }, gzipped), "GET");
    inits.length = 0;
    const rebuilt = new Response(response.body, response);
    expect((inits[0] as { encodeBody?: unknown }).encodeBody).toBe("manual");
    expect(rebuilt.headers.get("content-encoding")).toBe("gzip");
  });

  it("a coded Response whose headers are immutable, given a passage → the copy is built with encodeBody manual", () => {
    const response = toResponse(value({ "content-encoding": "gzip" }, gzipped), "GET");
    Object.defineProperty(response, "headers", { value: Object.freeze(immutable(response.headers)) });
    inits.length = 0;
    const copy = withPassage(response, { fields: { "x-gate": "passed" } });
    expect(copy).not.toBe(response);
    expect(inits).toEqual([expect.objectContaining({ encodeBody: "manual" })]);
    expect((copy as { encodeBody?: unknown }).encodeBody).toBe("manual");
    expect(copy.headers.get("x-gate")).toBe("passed");
  });
});

/** `headers` as a response from `fetch()` has them: every change throws a TypeError. */
function immutable(headers: Headers): Headers {
  const copy = new Headers(headers);
  for (const method of ["set", "append", "delete"] as const)
    Object.defineProperty(copy, method, {
      value: () => {
        throw new TypeError("immutable");
      },
    });
  return copy;
}

describe("@svc/kernel/fetch on Node: encodeBody is ignored", () => {
  let url: string;
  let server: ReturnType<typeof serve>;
  beforeAll(async () => {
    const svc = fetchAdapter(createPipeline());
    const app = new Hono({ getPath: svc.getPath });
    app.use(svc.middleware);
    app.get("/coded", (c) =>
      svc.respond(c.req.raw, () =>
        reply.bytes(gzipped, "application/json", { headers: { "Content-Encoding": "gzip" } }),
      ),
    );
    await new Promise<void>((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
        url = `http://127.0.0.1:${info.port}`;
        resolve();
      });
    });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("GET /coded (a gzip body through the pipeline) → the gzip bytes as they were, decoded once to the JSON", async () => {
    const res = await fetch(`${url}/coded`, { headers: { "Accept-Encoding": "gzip" } });
    expect(res.status).toBe(200);
    // fetch() decodes the gzip once; a body coded twice would still be gzip here.
    expect(Buffer.from(await res.arrayBuffer())).toEqual(json);
  });
});
