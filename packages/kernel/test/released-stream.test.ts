import { createReadStream, type ReadStream } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listen, rawRequest } from "@svc/test-utils";
import { describe, expect, it } from "vitest";
import { toResponse } from "../src/fetch.js";
import type { ResponseValue } from "../src/index.js";
import { writeResponse } from "../src/node.js";

// A read stream opens after it is made, and one destroyed before then still opens: a file gone by
// then makes it emit ENOENT. Released unread (the GET's body of a HEAD), that error concerns no
// response; unheard, it would reach the process as an uncaught exception and end it.
const gone = (): ReadStream =>
  createReadStream(join(tmpdir(), `svc-kernel-gone-${process.pid}-${Date.now()}`));
/** Once the stream has closed (now, when it already has). */
const closed = (stream: ReadStream): Promise<void> =>
  stream.closed ? Promise.resolve() : new Promise((resolve) => stream.once("close", () => resolve()));
const streamed = (body: ReadStream): ResponseValue => ({
  status: 200,
  fields: { "content-type": "text/plain" },
  vary: [],
  body,
});

describe("a streamed body released unread: its late error is heard, not thrown", () => {
  it("node:http, HEAD → 200 without content; the stream closed with its ENOENT, caught", async () => {
    // Made by the handler as it answers, as a file route does.
    let body: ReadStream | undefined;
    const server = await listen((req, res) => {
      body = gone();
      void writeResponse(res, streamed(body), req.method ?? "GET");
    });
    try {
      const head = await rawRequest(server.url, "HEAD");
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      if (body === undefined) throw new Error("the handler made no stream");
      await closed(body);
      expect((body.errored as NodeJS.ErrnoException | null)?.code).toBe("ENOENT");
    } finally {
      await server.close();
    }
  });

  it("Fetch, HEAD → 200 without content; the stream closed with its ENOENT, caught", async () => {
    const body = gone();
    const response = toResponse(streamed(body), "HEAD");
    expect(response.status).toBe(200);
    expect(response.body).toBeNull();
    await closed(body);
    expect((body.errored as NodeJS.ErrnoException | null)?.code).toBe("ENOENT");
  });
});
