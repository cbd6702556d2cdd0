import { composeOpenApi } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { conditionalOpenApi } from "./openapi.js";

type Op = { parameters?: unknown[]; responses: Record<string, unknown> };
const doc = () => ({
  openapi: "3.1.0",
  info: { title: "t", version: "1" },
  paths: {
    "/items/{id}": {
      get: { responses: { "200": { description: "ok" } } },
      put: { responses: { "200": { description: "ok" } } },
      patch: { responses: { "200": { description: "ok" } } },
      delete: { responses: { "204": { description: "gone" } } },
    },
    "/items": { post: { responses: { "201": { description: "created" } } } },
    "/redirect": { get: { responses: { "302": { description: "elsewhere" } } } },
  },
});
const ops = (options?: Parameters<typeof conditionalOpenApi>[0]) =>
  (composeOpenApi(doc(), [conditionalOpenApi(options)]) as { paths: Record<string, Record<string, Op>> })
    .paths;
const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

describe("conditionalOpenApi", () => {
  it.each([
    ["get", "/items/{id}", [ref("parameters", "IfNoneMatch")], ["200", "304", "412"]],
    ["put", "/items/{id}", [ref("parameters", "IfMatch")], ["200", "412"]],
    ["patch", "/items/{id}", [ref("parameters", "IfMatch")], ["200", "412"]],
    ["delete", "/items/{id}", [ref("parameters", "IfMatch")], ["204", "412"]],
    ["post", "/items", undefined, ["201", "412"]],
    ["get", "/redirect", [ref("parameters", "IfNoneMatch")], ["302"]],
  ])("%s %s: parameters %j, statuses", (method, path, parameters, statuses) => {
    const op = ops()[path]?.[method] as Op;
    expect(op.parameters).toEqual(parameters);
    expect(Object.keys(op.responses).sort()).toEqual(statuses);
  });

  it("gives a read's success its ETag and the 304 the ETag too", () => {
    const doc = composeOpenApi(
      {
        openapi: "3.1.0",
        info: { title: "t", version: "1" },
        paths: { "/": { get: { responses: { "200": { description: "ok" } } } } },
      },
      [conditionalOpenApi()],
    ) as { components: { responses: Record<string, unknown> }; paths: Record<string, Record<string, Op>> };
    expect(doc.paths["/"]?.get?.responses["200"]).toEqual({
      description: "ok",
      headers: { ETag: ref("headers", "ETag") },
    });
    expect(doc.components.responses.NotModified).toMatchObject({ headers: { ETag: ref("headers", "ETag") } });
  });

  it("adds 428 to the writes `required` names", () => {
    const paths = ops({ required: true, requiredMethods: ["PATCH"] });
    expect(paths["/items/{id}"]?.patch?.responses["428"]).toEqual(ref("responses", "PreconditionRequired"));
    expect(paths["/items/{id}"]?.put?.responses["428"]).toBeUndefined();
    expect(ops({ required: true })["/items/{id}"]?.delete?.responses["428"]).toBeDefined();
    expect(ops()["/items/{id}"]?.put?.responses["428"]).toBeUndefined();
  });

  it.each([
    [{ require: true }, /unknown option "require" \(did you mean "required"\?\)/],
    [{ required: "yes" }, /required/],
    [{ required: true, requiredMethods: ["PUT X"] }, /requiredMethods/],
  ])("refuses %j", (options, message) => {
    expect(() => conditionalOpenApi(options as never)).toThrow(message);
  });
});
