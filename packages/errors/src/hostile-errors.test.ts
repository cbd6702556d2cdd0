import type { IncomingMessage, ServerResponse } from "node:http";
import { request } from "node:http";
import { listen } from "@svc/test-utils";
import express from "express";
import { SaxesParser } from "saxes";
import { afterEach, describe, expect, it } from "vitest";
import { errorHandler } from "./express.js";
import { HttpError } from "./index.js";

// An attacker's view of errorHandler through a real server: whatever the thrown value, the failed
// handler's leftovers or the request, the client gets one well-formed error record (RFC 9457 §3),
// the server neither crashes nor hangs, and nothing thrown escapes the handler (on plain
// node:http, an exception out of a request listener ends the process).

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

interface Served {
  url: string;
  /** What the handler threw: without the catch around it, an uncaught exception. */
  escaped: unknown[];
  logged: Record<string, unknown>[];
}

/**
 * A plain node:http server whose `/…` route runs `route(res)` and hands what it returns (or
 * throws) to the error handler.
 */
async function serve(route: (res: ServerResponse, req: IncomingMessage) => unknown): Promise<Served> {
  const escaped: unknown[] = [];
  const logged: Record<string, unknown>[] = [];
  const handle = errorHandler({
    logger: {
      error(obj) {
        logged.push(obj as Record<string, unknown>);
      },
    },
    problemTypeBase: "https://errors.example/problems/",
  });
  const server = await listen((req, res) => {
    let thrown: unknown;
    try {
      thrown = route(res, req);
    } catch (err) {
      thrown = err;
    }
    try {
      handle(thrown, req, res, () => res.destroy());
    } catch (err) {
      escaped.push(err);
      res.destroy();
    }
  });
  closers.push(server.close);
  return { url: server.url, escaped, logged };
}

/** The same route in an Express 5 app, the error handler last. */
async function serveExpress(route: (res: ServerResponse) => unknown): Promise<Served> {
  const logged: Record<string, unknown>[] = [];
  const app = express();
  app.get("/x", (_req, res) => {
    throw route(res);
  });
  app.use(
    errorHandler({
      logger: {
        error(obj) {
          logged.push(obj as Record<string, unknown>);
        },
      },
    }),
  );
  const server = await listen(app);
  closers.push(server.close);
  return { url: server.url, escaped: [], logged };
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The client's error: the connection closed before a complete response. */
  failure?: string;
}

function get(url: string, accept = "application/json", method = "GET"): Promise<Reply> {
  return new Promise((resolve) => {
    const req = request(url, { method, headers: { Accept: accept } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on("error", (e) =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, failure: String(e) }),
      );
    });
    req.on("error", (e) => resolve({ status: 0, headers: {}, body: "", failure: String(e) }));
    req.end();
  });
}

const FORMATS = [
  ["application/json", "application/json; charset=utf-8"],
  ["application/problem+json", "application/problem+json; charset=utf-8"],
  ["application/xml", "application/xml; charset=utf-8"],
  ["application/problem+xml", "application/problem+xml; charset=utf-8"],
] as const;

/** Whether `xml` is a well-formed XML 1.0 document (saxes refuses any character outside §2.2). */
function xmlError(xml: string): string | undefined {
  try {
    new SaxesParser({ xmlns: true }).write(xml).close();
    return undefined;
  } catch (err) {
    return String(err);
  }
}

/**
 * The reply is one complete error record of `status` in the format `accept` asked for: the
 * record's own members with their types (RFC 9457 §3.1 for problem details), and for XML a
 * well-formed document.
 */
function expectRecord(reply: Reply, accept: string, contentType: string, status: number): void {
  expect(reply.failure).toBeUndefined();
  expect(reply.status).toBe(status);
  expect(reply.headers["content-type"]).toBe(contentType);
  expect(Buffer.byteLength(reply.body)).toBe(Number(reply.headers["content-length"]));
  if (accept.endsWith("xml")) {
    expect(xmlError(reply.body)).toBeUndefined();
    expect(reply.body).toContain(`<status>${status}</status>`);
    return;
  }
  const json = JSON.parse(reply.body) as Record<string, unknown>;
  expect(json.status).toBe(status);
  expect(typeof json.timestamp).toBe("string");
  if (accept === "application/json") {
    for (const member of ["error", "message", "path"]) expect(typeof json[member]).toBe("string");
  } else {
    for (const member of ["type", "title", "detail", "instance"]) expect(typeof json[member]).toBe("string");
  }
}

