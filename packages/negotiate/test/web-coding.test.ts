import { pipeline as streamPipeline } from "node:stream";
import * as zlibModule from "node:zlib";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import type { Listening } from "@svc/test-utils";
import { send } from "@svc/test-utils/conformance";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webEncoder, zlibEncoder } from "../src/coder.js";
import { codingApp, items, json } from "./coding-app.js";

// Content coding on a Fetch server where node:zlib is not there (workerd without nodejs_compat, a
// browser): gzip and deflate through CompressionStream, and br never claimed. The same Hono app
// with node:zlib's encoder is the control: there br is chosen.

async function app(encoder: "web" | "zlib"): Promise<Listening> {
  return codingApp((level) =>
    encoder === "web"
      ? webEncoder()
      : zlibEncoder({ zlib: zlibModule, stream: { pipeline: streamPipeline } }, level),
  );
}

const decode: Record<string, (bytes: Buffer) => Buffer> = {
  gzip: gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

let web: Listening;
let zlib: Listening;
beforeAll(async () => {
  [web, zlib] = await Promise.all([app("web"), app("zlib")]);
});
afterAll(async () => {
  await Promise.all([web.close(), zlib.close()]);
});

describe("Fetch server, CompressionStream coding (no node:zlib)", () => {
  it.each([
    ["gzip", "gzip"],
    ["deflate", "deflate"],
    ["br, gzip", "gzip"],
    ["br;q=1, gzip;q=0.5", "gzip"],
    ["br, deflate;q=0.1", "deflate"],
    ["*", "gzip"],
  ])("Accept-Encoding: %s → %s, decodes to the JSON", async (accept, coding) => {
    const res = await send(web.url, { path: "/items", headers: { "accept-encoding": accept } });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe(coding);
    expect(res.headers.vary).toContain("Accept-Encoding");
    expect(Number(res.headers["content-length"])).toBe(res.body.byteLength);
    expect(JSON.parse((decode[coding] as (b: Buffer) => Buffer)(res.body).toString("utf8"))).toEqual(items);
  });

  it("Accept-Encoding: br → identity (br is never claimed)", async () => {
    const res = await send(web.url, { path: "/items", headers: { "accept-encoding": "br" } });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(res.body.toString("utf8"))).toEqual(items);
  });

  it("Accept-Encoding: br, identity;q=0 → 406 naming gzip and deflate", async () => {
    const res = await send(web.url, { path: "/items", headers: { "accept-encoding": "br, identity;q=0" } });
    expect(res.status).toBe(406);
    expect(res.body.toString("utf8")).toContain("gzip, deflate, identity");
    expect(res.body.toString("utf8")).not.toContain("br");
  });

  it("HEAD with Accept-Encoding: gzip → the GET's coding, no content", async () => {
    const head = await send(web.url, {
      method: "HEAD",
      path: "/items",
      headers: { "accept-encoding": "gzip" },
    });
    expect(head.headers["content-encoding"]).toBe("gzip");
    expect(head.body.byteLength).toBe(0);
  });

  it("a streamed body with Accept-Encoding: gzip → sent as it is, whole", async () => {
    const res = await send(web.url, { path: "/stream", headers: { "accept-encoding": "gzip" } });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBeUndefined();
    expect(res.body.toString("utf8")).toBe(json);
  });
});

describe("Fetch server, node:zlib coding", () => {
  it.each([
    ["br, gzip", "br"],
    ["br", "br"],
    ["gzip", "gzip"],
  ])("Accept-Encoding: %s → %s", async (accept, coding) => {
    const res = await send(zlib.url, { path: "/items", headers: { "accept-encoding": accept } });
    expect(res.headers["content-encoding"]).toBe(coding);
    expect(JSON.parse((decode[coding] as (b: Buffer) => Buffer)(res.body).toString("utf8"))).toEqual(items);
  });

  it("a streamed body with Accept-Encoding: gzip → gzip, decodes to the JSON", async () => {
    const res = await send(zlib.url, { path: "/stream", headers: { "accept-encoding": "gzip" } });
    expect(res.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(res.body).toString("utf8")).toBe(json);
  });
});
