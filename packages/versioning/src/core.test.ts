import type { IncomingHttpHeaders } from "node:http";
import { createPipeline, type PipelineRequest, type VersionDecision } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { base } from "../test/base-options.js";
import { ACCEPT_CACHE_LIMIT, resolveConfig } from "./config.js";
import { decide, excerpt, versionResolver, versions } from "./core.js";

const step = versions(base);

function request(headers: IncomingHttpHeaders = {}, method = "GET"): PipelineRequest {
  return { view: { method, headers }, path: "/" };
}

const ALL = "API-Version, Accept-Version, Accept";
const WITH_CONTENT = `${ALL}, Content-Type`;
const SUPPORTED = { "api-supported-versions": "1, 2", "api-deprecated-versions": "1" };
const V2 = "application/vnd.svc.v2+json";
/** Content of 2 bytes: the request has content (RFC 9112 §6.3), so its Content-Type is read. */
const content = { "content-length": "2" };
const huge = "99999999999999999999";
/** A path prefix as long as Node's header limit lets a request line be; its message quotes 32. */
const flood = "9".repeat(8000);
const quoted = `${"9".repeat(32)}…`;

/** What a decision must hold: a version decided, or a refusal with its status (and message). */
type Expected =
  | { version: number | undefined; target?: string; label?: string | undefined; vary?: string }
  | { status: number; message?: string; vary?: string };

function check(decision: VersionDecision, expected: Expected): void {
  if ("status" in expected) {
    expect(decision.error?.status).toBe(expected.status);
    if (expected.message !== undefined) expect(decision.error?.message).toBe(expected.message);
    // Every refusal carries the supported versions, and no deprecated version's fields.
    expect(decision.fields).toEqual(SUPPORTED);
    // Nothing to label: a refusal never echoes the type the client named.
    expect(decision.label).toBeUndefined();
    expect(decision.error?.headers).toMatchObject({ "API-Supported-Versions": "1, 2" });
  } else {
    expect(decision.error).toBeUndefined();
    expect(decision.version).toBe(expected.version);
    if (expected.target !== undefined) expect(decision.target).toBe(expected.target);
    if ("label" in expected) expect(decision.label).toBe(expected.label);
  }
  if (expected.vary !== undefined) expect(decision.vary.join(", ")).toBe(expected.vary);
}

