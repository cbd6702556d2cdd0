import type { IncomingMessage, ServerResponse } from "node:http";
import { type Listening, listen } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isHttpError } from "./http-error.js";
import { type FactsInput, requestFacts, resolveFacts } from "./request-facts.js";
import { compileTrust } from "./trust.js";
import { appendVary } from "./vary.js";

const facts = (headers: FactsInput["headers"], more: Partial<FactsInput> = {}) =>
  resolveFacts({ headers, encrypted: false, trusted: true, peer: "127.0.0.1", ...more });

describe("resolveFacts: origin behind a trusted peer, one family of fields", () => {
  const X = "x-forwarded";
  const RFC = "forwarded";
  it.each([
    [X, { host: "a.example" }, "http://a.example", ["X-Forwarded-Proto", "X-Forwarded-Host"]],
    [RFC, { host: "a.example" }, "http://a.example", ["Forwarded"]],
    [
      X,
      { host: "a.example", forwarded: "proto=https;host=shop.example" },
      "http://a.example",
      ["X-Forwarded-Proto", "X-Forwarded-Host"],
    ],
    [
      RFC,
      { host: "a.example", forwarded: "proto=https;host=shop.example" },
      "https://shop.example",
      ["Forwarded"],
    ],
    // The proxy's X-Forwarded-*, the client's own Forwarded passed through: never a mix.
    [
      X,
      {
        host: "internal.example",
        forwarded: "host=evil.example;proto=http",
        "x-forwarded-host": "api.example.com",
        "x-forwarded-proto": "https",
      },
      "https://api.example.com",
      ["X-Forwarded-Proto", "X-Forwarded-Host"],
    ],
    [
      RFC,
      {
        host: "internal.example",
        forwarded: "host=api.example.com;proto=https",
        "x-forwarded-host": "evil.example",
        "x-forwarded-proto": "http",
      },
      "https://api.example.com",
      ["Forwarded"],
    ],
    [
      RFC,
      { host: "a.example", forwarded: "host=shop.example", "x-forwarded-proto": "https" },
      "http://shop.example",
      ["Forwarded"],
    ],
    [
      X,
      { host: "a.example", "x-forwarded-host": "evil.example, shop.example" },
      "http://shop.example",
      ["X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-For"],
    ],
    [
      RFC,
      { host: "a.example", forwarded: "host=evil.example, host=shop.example" },
      "http://shop.example",
      ["Forwarded"],
    ],
    [
      RFC,
      { host: "a.example", forwarded: 'host="shop.example:443";proto=https' },
      "https://shop.example",
      ["Forwarded"],
    ],
    [
      X,
      { host: "a.example", "x-forwarded-proto": "gopher" },
      "http://a.example",
      ["X-Forwarded-Proto", "X-Forwarded-Host"],
    ],
  ] as const)("%s: %j → %s, read from %j", (family, headers, origin, vary) => {
    const f = facts(headers, { forwardedHeaders: family });
    expect(f.origin).toBe(origin);
    expect(f.vary).toEqual(vary);
  });

  it("the default is x-forwarded, as Express and Fastify read", () => {
    const f = facts({
      host: "a.example",
      forwarded: "host=evil.example",
      "x-forwarded-host": "shop.example",
    });
    expect(f.origin).toBe("http://shop.example");
    expect(f.vary).not.toContain("Forwarded");
  });

  it("an untrusted peer's forwarded fields are not read, and Vary names none", () => {
    const f = facts(
      { host: "a.example", forwarded: "host=shop.example", "x-forwarded-host": "b.example" },
      { trusted: false },
    );
    expect(f.origin).toBe("http://a.example");
    expect(f.prefix).toBe("");
    expect(f.client).toBe("127.0.0.1");
    expect(f.vary).toEqual([]);
  });

  it("an absolute-form target names the host in place of Host (RFC 9112 §3.2.2)", () => {
    expect(facts({ host: "a.example" }, { trusted: false, target: "http://b.example/x" }).origin).toBe(
      "http://b.example",
    );
  });

  it.each([
    [{ host: "a b" }, "invalid_host"],
    [{}, "missing_host"],
    [{ host: "a.example", forwarded: 'host="unclosed' }, "invalid_forwarded"],
    [{ host: "a.example", "x-forwarded-host": "x/y" }, "invalid_host"],
  ] as const)("%j → 400 %s", (headers, code) => {
    let caught: unknown;
    try {
      void facts(headers, { forwardedHeaders: "forwarded" in headers ? "forwarded" : "x-forwarded" }).origin;
    } catch (err) {
      caught = err;
    }
    expect(isHttpError(caught) && caught.status === 400 && caught.code).toBe(code);
  });
});

