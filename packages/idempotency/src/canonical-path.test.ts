import { describe, expect, it } from "vitest";
import { canonicalPath, routedPath, targetPath } from "./canonical-path.js";

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
