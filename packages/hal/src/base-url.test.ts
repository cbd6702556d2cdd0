import { errorHandler } from "@svc/errors/express";
import { parseHost } from "@svc/kernel";
import { at, listen, simulatedProxy } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getWithHost, raw } from "../test/helpers.js";
import { hrefFor as coreHrefFor, parseForwarded, resolveOrigin } from "./base-url.js";
import { externalOrigin, hrefFor } from "./express.js";

function appWith(trust: boolean | string | undefined, absolute = true, forwardedHeaders?: "forwarded") {
  const app = express();
  if (trust !== undefined) app.set("trust proxy", trust);
  const family = forwardedHeaders === undefined ? {} : { forwardedHeaders };
  app.post("/employees", (req, res) => {
    res
      .location(hrefFor(req, "/employees/7", { absolute, ...family }))
      .status(201)
      .json({ id: 7 });
  });
  app.get("/origin", (req, res) => {
    res.json({
      origin: externalOrigin(req, family),
      href: hrefFor(req, "/employees/7", { absolute, ...family }),
    });
  });
  app.use(errorHandler({ logger: { error() {} } }));
  return app;
}

describe("external base URL through a real server", () => {
  const servers: { close: () => Promise<void> }[] = [];
  let trusted: string;
  let untrusted: string;
  let relative: string;
  /** Trusts loopback and reads RFC 7239 `Forwarded` alone (`forwardedHeaders: "forwarded"`). */
  let rfc7239: string;
  beforeAll(async () => {
    const a = await listen(appWith("loopback"));
    const b = await listen(appWith(undefined));
    const c = await listen(appWith("loopback", false));
    const d = await listen(appWith("loopback", true, "forwarded"));
    servers.push(a, b, c, d);
    trusted = a.url;
    untrusted = b.url;
    relative = c.url;
    rfc7239 = d.url;
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it("no proxy → links use the Host the client used", async () => {
    const body = await (await fetch(`${untrusted}/origin`)).json();
    expect(at(body, "origin")).toBe(untrusted);
    expect(at(body, "href")).toBe(`${untrusted}/employees/7`);
  });

  // RFC 9112 §3.2.2: the origin server MUST ignore Host for an absolute-form target and use the
  // target's host information; a trusted proxy's forwarded host still wins (it names the URL the
  // client used before the proxy).
  it.each([
    ["untrusted", "http://api.example.com:8080/origin", "Host: evil.example", "http://api.example.com:8080"],
    ["untrusted", "http://api.example.com/origin?x=1", "Host: evil.example", "http://api.example.com"],
    [
      "trusted",
      "http://internal.example/origin",
      "Host: evil.example\r\nX-Forwarded-Host: api.example.com",
      "http://api.example.com",
    ],
  ])("%s peer, GET %s with %s → links from %s", async (which, target, headers, origin) => {
    const base = which === "trusted" ? trusted : untrusted;
    const reply = await raw(base, `GET ${target} HTTP/1.1\r\n${headers}\r\nConnection: close\r\n\r\n`);
    expect(reply).toMatch(/^HTTP\/1\.1 200 /);
    const body = JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>;
    expect(body).toEqual({ origin, href: `${origin}/employees/7` });
  });

  it("trusted proxy with X-Forwarded-Proto/Host → links and Location use the public URL", async () => {
    const proxy = await simulatedProxy(trusted, {
      "x-forwarded-proto": "https",
      "x-forwarded-host": "api.example.com",
    });
    try {
      const body = await (await fetch(`${proxy.url}/origin`)).json();
      expect(at(body, "origin")).toBe("https://api.example.com");
      const created = await fetch(`${proxy.url}/employees`, { method: "POST" });
      expect(created.status).toBe(201);
      expect(created.headers.get("location")).toBe("https://api.example.com/employees/7");
    } finally {
      await proxy.close();
    }
  });

  it("trusted proxy with X-Forwarded-Host: api.example.com, -Proto: https and the client's Forwarded: host=evil.example;proto=http → https://api.example.com", async () => {
    const proxy = await simulatedProxy(trusted, {
      forwarded: "host=evil.example;proto=http",
      "x-forwarded-host": "api.example.com",
      "x-forwarded-proto": "https",
    });
    try {
      const body = await (await fetch(`${proxy.url}/origin`)).json();
      expect(at(body, "origin")).toBe("https://api.example.com");
      expect(at(body, "href")).toBe("https://api.example.com/employees/7");
    } finally {
      await proxy.close();
    }
  });

  it('forwardedHeaders "forwarded", trusted proxy with Forwarded: proto=https;host=… and X-Forwarded-Host → Forwarded alone', async () => {
    const proxy = await simulatedProxy(rfc7239, {
      // The peer's element names a trusted (loopback) hop before it, so that hop's element counts.
      forwarded: 'for=192.0.2.60;proto=https;host="gw.example.com:8443", for=127.0.0.1;host=inner',
      "x-forwarded-host": "other.example.com",
    });
    try {
      const body = await (await fetch(`${proxy.url}/origin`)).json();
      expect(at(body, "origin")).toBe("https://gw.example.com:8443");
    } finally {
      await proxy.close();
    }
  });

  // RFC 7239 §4: a proxy appends its element ("can either append it to the last existing
  // Forwarded header field after a comma separator or add a new field at the end"), so the last
  // element is the trusted peer's, and one before it counts only when the hop that added it is
  // trusted too (its address is the for= of the element after it). A client's own Forwarded comes
  // first, and must not name the links.
  it.each([
    ["host=evil.example, for=192.0.2.60;host=api.example.com;proto=https", "https://api.example.com"],
    ["proto=https;host=evil.example, for=192.0.2.60;host=api.example.com", "http://api.example.com"],
    ["for=192.0.2.60;host=gw.example.com;proto=https, for=127.0.0.1;host=inner", "https://gw.example.com"],
    ['for=192.0.2.60;host=gw.example.com, for="[::1]:4711";host=inner', "http://gw.example.com"],
    ['for=192.0.2.60;host=gw.example.com, for="_hidden";host=inner', "http://inner"],
    ["for=192.0.2.60;host=gw.example.com, for=unknown;host=inner", "http://inner"],
    ["host=evil.example, host=api.example.com", "http://api.example.com"],
  ])(
    'forwardedHeaders "forwarded", trusted peer, Forwarded: %s → links from %s',
    async (forwarded, origin) => {
      const reply = await raw(
        rfc7239,
        `GET /origin HTTP/1.1\r\nHost: 127.0.0.1\r\nForwarded: ${forwarded}\r\nConnection: close\r\n\r\n`,
      );
      expect(reply).toMatch(/^HTTP\/1\.1 200 /);
      const body = JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>;
      expect(body.origin).toBe(origin);
    },
  );

  // A proxy that adds to X-Forwarded-Host or -Proto appends (Apache's mod_proxy does, as every
  // proxy does to X-Forwarded-For), so a client's own value comes first: the last value is the
  // trusted peer's, and one before it counts only while X-Forwarded-For says the hop that added it
  // is trusted too (as proxy-addr walks it). A proxy that replaces the header leaves one value.
  it.each([
    ["evil.example, api.example.com", "https, http", "192.0.2.60", "http://api.example.com"],
    ["evil.example, api.example.com", "http, https", "192.0.2.60", "https://api.example.com"],
    ["evil.example,api.example.com:8443", "https", "192.0.2.60", "https://api.example.com:8443"],
    [
      "evil.example, gw.example.com, inner",
      "http, https, http",
      "192.0.2.60, 127.0.0.1",
      "https://gw.example.com",
    ],
    ["evil.example, gw.example.com, inner", "http", "192.0.2.60, 192.0.2.61", "http://inner"],
    ["api.example.com", "https", "192.0.2.60, 127.0.0.1", "https://api.example.com"],
  ])(
    "trusted peer, X-Forwarded-Host: %s, -Proto: %s, -For: %s → links from %s",
    async (host, proto, xff, origin) => {
      const reply = await raw(
        trusted,
        `GET /origin HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-Host: ${host}\r\nX-Forwarded-Proto: ${proto}\r\nX-Forwarded-For: ${xff}\r\nConnection: close\r\n\r\n`,
      );
      expect(reply).toMatch(/^HTTP\/1\.1 200 /);
      const body = JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>;
      expect(body.origin).toBe(origin);
    },
  );

  // A Forwarded header the trusted chain carries but that cannot be read (a client's element left a
  // quoted-string open, or pushed the list past what is read) must not hand the links to the next
  // source, an X-Forwarded-Host the client may have sent itself.
  it.each([
    ["an open quoted-string", 'for="x, for=192.0.2.60;host=api.example.com'],
    ["201 elements", `${"for=192.0.2.1, ".repeat(200)}for=192.0.2.60;host=api.example.com`],
  ])(
    'forwardedHeaders "forwarded", trusted peer, Forwarded with %s, X-Forwarded-Host: evil.example → 400',
    async (_label, forwarded) => {
      const reply = await raw(
        rfc7239,
        `GET /origin HTTP/1.1\r\nHost: 127.0.0.1\r\nForwarded: ${forwarded}\r\nX-Forwarded-Host: evil.example\r\nConnection: close\r\n\r\n`,
      );
      expect(reply).toMatch(/^HTTP\/1\.1 400 /);
      expect(reply).not.toContain("evil.example");
    },
  );

  it("untrusted proxy with X-Forwarded-Host: evil.example → forwarded headers ignored", async () => {
    const proxy = await simulatedProxy(untrusted, {
      "x-forwarded-proto": "https",
      "x-forwarded-host": "evil.example",
      forwarded: "proto=https;host=evil.example",
    });
    try {
      const body = await (await fetch(`${proxy.url}/origin`)).json();
      // the proxy passes the client's Host through unchanged
      expect(at(body, "origin")).toBe(proxy.url);
      const created = await fetch(`${proxy.url}/employees`, { method: "POST" });
      expect(created.headers.get("location")).toBe(`${proxy.url}/employees/7`);
    } finally {
      await proxy.close();
    }
  });

  it("trusted X-Forwarded-Host: bad host<script> → 400, not a link to it", async () => {
    const proxy = await simulatedProxy(trusted, { "x-forwarded-host": "bad host<script>" });
    try {
      const res = await fetch(`${proxy.url}/origin`);
      expect(res.status).toBe(400);
      expect(at(await res.json(), "status")).toBe(400);
    } finally {
      await proxy.close();
    }
  });

  it("trusted X-Forwarded-Prefix: /api/ → links and Location under https://api.example.com/api", async () => {
    const proxy = await simulatedProxy(trusted, {
      "x-forwarded-proto": "https",
      "x-forwarded-host": "api.example.com",
      "x-forwarded-prefix": "/api/",
    });
    try {
      const created = await fetch(`${proxy.url}/employees`, { method: "POST" });
      expect(created.headers.get("location")).toBe("https://api.example.com/api/employees/7");
    } finally {
      await proxy.close();
    }
  });

  it("untrusted X-Forwarded-Prefix: /api → ignored", async () => {
    const proxy = await simulatedProxy(untrusted, { "x-forwarded-prefix": "/api" });
    try {
      const created = await fetch(`${proxy.url}/employees`, { method: "POST" });
      expect(created.headers.get("location")).toBe(`${proxy.url}/employees/7`);
    } finally {
      await proxy.close();
    }
  });

  // RFC 3986 §2.3, §6.2.2.2: %2E is ".", so /api/%2e%2e/admin is /api/../admin (WHATWG URL
  // treats it as a dot segment too): a prefix that climbs out of itself.
  it.each([
    "//evil.example",
    "/api/../admin",
    "api",
    "/a b",
    "/x?y",
    "/api/%2e%2e/admin",
    "/%2E%2e",
    "/.%2e/x",
    "/%2e",
  ])("trusted X-Forwarded-Prefix: %j → 400", async (prefix) => {
    const proxy = await simulatedProxy(trusted, { "x-forwarded-prefix": prefix });
    try {
      expect((await fetch(`${proxy.url}/origin`)).status).toBe(400);
    } finally {
      await proxy.close();
    }
  });

  it("absolute: false with trusted X-Forwarded-Prefix: /api → Location /api/employees/7", async () => {
    const proxy = await simulatedProxy(relative, { "x-forwarded-prefix": "/api" });
    try {
      const created = await fetch(`${proxy.url}/employees`, { method: "POST" });
      expect(created.headers.get("location")).toBe("/api/employees/7");
    } finally {
      await proxy.close();
    }
  });

  it("absolute: false → Location is a path, whatever the proxy says", async () => {
    const proxy = await simulatedProxy(relative, { "x-forwarded-host": "api.example.com" });
    try {
      const created = await fetch(`${proxy.url}/employees`, { method: "POST" });
      expect(created.headers.get("location")).toBe("/employees/7");
    } finally {
      await proxy.close();
    }
  });
});

describe("resolveOrigin (pure core)", () => {
  it("X-Forwarded-Proto: ftp → ignored, connection scheme kept", () => {
    expect(
      resolveOrigin({
        headers: { host: "a.example", "x-forwarded-proto": "ftp" },
        encrypted: false,
        trusted: true,
      }),
    ).toBe("http://a.example");
  });
  it("X-Forwarded-Proto: https, http → the value the trusted peer appended, unless its client is trusted too", () => {
    const headers = { host: "a.example", "x-forwarded-proto": "https, http", "x-forwarded-for": "10.0.0.7" };
    expect(resolveOrigin({ headers, encrypted: false, trusted: true })).toBe("http://a.example");
    expect(resolveOrigin({ headers, encrypted: false, trusted: true, trustProxy: () => false })).toBe(
      "http://a.example",
    );
    expect(
      resolveOrigin({
        headers,
        encrypted: false,
        trusted: true,
        trustProxy: (a, hop) => a === "10.0.0.7" && hop === 1,
      }),
    ).toBe("https://a.example");
  });
  it("https with Host a.example:443 → default port dropped", () => {
    expect(resolveOrigin({ headers: { host: "A.Example:443" }, encrypted: true, trusted: false })).toBe(
      "https://a.example",
    );
  });
  it("Host: [::1]:8080 → IPv6 literal kept", () => {
    expect(resolveOrigin({ headers: { host: "[::1]:8080" }, encrypted: false, trusted: false })).toBe(
      "http://[::1]:8080",
    );
  });
  it("no Host → 400 HttpError", () => {
    expect(() => resolveOrigin({ headers: {}, encrypted: false, trusted: false })).toThrow(
      expect.objectContaining({ status: 400 }),
    );
  });
  it("Host: a.example/evil → 400", () => {
    expect(() =>
      resolveOrigin({ headers: { host: "a.example/evil" }, encrypted: false, trusted: false }),
    ).toThrow(expect.objectContaining({ status: 400 }));
  });
  it('Forwarded with quoted host and IPv6 for="[2001:db8::1]:4711" → host read', () => {
    expect(parseForwarded('for="[2001:db8::1]:4711";proto=HTTPS;host="api.example.com"')).toEqual({
      proto: "https",
      host: "api.example.com",
    });
  });
  it.each([
    [";;;===", {}],
    ['host="unterminated;proto=https', {}],
    ["proto=https;host", {}],
    ['proto=https;host="a.example, b.example", proto=http', { proto: "https", host: "a.example, b.example" }],
    ['host="a\\"b.example"', { host: 'a"b.example' }],
    ["Proto=HTTPS ; Host=api.example.com", { proto: "https", host: "api.example.com" }],
    ["for=1.2.3.4, proto=https;host=evil.example", {}],
  ])("Forwarded: %j → %j", (value, expected) => {
    expect(parseForwarded(value)).toEqual(expected);
  });
  it("hrefFor with //evil.example → 400 invalid_path (a route parameter may have put it there)", () => {
    expect(() => coreHrefFor({ headers: { host: "a" } } as never, "//evil.example")).toThrow(
      expect.objectContaining({ status: 400, code: "invalid_path" }),
    );
  });
  it("hrefFor with a path not starting with / → TypeError (a programming error)", () => {
    expect(() => coreHrefFor({ headers: { host: "a" } } as never, "evil.example")).toThrow(TypeError);
  });
  // The WHATWG URL parser, which browsers follow for Location and links, reads "\" as "/" and
  // drops tab and newlines: these are "//evil.example" to it, another origin. Percent-encoded, as
  // no URI carries them, they are a path of this origin.
  it.each([
    ["/\\evil.example/x", "/%5Cevil.example/x"],
    ["/\t/evil.example/x", "/%09/evil.example/x"],
    ["/\n\\evil.example", "/%0A%5Cevil.example"],
  ])("hrefFor(req, %j, { absolute: false }) → %s, not a link to another origin", (path, expected) => {
    expect(new URL(path, "https://a.example").host).toBe("evil.example");
    const href = coreHrefFor({ headers: { host: "a" } } as never, path, { absolute: false });
    expect(href).toBe(expected);
    expect(new URL(href, "https://a.example").host).toBe("a.example");
  });
});

describe("an empty port in a forwarded host (RFC 3986 §3.2.3) through a real server", () => {
  let server: { url: string; close: () => Promise<void> };
  let rfc7239: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    server = await listen(appWith("loopback"));
    rfc7239 = await listen(appWith("loopback", true, "forwarded"));
  });
  afterAll(() => Promise.all([server.close(), rfc7239.close()]));

  it.each([
    ["X-Forwarded-Host: api.example.com:", { "x-forwarded-host": "api.example.com:" }],
    [
      'Forwarded: host="api.example.com:" (forwardedHeaders "forwarded")',
      { forwarded: 'host="api.example.com:";proto=https' },
    ],
  ])("%s → links and Location without the ':'", async (_label, headers) => {
    const url = "forwarded" in headers ? rfc7239.url : server.url;
    const proxy = await simulatedProxy(url, { "x-forwarded-proto": "https", ...headers });
    try {
      const body = await (await fetch(`${proxy.url}/origin`)).json();
      expect(at(body, "origin")).toBe("https://api.example.com");
      expect(at(body, "href")).toBe("https://api.example.com/employees/7");
      const created = await fetch(`${proxy.url}/employees`, { method: "POST" });
      expect(created.status).toBe(201);
      expect(created.headers.get("location")).toBe("https://api.example.com/employees/7");
    } finally {
      await proxy.close();
    }
  });

  it.each([":443", "x:abc", "x:99999"])("X-Forwarded-Host: %s → 400 (still refused)", async (host) => {
    const proxy = await simulatedProxy(server.url, { "x-forwarded-host": host });
    try {
      expect((await fetch(`${proxy.url}/origin`)).status).toBe(400);
    } finally {
      await proxy.close();
    }
  });
});

