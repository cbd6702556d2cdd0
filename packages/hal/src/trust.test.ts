import type { IncomingMessage } from "node:http";
import { type Listening, listen, simulatedProxy } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hrefFor } from "./base-url.js";
import { compileTrust, type TrustProxy } from "./trust.js";

describe("compileTrust: Express's trust proxy forms, compiled once", () => {
  it.each([
    [true, "203.0.113.9", 0, true],
    [false, "127.0.0.1", 0, false],
    [1, "203.0.113.9", 0, true],
    [1, "203.0.113.9", 1, false],
    [0, "127.0.0.1", 0, false],
    ["loopback", "127.0.0.1", 0, true],
    ["loopback", "::1", 0, true],
    ["loopback", "10.0.0.1", 0, false],
    ["loopback, 10.0.0.0/8", "10.1.2.3", 0, true],
    [["192.0.2.0/24", "uniquelocal"], "192.0.2.200", 0, true],
    [["192.0.2.0/24", "uniquelocal"], "172.16.0.1", 0, true],
    [["192.0.2.0/24", "uniquelocal"], "198.51.100.1", 0, false],
    [[], "127.0.0.1", 0, false],
  ] as const)("%j trusts %s at hop %i: %s", (value, address, hop, expected) => {
    expect(compileTrust(value)(address, hop)).toBe(expected);
  });

  it("a function is used as it is", () => {
    const fn: TrustProxy = (address) => address === "192.0.2.1";
    expect(compileTrust(fn)).toBe(fn);
  });

  it.each([
    ["an unknown name", "localhost"],
    ["an empty string", ""],
    ["a bad CIDR", "10.0.0.0/33"],
    ["a list holding a number", ["127.0.0.1", 8]],
    ["a negative hop count", -1],
    ["a fractional hop count", 1.5],
    ["NaN", Number.NaN],
    ["null", null],
    ["an object", { loopback: true }],
  ])(
    "%s → TypeError ERR_SVC_HAL_TRUST_PROXY naming the option, the value and what is accepted",
    (_l, value) => {
      expect(() => compileTrust(value as never)).toThrow(
        expect.objectContaining({
          name: "TypeError",
          code: "ERR_SVC_HAL_TRUST_PROXY",
          message: expect.stringMatching(/^@svc\/hal: trustProxy must be true, false, a hop count, .* got /),
        }),
      );
    },
  );
});

describe("a compiled trust function given to hrefFor, on plain node:http", () => {
  const servers: Listening[] = [];
  const started = async (trustProxy?: TrustProxy) => {
    const server = await listen((req: IncomingMessage, res) => {
      res.end(hrefFor(req, "/employees/7", trustProxy === undefined ? {} : { trustProxy }));
    });
    servers.push(server);
    return server.url;
  };
  const forwarded = { "x-forwarded-proto": "https", "x-forwarded-host": "api.example.com" };
  afterAll(() => Promise.all(servers.map((s) => s.close())));

  let loopback: string;
  let hops: string;
  let elsewhere: string;
  let none: string;
  beforeAll(async () => {
    loopback = await started(compileTrust("loopback"));
    hops = await started(compileTrust(1));
    elsewhere = await started(compileTrust("10.0.0.0/8"));
    none = await started();
  });

  it.each([
    ["loopback, the proxy's address", () => loopback, "https://api.example.com/employees/7"],
    ["one hop", () => hops, "https://api.example.com/employees/7"],
  ])("trusted (%s) → links use the forwarded URL", async (_label, target, expected) => {
    const proxy = await simulatedProxy(target(), forwarded);
    try {
      expect(await (await fetch(`${proxy.url}/`)).text()).toBe(expected);
    } finally {
      await proxy.close();
    }
  });

  it.each([
    ["a range the proxy is not in", () => elsewhere],
    ["no trustProxy outside Express (nothing is trusted)", () => none],
  ])("untrusted (%s) → forwarded headers ignored", async (_label, target) => {
    const proxy = await simulatedProxy(target(), forwarded);
    try {
      expect(await (await fetch(`${proxy.url}/`)).text()).toBe(`${proxy.url}/employees/7`);
    } finally {
      await proxy.close();
    }
  });
});
