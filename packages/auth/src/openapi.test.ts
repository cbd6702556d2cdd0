import { composeOpenApi } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { authOpenApi } from "./openapi.js";

const doc = () => ({
  openapi: "3.1.0",
  info: { title: "t", version: "1" },
  security: [{ bearer: [] }],
  paths: {
    "/items": {
      get: { responses: { "200": { description: "ok" } } },
      post: { security: [{ bearer: ["write"] }], responses: { "201": { description: "created" } } },
    },
    "/health": { get: { security: [], responses: { "200": { description: "up" } } } },
  },
});
type Out = {
  components: { securitySchemes: Record<string, unknown>; headers: Record<string, { description: string }> };
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
};

describe("authOpenApi", () => {
  it("describes the schemes, a 401 where credentials are needed and a 403 where a scope is", () => {
    const out = composeOpenApi(doc(), [
      authOpenApi({ basic: true, bearer: { description: "From /token" }, dpop: true }),
    ]) as Out;
    expect(out.components.securitySchemes).toEqual({
      basic: { type: "http", scheme: "basic" },
      bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "From /token" },
      dpop: { type: "http", scheme: "dpop", bearerFormat: "JWT" },
    });
    expect(out.components.headers.WWWAuthenticate?.description).toContain("`Basic`, `Bearer`, `DPoP`");
    expect(Object.keys(out.paths["/items"]?.get?.responses ?? {})).toEqual(["200", "401"]);
    expect(Object.keys(out.paths["/items"]?.post?.responses ?? {})).toEqual(["201", "401", "403"]);
    expect(Object.keys(out.paths["/health"]?.get?.responses ?? {})).toEqual(["200"]);
  });

  it("follows `forbidden`", () => {
    const out = composeOpenApi(doc(), [authOpenApi({ bearer: true, forbidden: () => true })]) as Out;
    expect(out.paths["/items"]?.get?.responses["403"]).toBeDefined();
  });

  it.each([
    [{ bearer: true, dPoP: true }, /unknown option "dPoP" \(did you mean "dpop"\?\)/],
    [{}, /at least one of basic, bearer and dpop/],
    [{ basic: { descripton: "x" } }, /unknown option "basic.descripton"/],
    [{ bearer: true, forbidden: "write" }, /forbidden/],
  ])("refuses %j", (options, message) => {
    expect(() => authOpenApi(options as never)).toThrow(message);
  });
});