describe("resolveFacts: prefix and client", () => {
  it("X-Forwarded-Prefix: /api/ → /api, named in Vary; a dot segment → 400", () => {
    const f = facts({ "x-forwarded-prefix": "/api/" });
    expect(f.prefix).toBe("/api");
    expect(f.vary).toEqual(["X-Forwarded-Prefix"]);
    expect(() => facts({ "x-forwarded-prefix": "/a/%2e%2e" }).prefix).toThrow(/not a valid path/);
  });

  it("the client is the first X-Forwarded-For address not trusted at its hop", () => {
    const hop = compileTrust(["loopback", "198.51.100.7"]);
    const headers = { "x-forwarded-for": "192.0.2.1, 203.0.113.9, 198.51.100.7" };
    expect(facts(headers, { trustHop: hop }).client).toBe("203.0.113.9");
    expect(facts(headers).client).toBe("198.51.100.7");
    expect(facts(headers, { trustHop: () => true }).client).toBe("192.0.2.1");
    expect(facts({}, { peer: "127.0.0.1" }).client).toBe("127.0.0.1");
  });

  it("forwarded: the client is the for= of the element the chain vouches for; X-Forwarded-For is not read", () => {
    const hop = compileTrust(["loopback", "198.51.100.7"]);
    const headers = {
      forwarded: 'for=192.0.2.1, for=203.0.113.9, for=198.51.100.7, for="[2001:db8::17]:4711"',
      "x-forwarded-for": "192.0.2.99",
    };
    const rfc = { forwardedHeaders: "forwarded" } as const;
    expect(facts(headers, rfc).client).toBe("2001:db8::17");
    expect(facts(headers, { ...rfc, trustHop: compileTrust(["2001:db8::17", "198.51.100.7"]) }).client).toBe(
      "203.0.113.9",
    );
    expect(facts(headers, { ...rfc, trustHop: () => true }).client).toBe("192.0.2.1");
    expect(facts({ forwarded: "for=unknown" }, rfc).client).toBe("unknown");
    expect(facts({ forwarded: "proto=https" }, rfc).client).toBe("127.0.0.1");
    const read = facts(headers, { ...rfc, trustHop: hop });
    expect(read.client).toBe("2001:db8::17");
    expect(read.vary).toEqual(["Forwarded"]);
  });

  it("forwarded: X-Forwarded-Prefix is not read (RFC 7239 has no prefix)", () => {
    const f = facts({ "x-forwarded-prefix": "/api" }, { forwardedHeaders: "forwarded" });
    expect(f.prefix).toBe("");
    expect(f.vary).toEqual([]);
  });
});

describe("compileTrust", () => {
  it("Express's forms, refused ones with a coded TypeError naming the package", () => {
    expect(compileTrust("loopback")("127.0.0.1", 0)).toBe(true);
    expect(compileTrust(1)("203.0.113.9", 1)).toBe(false);
    expect(() => compileTrust("localhost", "hal")).toThrow(
      expect.objectContaining({ code: "ERR_SVC_HAL_TRUST_PROXY" }),
    );
    expect(() => compileTrust(-1)).toThrow(expect.objectContaining({ code: "ERR_SVC_KERNEL_TRUST_PROXY" }));
  });
});

describe("requestFacts on a listening node:http server", () => {
  let server: Listening;
  beforeAll(async () => {
    const trust = compileTrust("loopback");
    server = await listen((req: IncomingMessage, res: ServerResponse) => {
      const f = requestFacts(req, trust, req.url === "/rfc7239" ? "forwarded" : undefined);
      try {
        const body = JSON.stringify({ origin: f.origin, client: f.client });
        appendVary(res, ...f.vary);
        res.end(body);
      } catch (err) {
        res.statusCode = isHttpError(err) ? err.status : 500;
        res.end();
      }
    });
  });
  afterAll(() => server.close());

  it("X-Forwarded-Proto: https, X-Forwarded-Host: shop.example, X-Forwarded-For, a client's Forwarded → the X-Forwarded-* origin and client", async () => {
    const res = await fetch(server.url, {
      headers: {
        forwarded: "for=192.0.2.66;proto=http;host=evil.example",
        "x-forwarded-for": "192.0.2.60",
        "x-forwarded-proto": "https",
        "x-forwarded-host": "shop.example",
      },
    });
    expect(await res.json()).toEqual({ origin: "https://shop.example", client: "192.0.2.60" });
    expect(res.headers.get("vary")).toBe("X-Forwarded-Proto, X-Forwarded-Host, X-Forwarded-For");
  });

  it("Forwarded: for=192.0.2.60;proto=https;host=shop.example, forwardedHeaders forwarded → its origin and client, Vary: Forwarded", async () => {
    const res = await fetch(new URL("/rfc7239", server.url), {
      headers: {
        forwarded: "for=192.0.2.60;proto=https;host=shop.example",
        "x-forwarded-for": "192.0.2.66",
        "x-forwarded-proto": "http",
        "x-forwarded-host": "evil.example",
      },
    });
    expect(await res.json()).toEqual({ origin: "https://shop.example", client: "192.0.2.60" });
    expect(res.headers.get("vary")).toBe("Forwarded");
  });

  it("without forwarded fields → the Host, Vary naming the fields whose absence chose it", async () => {
    const res = await fetch(server.url);
    const { origin } = (await res.json()) as { origin: string };
    expect(origin).toBe(server.url.replace(/\/$/, ""));
    expect(res.headers.get("vary")).toBe("X-Forwarded-Proto, X-Forwarded-Host, X-Forwarded-For");
  });

  it('requestFacts(req, trust, "forwarded-for") → a coded TypeError', () => {
    expect(() => requestFacts({ headers: {} }, true, "forwarded-for" as never)).toThrow(
      expect.objectContaining({ code: "ERR_SVC_KERNEL_FORWARDED_HEADERS" }),
    );
  });
});
