import { exchangeOf } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { isCorsPreflight, versionResolver, versions } from "./core.js";
import { formatDeprecation, formatSunset } from "./deprecation.js";
import { versioned } from "./express.js";
import { parseHeaderVersion, parseUriVersion, parseVendorMediaTypes } from "./parse.js";

describe("versions() construction", () => {
  it.each([
    ["options: null", null, "ERR_SVC_VERSIONING_OPTIONS"],
    ["versions: []", { versions: [] }, "ERR_SVC_VERSIONING_VERSIONS"],
    ["versions: [1.5]", { versions: [1.5] }, "ERR_SVC_VERSIONING_VERSIONS"],
    ["versions: [0]", { versions: [0] }, "ERR_SVC_VERSIONING_VERSIONS"],
    [
      "defaultVersion not supported",
      { versions: [1], defaultVersion: 2 },
      "ERR_SVC_VERSIONING_DEFAULT_VERSION",
    ],
    ["every strategy off", { versions: [1], uri: false, header: false }, "ERR_SVC_VERSIONING_STRATEGIES"],
    [
      "unknownVersionStatus: 200",
      { versions: [1], header: { unknownVersionStatus: 200 } },
      "ERR_SVC_VERSIONING_HEADER_UNKNOWN_VERSION_STATUS",
    ],
    ["uri.prefix: 'v/'", { versions: [1], uri: { prefix: "v/" } }, "ERR_SVC_VERSIONING_URI_PREFIX"],
    [
      "header name with a space",
      { versions: [1], header: { names: ["API Version"] } },
      "ERR_SVC_VERSIONING_HEADER_NAMES",
    ],
    ["header names: []", { versions: [1], header: { names: [] } }, "ERR_SVC_VERSIONING_HEADER_NAMES"],
    // Node.js drops a `__proto__` field from req.headers: a name that could never be read.
    [
      "header names: ['__proto__']",
      { versions: [1], header: { names: ["__proto__"] } },
      "ERR_SVC_VERSIONING_HEADER_NAMES",
    ],
    [
      "header names: ['X-V', '__PROTO__']",
      { versions: [1], header: { names: ["X-V", "__PROTO__"] } },
      "ERR_SVC_VERSIONING_HEADER_NAMES",
    ],
    ["mediaType: null", { versions: [1], mediaType: null }, "ERR_SVC_VERSIONING_MEDIA_TYPE"],
    [
      "vendor 'my vendor'",
      { versions: [1], mediaType: { vendor: "my vendor" } },
      "ERR_SVC_VERSIONING_MEDIA_TYPE_VENDOR",
    ],
    [
      "deprecated version not supported",
      { versions: [1], deprecated: { 2: { deprecation: "2026-01-01T00:00:00Z" } } },
      "ERR_SVC_VERSIONING_DEPRECATED",
    ],
    ["deprecated policy: 1", { versions: [1], deprecated: { 1: 1 } }, "ERR_SVC_VERSIONING_DEPRECATED"],
    [
      "deprecation: 'soon'",
      { versions: [1], deprecated: { 1: { deprecation: "soon" } } },
      "ERR_SVC_VERSIONING_DEPRECATED_DEPRECATION",
    ],
    [
      "sunset earlier than deprecation",
      {
        versions: [1],
        deprecated: { 1: { deprecation: "2026-07-01T00:00:00Z", sunset: "2026-01-01T00:00:00Z" } },
      },
      "ERR_SVC_VERSIONING_DEPRECATED_SUNSET",
    ],
    [
      "sunset in year 10000 (no 4-digit HTTP-date year)",
      {
        versions: [1],
        deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z", sunset: "+010000-01-01T00:00:00Z" } },
      },
      "ERR_SVC_VERSIONING_DEPRECATED_SUNSET",
    ],
    [
      "sunset a Date in year 275760",
      {
        versions: [1],
        deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z", sunset: new Date(8.64e15) } },
      },
      "ERR_SVC_VERSIONING_DEPRECATED_SUNSET",
    ],
    [
      "sunset in year 0 (before 0001)",
      {
        versions: [1],
        deprecated: { 1: { deprecation: "-000001-01-01T00:00:00Z", sunset: "0000-06-01T00:00:00Z" } },
      },
      "ERR_SVC_VERSIONING_DEPRECATED_SUNSET",
    ],
    [
      "sunset an invalid Date",
      {
        versions: [1],
        deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z", sunset: new Date(Number.NaN) } },
      },
      "ERR_SVC_VERSIONING_DEPRECATED_SUNSET",
    ],
    [
      "link with a space",
      { versions: [1], deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z", link: "a b" } } },
      "ERR_SVC_VERSIONING_DEPRECATED_LINK",
    ],
    [
      "sunsetLink: ''",
      { versions: [1], deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z", sunsetLink: "" } } },
      "ERR_SVC_VERSIONING_DEPRECATED_SUNSET_LINK",
    ],
    ["neutral path without /", { versions: [1], neutral: ["health"] }, "ERR_SVC_VERSIONING_NEUTRAL"],
    ["routing: true", { versions: [1], routing: true }, "ERR_SVC_VERSIONING_ROUTING"],
    [
      "routing.caseSensitive: 'yes'",
      { versions: [1], routing: { caseSensitive: "yes" } },
      "ERR_SVC_VERSIONING_ROUTING_CASE_SENSITIVE",
    ],
  ])("%s → TypeError %s", (_name, options, code) => {
    for (const build of [versions, versionResolver]) {
      expect(() => build(options as never)).toThrow(expect.objectContaining({ name: "TypeError", code }));
    }
  });
  // Keys other than the version's one spelling: read as version 1 by Number(), and two of them
  // ({ "01": ..., "1.0": ... }) silently replaced each other's policy.
  it.each(["01", "1.0", " 1", "0x1", "1e0"])(
    "deprecated key %j → TypeError ERR_SVC_VERSIONING_DEPRECATED",
    (key) => {
      const options = { versions: [1], deprecated: { [key]: { deprecation: "2026-01-01T00:00:00Z" } } };
      for (const build of [versions, versionResolver]) {
        expect(() => build(options)).toThrow(
          expect.objectContaining({ name: "TypeError", code: "ERR_SVC_VERSIONING_DEPRECATED" }),
        );
      }
    },
  );
  it("the message names the option, what was given and what is accepted", () => {
    expect(() => versions({ versions: [1], uri: { prefix: "v/" } })).toThrow(
      'versions: uri.prefix must be letters (A-Z, a-z), got "v/"',
    );
    expect(() => versions({ versions: [1, 2], defaultVersion: 3 })).toThrow(
      'versions: defaultVersion must be one of the supported versions (1, 2) or "latest", got 3',
    );
    expect(() => versions({ versions: [1], deprecated: { 1: { deprecation: "soon" } } })).toThrow(
      'versions: deprecated.1: deprecation must be a valid Date or ISO 8601 string (2026-01-01, or a date-time with Z or an offset), got "soon"',
    );
  });
  it.each([
    [
      "versions: [1, 2], 1 deprecated",
      { versions: [1, 2], deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z" } } },
      "did you mean defaultVersion: 1 (what clients naming no version were written against) or defaultVersion: 2 (the latest version not deprecated), or required: true",
    ],
    [
      "versions: [3, 1, 2], 3 deprecated",
      { versions: [3, 1, 2], deprecated: { 3: { deprecation: "2026-01-01T00:00:00Z" } } },
      "more than one (1, 2, 3): it is the version of every request that names none; did you mean defaultVersion: 1 (what clients naming no version were written against) or defaultVersion: 2 (the latest version not deprecated)",
    ],
    [
      "versions: [1, 2], both deprecated",
      {
        versions: [1, 2],
        deprecated: {
          1: { deprecation: "2026-01-01T00:00:00Z" },
          2: { deprecation: "2026-01-01T00:00:00Z" },
        },
      },
      "did you mean defaultVersion: 1 (what clients naming no version were written against), or required: true",
    ],
  ])("%s without defaultVersion → ERR_SVC_VERSIONING_DEFAULT_VERSION with %s", (_what, options, hint) => {
    expect(() => versions(options)).toThrow(
      expect.objectContaining({
        name: "TypeError",
        code: "ERR_SVC_VERSIONING_DEFAULT_VERSION",
        message: expect.stringContaining(hint),
      }),
    );
  });
  it.each([
    ["versions: [2] (one version)", { versions: [2] }, "/employees", 2],
    ["versions: [1, 2], defaultVersion: 2", { versions: [1, 2], defaultVersion: 2 }, "/employees", 2],
    ["versions: [1, 2], required: true", { versions: [1, 2], required: true }, "/v1/employees", 1],
  ])("%s constructs; GET %s → version %d", (_what, options, url, version) => {
    expect(versionResolver(options)(url, {}).version).toBe(version);
  });
  it("header names as any iterable (a Set) → accepted, as before", () => {
    const resolve = versionResolver({
      versions: [1, 2],
      defaultVersion: 1,
      header: { names: new Set(["X-V"]) as never },
    });
    expect(resolve("/x", { "x-v": "2" })).toMatchObject({ version: 2, vary: ["X-V"] });
  });
  it("sunset in year 10000 → the message says why", () => {
    expect(() =>
      versions({
        versions: [1],
        deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z", sunset: "+010000-01-01T00:00:00Z" } },
      }),
    ).toThrow(
      'versions: deprecated.1: sunset must be a date from year 0001 to 9999 (an HTTP-date, RFC 9110 §5.6.7), got "+010000-01-01T00:00:00.000Z"',
    );
  });
  it("sunset on the last and the first instant an HTTP-date can write → accepted", () => {
    const build = (deprecation: string, sunset: string) =>
      versions({ versions: [1], deprecated: { 1: { deprecation, sunset } } });
    expect(() => build("2026-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z")).not.toThrow();
    expect(() => build("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z")).not.toThrow();
  });
  it("deprecation in year 10000 without a sunset → accepted: an RFC 9651 Date is integer seconds, any year", () => {
    const resolve = versionResolver({
      versions: [1],
      deprecated: { 1: { deprecation: "+010000-01-01T00:00:00Z" } },
    });
    expect(resolve("/x", {}).deprecation?.deprecation).toBe("@253402300800");
  });
  it("versionResolver: neutral paths are compared case-insensitively unless routing.caseSensitive", () => {
    const loose = versionResolver({ versions: [1], required: true, neutral: ["/health"] });
    expect(loose("/HEALTH", {}).version).toBeUndefined();
    const strict = versionResolver({
      versions: [1],
      required: true,
      neutral: ["/health"],
      routing: { caseSensitive: true },
    });
    expect(() => strict("/HEALTH", {})).toThrow(expect.objectContaining({ status: 400 }));
  });
  it("sunset equal to deprecation → accepted", () => {
    expect(() =>
      versions({
        versions: [1],
        deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z", sunset: new Date("2026-01-01T00:00:00Z") } },
      }),
    ).not.toThrow();
  });
});

describe("formats", () => {
  it("Deprecation is an RFC 9651 Date: @ and integer seconds", () => {
    expect(formatDeprecation(new Date("2026-01-01T00:00:00.999Z"))).toBe("@1767225600");
  });
  it("Sunset is an IMF-fixdate", () => {
    expect(formatSunset(new Date("2026-07-01T12:30:00Z"))).toBe("Wed, 01 Jul 2026 12:30:00 GMT");
  });
});

describe("pure parsers", () => {
  it.each([
    ["/v2/employees", { version: 2, rest: "/employees" }],
    ["/v2", { version: 2, rest: "/" }],
    ["/v2?x=1", { version: 2, rest: "/?x=1" }],
    ["/v2x", undefined],
    ["/employees", undefined],
    ["/v", undefined],
    ["/v0/x", { version: 0, rest: "/x" }],
    ["/v01/employees", undefined],
    ["/v000000002", undefined],
  ])("parseUriVersion(%j)", (input, expected) => {
    expect(parseUriVersion(input)).toEqual(expected);
  });
  it("parseHeaderVersion(['1', '1']) → 1; (['1', '2']) → malformed", () => {
    expect(parseHeaderVersion(["1", "1"])).toBe(1);
    expect(parseHeaderVersion(["1", "2"])).toBe("malformed");
  });
  it.each(["01", "002", "1, 01"])("parseHeaderVersion(%j) → malformed: one spelling per version", (value) => {
    expect(parseHeaderVersion(value)).toBe("malformed");
  });
  it.each([
    ["application/vnd.svc.v2+json", [[2, "application/vnd.svc.v2+json", 1]]],
    [
      'application/vnd.svc.v2+json;p="a,b";q=0.5, application/vnd.svc.v1+xml',
      [
        [1, "application/vnd.svc.v1+xml", 1],
        [2, "application/vnd.svc.v2+json", 0.5],
      ],
    ],
    [
      "application/vnd.svc.v1+json;q=0.5, application/vnd.svc.v2+json;q=0.5",
      [
        [1, "application/vnd.svc.v1+json", 0.5],
        [2, "application/vnd.svc.v2+json", 0.5],
      ],
    ],
    ["application/vnd.svc.vx+json", [[undefined, "application/vnd.svc.vx+json", 1]]],
    ["application/vnd.svc.v01+json", [[undefined, "application/vnd.svc.v01+json", 1]]],
    ["application/vnd.svc.v2+json;q=0, application/vnd.svc.v2+yaml, text/vnd.svc.v2+json", []],
    ["application/vnd.svc.v2+json;q=2", []],
    ["application/vnd.svcx.v2+json", []],
  ])("parseVendorMediaTypes(%j, svc)", (accept, expected) => {
    expect(parseVendorMediaTypes(accept, "svc").map((r) => [r.version, r.mediaType, r.q])).toEqual(expected);
  });
  it("parseVendorMediaTypes: case-insensitive type, q=abc treated as 0", () => {
    expect(
      parseVendorMediaTypes("Application/VND.SVC.V3+JSON, application/vnd.svc.v4+json;q=abc", "svc"),
    ).toEqual([{ version: 3, suffix: "json", mediaType: "application/vnd.svc.v3+json", q: 1 }]);
  });
  it("the same Accept asked of two vendors, again and again, gives each vendor its own answer", () => {
    const svc = versionResolver({ versions: [1, 2], defaultVersion: 1, mediaType: { vendor: "svc" } });
    const other = versionResolver({ versions: [1, 2], defaultVersion: 1, mediaType: { vendor: "other" } });
    const accept = { accept: "application/vnd.svc.v2+json" };
    for (let i = 0; i < 3; i++) {
      expect(svc("/x", accept)).toMatchObject({ version: 2, source: "media-type" });
      expect(other("/x", accept)).toMatchObject({ version: 1, source: "default" });
    }
  });
  it("versionResolver: a CORS preflight is version-neutral, as in the pipeline step", () => {
    const resolve = versionResolver({ versions: [1, 2], required: true, neutral: ["/health"] });
    const preflight = { origin: "https://app.example", "access-control-request-method": "GET" };
    expect(resolve("/employees", preflight, "OPTIONS")).toMatchObject({
      version: undefined,
      source: undefined,
    });
    expect(resolve("/v9/employees", preflight, "OPTIONS")).toMatchObject({
      version: undefined,
      url: "/employees",
    });
    expect(resolve("/v2/employees", preflight, "OPTIONS")).toMatchObject({ version: 2, source: "uri" });
    // Not a preflight: another method, no Access-Control-Request-Method, or no method given.
    expect(() => resolve("/employees", preflight, "GET")).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => resolve("/employees", {}, "OPTIONS")).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => resolve("/employees", preflight)).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => resolve("/v9/employees", preflight, "GET")).toThrow(
      expect.objectContaining({ status: 404 }),
    );
  });
  it("versions().resolve reads the method off the request: the same preflight rule", () => {
    const { resolve } = versions({ versions: [1, 2], required: true });
    const headers = { "access-control-request-method": "PUT" };
    expect(resolve({ view: { method: "OPTIONS", headers }, path: "/employees" }, "/employees")).toMatchObject(
      {
        version: undefined,
        error: undefined,
      },
    );
    expect(resolve({ view: { method: "PUT", headers }, path: "/employees" }, "/employees").error).toEqual(
      expect.objectContaining({ status: 400, code: "missing_api_version" }),
    );
  });
  it("isCorsPreflight: OPTIONS with Access-Control-Request-Method only", () => {
    expect(isCorsPreflight("OPTIONS", { "access-control-request-method": "GET" })).toBe(true);
    expect(isCorsPreflight("OPTIONS", {})).toBe(false);
    expect(isCorsPreflight("GET", { "access-control-request-method": "GET" })).toBe(false);
    expect(isCorsPreflight(undefined, { "access-control-request-method": "GET" })).toBe(false);
  });
  it("versionResolver without Express", () => {
    expect(versionResolver({ versions: [1, 2], defaultVersion: 1 })("/v2/x", {})).toMatchObject({
      version: 2,
      source: "uri",
      url: "/x",
    });
  });
});

/** A request the pipeline's `prepare` decided `version` for, as its exchange holds it. */
function decided(version: number): object {
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

describe("versioned construction", () => {
  it("{ one: fn } → TypeError", () => {
    expect(() => versioned({ one: () => {} } as never)).toThrow(TypeError);
  });
  it("{} → TypeError", () => {
    expect(() => versioned({})).toThrow(TypeError);
  });
  it("inherit: true → version 3 uses version 2's handler", () => {
    const seen: string[] = [];
    const h = versioned({ 1: () => seen.push("1"), 2: () => seen.push("2") }, { inherit: true });
    h(decided(3), {}, () => seen.push("next"));
    h(decided(1), {}, () => seen.push("next"));
    expect(seen).toEqual(["2", "1"]);
  });
  it("no apiVersion with a default handler → default", () => {
    const seen: string[] = [];
    versioned({ 1: () => seen.push("1"), default: () => seen.push("d") })({}, {}, () => {});
    expect(seen).toEqual(["d"]);
  });
});
