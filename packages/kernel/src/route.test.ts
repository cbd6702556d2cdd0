import { describe, expect, it } from "vitest";
import { exchangeOf, recordAuthentication } from "./exchange.js";
import { HttpError } from "./http-error.js";
import { canonicalPath, recordRouteTemplate, routedPath, routeOf } from "./route.js";
import { requestState, UNSUPPORTED_VERSION } from "./state.js";
import type { VersionDecision } from "./steps.js";
import { targetPath } from "./target.js";

const loose = { caseSensitive: false, strict: false };

describe("canonicalPath (Express defaults: case-insensitive, non-strict)", () => {
  it.each([
    ["/transfers", "/transfers"],
    ["/Transfers", "/transfers"],
    ["/TRANSFERS", "/transfers"],
    ["/transfers/", "/transfers"],
    ["/", "/"],
    ["/orders/a%62c", "/orders/abc"],
    ["/orders/%41BC", "/orders/abc"],
    ["/orders/a%40b", "/orders/a@b"],
  ])("%s → %s", (input, expected) => {
    expect(canonicalPath(input, loose)).toBe(expected);
  });

  it.each([
    // Express routes none of these to /transfers: they stay apart.
    ["/transfers//", "/transfers/"],
    ["//transfers", "//transfers"],
    ["/./transfers", "/./transfers"],
    ["/transfers%2F", "/transfers%2f"],
    ["/a%2fb", "/a%2fb"],
    ["/a%25b", "/a%25b"],
    ["/a%zzb", "/a%zzb"],
  ])("%s → %s (not another route's path)", (input, expected) => {
    expect(canonicalPath(input, loose)).toBe(expected);
  });

  it("case sensitive routing → case kept; %2f and %2F are one spelling", () => {
    const rules = { caseSensitive: true, strict: false };
    expect(canonicalPath("/Transfers/", rules)).toBe("/Transfers");
    expect(canonicalPath("/a%2fb", rules)).toBe(canonicalPath("/a%2Fb", rules));
  });

  it("strict routing → the trailing slash is kept", () => {
    expect(canonicalPath("/transfers/", { caseSensitive: false, strict: true })).toBe("/transfers/");
  });
});

describe("targetPath", () => {
  it.each([
    ["/transfers?x=1", "/transfers"],
    ["/transfers#frag", "/transfers"],
    ["http://host.example/transfers?x", "/transfers"],
    ["*", "*"],
  ])("%s → %s", (input, expected) => {
    expect(targetPath(input)).toBe(expected);
  });
});

describe("routedPath", () => {
  it.each([
    ["/v1/transfers", { target: "/transfers", prefix: "/v1" }, "/transfers"],
    ["/v1/transfers", { target: "/transfers?x=1", prefix: "/v1" }, "/transfers"],
    ["/api/v2/transfers", { target: "/transfers", prefix: "/v2" }, "/api/transfers"],
    ["/v1", { target: "/", prefix: "/v1" }, "/"],
    ["/v1/", { target: "/", prefix: "/v1" }, "/"],
    ["/transfers", { target: "/transfers", prefix: "" }, "/transfers"],
    ["/transfers", undefined, "/transfers"],
    ["http://api.example/v1/transfers", { target: "/transfers", prefix: "/v1" }, "/transfers"],
  ] as const)("%s with %j → %s", (path, version, routed) => {
    expect(routedPath(targetPath(path), version)).toBe(routed);
  });
});

describe("routeOf: the route as routed, from what the steps recorded", () => {
  const express = (originalUrl: string, extra: object = {}) => {
    const req = { method: "POST", url: originalUrl, originalUrl, headers: {}, baseUrl: "", ...extra };
    exchangeOf(req).view = req;
    exchangeOf(req).routing = { caseSensitive: false, strict: false };
    return req;
  };
  const prefixed = (req: object, target: string, prefix: string) => {
    exchangeOf(req).version = { target, prefix, version: 1 } as unknown as VersionDecision;
    return req;
  };

  it.each([
    ["/transfers", "", "/transfers"],
    ["/v1/transfers", "/v1", "/transfers"],
    ["/V1/Transfers/", "/V1", "/transfers"],
    ["/v1/transfers?x=1", "/v1", "/transfers"],
  ])("%s (prefix %j) → %s, one path for every spelling Express routes alike", (sent, prefix, path) => {
    const req = express(sent);
    if (prefix !== "") prefixed(req, sent.slice(prefix.length), prefix);
    expect(routeOf(req)).toEqual({ path, template: undefined, mount: "", versionPrefix: prefix });
  });

  it("the template once Express's router matched one, under its mount", () => {
    const req = express("/API/v1/orders/7", { baseUrl: "/API", route: { path: "/orders/:id" } });
    prefixed(req, "/orders/7", "/v1");
    expect(routeOf(req)).toEqual({
      path: "/api/orders/7",
      template: "/api/orders/:id",
      mount: "/api",
      versionPrefix: "/v1",
    });
  });

  it("Fastify's routeOptions.url, and a template an adapter recorded", () => {
    expect(routeOf({ url: "/orders/7", routeOptions: { url: "/orders/:id" } }).template).toBe("/orders/:id");
    const req = { url: "/orders/7", headers: {} };
    recordRouteTemplate(req, "/orders/:id");
    expect(routeOf(req).template).toBe("/orders/:id");
  });

  it("nothing folds where no rules were recorded or given (node:http, Hono)", () => {
    expect(routeOf({ url: "/Orders/" }).path).toBe("/Orders/");
    expect(routeOf({ url: "/Orders/" }, { caseSensitive: false, strict: false }).path).toBe("/orders");
  });
});

describe("requestState: what the packages decided, read from the exchange", () => {
  it("the principal and its key qualified by issuer, the version or `unsupported`, the rate limit", () => {
    const a = { url: "/v1/orders", headers: {} };
    const b = { url: "/v9/orders", headers: {} };
    recordAuthentication(a, { id: "alice", issuer: "https://a.example/" });
    recordAuthentication(b, { id: "alice", issuer: "https://b.example/" });
    exchangeOf(a).version = { target: "/orders", prefix: "/v1", version: 1 } as unknown as VersionDecision;
    exchangeOf(b).version = {
      target: "/v9/orders",
      prefix: "",
      version: undefined,
      error: new HttpError(404),
    } as unknown as VersionDecision;
    expect(requestState(a).principalKey).not.toBe(requestState(b).principalKey);
    expect(requestState(a).principal).toEqual({ id: "alice", issuer: "https://a.example/" });
    expect(requestState(a).version).toBe(1);
    expect(requestState(b).version).toBe(UNSUPPORTED_VERSION);
    expect(requestState(a).route.path).toBe("/orders");
    expect(requestState({ url: "/" }).principal).toBeUndefined();
    expect(requestState({ url: "/" }).version).toBeUndefined();
    expect(requestState({ url: "/" }).rateLimit).toBeUndefined();
  });
});
