import { connect } from "node:net";
import { type Listening, listen, rawRequest } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CUSTOMER_WSDL, customerHandlers, silentLogger, soapErrors } from "../../test/helpers.js";
import { soapEndpoint } from "../express.js";

// The WSDL's soap12:address behind a proxy that appends to X-Forwarded-Host / -Proto (Apache's
// mod_proxy does, as every proxy does to X-Forwarded-For): a value the client sent itself comes
// first, so only the one the trusted chain appended may name the address (RFC 7239 §8.1 on the
// de facto headers' trust: a forwarded value is only as trustworthy as the proxy that set it).
let servers: Listening[] = [];

async function serve(trust: unknown, forwardedHeaders?: "forwarded"): Promise<string> {
  const app = express();
  app.set("trust proxy", trust);
  app.use(
    "/ws/customer",
    soapEndpoint({
      wsdl: CUSTOMER_WSDL,
      handlers: customerHandlers(),
      logger: silentLogger,
      ...(forwardedHeaders === undefined ? {} : { forwardedHeaders }),
    }),
  );
  app.use(soapErrors("/ws/customer"));
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
/** Trusts loopback, reads RFC 7239 `Forwarded` alone. */
let rfc7239: string;
beforeAll(async () => {
  loopback = await serve("loopback");
  rfc7239 = await serve("loopback", "forwarded");
  // The peer (loopback) and the proxy before it (198.51.100.7) are trusted.
  twoHops = await serve(["loopback", "198.51.100.7"]);
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

describe("soap12:address behind a trusted proxy that sets X-Forwarded-* (the default)", () => {
  it("X-Forwarded-Host: shop.example, X-Forwarded-Proto: https and a client's Forwarded: host=evil.example;proto=http → https://shop.example/ws/customer", async () => {
    expect(
      await address(loopback, {
        forwarded: "host=evil.example;proto=http",
        "x-forwarded-host": "shop.example",
        "x-forwarded-proto": "https",
      }),
    ).toBe("https://shop.example/ws/customer");
  });

  it("Forwarded: proto=https;host=shop.example alone → not read, the request's own Host", async () => {
    const url = new URL(loopback);
    expect(await address(loopback, { forwarded: "proto=https;host=shop.example" })).toBe(
      `http://${url.host}/ws/customer`,
    );
  });
});

describe('soap12:address behind a trusted proxy that sends Forwarded (RFC 7239), forwardedHeaders "forwarded"', () => {
  it("Forwarded: proto=https;host=shop.example → https://shop.example/ws/customer", async () => {
    expect(await address(rfc7239, { forwarded: "proto=https;host=shop.example" })).toBe(
      "https://shop.example/ws/customer",
    );
  });

  it("Forwarded: host=shop.example:8443 and a client's X-Forwarded-Host, X-Forwarded-Proto: https → http://shop.example:8443, never a mix", async () => {
    expect(
      await address(rfc7239, {
        forwarded: 'host="shop.example:8443"',
        "x-forwarded-host": "other.example",
        "x-forwarded-proto": "https",
      }),
    ).toBe("http://shop.example:8443/ws/customer");
  });

  it("Forwarded: host=evil.example, host=shop.example → the element the trusted peer added", async () => {
    expect(await address(rfc7239, { forwarded: "host=evil.example, host=shop.example" })).toBe(
      "http://shop.example/ws/customer",
    );
  });

  it("an untrusted peer's Forwarded is ignored", async () => {
    const untrusted = await serve(false);
    const url = new URL(untrusted);
    expect(await address(untrusted, { forwarded: "host=shop.example;proto=https" })).toBe(
      `http://${url.host}/ws/customer`,
    );
  });

  it('a trusted Forwarded: host="x y" → 400, never written into the WSDL', async () => {
    const res = await fetch(rfc7239, { headers: { forwarded: 'host="x y"' } });
    expect(res.status).toBe(400);
    expect(await res.text()).not.toContain("x y");
  });
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
  ])("Host: %s → 200, address %s", async (host, expected) => {
    const res = await rawRequest(loopback, "GET", { host });
    expect(res.status).toBe(200);
    expect(/<soap12:address location="([^"]*)"/.exec(res.body.toString())?.[1]).toBe(expected);
  });
});

