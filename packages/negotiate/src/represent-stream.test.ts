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

let server: Listening;
beforeAll(async () => {
  const app = express();
  app.use(negotiate({ representations: [endless] }));
  app.get("/download", (_req, res) => res.represent({}));
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
