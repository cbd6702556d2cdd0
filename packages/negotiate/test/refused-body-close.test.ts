import { connect } from "node:net";
import { errorHandler } from "@svc/errors/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseBody } from "../src/express.js";

/**
 * A body refused before it is read (413 over `limit`, 415 for its type) is of no use, but Node
 * drains what remains of it on a kept-alive connection, with neither `limit` nor `timeout` any
 * longer in force: a client declaring a gigabyte could trickle it, or stall, and hold the socket
 * until the server's own requestTimeout (300 s). RFC 9110 §15.5.14 (413): "the server MAY close
 * the connection"; RFC 9112 §9.6 lets a server close a connection with `Connection: close`. When
 * what remains is more than the refused-body policy's `unreadBody.maxBytes` (64 KiB) or of unknown
 * length, the refusal closes the connection.
 */
let server: Listening;
let reached = 0;
beforeAll(async () => {
  const app = express();
  app.post("/echo", parseBody({ limit: 1000, others: "refuse" }), (_req, res) => {
    reached++;
    res.status(201).end();
  });
  app.use(errorHandler({ logger: { error() {} } }));
  server = await listen(app);
});
afterAll(() => server.close());

/**
 * Sends `head` and `first`, then nothing more: the response as soon as it is whole (its
 * Content-Length read), and a promise of the server closing the socket.
 */
function stalled(head: string, first: string): Promise<{ response: string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(server.url).port), "127.0.0.1");
    let text = "";
    const closed = new Promise<void>((done) => socket.on("close", () => done()));
    socket.on("error", reject);
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const length = /^Content-Length: (\d+)\r$/im.exec(text)?.[1];
      if (end >= 0 && length !== undefined && text.length >= end + 4 + Number(length)) {
        resolve({ response: text, closed });
      }
    });
    socket.write(`${head}\r\n\r\n${first}`);
  });
}

const json = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json";
const plain = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain";

describe("parseBody: a refused body with more than `limit` (or an unknown length) left unread", () => {
  it.each<[string, string, string, number]>([
    [
      "Content-Length over limit, 500 bytes sent",
      `${json}\r\nContent-Length: 10000000`,
      "x".repeat(500),
      413,
    ],
    [
      "chunked, past the limit",
      `${json}\r\nTransfer-Encoding: chunked`,
      `4b0\r\n${"x".repeat(1200)}\r\n`,
      413,
    ],
    ["415, Content-Length over limit", `${plain}\r\nContent-Length: 10000000`, "hello", 415],
    ["415, chunked", `${plain}\r\nTransfer-Encoding: chunked`, "5\r\nhello\r\n", 415],
  ])(
    "%s, then silence → refused with Connection: close, the socket closed",
    async (_label, head, first, status) => {
      const before = reached;
      const { response, closed } = await stalled(head, first);
      expect(response).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(response).toMatch(/^Connection: close\r$/im);
      expect(JSON.parse(response.slice(response.indexOf("\r\n\r\n") + 4))).toMatchObject({ status });
      await closed;
      expect(reached).toBe(before);
    },
  );

  it("415 with its whole small body sent → the connection kept alive, as before", async () => {
    const { response, closed } = await stalled(`${plain}\r\nContent-Length: 5`, "hello");
    expect(response).toMatch(/^HTTP\/1\.1 415 /);
    expect(response).toMatch(/^Connection: keep-alive\r$/im);
    void closed;
  });
});
