import { errorHandler } from "@svc/errors/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { raw } from "../test/helpers.js";
import { allowedHosts } from "./express.js";
import { createHostCheck, type HostCheckOptions } from "./host-check.js";

const get = (host: string | undefined, extra: readonly string[] = []) =>
  [
    host === undefined ? "GET /where HTTP/1.0" : "GET /where HTTP/1.1",
    ...(host === undefined ? [] : [`Host: ${host}`]),
    "Connection: close",
    ...extra,
    "",
    "",
  ].join("\r\n");

const status = (reply: string) => Number(reply.slice(9, 12));
const body = (reply: string) =>
  JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>;

function expressApp(hosts: readonly string[] | "*", options?: HostCheckOptions, trustSetting?: string) {
  const app = express();
  if (trustSetting !== undefined) app.set("trust proxy", trustSetting);
  app.use(allowedHosts(hosts, options));
  app.get("/where", (_req, res) => {
    res.json({ ok: true });
  });
  app.use(errorHandler({ logger: { error() {} } }));
  return app;
}

describe("allowedHosts through an Express server (RFC 9110 §7.4, §15.5.20)", () => {
  const servers: Listening[] = [];
  let guarded: string;
  let any: string;
  let proxied: string;
  let expressTrust: string;
  let untrusted: string;
  let rfc7239: string;
  beforeAll(async () => {
    const started = await Promise.all([
      listen(expressApp(["API.Example.com", ".svc.test", "127.0.0.1", "[2001:db8:0::1]", "fqdn.example."])),
      listen(expressApp("*")),
      listen(expressApp(["api.example.com"], { trustProxy: "loopback" })),
      listen(expressApp(["api.example.com"], undefined, "loopback")),
      listen(expressApp(["api.example.com"], { trustProxy: false }, "loopback")),
      listen(expressApp(["api.example.com"], { trustProxy: "loopback", forwardedHeaders: "forwarded" })),
    ]);
    servers.push(...started);
    [guarded, any, proxied, expressTrust, untrusted, rfc7239] = started.map((s) => s.url) as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
  });
  afterAll(() => Promise.all(servers.map((s) => s.close())));

  it.each([
    ["an exact name", "api.example.com"],
    ["an exact name in another case, with a port", "API.EXAMPLE.COM:8443"],
    ["an exact name with its root dot", "api.example.com."],
    ["a name listed with its root dot, given without", "fqdn.example"],
    ["the domain of a .domain entry", "svc.test"],
    ["a subdomain of a .domain entry", "eu.svc.test"],
    ["a sub-subdomain with its root dot", "a.eu.SVC.test.:80"],
    ["an IPv4 address", "127.0.0.1:8080"],
    ["an IPv6 literal in another spelling", "[2001:DB8::1]:8080"],
    ["an exact name with an empty port (RFC 3986 §3.2.3)", "api.example.com:"],
    ["an IPv6 literal with an empty port", "[2001:db8::1]:"],
    ["an IPv4 address with its root dot", "127.0.0.1.:8080"],
  ])("Host: %s → 200", async (_label, host) => {
    expect(status(await raw(guarded, get(host)))).toBe(200);
  });

  it.each([
    ["one number", "2130706433"],
    ["two parts", "127.1"],
    ["hex", "0x7f.0.0.1:8080"],
    ["octal", "0177.0.0.1"],
  ])(
    "Host: the allowed 127.0.0.1 spelt as %s (%s) → 400 invalid_host, never matched",
    async (_label, host) => {
      for (const url of [guarded, any]) {
        const reply = await raw(url, get(host));
        expect(status(reply)).toBe(400);
        expect(body(reply)).toMatchObject({
          status: 400,
          message: "The request's Host header is not a valid host",
        });
      }
    },
  );

  it.each([
    ["a foreign name", "evil.example"],
    ["a suffix that is not a domain boundary", "evilsvc.test"],
    ["a name that only starts like an allowed one", "api.example.com.evil.example"],
    ["another address", "10.9.9.9"],
  ])("Host: %s → 421 misdirected_request error record that does not echo it", async (_label, host) => {
    const reply = await raw(guarded, get(host));
    expect(reply).toMatch(/^HTTP\/1\.1 421 Misdirected Request\r\n/);
    expect(body(reply)).toMatchObject({ status: 421, error: "Misdirected Request", path: "/where" });
    expect(reply.slice(reply.indexOf("\r\n\r\n"))).not.toContain(host);
  });

  // RFC 9112 §3.2.2: "When an origin server receives a request with an absolute-form of
  // request-target, the origin server MUST ignore the received Host header field (if any) and
  // instead use the host information of the request-target."
  const absolute = (target: string, host: string) =>
    [`GET ${target} HTTP/1.1`, `Host: ${host}`, "Connection: close", "", ""].join("\r\n");

  it.each([
    ["http://evil.example/where", "api.example.com", 421],
    ["http://evil.example:8080/where?x=1", "api.example.com", 421],
    ["http://api.example.com/where", "evil.example", 200],
    ["HTTPS://API.Example.com:8443/where", "evil.example", 200],
    ["http://bad_host.example/where", "api.example.com", 400],
    ["http://user@api.example.com/where", "api.example.com", 400],
  ])(
    "GET %s (absolute-form) with Host: %s → %i: the target's authority, not Host",
    async (target, host, expected) => {
      const reply = await raw(guarded, absolute(target, host));
      expect(status(reply)).toBe(expected);
      if (expected === 421) expect(body(reply)).toMatchObject({ status: 421, path: "/where" });
    },
  );

  it("HTTP/1.0 without Host → 421 with a list, 200 with *", async () => {
    expect(status(await raw(guarded, get(undefined)))).toBe(421);
    expect(status(await raw(any, get(undefined)))).toBe(200);
  });

  it.each(["a list", "any"])("a malformed Host → 400 invalid_host (%s)", async (which) => {
    const base = which === "any" ? any : guarded;
    const reply = await raw(base, get("bad_host.example"));
    expect(status(reply)).toBe(400);
    expect(body(reply)).toMatchObject({
      status: 400,
      message: "The request's Host header is not a valid host",
    });
  });

  it("* answers for any valid host", async () => {
    expect(status(await raw(any, get("whatever.example:9")))).toBe(200);
  });

  it("alternating hosts each get their own verdict (the last verdict is not reused for another host)", async () => {
    for (const [host, expected] of [
      ["api.example.com", 200],
      ["evil.example", 421],
      ["api.example.com", 200],
      ["evil.example", 421],
      ["eu.svc.test", 200],
    ] as const) {
      expect(status(await raw(guarded, get(host)))).toBe(expected);
    }
  });

  it("trustProxy: the forwarded host of a trusted proxy is the one checked", async () => {
    expect(status(await raw(proxied, get("127.0.0.1", ["X-Forwarded-Host: api.example.com"])))).toBe(200);
    expect(status(await raw(proxied, get("api.example.com", ["X-Forwarded-Host: evil.example"])))).toBe(421);
  });

  it("trustProxy loopback, X-Forwarded-Host: api.example.com and a client's Forwarded: host=evil.example → 200, X-Forwarded-Host checked", async () => {
    expect(status(await raw(proxied, get("127.0.0.1", ["Forwarded: host=api.example.com"])))).toBe(421);
    expect(
      status(
        await raw(
          proxied,
          get("127.0.0.1", ["Forwarded: host=evil.example", "X-Forwarded-Host: api.example.com"]),
        ),
      ),
    ).toBe(200);
  });

  it('forwardedHeaders "forwarded": Forwarded: host=api.example.com → 200; a client\'s X-Forwarded-Host: api.example.com beside Forwarded: host=evil.example → 421', async () => {
    expect(status(await raw(rfc7239, get("127.0.0.1", ["Forwarded: host=api.example.com"])))).toBe(200);
    expect(
      status(
        await raw(
          rfc7239,
          get("127.0.0.1", ["Forwarded: host=evil.example", "X-Forwarded-Host: api.example.com"]),
        ),
      ),
    ).toBe(421);
  });

  // RFC 7239 §4: proxies append; the trusted peer's element is the last, a client's comes first.
  it.each([
    ["host=api.example.com, for=192.0.2.1;host=evil.example", 421],
    ["host=evil.example, for=192.0.2.1;host=api.example.com", 200],
    ["host=api.example.com, for=127.0.0.1;host=evil.example", 200],
  ])(
    'trustProxy loopback, forwardedHeaders "forwarded", Forwarded: %s → %i (the element the trusted chain added)',
    async (forwarded, expected) => {
      expect(status(await raw(rfc7239, get("127.0.0.1", [`Forwarded: ${forwarded}`])))).toBe(expected);
    },
  );

  it("without trustProxy, Express's trust proxy setting decides (the Express fallback)", async () => {
    expect(status(await raw(expressTrust, get("127.0.0.1", ["X-Forwarded-Host: api.example.com"])))).toBe(
      200,
    );
  });

  it("trustProxy: false wins over Express's setting: a forwarded host is ignored", async () => {
    expect(status(await raw(untrusted, get("127.0.0.1", ["X-Forwarded-Host: api.example.com"])))).toBe(421);
    expect(status(await raw(untrusted, get("api.example.com", ["X-Forwarded-Host: evil.example"])))).toBe(
      200,
    );
  });
});

