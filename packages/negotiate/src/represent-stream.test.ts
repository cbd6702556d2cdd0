import { request } from "node:http";
import { Readable } from "node:stream";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { negotiate } from "./negotiate.js";
import type { Representation } from "./representation.js";

/** Each response's body stream, and whether it was destroyed once the response closed. */
const outcomes: Promise<boolean>[] = [];

/** An endless body, as a large file or a database cursor would be to a client that leaves. */
const endless: Representation = {
  mediaType: "application/octet-stream",
  serialize: (_data, context) => {
    const source = new Readable({
      read() {
        this.push(Buffer.alloc(64 * 1024));
      },
    });
    outcomes.push(
      new Promise((resolve) => {
        // After every other close listener, the package's own included.
        context?.res?.once("close", () => setImmediate(() => resolve(source.destroyed)));
      }),
    );
    return source;
  },
};

/** How many chunks of {@link export64} were read, and a promise of each response's close. */
const exported = { chunks: 0, closed: undefined as Promise<void> | undefined };

/** A 4 MiB export read from its source chunk by chunk, as a large file or a query would be. */
const export64: Representation = {
  mediaType: "text/csv",
  serialize: (_data, context) => {
    let left = 64;
    exported.chunks = 0;
    exported.closed = new Promise((resolve) => context?.res?.once("close", () => setImmediate(resolve)));
    return new Readable({
      read() {
        exported.chunks++;
        this.push(left-- > 0 ? "x".repeat(64 * 1024) : null);
      },
    });
  },
};

let server: Listening;
beforeAll(async () => {
  const app = express();
  app.use(negotiate({ representations: [endless] }));
  app.get("/download", (_req, res) => res.represent({}));
  app.get("/export", (_req, res) => res.represent({}, { representations: [export64] }));
  server = await listen(app);
});
afterAll(() => server.close());

describe("res.represent of a stream", () => {
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
});
