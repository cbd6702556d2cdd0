import { composeOpenApi } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { negotiateOpenApi } from "./openapi.js";

const body = { content: { "application/json": { schema: {} } } };
const doc = () => ({
  openapi: "3.1.0",
  info: { title: "t", version: "1" },
  paths: {
    "/items": {
      get: { responses: { "200": { description: "ok" } } },
      post: { requestBody: body, responses: { "201": { description: "created" } } },
    },
    "/items/{id}": {
      patch: { requestBody: body, responses: { "200": { description: "ok" } } },
      put: { requestBody: body, responses: { "200": { description: "ok" } } },
      delete: { responses: { "204": { description: "gone" } } },
    },
  },
});
type Paths = Record<string, Record<string, { responses: Record<string, unknown> }>>;
const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });

describe("negotiateOpenApi", () => {
  it.each([
    ["get", "/items", { "406": ref("NotAcceptable") }],
    [
      "post",
      "/items",
      { "406": ref("NotAcceptable"), "413": ref("ContentTooLarge"), "415": ref("UnsupportedMediaType") },
    ],
    [
      "patch",
      "/items/{id}",
      { "406": ref("NotAcceptable"), "413": ref("ContentTooLarge"), "415": ref("UnsupportedMediaTypePatch") },
    ],
    [
      "put",
      "/items/{id}",
      { "406": ref("NotAcceptable"), "413": ref("ContentTooLarge"), "415": ref("UnsupportedMediaTypeOther") },
    ],
    ["delete", "/items/{id}", { "406": ref("NotAcceptable") }],
  ])("%s %s", (method, path, added) => {
    const paths = (composeOpenApi(doc(), [negotiateOpenApi()]) as { paths: Paths }).paths;
    expect(paths[path]?.[method]?.responses).toMatchObject(added);
    for (const status of ["413", "415"])
      if (!(status in added)) expect(paths[path]?.[method]?.responses[status]).toBeUndefined();
  });

  it("follows `bodies` and `negotiated`, and names the limit", () => {
    const out = composeOpenApi(doc(), [
      negotiateOpenApi({
        bodyLimit: "100 KiB",
        bodies: ({ method }) => method === "delete",
        negotiated: () => false,
      }),
    ]) as {
      paths: Paths;
      components: { responses: Record<string, { description: string; headers?: object }> };
    };
    expect(out.paths["/items/{id}"]?.delete?.responses["415"]).toEqual(ref("UnsupportedMediaTypeOther"));
    expect(out.paths["/items"]?.post?.responses["415"]).toBeUndefined();
    expect(out.paths["/items"]?.get?.responses["406"]).toBeUndefined();
    expect(out.components.responses.ContentTooLarge?.description).toBe("The request body exceeds 100 KiB");
    expect(out.components.responses.UnsupportedMediaTypePatch?.headers).toEqual({
      "Accept-Patch": { $ref: "#/components/headers/AcceptPatch" },
    });
  });

  it.each([
    [{ bodylimit: "1" }, /unknown option "bodylimit" \(did you mean "bodyLimit"\?\)/],
    [{ bodyLimit: 100 }, /bodyLimit/],
    [{ bodies: "post" }, /bodies/],
  ])("refuses %j", (options, message) => {
    expect(() => negotiateOpenApi(options as never)).toThrow(message);
  });
});
