import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { useEchoServer } from "./echo-server.js";

/**
 * RFC 9110 §5.3: a sender MUST NOT send a field twice unless its definition allows a list, and
 * Content-Type (§8.3) is one media type. Node keeps the first of two Content-Type field lines and
 * drops the other, so `application/json` then `text/plain` was parsed as JSON while a proxy, a
 * WAF or a logger that reads the last one took the body for text: the body is refused with 415,
 * as a charset given twice is, whichever order and even when both say the same.
 */
const server = useEchoServer();

/** One POST through node:http, an array value sent as one field line per member. */
function post(
  headers: Record<string, string | string[]>,
  body: string,
): Promise<{ status: number; headers: Record<string, unknown>; record: Record<string, unknown> }> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path: "/echo", method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          record: JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>,
        }),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

const TWICE = "Content-Type is given more than once; send one Content-Type";

describe("parseBody: Content-Type sent as two field lines → 415", () => {
  it.each<[string, string[], string]>([
    ["JSON, then text/plain", ["application/json", "text/plain"], '{"a":1}'],
    ["text/plain, then JSON", ["text/plain", "application/json"], '{"a":1}'],
    ["JSON twice", ["application/json", "application/json"], '{"a":1}'],
    ["XML, then JSON", ["application/xml", "application/json"], "<a>1</a>"],
    ["JSON with charset, then without", ["application/json; charset=utf-8", "application/json"], '{"a":1}'],
  ])("%s → 415 with Accept-Post, the handler never server.reached", async (_label, types, body) => {
    const before = server.reached;
    const res = await post(
      { "content-type": types, "content-length": String(Buffer.byteLength(body)) },
      body,
    );
    expect(res.status).toBe(415);
    expect(res.headers["accept-post"]).toBe("application/json, application/xml");
    expect(res.record).toMatchObject({ status: 415, message: TWICE });
    expect(server.reached).toBe(before);
  });

  it("chunked, JSON then text/plain → 415", async () => {
    const res = await post(
      { "content-type": ["application/json", "text/plain"], "transfer-encoding": "chunked" },
      "{}",
    );
    expect(res.status).toBe(415);
    expect(res.record).toMatchObject({ message: TWICE });
  });

  it("one Content-Type → parsed", async () => {
    const res = await post({ "content-type": "application/json", "content-length": "7" }, '{"a":1}');
    expect(res.status).toBe(201);
    expect(res.record).toEqual({ received: { a: 1 } });
  });

  it("no content (Content-Length: 0) → passed on, whatever the Content-Type fields, as before", async () => {
    const res = await post({ "content-type": ["application/json", "text/plain"], "content-length": "0" }, "");
    expect(res.status).toBe(201);
    expect(res.record).toEqual({ received: null });
  });
});
