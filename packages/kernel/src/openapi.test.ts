import { describe, expect, it } from "vitest";
import {
  addOpenApiParameter,
  addOpenApiResponse,
  addOpenApiResponseHeaders,
  composeOpenApi,
  type OpenApiFragment,
  type OpenApiObject,
  openApiErrorResponse,
  openApiRef,
} from "./openapi.js";

const base = (): OpenApiObject => ({
  openapi: "3.1.0",
  info: { title: "t", version: "1" },
  security: [{ basic: [] }],
  paths: {
    "/items": {
      get: { responses: { "200": { description: "ok" } } },
      post: { responses: { "201": { description: "created" } } },
    },
    "/health": { get: { security: [], responses: { "200": { description: "up" } } } },
    "/anonymous": { get: { security: [{}], responses: { "200": { description: "up" } } } },
  },
});

const errors: OpenApiFragment = {
  source: "errors",
  components: { schemas: { Err: { type: "object" } } },
  errorContent: { "application/json": { schema: openApiRef("schemas", "Err") } },
};

describe("composeOpenApi", () => {
  it("merges components, gives marked error responses the error content and leaves the input alone", () => {
    const input = base();
    const before = JSON.stringify(input);
    const gate: OpenApiFragment = {
      source: "gate",
      components: {
        responses: { Refused: openApiErrorResponse("refused", { "Retry-After": { schema: {} } }) },
      },
      operation: ({ operation }) => {
        addOpenApiResponse(operation, "429", openApiRef("responses", "Refused"));
        addOpenApiResponse(operation, "418", openApiErrorResponse("inline"));
      },
    };
    const out = composeOpenApi(input, [errors, gate]) as {
      components: Record<string, Record<string, OpenApiObject>>;
      paths: Record<string, Record<string, { responses: Record<string, OpenApiObject> }>>;
    };
    expect(JSON.stringify(input)).toBe(before);
    expect(out.components.schemas?.Err).toEqual({ type: "object" });
    expect(out.components.responses?.Refused).toEqual({
      description: "refused",
      headers: { "Retry-After": { schema: {} } },
      content: errors.errorContent,
    });
    const get = out.paths["/items"]?.get?.responses ?? {};
    expect(get["429"]).toEqual({ $ref: "#/components/responses/Refused" });
    expect(get["418"]).toEqual({ description: "inline", content: errors.errorContent });
    expect(JSON.stringify(out)).not.toContain("x-svc-error-record");
  });

  it("without an error content, drops the mark and adds no content", () => {
    const out = composeOpenApi(base(), [
      { source: "gate", components: { responses: { Refused: openApiErrorResponse("refused") } } },
    ]) as { components: { responses: Record<string, OpenApiObject> } };
    expect(out.components.responses.Refused).toEqual({ description: "refused" });
  });

  it("refuses one component name with two values, naming both sources", () => {
    const a: OpenApiFragment = {
      source: "@svc/a",
      components: { headers: { X: { schema: { type: "string" } } } },
    };
    const b: OpenApiFragment = {
      source: "@svc/b",
      components: { headers: { X: { schema: { type: "integer" } } } },
    };
    expect(() => composeOpenApi(base(), [a, b])).toThrow(
      /@svc\/b defines #\/components\/headers\/X, which @svc\/a defines otherwise/,
    );
    expect(() => composeOpenApi(base(), [a, { ...a, source: "@svc/c" }])).not.toThrow();
    const doc = { ...base(), components: { headers: { X: { schema: {} } } } };
    expect(() => composeOpenApi(doc, [a])).toThrow(/which the document defines otherwise/);
  });

  it("refuses two different error contents", () => {
    expect(() =>
      composeOpenApi(base(), [errors, { source: "other", errorContent: { "text/plain": {} } }]),
    ).toThrow(/other and errors both give the error content/);
  });

  it.each([
    ["get", "/items", true],
    ["post", "/items", true],
    ["get", "/health", false],
    ["get", "/anonymous", false],
  ])("calls operation() for %s %s with secured = %s", (method, path, secured) => {
    const seen: Array<[string, string, boolean]> = [];
    composeOpenApi(base(), [{ source: "s", operation: (c) => seen.push([c.method, c.path, c.secured]) }]);
    expect(seen).toContainEqual([method, path, secured]);
    expect(seen).toHaveLength(4);
  });
});

describe("operation helpers", () => {
  it("addOpenApiParameter adds once by $ref or by name (any case) and location", () => {
    const op: OpenApiObject = { parameters: [{ name: "If-Match", in: "header" }] };
    addOpenApiParameter(op, { name: "if-match", in: "header" });
    addOpenApiParameter(op, { name: "If-Match", in: "query" });
    addOpenApiParameter(op, openApiRef("parameters", "IfMatch"), { name: "If-Match", in: "header" });
    addOpenApiParameter(op, openApiRef("parameters", "Key"));
    addOpenApiParameter(op, openApiRef("parameters", "Key"));
    expect(op.parameters).toEqual([
      { name: "If-Match", in: "header" },
      { name: "If-Match", in: "query" },
      { $ref: "#/components/parameters/Key" },
    ]);
  });

  it("addOpenApiResponse never replaces what the operation says of a status", () => {
    const op: OpenApiObject = { responses: { "409": { description: "mine" } } };
    addOpenApiResponse(op, "409", { description: "theirs" });
    addOpenApiResponse(op, "422", { description: "theirs" });
    expect(op.responses).toEqual({ "409": { description: "mine" }, "422": { description: "theirs" } });
  });

  it("addOpenApiResponseHeaders adds to inline responses of the classes named, keeping their own", () => {
    const op: OpenApiObject = {
      responses: {
        "200": { description: "ok", headers: { etag: { schema: {} } } },
        "201": { description: "created" },
        "304": { $ref: "#/components/responses/NotModified" },
        "400": { description: "bad" },
      },
    };
    addOpenApiResponseHeaders(op, { ETag: { schema: { type: "string" } }, "X-A": { schema: {} } });
    expect(op.responses).toEqual({
      "200": { description: "ok", headers: { etag: { schema: {} }, "X-A": { schema: {} } } },
      "201": {
        description: "created",
        headers: { ETag: { schema: { type: "string" } }, "X-A": { schema: {} } },
      },
      "304": { $ref: "#/components/responses/NotModified" },
      "400": { description: "bad" },
    });
  });
});