const label63 = "a".repeat(63);
/** 253 characters: three 63-character labels and one of 61. */
const name253 = `${label63}.${label63}.${label63}.${"b".repeat(61)}`;

describe("Host validation through a real server (RFC 9110 §7.2, RFC 1035 §2.3.4)", () => {
  let server: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    server = await listen(appWith(undefined));
  });
  afterAll(() => server.close());

  it.each([
    ["of 3,049 characters in one-letter labels", `${"a.".repeat(1524)}a`],
    ["a 64-character label", `${"a".repeat(64)}.example`],
    ["a 254-character name", `${name253}c`],
    ["port 65536", "api.example:65536"],
    ["port 0", "api.example:0"],
    ["a port and no host", ":80"],
    ["a port that is not digits", "x:abc"],
    ["port 99999", "x:99999"],
    ["two colons", "api.example::"],
    ["a six-digit port", "api.example:080808"],
    ["an IPv6 literal that is not one", "[zz::1]"],
    ["a long run of colons in brackets", `[${":".repeat(3000)}]`],
    ["an IPv6 zone identifier", "[fe80::1%25eth0]"],
    ["a userinfo", "user@api.example"],
    ["an empty label", "api..example"],
    ["a label ending with a hyphen", "api-.example"],
    // Other spellings of IPv4 addresses (WHATWG URL reads them, inet_aton some, RFC 3986 none).
    ["an IPv4 address as one number", "2130706433"],
    ["an IPv4 address in two parts", "127.1:8080"],
    ["an IPv4 address in hex", "0x7f.0.0.1"],
    ["an IPv4 address in octal", "0177.0.0.1"],
    ["an IPv4 octet with a leading zero", "127.0.0.01"],
    ["an IPv4 octet over 255", "256.0.0.1"],
    ["five numeric labels", "1.2.3.4.5."],
    ["a name ending in a number", "api.example.123"],
    ["a name ending in 0x", "api.0x"],
  ])("Host: %s → 400 error record, no link", async (_label, host) => {
    const res = await getWithHost(server.url, "/origin", host);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ status: 400 });
    expect(res.body).not.toContain(host.slice(0, 30));
  });

  it.each([
    ["a 253-character name", name253, `http://${name253}`],
    // RFC 1034 §3.1: the absolute spelling of a name is that name, written without the root's dot.
    ["a 253-character name with its root dot", `${name253}.`, `http://${name253}`],
    ["an IPv4 address with a root dot", "127.0.0.1.:8080", "http://127.0.0.1:8080"],
    ["an IPv6 literal in a long spelling", "[2001:db8:0:0::1]", "http://[2001:db8::1]"],
    ["a 63-character label", `${label63}.example:8080`, `http://${label63}.example:8080`],
    ["port 65535", "api.example:65535", "http://api.example:65535"],
    ["port 80 (the default, dropped)", "API.example:80", "http://api.example"],
    ["an IPv6 literal", "[2001:DB8::1]:8443", "http://[2001:db8::1]:8443"],
    ["an IPv4 address", "192.0.2.7:8080", "http://192.0.2.7:8080"],
    // RFC 3986 §3.2.3: port = *DIGIT, and normalizers "should omit the port component and its
    // ':' delimiter if port is empty".
    ["an empty port (omitted)", "API.example:", "http://api.example"],
    ["an empty port after the root dot", "api.example.:", "http://api.example"],
    ["an IPv6 literal with an empty port", "[2001:db8::1]:", "http://[2001:db8::1]"],
    ["an IPv4 address with an empty port", "192.0.2.7:", "http://192.0.2.7"],
  ])("Host: %s → 200 with that origin", async (_label, host, origin) => {
    const res = await getWithHost(server.url, "/origin", host);
    expect(res.status).toBe(200);
    expect(at(JSON.parse(res.body), "origin")).toBe(origin);
  });
});

