import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, type Started, sqlite } from "./harness.js";

// RFC 9110 §12.5.5: Vary names the request fields, besides the target URI, that chose the
// response. Behind a trusted proxy the links of a resource and the WSDL's soap12:address are read
// from the forwarded fields (the X-Forwarded-* headers the proxy sets; a Forwarded it passes through
// from the client is never read), so each field that was read must be named, or a shared cache
// hands one host's links to another.
const varied = (res: Response) =>
  (res.headers.get("vary") ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "");

const wsdlAddress = async (res: Response) => /<soap12:address location="([^"]*)"/.exec(await res.text())?.[1];

describe("forwarded fields behind TRUST_PROXY=loopback", () => {
  let s: Started;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    s = await sqlite.start({ TRUST_PROXY: "loopback" });
    api = client(s.url);
  });
  afterAll(() => s.stop());

  it("GET / with a client's Forwarded: host=evil.example;proto=http, X-Forwarded-Host: shop.example, X-Forwarded-Proto: https → links on https://shop.example, Vary without Forwarded", async () => {
    const res = await api("/", {
      headers: {
        forwarded: "host=evil.example;proto=http",
        "x-forwarded-host": "shop.example",
        "x-forwarded-proto": "https",
      },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { _links: { self: { href: string } } };
    expect(body._links.self.href).toBe("https://shop.example/");
    expect(varied(res)).toEqual(expect.arrayContaining(["x-forwarded-proto", "x-forwarded-host"]));
    // Forwarded was not read, and is not named.
    expect(varied(res)).not.toContain("forwarded");
  });

  it("GET /employees/5 with X-Forwarded-Host: shop.example → Vary: X-Forwarded-Proto, X-Forwarded-Host", async () => {
    const res = await api("/employees/5", { headers: { "x-forwarded-host": "shop.example" } });
    expect(res.status).toBe(200);
    expect(JSON.stringify(await res.json())).toContain("http://shop.example/");
    expect(varied(res)).toEqual(expect.arrayContaining(["x-forwarded-proto", "x-forwarded-host"]));
    expect(varied(res)).not.toContain("forwarded");
  });

  it("a 304 carries the same Vary as its 200 (RFC 9110 §15.4.5)", async () => {
    const headers = { "x-forwarded-host": "shop.example", "accept-encoding": "identity" };
    const first = await api("/employees/5", { headers });
    const again = await api("/employees/5", {
      headers: { ...headers, "if-none-match": first.headers.get("etag") ?? "", "cache-control": "max-age=0" },
    });
    expect(again.status).toBe(304);
    expect(varied(again)).toEqual(varied(first));
  });

  it("?wsdl with X-Forwarded-Host: shop.example, X-Forwarded-Proto: https and a client's Forwarded: host=evil.example → that address, and the links' Vary fields", async () => {
    const headers = {
      forwarded: "host=evil.example;proto=http",
      "x-forwarded-host": "shop.example",
      "x-forwarded-proto": "https",
    };
    const wsdl = await api("/ws/customer?wsdl", { headers });
    expect(wsdl.status).toBe(200);
    expect(varied(wsdl)).not.toContain("forwarded");
    expect(await wsdlAddress(wsdl)).toBe("https://shop.example/ws/customer");
    const links = await api("/", { headers });
    const forwardedFields = (res: Response) => varied(res).filter((name) => /forwarded/.test(name));
    expect(forwardedFields(wsdl)).toEqual(forwardedFields(links));
  });

  it("?wsdl and links with X-Forwarded-Host name the same forwarded fields", async () => {
    const headers = { "x-forwarded-host": "shop.example" };
    const wsdl = await api("/ws/customer?wsdl", { headers });
    const links = await api("/", { headers });
    const forwardedFields = (res: Response) =>
      varied(res)
        .filter((name) => /forwarded/.test(name))
        .sort();
    expect(forwardedFields(wsdl)).toEqual(["x-forwarded-host", "x-forwarded-proto"]);
    expect(forwardedFields(links)).toEqual(forwardedFields(wsdl));
  });
});

describe("forwarded fields without TRUST_PROXY", () => {
  let s: Started;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    s = await sqlite.start();
    api = client(s.url);
  });
  afterAll(() => s.stop());

  it("Forwarded and X-Forwarded-Host are ignored and not named in Vary", async () => {
    const headers = { forwarded: "host=shop.example", "x-forwarded-host": "shop.example" };
    const res = await api("/", { headers });
    expect(JSON.stringify(await res.json())).not.toContain("shop.example");
    expect(varied(res).filter((name) => /forwarded/.test(name))).toEqual([]);
    const wsdl = await api("/ws/customer?wsdl", { headers });
    expect(await wsdlAddress(wsdl)).not.toContain("shop.example");
    expect(varied(wsdl).filter((name) => /forwarded/.test(name))).toEqual([]);
  });
});

describe("TRUST_PROXY=1 (a hop count): the proxy's X-Forwarded-*, the client's own Forwarded passed through", () => {
  let s: Started;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    s = await sqlite.start({ TRUST_PROXY: "1" });
    api = client(s.url);
  });
  afterAll(() => s.stop());

  it("GET /employees/2 with X-Forwarded-For, X-Forwarded-Host: api.example.com, X-Forwarded-Proto: https, Forwarded: host=evil.example;proto=http → self https://api.example.com/employees/2", async () => {
    const res = await api("/employees/2", {
      headers: {
        accept: "application/hal+json",
        "x-forwarded-for": "203.0.113.66",
        "x-forwarded-host": "api.example.com",
        "x-forwarded-proto": "https",
        forwarded: "host=evil.example;proto=http",
      },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { _links: { self: { href: string } } };
    expect(body._links.self.href).toBe("https://api.example.com/employees/2");
    expect(res.headers.get("strict-transport-security")).toMatch(/^max-age=\d+/);
  });

  it("GET /employees/2 with X-Forwarded-Proto: http and a client's Forwarded: proto=https → http links, no Strict-Transport-Security", async () => {
    const res = await api("/employees/2", {
      headers: {
        accept: "application/hal+json",
        "x-forwarded-for": "203.0.113.67",
        "x-forwarded-proto": "http",
        forwarded: "proto=https;host=evil.example",
      },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { _links: { self: { href: string } } };
    expect(body._links.self.href).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/employees\/2$/);
    expect(res.headers.get("strict-transport-security")).toBeNull();
  });
});