describe("versions(): the decision, a table over header strings", () => {
  it.each<[string, string, IncomingHttpHeaders, Expected]>([
    // URI strategy
    ["GET", "/v2/employees", {}, { version: 2, target: "/employees", vary: ALL }],
    ["GET", "/v2/version?x=1", {}, { version: 2, target: "/version?x=1" }],
    ["GET", "/v0/employees", {}, { status: 404 }],
    ["GET", "/vx/employees", {}, { version: 1, target: "/vx/employees" }],
    ["GET", "/v2x/employees", {}, { version: 1, target: "/v2x/employees" }],
    // RFC 3986 §6.2: /v01/x and /v1/x are different URIs; /v01 is no version prefix.
    ["GET", "/v01/version", {}, { version: 1, target: "/v01/version" }],
    ["GET", "/v000000002/version", {}, { version: 1, target: "/v000000002/version" }],
    [
      "GET",
      "/v1000000000/employees",
      {},
      {
        status: 404,
        message: "API version 1000000000 (path /v1000000000) is not supported; supported versions: 1, 2",
        vary: ALL,
      },
    ],
    [
      "GET",
      `/v${huge}/employees`,
      {},
      {
        status: 404,
        message: `API version ${huge} (path /v${huge}) is not supported; supported versions: 1, 2`,
        vary: ALL,
      },
    ],
    ["HEAD", `/v${huge}/employees`, {}, { status: 404, vary: ALL }],
    ["OPTIONS", `/v${huge}/employees`, {}, { status: 404, vary: ALL }],
    [
      "GET",
      `/v${huge}/employees`,
      { "api-version": "1" },
      {
        status: 400,
        message: `The request names API version ${huge} (path /v${huge}) and 1 (header API-Version)`,
        vary: ALL,
      },
    ],
    [
      "GET",
      `/v${huge}/employees`,
      { accept: "application/vnd.svc.v1+json" },
      {
        status: 404,
        message: `API version ${huge} (path /v${huge}) is not supported; supported versions: 1, 2`,
      },
    ],
    [
      "GET",
      "/v999999999/employees",
      {},
      {
        status: 404,
        message: "API version 999999999 (path /v999999999) is not supported; supported versions: 1, 2",
      },
    ],
    // A version-neutral path with an unknown version: the default, as /v9/health.
    ["GET", `/v${huge}/health`, {}, { version: 1, target: "/health" }],
    // Header strategy
    ["GET", "/employees", { "api-version": "2" }, { version: 2, vary: ALL }],
    ["GET", "/employees", { "accept-version": "1" }, { version: 1 }],
    ["GET", "/employees", { "api-version": "99999999999" }, { status: 400 }],
    ["GET", "/employees", { "api-version": "2, 2" }, { version: 2 }],
    ["GET", "/employees", { "api-version": "2, " }, { version: 2 }],
    ["GET", "/employees", { "api-version": "1", "accept-version": "2" }, { status: 400 }],
    // Media type strategy
    ["GET", "/employees", { accept: V2 }, { version: 2, label: V2, vary: ALL }],
    ["GET", "/employees", { accept: V2, "api-version": "1" }, { status: 406 }],
    ["GET", "/employees", { accept: "application/vnd.svc.v01+json" }, { status: 406 }],
    [
      "GET",
      "/employees",
      { accept: "application/vnd.svc.v02+json, application/json" },
      { version: 1, label: undefined },
    ],
    [
      "GET",
      "/employees",
      { accept: "application/vnd.svc.v2+xml" },
      { version: 2, label: "application/vnd.svc.v2+xml" },
    ],
    ["GET", "/employees", { accept: "application/vnd.svc.v9+json" }, { status: 406 }],
    [
      "GET",
      "/employees",
      { accept: "application/vnd.svc.v1+json;q=0.5, application/vnd.svc.v2+json" },
      { version: 2 },
    ],
    ["GET", "/employees", { accept: "application/vnd.svc.v2+json;q=0" }, { version: 1, label: undefined }],
    ["GET", "/employees", { accept: "application/vnd.other.v2+json" }, { version: 1, label: undefined }],
    ["GET", "/employees", { accept: "application/vnd.svc.v2+yaml" }, { version: 1, label: undefined }],
    ["GET", "/employees", { accept: "application/vnd.svc.v99999999999+json" }, { status: 406 }],
    ["GET", "/employees", { accept: "application/vnd.svc.vx+json" }, { status: 406 }],
    ["GET", "/employees", { accept: "APPLICATION/VND.SVC.V1.5+XML" }, { status: 406 }],
    ["GET", "/employees", { accept: "application/vnd.svc.v9+json, application/json" }, { version: 1 }],
    ["GET", "/employees", { accept: "application/vnd.svc.vx+json, */*;q=0.2" }, { version: 1 }],
    ["GET", "/employees", { accept: "application/vnd.svc.v9+json, application/json;q=0" }, { status: 406 }],
    ["GET", "/v2/employees", { accept: "application/vnd.svc.v9+json, application/json" }, { version: 2 }],
    ["GET", "/employees", { accept: `application/vnd.svc.vx+json;q=0, ${V2}` }, { version: 2 }],
    ["GET", "/employees", { accept: `application/vnd.svc.vx+json, ${V2}` }, { version: 2 }],
    // Path, header and Accept together
    ["GET", "/v2/employees", { accept: "application/vnd.svc.v1+json" }, { status: 406, vary: ALL }],
    ["GET", "/v9/employees", { accept: "application/vnd.svc.v1+json" }, { status: 404 }],
    ["GET", "/v1/employees", { "api-version": "2", accept: "application/vnd.svc.v1+json" }, { status: 400 }],
    ["GET", "/v2/health", { accept: "application/vnd.svc.v1+json" }, { version: 2, label: undefined }],
    ["GET", "/v2/employees", { accept: `application/vnd.svc.v1+json, ${V2}` }, { version: 2, label: V2 }],
    [
      "GET",
      "/v2/employees",
      { accept: "application/vnd.svc.v1+json, application/json;q=0.5" },
      { version: 2, label: undefined },
    ],
    [
      "GET",
      "/v2/employees",
      { accept: "application/vnd.svc.v1+json, application/vnd.svc.v2+json;q=0" },
      { status: 406 },
    ],
    // Version-neutral paths: no label on a body that is no versioned representation.
    ["GET", "/health", { accept: V2 }, { version: 2, label: undefined }],
    ["GET", "/health", { accept: "application/vnd.svc.v2+xml" }, { version: 2, label: undefined }],
    ["GET", "/health", { "api-version": "9" }, { version: 1 }],
    // Content-Type of the request content (RFC 6838 §3.2, RFC 9110 §8.3)
    ["PATCH", "/employees/7", { ...content, "content-type": V2 }, { version: 2, vary: WITH_CONTENT }],
    [
      "PATCH",
      "/employees/7",
      { ...content, "content-type": "Application/VND.SVC.V2+JSON; charset=utf-8" },
      { version: 2 },
    ],
    [
      "PATCH",
      "/employees/7",
      { ...content, "content-type": "application/vnd.svc.v2+json; charset = utf-8" },
      { version: 2 },
    ],
    ["PATCH", "/employees/7", { ...content, "content-type": "application/json" }, { version: 1 }],
    ["PATCH", "/employees/7", { ...content, "content-type": "application/vnd.svc.v2+yaml" }, { version: 1 }],
    ["PATCH", "/employees/7", { ...content, "content-type": `${V2}, application/json` }, { version: 1 }],
    [
      "PATCH",
      "/employees/7",
      { "content-length": "0", "content-type": "application/vnd.svc.v9+json" },
      { version: 1, vary: ALL },
    ],
    ["PATCH", "/employees/7", { "transfer-encoding": "chunked", "content-type": V2 }, { version: 2 }],
    ["GET", "/version", { "content-type": "application/vnd.svc.v9+json" }, { version: 1, vary: ALL }],
    ["POST", "/health", { ...content, "content-type": "application/vnd.svc.v9+json" }, { version: 1 }],
    [
      "PATCH",
      "/employees/7",
      { ...content, "content-type": "application/vnd.svc.v9+json" },
      {
        status: 415,
        message:
          "API version 9 (Content-Type application/vnd.svc.v9+json) is not supported; supported versions: 1, 2",
        vary: WITH_CONTENT,
      },
    ],
    [
      "PATCH",
      "/employees/7",
      { ...content, "content-type": "application/vnd.svc.vx+json" },
      { status: 415, vary: WITH_CONTENT },
    ],
    ["PATCH", "/v1/employees/7", { ...content, "content-type": V2 }, { status: 400, vary: WITH_CONTENT }],
    [
      "PATCH",
      "/employees/7",
      { ...content, "api-version": "1", "content-type": V2 },
      { status: 400, vary: WITH_CONTENT },
    ],
    [
      "PATCH",
      "/employees/7",
      { ...content, "content-type": "application/vnd.svc.v1+json", accept: V2 },
      { status: 406, vary: WITH_CONTENT },
    ],
    [
      "PATCH",
      "/employees/7",
      { ...content, "api-version": "9", "content-type": "application/json" },
      { status: 400, vary: WITH_CONTENT },
    ],
    [
      "PATCH",
      "/v9/employees/7",
      { ...content, "content-type": "application/json" },
      { status: 404, vary: WITH_CONTENT },
    ],
    // Without content nothing of Content-Type was read: Vary as before.
    [
      "PATCH",
      "/employees/7",
      { "api-version": "9", "content-type": "application/vnd.svc.v9+json" },
      { status: 400, vary: ALL },
    ],
    [
      "GET",
      "/version",
      { "api-version": "9", "content-type": "application/vnd.svc.v9+json" },
      { status: 400, vary: ALL },
    ],
    [
      "PATCH",
      "/employees/7",
      { ...content, "content-type": V2, accept: `application/vnd.svc.v1+json, ${V2}` },
      { version: 2, label: V2 },
    ],
    [
      "PATCH",
      "/v2/employees/7",
      { ...content, "content-type": V2, accept: "application/json" },
      { version: 2 },
    ],
    // Absolute-form targets (RFC 9112 §3.2.2): read by their path, routed with scheme and authority.
    ["GET", "http://api.example/v2/employees", {}, { version: 2, target: "http://api.example/employees" }],
    [
      "GET",
      "http://api.example/v2/version?x=1",
      {},
      { version: 2, target: "http://api.example/version?x=1" },
    ],
  ])("%s %s %j → %j", (method, target, headers, expected) => {
    check(step.resolve(request(headers, method), target), expected);
  });

  it.each<[string, string, IncomingHttpHeaders, Expected]>([
    [
      "/v<8,000 digits>/employees → 404 quoting 32 of them",
      `/v${flood}/employees`,
      {},
      {
        status: 404,
        message: `API version ${quoted} (path /v${"9".repeat(30)}…) is not supported; supported versions: 1, 2`,
      },
    ],
    [
      "/v<8,000 digits>/employees, API-Version: 1 → 400 quoting 32 of them",
      `/v${flood}/employees`,
      { "api-version": "1" },
      {
        status: 400,
        message: `The request names API version ${quoted} (path /v${"9".repeat(30)}…) and 1 (header API-Version)`,
      },
    ],
    [
      "Accept: application/vnd.svc.v<8,000 digits>+json → 406 quoting 32 characters of the type",
      "/employees",
      { accept: `application/vnd.svc.v${flood}+json` },
      {
        status: 406,
        message: `Media type application/vnd.svc.v${"9".repeat(11)}… (no API version) is not supported; supported versions: 1, 2`,
      },
    ],
    [
      "Content-Type: application/vnd.svc.v<8,000 digits>+json → 415 quoting 32 characters of the type",
      "/employees",
      { ...content, "content-type": `application/vnd.svc.v${flood}+json` },
      {
        status: 415,
        message: `Content-Type application/vnd.svc.v${"9".repeat(11)}… (no API version) is not supported; supported versions: 1, 2`,
      },
    ],
  ])("%s", (_, target, headers, expected) => {
    check(step.resolve(request(headers), target), expected);
  });

  // A path prefix of 10 kB reaches the decision whole; a field is read up to 8,192 characters
  // (a longer `Accept` names no version), so the fields' spellings are 8,000.
  it.each<[string, string, IncomingHttpHeaders]>([
    ["/v<10 kB of digits>/x", `/v${"9".repeat(10_240)}/x`, {}],
    ["/v<10 kB>/x beside API-Version: 1", `/v${"9".repeat(10_240)}/x`, { "api-version": "1" }],
    ["Accept: a vendor type of 8,000 digits", "/x", { accept: `application/vnd.svc.v${flood}+json` }],
    [
      "Content-Type: a vendor type of 8,000 digits",
      "/x",
      { ...content, "content-type": `application/vnd.svc.v${flood}+json` },
    ],
    [
      "Accept: 8,000 characters of a type naming no version",
      "/x",
      { accept: `application/vnd.svc.v${"x".repeat(8000)}+json` },
    ],
  ])("%s → a refusal quoting at most 32 characters of each spelling", (_, target, headers) => {
    const { error } = step.resolve(request(headers), target);
    expect(error).toBeDefined();
    const message = error?.message ?? "";
    expect(message.length).toBeLessThan(200);
    for (const run of message.match(/[9x]{2,}/g) ?? []) expect(run.length).toBeLessThanOrEqual(32);
    expect(message).toContain("…");
  });

  // No field the strategies read lets a control character into a version or a vendor type (each
  // is made of digits or token characters); the quoting escapes them whatever it is given.
  it.each<[string, string, string]>([
    ["10 kB of digits", "9".repeat(10_240), `${"9".repeat(32)}…`],
    ["one digit", "1", "1"],
    ["32 characters", "x".repeat(32), "x".repeat(32)],
    [
      "an escape sequence and a bidi override before 10 kB",
      `v\u001b[2J\u202e${"x".repeat(10_240)}`,
      `v\\u001b[2J\\u202e${"x".repeat(16)}…`,
    ],
    ["NUL, NEL, LINE SEPARATOR, DEL", "\u0000\u0085\u2028\u007f", "\\u0000\\u0085\\u2028\\u007f"],
    ["an escape that would pass the bound", `${"x".repeat(30)}\u001b`, `${"x".repeat(30)}…`],
  ])("excerpt(%s) → at most 32 characters, control characters escaped", (_, spelling, quoted) => {
    expect(excerpt(spelling)).toBe(quoted);
    expect(excerpt(spelling).length).toBeLessThanOrEqual(33);
  });

  it.each(["abc", "1.5", "-1", "v2", "", "1, 2", ",", " , ,", "1,,2", "2, x", "01", "002"])(
    "API-Version: %j → 400 with the supported versions",
    (value) => {
      check(step.resolve(request({ "api-version": value }), "/employees"), { status: 400 });
    },
  );

  it.each(["2,", ", 2", "2,,2", "2, ,"])(
    "API-Version: %j (empty list members, RFC 9110 §5.6.1.2) → version 2",
    (value) => {
      check(step.resolve(request({ "api-version": value }), "/employees"), { version: 2 });
    },
  );

  it("the 400 for a malformed header names it", () => {
    const decision = step.resolve(request({ "api-version": "1, 2" }), "/employees");
    expect(decision.error?.message).toBe("Header API-Version must be one API version number");
    expect(decision.error?.code).toBe("malformed_api_version");
  });
});

