import { connect } from "node:net";
import { type Listening, listen, rawRequest } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CUSTOMER_WSDL, customerHandlers, silentLogger } from "../test/helpers.js";
import { soapEndpoint, soapErrorHandler } from "./endpoint.js";

// The WSDL's soap12:address behind a proxy that appends to X-Forwarded-Host / -Proto (Apache's
// mod_proxy does, as every proxy does to X-Forwarded-For): a value the client sent itself comes
// first, so only the one the trusted chain appended may name the address (RFC 7239 §8.1 on the
// de facto headers' trust: a forwarded value is only as trustworthy as the proxy that set it).
let servers: Listening[] = [];

async function serve(trust: unknown): Promise<string> {
  const app = express();
  app.set("trust proxy", trust);
  app.use(
    "/ws/customer",
    soapEndpoint({ wsdl: CUSTOMER_WSDL, handlers: customerHandlers(), logger: silentLogger }),
    soapErrorHandler(),
  );
  const server = await listen(app);
  servers.push(server);
  return `${server.url}/ws/customer?wsdl`;
}

async function address(url: string, headers: Record<string, string>): Promise<string | undefined> {
  const res = await fetch(url, { headers });
  expect(res.status).toBe(200);
  return /<soap12:address location="([^"]*)"/.exec(await res.text())?.[1];
}

let loopback: string;
let twoHops: string;
beforeAll(async () => {
  loopback = await serve("loopback");
  // The peer (loopback) and the proxy before it (198.51.100.7) are trusted.
  twoHops = await serve(["loopback", "198.51.100.7"]);
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

describe("soap12:address behind a trusted proxy that appends", () => {
  it("X-Forwarded-Host: evil.example, shop.example → shop.example (the value the peer appended)", async () => {
    expect(await address(loopback, { "x-forwarded-host": "evil.example, shop.example" })).toBe(
      "http://shop.example/ws/customer",
    );
  });

  it("X-Forwarded-Proto: https, http → http (the peer's); a lone value is read", async () => {
    expect(
      await address(loopback, { "x-forwarded-proto": "https, http", "x-forwarded-host": "shop.example" }),
    ).toBe("http://shop.example/ws/customer");
    expect(
      await address(loopback, { "x-forwarded-proto": "https", "x-forwarded-host": "shop.example" }),
    ).toBe("https://shop.example/ws/customer");
  });

  it("X-Forwarded-Proto: gopher (or javascript) → the connection's scheme, never gopher://", async () => {
    expect(
      await address(loopback, { "x-forwarded-proto": "gopher", "x-forwarded-host": "shop.example" }),
    ).toBe("http://shop.example/ws/customer");
    expect(
      await address(loopback, { "x-forwarded-proto": "javascript", "x-forwarded-host": "shop.example" }),
    ).toBe("http://shop.example/ws/customer");
  });

  it("two trusted hops: the value the outer trusted proxy appended, not the client's", async () => {
    const headers = {
      "x-forwarded-for": "203.0.113.9, 198.51.100.7",
      "x-forwarded-host": "evil.example, shop.example, internal:8080",
    };
    expect(await address(twoHops, headers)).toBe("http://shop.example/ws/customer");
  });

  it("an untrusted peer's forwarded headers are ignored", async () => {
    const untrusted = await serve(false);
    const url = new URL(untrusted);
    expect(
      await address(untrusted, { "x-forwarded-host": "shop.example", "x-forwarded-proto": "https" }),
    ).toBe(`http://${url.host}/ws/customer`);
  });
});

// RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
// request message that lacks a Host header field and to any such message that contains more than
// one Host header field line or a Host header field with an invalid field value." The WSDL writes
// the host into soap12:address and every schemaLocation: one outside RFC 3986 §3.2.2 would be
// malformed XML, another authority (userinfo@, a path) or injected text there.
describe("an invalid Host on ?wsdl and ?xsd", () => {
  it.each([
    "a b",
    'x"y',
    "<",
    "a/b",
    "evil@shop.example",
    "shop.example#x",
    "shop.example?x",
    "shop.example:80x",
    "[::1",
    "[fe80::1%25eth0]",
    "a%zz",
  ])("Host: %s → 400 Sender fault, no document", async (host) => {
    for (const query of ["wsdl", "xsd=customer.xsd"]) {
      const res = await rawRequest(`${loopback.replace("?wsdl", "")}?${query}`, "GET", { host });
      expect(res.status).toBe(400);
      expect(res.headers["content-type"]).toBe("application/soap+xml; charset=utf-8");
      expect(res.body.toString()).toContain("Host");
    }
  });

  it("two Host lines (a.example, b.example) → 400", async () => {
    // node:http sends one Host line at most: the request is written on a socket.
    const { hostname, port, pathname, search } = new URL(loopback);
    const status = await new Promise<string>((resolve, reject) => {
      let head = "";
      const socket = connect({ host: hostname, port: Number(port) }, () =>
        socket.write(
          `GET ${pathname}${search} HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n`,
        ),
      );
      socket.on("data", (chunk: Buffer) => {
        head += chunk.toString("latin1");
      });
      socket.on("close", () => resolve(head.slice(9, 12)));
      socket.on("error", reject);
    });
    expect(status).toBe("400");
  });

  it('a trusted X-Forwarded-Host: x"y → 400, never written into the WSDL', async () => {
    const res = await rawRequest(loopback, "GET", { "x-forwarded-host": 'x"y' });
    expect(res.status).toBe(400);
  });

  it.each([
    ["shop.example:8080", "http://shop.example:8080/ws/customer"],
    ["127.0.0.1", "http://127.0.0.1/ws/customer"],
    ["[2001:db8::1]:3000", "http://[2001:db8::1]:3000/ws/customer"],
    ["shop.example:", "http://shop.example:/ws/customer"],
  ])("Host: %s → 200, address %s", async (host, expected) => {
    const res = await rawRequest(loopback, "GET", { host });
    expect(res.status).toBe(200);
    expect(/<soap12:address location="([^"]*)"/.exec(res.body.toString())?.[1]).toBe(expected);
  });
});
