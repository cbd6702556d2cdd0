import { type Listening, listen } from "@svc/test-utils";
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