describe("createHostCheck from plain node:http", () => {
  let server: Listening;
  beforeAll(async () => {
    const checkHost = createHostCheck([".example.com"], { trustProxy: ["127.0.0.1/8", "::1"] });
    server = await listen((req, res) => {
      const error = checkHost(req);
      res.statusCode = error?.status ?? 200;
      res.end(error?.code ?? "");
    });
  });
  afterAll(() => server.close());

  it.each([
    ["example.com", [], 200, ""],
    ["www.example.com", [], 200, ""],
    ["evil.example", [], 421, "misdirected_request"],
    ["evil.example:", [], 421, "misdirected_request"],
    ["www.example.com:", [], 200, ""],
    ["evil.example", ["X-Forwarded-Host: www.example.com:"], 200, ""],
    [":80", [], 400, "invalid_host"],
    ["www.example.com:abc", [], 400, "invalid_host"],
    ["www.example.com:99999", [], 400, "invalid_host"],
    ["evil.example", ["X-Forwarded-Host: www.example.com"], 200, ""],
    ["www.example.com", ["X-Forwarded-Host: a b"], 400, "invalid_host"],
  ] as const)("Host: %s %j → %i %s", async (host, extra, expected, code) => {
    const reply = await raw(server.url, get(host, extra));
    expect(status(reply)).toBe(expected);
    expect(reply.slice(reply.indexOf("\r\n\r\n") + 4)).toBe(code);
  });
});

