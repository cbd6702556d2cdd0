import { exchangeOf } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "./config.js";
import { versionResolver, versions } from "./core.js";
import { versioned } from "./express.js";
import type { ApiVersioningOptions } from "./options.js";
import {
  parseHeaderVersion,
  parseUriVersion,
  parseVendorContentType,
  parseVendorMediaTypes,
} from "./parse.js";
import { SCHEMES, schemeOf, type VersionScheme } from "./scheme.js";
import { versionDispatch } from "./versioned.js";

describe("version schemes: ordering", () => {
  it.each<[VersionScheme, (number | string)[], (number | string)[]]>([
    ["integer", [10, 2, 9, 1], [1, 2, 9, 10]],
    ["major.minor", ["1.10", "2.0", "1.9", "1.0", "0.9"], ["0.9", "1.0", "1.9", "1.10", "2.0"]],
    ["major.minor", ["10.0", "9.99", "2.1"], ["2.1", "9.99", "10.0"]],
    [
      "date",
      ["2026-11-25", "2024-06-01", "2025-01-15", "2025-01-02"],
      ["2024-06-01", "2025-01-02", "2025-01-15", "2026-11-25"],
    ],
  ])("%s: %j → %j", (scheme, given, sorted) => {
    expect([...given].sort(SCHEMES[scheme].compare)).toEqual(sorted);
    // The order API-Supported-Versions lists them in.
    const options = { versions: given, required: true } as ApiVersioningOptions;
    expect(resolveConfig(options).list).toBe(sorted.join(", "));
  });
});

describe("version schemes: spellings", () => {
  it.each<[unknown, VersionScheme | undefined]>([
    [1, "integer"],
    [999_999_999, "integer"],
    [0, undefined],
    [1.5, undefined],
    ["2", undefined],
    ["1.0", "major.minor"],
    ["1.10", "major.minor"],
    ["0.1", "major.minor"],
    ["1", undefined],
    ["1.01", undefined],
    ["01.1", undefined],
    ["1.2.3", undefined],
    ["v1.2", undefined],
    ["2026-11-25", "date"],
    ["2024-02-29", "date"],
    ["2025-02-29", undefined],
    ["2026-02-30", undefined],
    ["2026-13-01", undefined],
    ["2026-00-10", undefined],
    ["2026-11-25-preview", undefined],
    ["2026-1-5", undefined],
    ["20261125", undefined],
    [null, undefined],
  ])("%j → %s", (value, scheme) => {
    expect(schemeOf(value)).toBe(scheme);
  });

  it.each<[string | string[], VersionScheme, unknown]>([
    ["1.2", "major.minor", "1.2"],
    ["1.2, 1.2", "major.minor", "1.2"],
    [["1.2", "1.2"], "major.minor", "1.2"],
    ["1.2, ", "major.minor", "1.2"],
    ["1.2, 1.3", "major.minor", "malformed"],
    ["1", "major.minor", "malformed"],
    ["1.02", "major.minor", "malformed"],
    ["2026-11-25", "date", "2026-11-25"],
    ["2026-11-25, 2026-11-25", "date", "2026-11-25"],
    ["2026-02-30", "date", "malformed"],
    ["2026-11-25-preview", "date", "malformed"],
    ["2", "date", "malformed"],
    ["2", "integer", 2],
  ])("header %j under %s → %j", (value, scheme, want) => {
    expect(parseHeaderVersion(value, scheme)).toBe(want);
  });

  it("the path prefix of each scheme", () => {
    expect(parseUriVersion("/v1.10/x?y=1", "v", "major.minor")).toEqual({ version: "1.10", rest: "/x?y=1" });
    expect(parseUriVersion("/v2026-11-25", "v", "date")).toEqual({ version: "2026-11-25", rest: "/" });
    expect(parseUriVersion("/v2026-02-30/x", "v", "date")).toBeUndefined();
    expect(parseUriVersion("/v1/x", "v", "major.minor")).toBeUndefined();
    expect(parseUriVersion("/v2/x")).toEqual({ version: 2, rest: "/x" });
    expect(parseUriVersion("/v2.0/x")).toBeUndefined();
  });

  it("the vendor media types of each scheme", () => {
    const accept = "application/vnd.svc.v1.2+json, application/vnd.svc.v1+json;q=0.5";
    expect(parseVendorMediaTypes(accept, "svc", "major.minor").map((t) => [t.version, t.mediaType])).toEqual([
      ["1.2", "application/vnd.svc.v1.2+json"],
      [undefined, "application/vnd.svc.v1+json"],
    ]);
    expect(parseVendorMediaTypes("application/vnd.svc.v2026-11-25+xml", "svc", "date")[0]?.version).toBe(
      "2026-11-25",
    );
    expect(parseVendorContentType("application/vnd.svc.v2026-11-25+json", "svc", SCHEMES.date)).toEqual({
      version: "2026-11-25",
      mediaType: "application/vnd.svc.v2026-11-25+json",
    });
  });
});

