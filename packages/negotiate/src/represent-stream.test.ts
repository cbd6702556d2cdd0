import { request } from "node:http";
import { Readable } from "node:stream";
import { reply } from "@svc/kernel";
import { type Listening, rawRequest } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inMemory, onExpress } from "../test/core.js";
import { compression } from "./coder.js";
import type { Representation } from "./representation.js";
import { representations } from "./representer.js";

/** Whether `source` is destroyed within a generous time (a stream left open never is). */
function destroyedSoon(source: Readable): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(source.destroyed), 10_000);
    source.once("close", () => {
      clearTimeout(timer);
      resolve(source.destroyed);
    });
  });
}

/** Each response's body stream, and whether it was destroyed once the response closed. */
const outcomes: Promise<boolean>[] = [];

/** An endless body, as a large file or a database cursor would be to a client that leaves. */
const endless: Representation = {
  mediaType: "application/octet-stream",
  serialize: () => {
    const source = new Readable({
      read() {
        this.push(Buffer.alloc(64 * 1024));
      },
    });
    outcomes.push(destroyedSoon(source));
    return source;
  },
};

/** How many chunks of {@link export64} were read, and a promise of each response's close. */
const exported = { chunks: 0, closed: undefined as Promise<void> | undefined };

/** A 4 MiB export read from its source chunk by chunk, as a large file or a query would be. */
const export64: Representation = {
  mediaType: "text/csv",
  serialize: () => {
    let left = 64;
    exported.chunks = 0;
    const source = new Readable({
      read() {
        exported.chunks++;
        this.push(left-- > 0 ? "x".repeat(64 * 1024) : null);
      },
    });
    exported.closed = destroyedSoon(source).then(() => {});
    return source;
  },
};

const steps = { representations: representations({ offers: [endless] }), coding: compression() };
const routes = {
  "/download": () => ({}),
  "/export": () => reply({}, { representations: [export64] }),
};
let server: Listening;
beforeAll(async () => {
  server = await onExpress(steps, routes);
});
afterAll(() => server.close());

describe("a represented stream", () => {
  it("a client leaving mid-body → the body stream is destroyed, not left open", async () => {
    const { hostname, port } = new URL(server.url);
    await new Promise<void>((resolve) => {
      const req = request({ host: hostname, port, path: "/download" }, (res) => {
        res.once("data", () => {
          req.destroy();
          resolve();
        });
      });
      req.on("error", () => {});
      req.end();
    });
    expect(outcomes).toHaveLength(1);
    expect(await outcomes[0]).toBe(true);
  });
});

describe("HEAD of a streamed representation (RFC 9110 §9.3.2)", () => {
  it("HEAD /export → the headers of its GET, and the body is not read only to be dropped", async () => {
    const { hostname, port } = new URL(server.url);
    const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
      request({ host: hostname, port, method: "HEAD", path: "/export" }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.headers));
      })
        .on("error", reject)
        .end();
    });
    expect(headers["content-type"]).toBe("text/csv; charset=utf-8");
    expect(headers["content-length"]).toBeUndefined();
    await exported.closed;
    // A GET reads all 65 (64 chunks and the end); the HEAD, whose content Node discards, none.
    expect(exported.chunks).toBe(0);
  });

  it("HEAD /export in memory → the headers of its GET, the body not read", async () => {
    const res = await inMemory(steps, routes)("/export", { method: "HEAD" });
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-length")).toBeNull();
    await exported.closed;
    expect(exported.chunks).toBe(0);
  });

  it("GET /export → all 64 chunks, then the end", async () => {
    const res = await rawRequest(`${server.url}/export`, "GET", { "accept-encoding": "identity" });
    expect(res.body.length).toBe(64 * 64 * 1024);
    expect(exported.chunks).toBe(65);
  });
});
