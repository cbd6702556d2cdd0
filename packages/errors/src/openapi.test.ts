import { composeOpenApi, openApiErrorResponse } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { errorsOpenApi } from "./openapi.js";

describe("errorsOpenApi", () => {
  it.each([
    [
      {},
      [
        "application/json",
        "application/problem+json",
        "application/xml",
        "text/xml",
        "application/problem+xml",
      ],
    ],
    [{ problem: false }, ["application/json", "application/xml", "text/xml"]],
    [{ xml: false }, ["application/json", "application/problem+json"]],
    [{ problem: false, xml: false }, ["application/json"]],
  ])("%j: the error content of every refusal", (options, types) => {
    const doc = composeOpenApi(
      {
        openapi: "3.1.0",
        info: { title: "t", version: "1" },
        paths: { "/": { get: { responses: { "404": openApiErrorResponse("missing") } } } },
      },
      [errorsOpenApi(options)],
    ) as {
      components: { schemas: Record<string, unknown> };
      paths: Record<string, Record<string, { responses: Record<string, { content: object }> }>>;
    };
    expect(Object.keys(doc.paths["/"]?.get?.responses["404"]?.content ?? {})).toEqual(types);
    expect(Object.keys(doc.components.schemas)).toEqual(
      (options as { problem?: boolean }).problem === false
        ? ["ErrorRecord"]
        : ["ErrorRecord", "ProblemDetails"],
    );
  });

  it("names the XML roots the error handler writes: <error>, and <problem> in RFC 9457's namespace", () => {
    const content = errorsOpenApi().errorContent as Record<string, { schema: { xml?: object } }>;
    expect(content["application/xml"]?.schema.xml).toEqual({ name: "error" });
    expect(content["application/problem+xml"]?.schema.xml).toEqual({
      name: "problem",
      namespace: "urn:ietf:rfc:7807",
    });
  });
});