describe("version schemes: options", () => {
  it.each<[string, unknown, string]>([
    ["integers and dates mixed", { versions: [1, "2026-11-25"] }, "ERR_SVC_VERSIONING_VERSIONS"],
    ["major.minor and dates mixed", { versions: ["1.0", "2026-11-25"] }, "ERR_SVC_VERSIONING_VERSIONS"],
    ["a fractional number", { versions: [1.2] }, "ERR_SVC_VERSIONING_VERSIONS"],
    ["an integer as a string", { versions: ["2"] }, "ERR_SVC_VERSIONING_VERSIONS"],
    ["a date that is none", { versions: ["2026-02-30"] }, "ERR_SVC_VERSIONING_VERSIONS"],
    ["a status suffix", { versions: ["2026-11-25-preview"] }, "ERR_SVC_VERSIONING_VERSIONS"],
    ["a leading zero", { versions: ["1.01"] }, "ERR_SVC_VERSIONING_VERSIONS"],
    [
      "defaultVersion 1 for 1.0",
      { versions: ["1.0", "2.0"], defaultVersion: 1 },
      "ERR_SVC_VERSIONING_DEFAULT_VERSION",
    ],
    [
      "defaultVersion '1' for 1.0",
      { versions: ["1.0"], defaultVersion: "1" },
      "ERR_SVC_VERSIONING_DEFAULT_VERSION",
    ],
    [
      "defaultVersion 'newest'",
      { versions: [1, 2], defaultVersion: "newest" },
      "ERR_SVC_VERSIONING_DEFAULT_VERSION",
    ],
    [
      "no default among dates",
      { versions: ["2025-01-15", "2026-11-25"] },
      "ERR_SVC_VERSIONING_DEFAULT_VERSION",
    ],
    [
      "deprecated 1 for 1.0",
      { versions: ["1.0", "2.0"], defaultVersion: "2.0", deprecated: { 1: { deprecation: "2026-01-01" } } },
      "ERR_SVC_VERSIONING_DEPRECATED",
    ],
    [
      "deprecated date not listed",
      { versions: ["2025-01-15"], deprecated: { "2024-01-15": { deprecation: "2026-01-01" } } },
      "ERR_SVC_VERSIONING_DEPRECATED",
    ],
    ["misspelt option", { versions: ["1.0"], defaultVerison: "1.0" }, "ERR_SVC_VERSIONING_UNKNOWN_OPTION"],
    [
      "a scheme option (the scheme is the versions')",
      { versions: ["1.0"], scheme: "date" },
      "ERR_SVC_VERSIONING_UNKNOWN_OPTION",
    ],
  ])("%s → %s", (_name, options, code) => {
    expect(() => versions(options as ApiVersioningOptions)).toThrow(expect.objectContaining({ code }));
  });

  it("the refusal of a mix names both schemes", () => {
    expect(() => versions({ versions: ["1.0", "2026-11-25"] })).toThrow(/mix major\.minor and date/);
    expect(() => versions({ versions: [1.2] })).toThrow(/major\.minor versions are strings/);
  });

  it('the hint of a missing default quotes string versions: defaultVersion: "2026-11-25"', () => {
    expect(() => versions({ versions: ["2025-01-15", "2026-11-25"] })).toThrow(
      /defaultVersion: "2025-01-15" .* defaultVersion: "2026-11-25"/,
    );
  });

  it.each<[ApiVersioningOptions, number | string]>([
    [{ versions: ["1.9", "1.10"], defaultVersion: "latest" }, "1.10"],
    [{ versions: ["2026-11-25", "2025-01-15"], defaultVersion: "latest" }, "2026-11-25"],
    [{ versions: [2, 10, 9], defaultVersion: "latest" }, 10],
    [{ versions: ["1.0", "2.0"], defaultVersion: "1.0" }, "1.0"],
  ])("defaultVersion %j → %j", (options, want) => {
    expect(versionResolver(options)("/x", {}).version).toBe(want);
  });
});