describe("a Trailer field the failed handler had set", () => {
  // RFC 9110 §6.6.2: Trailer announces the trailer fields of the failed representation's chunked
  // content; the record goes out with Content-Length and no trailer section, and Node throws
  // (ERR_HTTP_TRAILER_INVALID) on a Trailer beside it, inside the error handler.
  it.each(FORMATS)("plain node:http, Accept: %s → the 404 record, nothing thrown", async (accept, type) => {
    const { url, escaped } = await serve((res) => {
      res.setHeader("Content-Type", "text/csv");
      res.setHeader("Trailer", "Content-Digest");
      return HttpError.notFound("No such export");
    });
    const reply = await get(`${url}/export.csv`, accept);
    expectRecord(reply, accept, type, 404);
    expect(reply.headers.trailer).toBeUndefined();
    expect(reply.body).toContain("No such export");
    expect(escaped).toEqual([]);
  });

  it("plain node:http, chunked with a Trailer, then failed → the 500 record, logged once", async () => {
    const { url, escaped, logged } = await serve((res) => {
      res.setHeader("Transfer-Encoding", "chunked");
      res.setHeader("Trailer", "Server-Timing");
      return new Error("export query failed");
    });
    const reply = await get(`${url}/export.csv`);
    expectRecord(reply, "application/json", "application/json; charset=utf-8", 500);
    expect(reply.headers.trailer).toBeUndefined();
    expect(escaped).toEqual([]);
    expect(logged).toHaveLength(1);
  });

  it("Express 5 → the 404 record, not Express's page", async () => {
    const { url } = await serveExpress((res) => {
      res.setHeader("Trailer", "Content-Digest");
      return HttpError.notFound("No such export");
    });
    const reply = await get(`${url}/x`);
    expectRecord(reply, "application/json", "application/json; charset=utf-8", 404);
    expect(reply.body).toContain("No such export");
  });

  it("a Trailer without the failure stays on a success", async () => {
    const server = await listen((_req, res) => {
      res.setHeader("Trailer", "Server-Timing");
      res.write("ok");
      res.addTrailers({ "Server-Timing": "db;dur=1" });
      res.end();
    });
    closers.push(server.close);
    const reply = await get(server.url);
    expect(reply.status).toBe(200);
    expect(reply.headers.trailer).toBe("Server-Timing");
  });
});

describe("an extension member named toJSON", () => {
  // RFC 9457 §3.2 lets a problem carry extension members of any name, and the README says a
  // function member is left out, as JSON leaves it out. JSON.stringify calls a `toJSON` function
  // of the object it writes (ECMA-262 SerializeJSONProperty): on the record itself, it replaced
  // the whole body with whatever it returned.
  const replacing = () =>
    new HttpError(409, "Order 7 is already paid", {
      extensions: { orderId: 7, toJSON: () => ({ status: 200, message: "paid, all fine" }) },
    });
  it.each(FORMATS)("a function → left out, Accept: %s → the 409 record", async (accept, type) => {
    const { url, escaped } = await serve(replacing);
    const reply = await get(`${url}/orders/7`, accept);
    expectRecord(reply, accept, type, 409);
    expect(reply.body).toContain("Order 7 is already paid");
    expect(reply.body).not.toContain("all fine");
    expect(reply.body).toMatch(/"orderId":7|<orderId>7<\/orderId>/);
    expect(escaped).toEqual([]);
  });

  it.each(FORMATS)("a string → kept as a member, Accept: %s", async (accept, type) => {
    const { url } = await serve(() => new HttpError(409, "Taken", { extensions: { toJSON: "just data" } }));
    const reply = await get(`${url}/orders/7`, accept);
    expectRecord(reply, accept, type, 409);
    expect(reply.body).toMatch(/"toJSON":"just data"|<toJSON>just data<\/toJSON>/);
  });
});

describe("an HttpError whose fields were replaced after it was built", () => {
  // Its fields are readonly to TypeScript only. One replaced with a value the constructor would
  // have refused is the server's bug, as a status set to 200 already is: a logged 500 record, not
  // a record whose `message` is an object or missing (RFC 9457 §3.1.4: `detail` is a string), nor
  // an exception out of the handler.
  const replaced = (field: string, value: unknown) => () => {
    const err = HttpError.notFound("No such order");
    Object.defineProperty(err, field, { value, configurable: true, writable: true });
    return err;
  };
  const unreadable = new Proxy(
    {},
    {
      ownKeys() {
        throw new Error("headers trap");
      },
    },
  );
  it.each([
    ["message, an object", replaced("message", { text: "No such order" })],
    ["message, a symbol", replaced("message", Symbol("No such order"))],
    ["message, a number", replaced("message", 42)],
    ["headers, a Proxy whose ownKeys throws", replaced("headers", unreadable)],
  ])("%s → a 500 record in every format, logged, nothing thrown", async (_label, thrown) => {
    const { url, escaped, logged } = await serve(thrown);
    for (const [accept, type] of FORMATS) {
      const reply = await get(`${url}/orders/7`, accept);
      expectRecord(reply, accept, type, 500);
    }
    expect(escaped).toEqual([]);
    expect(logged).toHaveLength(FORMATS.length);
  });

  it("message replaced by another string → that message, 404", async () => {
    const { url } = await serve(replaced("message", "Order 7 was never placed"));
    const reply = await get(`${url}/orders/7`);
    expectRecord(reply, "application/json", "application/json; charset=utf-8", 404);
    expect(JSON.parse(reply.body).message).toBe("Order 7 was never placed");
  });
});