describe("versions(): the fields every response of a version carries", () => {
  it("a deprecated version → Deprecation, Sunset and their Links beside the supported versions", () => {
    const decision = step.resolve(request(), "/v1/employees");
    expect(decision.fields).toEqual({
      ...SUPPORTED,
      deprecation: "@1767225600",
      sunset: "Wed, 01 Jul 2026 00:00:00 GMT",
      link: '<https://docs.example.com/deprecations/v1>; rel="deprecation", <https://docs.example.com/sunset/v1>; rel="sunset"',
    });
  });
  it("no version named → the deprecated default 1, with its Deprecation", () => {
    expect(step.resolve(request(), "/employees").fields.deprecation).toBe("@1767225600");
  });
  it("version 2 → only the supported versions", () => {
    expect(step.resolve(request({ "api-version": "2" }), "/employees").fields).toEqual(SUPPORTED);
  });
  it.each<[string, IncomingHttpHeaders]>([
    ["no version", {}],
    ["API-Version: 9", { "api-version": "9" }],
    ["Accept: application/vnd.svc.v9+json", { accept: "application/vnd.svc.v9+json" }],
  ])("GET /health with %s → the default 1, yet no Deprecation, Sunset or Link", (_name, headers) => {
    const decision = step.resolve(request(headers), "/health");
    expect(decision.version).toBe(1);
    expect(decision.fields).toEqual(SUPPORTED);
  });
  it("a Link set in front of the pipeline → kept, the version's Links appended (RFC 8288 §3.5)", () => {
    const preset = (name: string) => (name === "link" ? '</openapi.json>; rel="service-desc"' : undefined);
    const decision = step.resolve({ ...request(), preset }, "/v1/employees");
    expect(decision.fields.link).toBe(
      '</openapi.json>; rel="service-desc", <https://docs.example.com/deprecations/v1>; rel="deprecation", <https://docs.example.com/sunset/v1>; rel="sunset"',
    );
    // The shared fields of version 1 are not changed by one request's Link.
    expect(step.resolve(request(), "/v1/employees").fields.link).toBe(
      '<https://docs.example.com/deprecations/v1>; rel="deprecation", <https://docs.example.com/sunset/v1>; rel="sunset"',
    );
  });
  it("no deprecated version → no API-Deprecated-Versions", () => {
    const fields = versions({ versions: [3, 1], defaultVersion: 1 }).resolve(request(), "/x").fields;
    expect(fields).toEqual({ "api-supported-versions": "1, 3" });
  });
});

