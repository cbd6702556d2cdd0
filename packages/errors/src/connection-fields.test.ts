import { createServer } from "node:http";
import { connect } from "node:net";
import { listenOn } from "@svc/test-utils";
import { afterEach, describe, expect, it } from "vitest";
import { errorHandler } from "./express.js";
import { HttpError } from "./index.js";

// RFC 9110 §7.6.1: Connection and the fields it names (Keep-Alive, Proxy-Connection, TE, Trailer
// here) are options of one connection, which the server (Node) manages: an error's headers (an
// upstream response's, carried by an http-errors error) must not decide whether it stays open.
// RFC 9112 §9.6: a server that receives "close" MUST initiate closure after the final response.

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
  escaped.length = 0;
});

/** What escaped the error handler (on plain node:http, an uncaught exception without this catch). */
const escaped: unknown[] = [];

async function serve(thrown: unknown): Promise<number> {
  const handleError = errorHandler({ logger: { error() {} } });
  const server = createServer((req, res) => {
    try {
      handleError(thrown, req, res, () => res.destroy());
    } catch (err) {
      escaped.push(err);
      res.destroy();
    }
  });
  const listening = await listenOn(server);
  closers.push(listening.close);
  return Number(new URL(listening.url).port);
}

/**
 * Sends a request (with `Connection: close` when `close`), then, once its response is in, a second
 * request on the same connection, and reads until the connection closes (or 1 s passes). A server
 * that closes after the first response (RFC 9112 §9.6) answers once; one that keeps it open, twice.
 */
function twoRequests(port: number, close: boolean): Promise<{ head: string; responses: number }> {
  const request = `GET /x HTTP/1.1\r\nHost: x\r\n${close ? "Connection: close\r\n" : ""}\r\n`;
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" }, () => socket.write(request));
    let text = "";
    let second = false;
    const timer = setTimeout(() => socket.destroy(), 1000);
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1] ?? Number.NaN);
      if (!second && end !== -1 && text.length >= end + 4 + length) {
        second = true;
        // Give a server that closes after the response the moment to do it.
        setTimeout(() => socket.writable && socket.write(request), 50);
      }
    });
    // A write after the server closed may be reset: the connection is closed all the same.
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({
        head: text.split("\r\n\r\n")[0] ?? "",
        responses: text.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0,
      });
    });
  });
}

const fields = (head: string, name: string) =>
  head
    .split("\r\n")
    .filter((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`))
    .map((line) => line.slice(name.length + 1).trim());

describe("errorHandler: an error's connection fields do not manage the connection", () => {
  it.each([
    [
      "HttpError with Connection: keep-alive",
      new HttpError(429, "x", { headers: { Connection: "keep-alive" } }),
    ],
    [
      "HttpError with connection: Keep-Alive",
      new HttpError(503, "x", { headers: { connection: "Keep-Alive" } }),
    ],
    [
      "an http-errors 502 carrying its upstream's Connection and Keep-Alive",
      Object.assign(new Error("Bad Gateway"), {
        status: 502,
        statusCode: 502,
        expose: false,
        headers: { connection: "keep-alive", "keep-alive": "timeout=600", "retry-after": "5" },
      }),
    ],
  ])("%s, request Connection: close → Connection: close, the server closes", async (_label, thrown) => {
    const port = await serve(thrown);
    const { head, responses } = await twoRequests(port, true);
    expect(head).toMatch(/^HTTP\/1\.1 (429|502|503) /);
    expect(fields(head, "Connection")).toEqual(["close"]);
    expect(fields(head, "Keep-Alive")).toEqual([]);
    expect(responses).toBe(1);
    expect(escaped).toEqual([]);
  });

  it.each([
    ["Keep-Alive", "timeout=600"],
    ["Proxy-Connection", "keep-alive"],
    ["TE", "trailers"],
    ["Trailer", "Server-Timing"],
    // Node refuses Trailer beside Content-Length (ERR_HTTP_TRAILER_INVALID): the handler threw.
  ])("HttpError with %s: %s → left out, the record sent", async (name, value) => {
    const port = await serve(HttpError.badRequest("x", { headers: { [name]: value, "X-Kept": "1" } }));
    const { head } = await twoRequests(port, true);
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(fields(head, name)).toEqual([]);
    expect(fields(head, "X-Kept")).toEqual(["1"]);
    expect(escaped).toEqual([]);
  });

  it("a 426 keeps its Upgrade (RFC 9110 §15.5.22: the server MUST send it)", async () => {
    const port = await serve(new HttpError(426, "x", { headers: { Upgrade: "HTTP/2.0" } }));
    const { head } = await twoRequests(port, true);
    expect(fields(head, "Upgrade")).toEqual(["HTTP/2.0"]);
  });
});

// RFC 9110 §7.6.1: "close" is the one connection option a sender may set to end the connection
// after this response; RFC 9110 §15.5.9: a server sending 408 "SHOULD send the 'close' connection
// option". An error asking for close is honoured (the safe direction); keep-alive is not.
describe("errorHandler: an error asking for Connection: close closes the connection", () => {
  it.each([
    ["HttpError 408 with Connection: close", new HttpError(408, "x", { headers: { Connection: "close" } })],
    ["HttpError 503 with connection: Close", new HttpError(503, "x", { headers: { connection: "Close" } })],
    [
      "HttpError 400 with Connection: keep-alive, close",
      HttpError.badRequest("x", { headers: { Connection: "keep-alive, close" } }),
    ],
  ])("%s, keep-alive request → Connection: close, one response", async (_label, thrown) => {
    const port = await serve(thrown);
    const { head, responses } = await twoRequests(port, false);
    expect(head).toMatch(/^HTTP\/1\.1 (400|408|503) /);
    expect(fields(head, "Connection")).toEqual(["close"]);
    expect(responses).toBe(1);
    expect(escaped).toEqual([]);
  });

  it("HttpError 429 with Connection: keep-alive, keep-alive request → still kept alive, two responses", async () => {
    const port = await serve(new HttpError(429, "x", { headers: { Connection: "keep-alive" } }));
    const { head, responses } = await twoRequests(port, false);
    expect(fields(head, "Connection")).toEqual(["keep-alive"]);
    expect(responses).toBe(2);
  });
});