describe("parseHost (pure core)", () => {
  it("a 100,000-character value is refused without looking at its labels", () => {
    expect(parseHost("a.".repeat(50_000))).toBeUndefined();
  });
  it("api.example: → no port (RFC 3986 §3.2.3: an empty port is omitted)", () => {
    expect(parseHost("API.example:")).toEqual({ host: "api.example", port: undefined });
    expect(parseHost("[::1]:")).toEqual({ host: "[::1]", port: undefined });
    expect(parseHost(":")).toBeUndefined();
    expect(parseHost(":80")).toBeUndefined();
  });
  it("api.example:8080 → host and port", () => {
    expect(parseHost("API.example:8080")).toEqual({ host: "api.example", port: 8080 });
  });
  it("a repeated value → the same frozen result (a one-entry memo)", () => {
    const first = parseHost("memo.example:8443");
    expect(first).toEqual({ host: "memo.example", port: 8443 });
    expect(Object.isFrozen(first)).toBe(true);
    expect(parseHost("memo.example:8443")).toBe(first);
  });
  it("alternating values are each checked exactly, valid or not", () => {
    for (let i = 0; i < 3; i += 1) {
      expect(parseHost("a.example")).toEqual({ host: "a.example", port: undefined });
      expect(parseHost("a.example:0")).toBeUndefined();
      expect(parseHost("a.example:0")).toBeUndefined();
      expect(parseHost("B.example:1")).toEqual({ host: "b.example", port: 1 });
      expect(parseHost("bad host")).toBeUndefined();
    }
  });
});