describe("allowedHosts options are checked at construction", () => {
  it.each([
    ["an empty list", []],
    ["a string other than *", "api.example.com"],
    ["* inside the list", ["*"]],
    ["a port", ["api.example.com:8443"]],
    ["an empty port", ["api.example.com:"]],
    ["a space", ["api example.com"]],
    ["an empty entry", [""]],
    ["a lone dot", ["."]],
    ["a domain of an address", [".10.0.0.1"]],
    ["a domain of an IPv6 literal", [".[::1]"]],
    ["an address that is not one", ["10.0.0.256"]],
    ["an address spelt as one number", ["2130706433"]],
    ["an address spelt in hex", ["0x7f.0.0.1"]],
    ["a number", [42]],
    ["undefined", undefined],
  ])("%s → TypeError ERR_SVC_HAL_ALLOWED_HOSTS naming the option", (_label, hosts) => {
    expect(() => allowedHosts(hosts as never)).toThrow(
      expect.objectContaining({
        name: "TypeError",
        code: "ERR_SVC_HAL_ALLOWED_HOSTS",
        message: expect.stringMatching(/allowedHosts must be .*, got /),
      }),
    );
  });

  it.each([["not an address"], [Number.NaN], [-1], [{}]])(
    "trustProxy: %j → TypeError ERR_SVC_HAL_TRUST_PROXY",
    (trustProxy) => {
      expect(() => createHostCheck("*", { trustProxy: trustProxy as never })).toThrow(
        expect.objectContaining({ name: "TypeError", code: "ERR_SVC_HAL_TRUST_PROXY" }),
      );
    },
  );
});
