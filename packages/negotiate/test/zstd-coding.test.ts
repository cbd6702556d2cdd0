import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import type { Server } from "node:http";
import { homedir } from "node:os";
import { join } from "node:path";
import { Readable, pipeline as streamPipeline, Transform } from "node:stream";
import * as zlibModule from "node:zlib";
import { createAdaptorServer } from "@hono/node-server";
import { createPipeline, reply } from "@svc/kernel";
import { fetchAdapter } from "@svc/kernel/fetch";
import { type Listening, listenOn } from "@svc/test-utils";
import { fallbackErrors, send } from "@svc/test-utils/conformance";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codingStep, zlibEncoder } from "../src/coder.js";
import { representations } from "../src/index.js";

// zstd (RFC 8878) is offered where the runtime's zlib has it (Node.js 22.15 and later, Bun) and
// never claimed where it does not. This process is Node.js 20, whose zlib has none: the zlib with
// zstd is one a Node.js that has it builds (the conformance runtimes' Node.js 24, when installed),
// reached through a child process that codes and decodes for this one.
const items = Array.from({ length: 200 }, (_, i) => ({ id: i, name: `Employee ${i}`, department: "R&D" }));
const json = JSON.stringify(items);

const node24 = join(
  process.env.SVC_RUNTIMES_DIR || join(homedir(), ".cache", "svc-runtimes"),
  "node-24.21.0",
  "node_modules",
  ".bin",
  "node",
);
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

async function app(zlib: typeof zlibModule): Promise<Listening> {
  const pipeline = createPipeline({
    representations: representations(),
    coding: codingStep({}, (level) => zlibEncoder({ zlib, stream: { pipeline: streamPipeline } }, level)),
  });
  const svc = fetchAdapter(pipeline);
  const hono = new Hono();
  hono.use(svc.middleware);
  hono.onError((err, c) => fallbackErrors.fetch(err, c));
  hono.get("/items", (c) => svc.respond(c.req.raw, () => items));
  hono.get("/stream", (c) =>
    svc.respond(c.req.raw, () =>
      reply.bytes(Readable.from([json.slice(0, 5000), json.slice(5000)]), "application/json"),
    ),
  );
  return listenOn(createAdaptorServer({ fetch: hono.fetch }) as Server);
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