describe("versions(): options that change the decision", () => {
  it("without the media type strategy → Vary: API-Version, Accept-Version; the content's type ignored", () => {
    const plain = versions({ versions: [1, 2], defaultVersion: 1 });
    check(plain.resolve(request(), "/v2/employees"), { version: 2, vary: "API-Version, Accept-Version" });
    expect(plain.resolve(request({ "api-version": "1" }), "/v2/employees").error?.status).toBe(400);
    check(plain.resolve(request({ ...content, "content-type": V2 }, "PATCH"), "/employees/7"), {
      version: 1,
    });
  });
  it("uri only (header: false, no mediaType) → no Vary: the URL is the cache key", () => {
    const uri = versions({ versions: [1, 2], defaultVersion: 1, header: false });
    check(uri.resolve(request({ "api-version": "1" }), "/v2/employees"), { version: 2, vary: "" });
  });
  it("names: [X-Api-Version], unknownVersionStatus: 422 → only that header counts", () => {
    const custom = versions({
      versions: [1, 2],
      defaultVersion: 1,
      header: { names: ["X-Api-Version"], unknownVersionStatus: 422 },
    });
    check(custom.resolve(request({ "x-api-version": "2", "api-version": "1" }), "/employees"), {
      version: 2,
      vary: "X-Api-Version",
    });
    expect(custom.resolve(request({ "x-api-version": "3" }), "/employees").error?.status).toBe(422);
  });
  it.each(["constructor", "Constructor"])(
    "names: [%s] → absent: the default; present: its version",
    (name) => {
      const custom = versions({ versions: [1, 2], defaultVersion: 1, header: { names: [name] } });
      expect(custom.resolve(request(), "/employees").version).toBe(1);
      expect(custom.resolve(request({ [name.toLowerCase()]: "2" }), "/employees").version).toBe(2);
    },
  );
  it("unknownVersionStatus: 400 for the media type → 400 instead of 406", () => {
    const acme = versions({ versions: [1], mediaType: { vendor: "acme", unknownVersionStatus: 400 } });
    expect(acme.resolve(request({ accept: "application/vnd.acme.v3+json" }), "/version").error?.status).toBe(
      400,
    );
  });
  it("required: true → 400 without a version (Vary on every version field); neutral paths and preflights pass", () => {
    const required = versions({ ...base, required: true });
    check(required.resolve(request(), "/employees"), { status: 400, vary: ALL });
    check(
      required.resolve(request({ ...content, "content-type": "application/json" }, "PATCH"), "/employees/7"),
      {
        status: 400,
        vary: WITH_CONTENT,
      },
    );
    check(required.resolve(request(), "/health"), { version: undefined });
    check(required.resolve(request(), "http://api.example/health"), { version: undefined });
    check(required.resolve(request(), "http://api.example/employees"), { status: 400 });
    const preflight = { "access-control-request-method": "GET", origin: "https://app.example" };
    check(required.resolve(request(preflight, "OPTIONS"), "/employees"), { version: undefined });
    check(required.resolve(request({}, "OPTIONS"), "/employees"), { status: 400 });
  });
  it("uri: false → /v2/employees is just a path; header: false → API-Version ignored, not in Vary", () => {
    check(versions({ ...base, uri: false }).resolve(request(), "/v2/employees"), {
      version: 1,
      target: "/v2/employees",
    });
    check(versions({ ...base, header: false }).resolve(request({ "api-version": "2" }), "/employees"), {
      version: 1,
      vary: "Accept",
    });
  });
});