// RFC 3986 §3.2.3: "URI producers and normalizers should omit the port component and its ':'
// delimiter if port is empty or if its value would be the same as that of the scheme's default"
// (80 for http, 443 for https: RFC 9110 §4.2.1, §4.2.2). An empty port is valid in a Host
// (`port = *DIGIT`), and `http://shop.example:/` names the same resource as `http://shop.example/`
// (§6.2.3), which is the form the WSDL writes.
describe("an empty or default port in the address", () => {
  it.each([
    ["Host: shop.example:", "http://shop.example/ws/customer", { host: "shop.example:" }],
    ["Host: [2001:db8::1]:", "http://[2001:db8::1]/ws/customer", { host: "[2001:db8::1]:" }],
    ["Host: shop.example:80", "http://shop.example/ws/customer", { host: "shop.example:80" }],
    ["Host: shop.example:080", "http://shop.example/ws/customer", { host: "shop.example:080" }],
    ["Host: shop.example:443", "http://shop.example:443/ws/customer", { host: "shop.example:443" }],
    [
      "X-Forwarded-Proto: https, X-Forwarded-Host: shop.example:443",
      "https://shop.example/ws/customer",
      { "x-forwarded-proto": "https", "x-forwarded-host": "shop.example:443" },
    ],
    [
      "X-Forwarded-Proto: https, X-Forwarded-Host: shop.example:80",
      "https://shop.example:80/ws/customer",
      { "x-forwarded-proto": "https", "x-forwarded-host": "shop.example:80" },
    ],
    [
      "X-Forwarded-Host: shop.example: (trusted)",
      "http://shop.example/ws/customer",
      { "x-forwarded-host": "shop.example:" },
    ],
  ])("%s → address %s, schemaLocation on it", async (_name, expected, headers) => {
    const res = await rawRequest(loopback, "GET", headers);
    expect(res.status).toBe(200);
    const text = res.body.toString();
    expect(/<soap12:address location="([^"]*)"/.exec(text)?.[1]).toBe(expected);
    expect(text).toContain(`schemaLocation="${expected}?xsd=customer.xsd"`);
  });
});

// RFC 9110 §12.5.5: Vary lists "what parts of a request message, aside from the method and target
// URI, might have influenced the content of this response". Host is part of the target URI
// (§7.1); the forwarded fields a trusted peer's request was read for are not, so a shared cache
// must key on them, or it hands one host's soap12:address to a client of another.
describe("Vary on ?wsdl and ?xsd", () => {
  const varied = (vary: string | string[] | undefined) =>
    String(vary ?? "")
      .split(",")
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name !== "")
      .sort();

  it.each(["wsdl", "xsd=customer.xsd"])(
    "?%s from a trusted peer, X-Forwarded-Host: shop.example → Vary: X-Forwarded-Host, X-Forwarded-Proto",
    async (query) => {
      const url = `${loopback.replace("?wsdl", "")}?${query}`;
      for (const method of ["GET", "HEAD"]) {
        const res = await rawRequest(url, method, { "x-forwarded-host": "shop.example" });
        expect(res.status).toBe(200);
        expect(varied(res.headers.vary)).toEqual(["x-forwarded-host", "x-forwarded-proto"]);
      }
    },
  );

  it("?wsdl from a trusted peer without forwarded fields → Vary: X-Forwarded-Host, X-Forwarded-Proto (their absence chose Host)", async () => {
    const res = await rawRequest(loopback, "GET");
    expect(varied(res.headers.vary)).toEqual(["x-forwarded-host", "x-forwarded-proto"]);
  });

  it("X-Forwarded-Host: evil.example, shop.example through two trusted hops → X-Forwarded-For in Vary too (it chose the value)", async () => {
    const res = await rawRequest(twoHops, "GET", {
      "x-forwarded-for": "203.0.113.9, 198.51.100.7",
      "x-forwarded-host": "evil.example, shop.example",
    });
    expect(res.status).toBe(200);
    expect(varied(res.headers.vary)).toEqual(["x-forwarded-for", "x-forwarded-host", "x-forwarded-proto"]);
  });

  it("If-None-Match: <current tag> → 304 with the same Vary (RFC 9110 §15.4.5)", async () => {
    const first = await rawRequest(loopback, "GET", { "x-forwarded-host": "shop.example" });
    const res = await rawRequest(loopback, "GET", {
      "x-forwarded-host": "shop.example",
      "if-none-match": String(first.headers.etag),
    });
    expect(res.status).toBe(304);
    expect(varied(res.headers.vary)).toEqual(["x-forwarded-host", "x-forwarded-proto"]);
  });

  it('forwardedHeaders "forwarded", Forwarded: host=shop.example;proto=https → Vary: Forwarded alone (the X-Forwarded-* fields were not read)', async () => {
    const res = await rawRequest(rfc7239, "GET", {
      forwarded: "host=shop.example;proto=https",
      "x-forwarded-host": "other.example",
    });
    expect(res.status).toBe(200);
    expect(varied(res.headers.vary)).toEqual(["forwarded"]);
  });

  it("?wsdl from an untrusted peer, X-Forwarded-Host: shop.example → no Vary (only Host was read)", async () => {
    const untrusted = await serve(false);
    const res = await rawRequest(untrusted, "GET", { "x-forwarded-host": "shop.example" });
    expect(res.status).toBe(200);
    expect(res.headers.vary).toBeUndefined();
  });
});