describe("version schemes: the content's type", () => {
  const resolve = versionResolver({
    versions: ["2025-01-15", "2026-11-25"],
    defaultVersion: "latest",
    mediaType: { vendor: "svc" },
  });
  const content = (type: string) => ({ "content-type": type, "content-length": "2" });
  it("Content-Type application/vnd.svc.v2025-01-15+json → that version", () => {
    expect(resolve("/x", content("application/vnd.svc.v2025-01-15+json"), "POST").version).toBe("2025-01-15");
  });
  it.each([
    ["an unknown date", "application/vnd.svc.v2030-01-01+json"],
    ["a date that is none", "application/vnd.svc.v2026-02-30+json"],
    ["an integer under dates", "application/vnd.svc.v2+json"],
  ])("%s (%s) → 415", (_name, type) => {
    expect(() => resolve("/x", content(type), "POST")).toThrow(expect.objectContaining({ status: 415 }));
  });
});

describe("version schemes: deprecation per version", () => {
  const resolve = versionResolver({
    versions: ["2024-06-01", "2025-01-15", "2026-11-25"],
    defaultVersion: "latest",
    query: true,
    deprecated: {
      "2024-06-01": { deprecation: "2025-01-15", sunset: "2026-06-01", link: "https://example.com/v2024" },
      "2025-01-15": { deprecation: "2026-11-25" },
    },
  });
  it.each<[string, string | undefined, string | undefined]>([
    ["/x?api-version=2024-06-01", "@1736899200", "Mon, 01 Jun 2026 00:00:00 GMT"],
    ["/v2025-01-15/x", "@1795564800", undefined],
    ["/x", undefined, undefined],
  ])("%s → Deprecation %s, Sunset %s", (url, deprecation, sunset) => {
    const resolution = resolve(url, {});
    expect(resolution.deprecation?.deprecation).toBe(deprecation);
    expect(resolution.deprecation?.sunset).toBe(sunset);
  });
  it("API-Deprecated-Versions lists them in the scheme's order", () => {
    const step = versions({
      versions: ["1.9", "1.10", "2.0"],
      defaultVersion: "2.0",
      deprecated: { "1.10": { deprecation: "2026-01-01" }, "1.9": { deprecation: "2025-01-01" } },
    });
    const decision = step.resolve({ view: { method: "GET", headers: {} }, native: {} } as never, "/v1.9/x");
    expect(decision.version).toBe("1.9");
    expect(decision.fields).toMatchObject({
      "api-supported-versions": "1.9, 1.10, 2.0",
      "api-deprecated-versions": "1.9, 1.10",
      deprecation: "@1735689600",
    });
  });
});

/** A request the pipeline's `prepare` decided `version` for, as its exchange holds it. */
function decided(version: number | string): object {
  const req = {};
  exchangeOf(req).version = {
    target: "/",
    version,
    prefix: "",
    label: undefined,
    fields: {},
    vary: [],
    error: undefined,
  };
  return req;
}

describe("version schemes: versioned()", () => {
  it("major.minor keys; inherit takes the nearest lower version in the scheme's order (1.10 after 1.9)", () => {
    const seen: string[] = [];
    const h = versioned({ "1.0": () => seen.push("1.0"), "1.9": () => seen.push("1.9") }, { inherit: true });
    h(decided("1.10"), {}, () => seen.push("next"));
    h(decided("1.2"), {}, () => seen.push("next"));
    h(decided("0.9"), {}, () => seen.push("next"));
    expect(seen).toEqual(["1.9", "1.0", "next"]);
  });
  it("date keys; inherit takes the latest earlier date", () => {
    const a = () => "a";
    const b = () => "b";
    const choose = versionDispatch({ "2024-06-01": a, "2025-01-15": b }, { inherit: true });
    expect(choose("2025-01-14")).toBe(a);
    expect(choose("2026-11-25")).toBe(b);
    expect(choose("2024-05-31")).toBeUndefined();
  });
  it.each([
    ["keys of two schemes", { 1: () => {}, "1.2": () => {} }],
    ["a key that is no version", { "1.02": () => {} }],
    ["a date that is none", { "2026-02-30": () => {} }],
  ])("%s → TypeError ERR_SVC_VERSIONING_HANDLERS", (_name, handlers) => {
    expect(() => versionDispatch(handlers)).toThrow(
      expect.objectContaining({ code: "ERR_SVC_VERSIONING_HANDLERS" }),
    );
  });
});
