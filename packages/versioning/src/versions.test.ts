import { createPipeline, type PipelineRequest } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { versions } from "./index.js";

const step = versions({
  versions: [1, 2],
  defaultVersion: 1,
  mediaType: { vendor: "svc" },
  deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z", sunset: "2026-07-01T00:00:00Z" } },
});

function request(headers: Record<string, string> = {}, method = "GET"): PipelineRequest {
  return { method, headers, path: "/" };
}

describe("versions(): the pipeline's versioning step", () => {
  it("/v2/employees → target /employees, version 2, prefix /v2, the supported versions", () => {
    const decision = step.resolve(request(), "/v2/employees?page=1");
    expect(decision).toMatchObject({
      target: "/employees?page=1",
      version: 2,
      prefix: "/v2",
      error: undefined,
    });
    expect(decision.fields["api-supported-versions"]).toBe("1, 2");
  });

  it("a deprecated version → Deprecation, Sunset on the decision's fields", () => {
    const decision = step.resolve(request(), "/v1/employees");
    expect(decision.fields.deprecation).toBe("@1767225600");
    expect(decision.fields.sunset).toBe("Wed, 01 Jul 2026 00:00:00 GMT");
  });

  it("Accept: application/vnd.svc.v2+json → version 2 labelled with that type, Vary: Accept", () => {
    const decision = step.resolve(request({ accept: "application/vnd.svc.v2+json" }), "/employees");
    expect(decision).toMatchObject({ version: 2, label: "application/vnd.svc.v2+json" });
    expect(decision.vary).toContain("Accept");
  });

  it("/v9/employees → the 404 refusal, with the supported versions", () => {
    const decision = step.resolve(request(), "/v9/employees");
    expect(decision.error?.status).toBe(404);
    expect(decision.fields["api-supported-versions"]).toBe("1, 2");
  });

  it("in a pipeline: prepare() returns the refusal with the decision", () => {
    const prepared = createPipeline({ versioning: step }).prepare(request(), "/v9/x");
    expect((prepared.refusal as { status: number }).status).toBe(404);
  });
});
