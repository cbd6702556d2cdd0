import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { pipeline as streamPipeline, Transform } from "node:stream";
import * as zlibModule from "node:zlib";
import type { Listening } from "@svc/test-utils";
import { send } from "@svc/test-utils/conformance";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { placeOf } from "../../../apps/conformance/runtimes.mjs";
import { zlibEncoder } from "../src/coder.js";
import { codingApp, items, json } from "./coding-app.js";

// zstd (RFC 8878) is offered where the runtime's zlib has it (Node.js 22.15 and later, Bun) and
// never claimed where it does not. This process is Node.js 20, whose zlib has none: the zlib with
// zstd is one a Node.js that has it builds (the conformance runtimes' Node.js 24, when installed),
// reached through a child process that codes and decodes for this one.

// The conformance runtimes' Node.js 24, where they are installed (apps/conformance/runtimes.mjs).
const node24 = placeOf("node24").installed;
const zstdAt = existsSync(node24) ? node24 : undefined;
if (zstdAt === undefined && !process.env.CI)
  console.warn("[skip] zstd through Node.js 24: not installed (node apps/conformance/runtimes.mjs install)");

/** `bytes` through zlib's `method` in the Node.js at `binary`. */
function viaNode(
  binary: string,
  method: "zstdCompressSync" | "zstdDecompressSync",
  bytes: Uint8Array,
): Buffer {
  return execFileSync(
    binary,
    ["-e", `process.stdout.write(require("node:zlib").${method}(require("node:fs").readFileSync(0)))`],
    {
      input: bytes,
    },
  );
}

/** This process's zlib, with zstd as the Node.js at `binary` codes it (synchronously, in a child). */
function withZstd(binary: string) {
  return Object.assign(Object.create(zlibModule) as typeof zlibModule, {
    zstdCompress(bytes: Uint8Array, done: (err: Error | null, out: Uint8Array) => void) {
      try {
        done(null, viaNode(binary, "zstdCompressSync", bytes));
      } catch (err) {
        done(err as Error, new Uint8Array());
      }
    },
    createZstdCompress() {
      const chunks: Buffer[] = [];
      return new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          chunks.push(chunk);
          callback();
        },
        flush(callback) {
          callback(null, viaNode(binary, "zstdCompressSync", Buffer.concat(chunks)));
        },
      });
    },
  });
}

function app(zlib: typeof zlibModule): Promise<Listening> {
  return codingApp((level) => zlibEncoder({ zlib, stream: { pipeline: streamPipeline } }, level));
}

describe("zlib without zstd (Node.js 20)", () => {
  let server: Listening;
  beforeAll(async () => {
    server = await app(zlibModule);
  });
  afterAll(() => server.close());

  it.each([
    ["zstd", undefined],
    ["zstd, gzip", "gzip"],
    ["gzip, deflate, br, zstd", "br"],
  ])("Accept-Encoding: %s → %s (zstd never claimed)", async (accept, coding) => {
    const res = await send(server.url, { path: "/items", headers: { "accept-encoding": accept } });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe(coding);
  });

  it("Accept-Encoding: zstd, identity;q=0 → 406 naming the codings there are", async () => {
    const res = await send(server.url, {
      path: "/items",
      headers: { "accept-encoding": "zstd, identity;q=0" },
    });
    expect(res.status).toBe(406);
    expect(res.body.toString("utf8")).toContain("available: br, gzip, deflate, identity");
  });
});

describe.skipIf(zstdAt === undefined && !process.env.CI)("zlib with zstd (as Node.js 24 codes it)", () => {
  let server: Listening;
  beforeAll(async () => {
    if (zstdAt === undefined) throw new Error(`CI: ${node24} is not installed`);
    server = await app(withZstd(zstdAt));
  });
  afterAll(() => server?.close());

  it.each([
    ["zstd", "zstd"],
    ["gzip, deflate, br, zstd", "zstd"],
    ["br, zstd;q=0.5", "br"],
    ["zstd;q=0, gzip", "gzip"],
  ])("/items, Accept-Encoding: %s → %s, decodes to the JSON", async (accept, coding) => {
    const res = await send(server.url, { path: "/items", headers: { "accept-encoding": accept } });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe(coding);
    expect(res.headers.vary).toContain("Accept-Encoding");
    if (coding === "zstd")
      expect(JSON.parse(viaNode(zstdAt as string, "zstdDecompressSync", res.body).toString("utf8"))).toEqual(
        items,
      );
  });

  it("a streamed body, Accept-Encoding: zstd → zstd, decodes to the bytes sent", async () => {
    const res = await send(server.url, { path: "/stream", headers: { "accept-encoding": "zstd" } });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe("zstd");
    expect(viaNode(zstdAt as string, "zstdDecompressSync", res.body).toString("utf8")).toBe(json);
  });
});
