// biome-ignore-all assist/source/organizeImports: the README block below keeps its own imports, in its own order
import { assertReadmeShows, type Listening, readmeRegion, whenListening } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// README "The core on plain node:http": the block below is the README's code, line for line
// (with the package's own sources standing in for "@svc/errors" and "@svc/errors/node", and port 0
// for 8080).
// #region readme-core
import { createServer } from "node:http";
import { buildErrorRecord, HttpError, notFoundError } from "../src/index.js";
import { clientErrorHandler, errorResponder } from "../src/node.js";

const sendError = errorResponder();

const server = createServer((req, res) => {
  // Whatever a handler fails with becomes the record, negotiated by Accept (JSON, XML, RFC 9457).
  if (req.url === "/ready") {
    sendError(
      HttpError.serviceUnavailable(5, undefined, { extensions: { checks: { database: "DOWN" } } }),
      req,
      res,
    );
  } else if (req.url === "/record") {
    // The record alone, for a transport of your own (a queue message, a log line, a WebSocket).
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify(buildErrorRecord(HttpError.conflict("Order 7 is already paid"), req.url)));
  } else {
    sendError(notFoundError(req), req, res); // 404 record
  }
});
// Requests Node's parser refuses (a malformed header line, headers too large) get the record too.
server.on("clientError", clientErrorHandler());
server.listen(0);
// #endregion readme-core

let url = "";
let listening: Listening;
beforeAll(async () => {
  listening = await whenListening(server);
  url = listening.url;
});
afterAll(() => listening.close());

describe("README: the core on plain node:http", () => {
  it("the README shows this file's block", () => {
    const shown = readmeRegion(import.meta.url, [
      ['"../src/index.js"', '"@svc/errors"'],
      ['"../src/node.js"', '"@svc/errors/node"'],
      ["server.listen(0);", "server.listen(8080);"],
    ]);
    expect(() => assertReadmeShows(import.meta.url, shown)).not.toThrow();
  });

  it("GET /ready → 503 record with Retry-After and the checks extension", async () => {
    const res = await fetch(`${url}/ready`);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(res.headers.get("vary")).toBe("Accept");
    expect(await res.json()).toMatchObject({
      status: 503,
      error: "Service Unavailable",
      path: "/ready",
      checks: { database: "DOWN" },
    });
  });

  it("GET /nothing with Accept: application/problem+json → 404 problem details", async () => {
    const res = await fetch(`${url}/nothing?x=1`, { headers: { Accept: "application/problem+json" } });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
    expect(await res.json()).toMatchObject({
      type: "about:blank",
      title: "Not Found",
      status: 404,
      detail: "No resource matches GET /nothing",
      instance: "/nothing",
    });
  });

  it("GET /record → the record built by buildErrorRecord", async () => {
    const res = await fetch(`${url}/record`);
    expect(await res.json()).toMatchObject({
      status: 409,
      error: "Conflict",
      message: "Order 7 is already paid",
    });
  });

  it("a malformed request → 400 record from the clientError listener", async () => {
    const { connect } = await import("node:net");
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(url).port), "127.0.0.1", () =>
        socket.write("GET / HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n"),
      );
      let out = "";
      socket.on("data", (chunk: Buffer) => {
        out += chunk.toString("latin1");
      });
      socket.on("error", reject);
      socket.on("close", () => resolve(out));
    });
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(text.split("\r\n\r\n")[1] ?? "")).toMatchObject({ status: 400, path: "/" });
  });
});
