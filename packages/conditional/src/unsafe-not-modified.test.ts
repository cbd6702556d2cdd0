import { Agent, request } from "node:http";
import { negotiate } from "@svc/negotiate";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conditional } from "./conditional.js";

// RFC 9110 §15.4.5: a 304 answers a conditional GET or HEAD; a handler's 304 to a POST, PUT, PATCH
// or DELETE is the application's mistake, and conditional() leaves its status alone (it has no 200
// to send instead). But a 304 has no content, whatever the method (RFC 9112 §6.3: "any response
// with a 1xx, 204, or 304 status code is always terminated by the first empty line after the
// header fields"), and "SHOULD NOT generate representation metadata other than the above listed
// fields" (§15.4.5). Only the 304 of a GET/HEAD lost its Content-Length, Content-Type,
// Content-Encoding and Content-Language: one to a write went out with `Content-Length: 5` and no
// byte of content (Node drops the body of a 304), a framing a proxy that does not special-case
// 304 waits on.

const BODY = "hello";
const WAYS = ["writeHead-object", "writeHead-array", "setHeader-end", "write", "flush", "send"] as const;
const METHODS = ["POST", "PUT", "PATCH", "DELETE"] as const;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe("a handler's own 304 to an unsafe method", () => {
  let server: Listening;
  let agent: Agent;

  beforeAll(async () => {
    const app = express();
    app.use(negotiate({ compression: { threshold: 1 } }));
    app.use(conditional());
    const fieldsOf = {
      "Content-Type": "text/plain",
      "Content-Length": String(BODY.length),
      "Content-Encoding": "identity",
      "Content-Language": "en",
      "Content-Location": "/doc",
      ETag: '"v1"',
    };
    app.all("/:way", (req, res) => {
      switch (req.params.way) {
        case "writeHead-object":
          return void res.writeHead(304, fieldsOf).end(BODY);
        case "writeHead-array":
          return void res.writeHead(304, Object.entries(fieldsOf).flat()).end(BODY);
        case "setHeader-end":
          for (const [name, value] of Object.entries(fieldsOf)) res.setHeader(name, value);
          res.statusCode = 304;
          return void res.end(BODY);
        case "write":
          for (const [name, value] of Object.entries(fieldsOf)) res.setHeader(name, value);
          res.status(304);
          res.write("hel");
          return void res.end("lo");
        case "flush":
          for (const [name, value] of Object.entries(fieldsOf)) res.setHeader(name, value);
          res.status(304);
          res.flushHeaders();
          return void res.end();
        default:
          // Express's res.send already strips these for a 304 of any method: the reference.
          res.setHeader("Content-Language", "en");
          res.setHeader("ETag", '"v1"');
          return void res.status(304).send(BODY);
      }
    });
    app.get("/next/ok", (_req, res) => res.send("next"));
    server = await listen(app);
    // One socket: the request after the 304 is read from the same connection.
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
  });
  afterAll(async () => {
    agent.destroy();
    await server.close();
  });

  const conditionalHeaders = { "accept-encoding": "gzip", "if-none-match": '"v1"' };
  const send = (
    method: string,
    path: string,
    headers: Record<string, string> = conditionalHeaders,
  ): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = request(`${server.url}${path}`, { method, agent, headers }, (res) => {
        let body = "";
        res.setEncoding("latin1");
        res.on("data", (d: string) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on("error", reject);
      req.end();
    });

  for (const method of METHODS) {
    it.each(WAYS)(`${method}, a 304 written by %s: no representation metadata, ETag as set`, async (way) => {
      const res = await send(method, `/${way}`);
      expect(res.status).toBe(304);
      expect(res.body).toBe("");
      expect({
        length: res.headers["content-length"],
        type: res.headers["content-type"],
        encoding: res.headers["content-encoding"],
        language: res.headers["content-language"],
        transfer: res.headers["transfer-encoding"],
      }).toEqual({});
      // Not made the 304 of a GET: the handler's tag as it set it, no default Cache-Control.
      expect(res.headers.etag).toBe('"v1"');
      expect(res.headers["cache-control"]).toBeUndefined();
      if (way !== "send") expect(res.headers["content-location"]).toBe("/doc");
      // The connection is still in step: the next response is read whole.
      const next = await send("GET", "/next/ok", { "accept-encoding": "identity" });
      expect([next.status, next.body]).toEqual([200, "next"]);
    });
  }
});