// hrefFor builds a Location and link hrefs, which must be URIs (RFC 9110 §10.2.2 Location =
// URI-reference; draft-kelly-json-hal-11 §5.1 href is a URI): a path holding a route parameter
// the client chose (Express decodes it) put characters no URI carries into them. A "\" that a
// WHATWG URL parser (browsers, fetch) reads as "/" climbed out of the collection (Express's
// res.location leaves it as it is), and a space or a character outside ASCII made the href an IRI.
describe("hrefFor with a route parameter the client chose (RFC 3986 §2.1)", () => {
  let url: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const app = express();
    app.put("/documents/:name", (req, res) => {
      const href = hrefFor(req, `/documents/${req.params.name}`);
      res
        .location(href)
        .status(201)
        .json({ _links: { self: { href } } });
    });
    app.use(errorHandler({ logger: { error() {} } }));
    ({ url, close } = await listen(app));
  });
  afterAll(async () => close());

  it("PUT /documents/a%5C..%5C..%5Cadmin → Location and self stay under /documents/", async () => {
    const res = await fetch(`${url}/documents/a%5C..%5C..%5Cadmin`, { method: "PUT" });
    expect(res.status).toBe(201);
    const location = res.headers.get("location") as string;
    expect(location).toBe(`${url}/documents/a%5C..%5C..%5Cadmin`);
    expect(new URL(location).pathname.startsWith("/documents/")).toBe(true);
    expect(at(await res.json(), "_links", "self", "href")).toBe(location);
  });

  it("PUT /documents/%E5%90%8D%20x (名 x) → 201 with the name percent-encoded as UTF-8", async () => {
    const res = await fetch(`${url}/documents/%E5%90%8D%20x`, { method: "PUT" });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`${url}/documents/%E5%90%8D%20x`);
    expect(at(await res.json(), "_links", "self", "href")).toBe(`${url}/documents/%E5%90%8D%20x`);
  });

  it("hrefFor keeps a query, a fragment and percent-encodings as given", () => {
    const req = { headers: { host: "api.example" }, socket: {}, url: "/" } as never;
    expect(coreHrefFor(req, "/search?q=a%20b&x=1#top")).toBe("http://api.example/search?q=a%20b&x=1#top");
    expect(coreHrefFor(req, "/100%", { absolute: false })).toBe("/100%25");
  });
});
