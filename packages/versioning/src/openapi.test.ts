import { composeOpenApi, type OpenApiObject } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { versionedOpenApi, versioningOpenApi } from "./openapi.js";
import type { ApiVersioningOptions } from "./options.js";

const OPTIONS: ApiVersioningOptions = {
  versions: [1, 2],
  defaultVersion: 1,
  mediaType: { vendor: "acme" },
  neutral: ["/health"],
  deprecated: { 1: { deprecation: "2026-01-01", sunset: "2027-01-01" } },
};
const content = {
  "application/json": { schema: {} },
  "application/vnd.acme.v1+json": { schema: { title: "one" } },
  "application/vnd.acme.v2+json": { schema: { title: "two" } },
};
const doc = (): OpenApiObject => ({
  openapi: "3.1.0",
  info: { title: "t", version: "0" },
  paths: {
    "/employees": {
      get: { responses: { "200": { description: "ok", content } } },
      post: { requestBody: {}, responses: { "201": { description: "created" } } },
    },
    "/v2/employees": { get: { responses: { "200": { description: "ok", content } } } },
    "/health": { get: { responses: { "200": { description: "up" } } } },
  },
});
type Op = {
  parameters?: Array<Record<string, unknown>>;
  deprecated?: boolean;
  responses: Record<string, { headers: object; content: object }>;
};
type Out = { info: { version: string }; paths: Record<string, Record<string, Op>> };

describe("versioningOpenApi", () => {
  const out = composeOpenApi(doc(), [
    versioningOpenApi(OPTIONS, { selectable: ({ operation }) => operation.requestBody === undefined }),
  ]) as Out & { components: { headers: Record<string, unknown> } };

  it("describes the selecting header on the versioned operations not under a prefix", () => {
    expect(out.paths["/employees"]?.get?.parameters).toEqual([
      {
        name: "API-Version",
        in: "header",
        description: "The API version: 1, 2; without one, 1 (`Accept-Version` too)",
        schema: { type: "string", enum: ["1", "2"], default: "1" },
      },
    ]);
    expect(out.paths["/employees"]?.post?.parameters).toBeUndefined();
    expect(out.paths["/v2/employees"]?.get?.parameters).toBeUndefined();
    expect(out.paths["/health"]?.get).toEqual({ responses: { "200": { description: "up" } } });
  });

  it("describes the refusal of an unknown version at each strategy's status, and the fields of a success", () => {
    const get = out.paths["/employees"]?.get as Op;
    expect(Object.keys(get.responses).sort()).toEqual(["200", "400", "406"]);
    expect(Object.keys(get.responses["200"]?.headers ?? {})).toEqual([
      "API-Supported-Versions",
      "Deprecation",
      "Sunset",
    ]);
    expect(Object.keys(out.components.headers).sort()).toEqual([
      "ApiSupportedVersions",
      "Deprecation",
      "Sunset",
    ]);
  });

  it("adds a query parameter for the query strategy", () => {
    const q = composeOpenApi(doc(), [
      versioningOpenApi({ versions: [1, 2], defaultVersion: 2, query: true, header: false }),
    ]) as Out;
    expect(q.paths["/employees"]?.get?.parameters?.map((p) => [p.in, p.name])).toEqual([
      ["query", "api-version"],
    ]);
  });

  it("refuses what versions() refuses, and misspelt options of its own", () => {
    expect(() => versioningOpenApi({ versions: [] })).toThrow(/versions/);
    expect(() => versioningOpenApi(OPTIONS, { selectible: () => true } as never)).toThrow(
      /unknown option "described.selectible" \(did you mean "described.selectable"\?\)/,
    );
  });
});

describe("versionedOpenApi", () => {
  const composed = composeOpenApi(doc(), [versioningOpenApi(OPTIONS)]);
  const docs = versionedOpenApi(composed, OPTIONS);

  it("makes one document per version", () => {
    expect([...docs.keys()]).toEqual(["1", "2"]);
    expect(docs.get("2")?.info).toEqual({ title: "t", version: "2" });
  });

  it("keeps each version's own paths, parameters and media types", () => {
    const one = docs.get("1") as Out;
    const two = docs.get("2") as Out;
    expect(Object.keys(one.paths)).toEqual(["/employees", "/health"]);
    expect(Object.keys(two.paths)).toEqual(["/employees", "/v2/employees", "/health"]);
    expect(one.paths["/employees"]?.get?.parameters?.[0]).toMatchObject({ schema: { enum: ["1"] } });
    expect(one.paths["/employees"]?.get?.parameters?.[0]?.required).toBeUndefined();
    expect(two.paths["/employees"]?.get?.parameters?.[0]).toMatchObject({
      required: true,
      schema: { enum: ["2"] },
    });
    expect(Object.keys(one.paths["/employees"]?.get?.responses["200"]?.content ?? {})).toEqual([
      "application/json",
      "application/vnd.acme.v1+json",
    ]);
    expect(Object.keys(two.paths["/v2/employees"]?.get?.responses["200"]?.content ?? {})).toEqual([
      "application/json",
      "application/vnd.acme.v2+json",
    ]);
  });

  it("marks a deprecated version's operations deprecated, never the neutral ones", () => {
    expect((docs.get("1") as Out).paths["/employees"]?.get?.deprecated).toBe(true);
    expect((docs.get("1") as Out).paths["/health"]?.get?.deprecated).toBeUndefined();
    expect((docs.get("2") as Out).paths["/employees"]?.get?.deprecated).toBeUndefined();
  });
});

describe("versionedOpenApi with dates", () => {
  it("keys each document by the date, and the default by the latest", () => {
    const options: ApiVersioningOptions = {
      versions: ["2026-11-25", "2026-01-01"],
      defaultVersion: "latest",
      mediaType: { vendor: "acme" },
    };
    const dated = {
      "application/vnd.acme.v2026-01-01+json": { schema: {} },
      "application/vnd.acme.v2026-11-25+json": { schema: {} },
    };
    const base = {
      openapi: "3.1.0",
      info: { title: "t", version: "0" },
      paths: {
        "/employees": { get: { responses: { "200": { description: "ok", content: dated } } } },
        "/v2026-01-01/employees": { get: { responses: { "200": { description: "ok", content: dated } } } },
      },
    };
    const docs = versionedOpenApi(composeOpenApi(base, [versioningOpenApi(options)]), options);
    expect([...docs.keys()]).toEqual(["2026-01-01", "2026-11-25"]);
    const latest = docs.get("2026-11-25") as Out;
    const first = docs.get("2026-01-01") as Out;
    expect(Object.keys(latest.paths)).toEqual(["/employees"]);
    expect(latest.paths["/employees"]?.get?.parameters?.[0]?.required).toBeUndefined();
    expect(first.paths["/employees"]?.get?.parameters?.[0]).toMatchObject({
      required: true,
      schema: { enum: ["2026-01-01"] },
    });
    expect(Object.keys(first.paths["/v2026-01-01/employees"]?.get?.responses["200"]?.content ?? {})).toEqual([
      "application/vnd.acme.v2026-01-01+json",
    ]);
  });
});