describe("versions() in a pipeline", () => {
  it("prepare() returns the refusal with the decision", () => {
    const prepared = createPipeline({ versioning: step }).prepare(request(), "/v9/x");
    expect((prepared.refusal as { status: number }).status).toBe(404);
    expect(prepared.version?.fields["api-supported-versions"]).toBe("1, 2");
  });
});

describe("parsed Accept values", () => {
  it("2,000 distinct Accept values → each decided on its own, at most 500 kept parsed", () => {
    const config = resolveConfig({ versions: [1, 2], defaultVersion: 1, mediaType: { vendor: "svc" } });
    for (let i = 0; i < 2000; i++) {
      const version = (i % 2) + 1;
      const accept = `application/vnd.svc.v${version}+json;p=${i}`;
      expect(decide(config, "GET", "/x", { accept }).version).toBe(version);
    }
    expect(config.accepted.size).toBeLessThanOrEqual(ACCEPT_CACHE_LIMIT);
    expect(ACCEPT_CACHE_LIMIT).toBe(500);
  });

  it("two vendors, one Accept value → each configuration reads it in its own tree", () => {
    const accept = "application/vnd.a.v2+json, application/vnd.b.v1+json;q=0.5";
    const a = resolveConfig({ versions: [1, 2], defaultVersion: 1, mediaType: { vendor: "a" } });
    const b = resolveConfig({ versions: [1, 2], defaultVersion: 2, mediaType: { vendor: "b" } });
    for (let i = 0; i < 2; i++) {
      expect(decide(a, "GET", "/x", { accept }).mediaType).toBe("application/vnd.a.v2+json");
      expect(decide(b, "GET", "/x", { accept }).mediaType).toBe("application/vnd.b.v1+json");
    }
  });
});

describe("versionResolver(): Vary", () => {
  it("each resolution's vary is its own list: changing one leaves the next as it was", () => {
    const resolve = versionResolver({ versions: [1, 2], defaultVersion: 1, mediaType: { vendor: "svc" } });
    const first = resolve("/v2/x", { "content-length": "2" });
    expect(first.vary).toEqual(["API-Version", "Accept-Version", "Accept", "Content-Type"]);
    first.vary.push("Origin");
    expect(resolve("/v2/x", { "content-length": "2" }).vary).toEqual([
      "API-Version",
      "Accept-Version",
      "Accept",
      "Content-Type",
    ]);
    expect(resolve("/x", {}).vary).toEqual(["API-Version", "Accept-Version", "Accept"]);
  });
});
