import type { IncomingMessage, ServerResponse } from "node:http";
import { type Listening, listen } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isHttpError } from "./http-error.js";
import { type FactsInput, requestFacts, resolveFacts } from "./request-facts.js";
import { compileTrust } from "./trust.js";
import { appendVary } from "./vary.js";

const facts = (headers: FactsInput["headers"], more: Partial<FactsInput> = {}) =>
  resolveFacts({ headers, encrypted: false, trusted: true, peer: "127.0.0.1", ...more });

describe("resolveFacts: origin behind a trusted peer", () => {
  it.each([
    [{ host: "a.example" }, "http://a.example", ["Forwarded", "X-Forwarded-Proto", "X-Forwarded-Host"]],
    [
      { host: "a.example", forwarded: "proto=https;host=shop.example" },
      "https://shop.example",
      ["Forwarded"],
    ],
    [
      { host: "a.example", forwarded: "host=shop.example", "x-forwarded-proto": "https" },
      "https://shop.example",
      ["Forwarded", "X-Forwarded-Proto"],
    ],
    [
      { host: "a.example", "x-forwarded-host": "evil.example, shop.example" },
      "http://shop.example",
      ["Forwarded", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-For"],
    ],
    [
      { host: "a.example", forwarded: "host=evil.example, host=shop.example" },
      "http://shop.example",
      ["Forwarded", "X-Forwarded-Proto"],
    ],
    [
      { host: "a.example", forwarded: 'host="shop.example:443";proto=https' },
      "https://shop.example",
      ["Forwarded"],
    ],
    [
      { host: "a.example", "x-forwarded-proto": "gopher" },
      "http://a.example",
      ["Forwarded", "X-Forwarded-Proto", "X-Forwarded-Host"],
    ],
  ] as const)("%j → %s, read from %j", (headers, origin, vary) => {
    const f = facts(headers);
    expect(f.origin).toBe(origin);
    expect(f.vary).toEqual(vary);
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
      void facts(headers).origin;
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
      const f = requestFacts(req, trust);
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

  it("Forwarded: for=192.0.2.60;proto=https;host=shop.example → its origin, Vary: Forwarded", async () => {
    const res = await fetch(server.url, {
      headers: { forwarded: "for=192.0.2.60;proto=https;host=shop.example", "x-forwarded-for": "192.0.2.60" },
    });
    expect(await res.json()).toEqual({ origin: "https://shop.example", client: "192.0.2.60" });
    expect(res.headers.get("vary")).toBe("Forwarded, X-Forwarded-For");
  });

  it("without forwarded fields → the Host, Vary naming the fields whose absence chose it", async () => {
    const res = await fetch(server.url);
    const { origin } = (await res.json()) as { origin: string };
    expect(origin).toBe(server.url.replace(/\/$/, ""));
    expect(res.headers.get("vary")).toBe("Forwarded, X-Forwarded-Proto, X-Forwarded-Host, X-Forwarded-For");
  });
});
