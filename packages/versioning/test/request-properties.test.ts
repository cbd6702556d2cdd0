import { createPipeline, requestState, routeOf } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { fastifyAdapter } from "@svc/kernel/fastify";
import { listen } from "@svc/test-utils";
import { fastifyPipelineApp } from "@svc/test-utils/conformance";
import express from "express";
import { describe, expect, it, onTestFinished } from "vitest";
import { versions } from "../src/core.js";
import { versionedPath } from "../src/versioned-path.js";

const pipeline = () => createPipeline({ versioning: versions({ versions: [1, 2], defaultVersion: 1 }) });

/** An Express app whose `/seen` answers what the handler sees of `GET /v2/seen`'s version. */
async function expressSeen(options?: { requestProperties?: boolean }): Promise<unknown> {
  const svc = expressAdapter(pipeline(), options);
  const app = express();
  app.use(svc.prepare);
  app.get("/seen", (req, res) => {
    res.json({
      properties: { apiVersion: "apiVersion" in req, apiVersionPrefix: "apiVersionPrefix" in req },
      apiVersion: req.apiVersion ?? null,
      apiVersionPrefix: req.apiVersionPrefix ?? null,
      version: requestState(req).version ?? null,
      versionPrefix: routeOf(req).versionPrefix,
      self: versionedPath(req, "/seen"),
    });
  });
  const { url, close } = await listen(app);
  onTestFinished(close);
  return (await fetch(`${url}/v2/seen`)).json();
}

describe("the version on Express's request: expressAdapter's requestProperties", () => {
  it("by default, GET /v2/seen → req.apiVersion and req.apiVersionPrefix not written; requestState(req).version 2, prefix /v2", async () => {
    expect(await expressSeen()).toEqual({
      properties: { apiVersion: false, apiVersionPrefix: false },
      apiVersion: null,
      apiVersionPrefix: null,
      version: 2,
      versionPrefix: "/v2",
      self: "/v2/seen",
    });
  });
  it("requestProperties: true, GET /v2/seen → req.apiVersion 2 and req.apiVersionPrefix /v2, as requestState says", async () => {
    expect(await expressSeen({ requestProperties: true })).toEqual({
      properties: { apiVersion: true, apiVersionPrefix: true },
      apiVersion: 2,
      apiVersionPrefix: "/v2",
      version: 2,
      versionPrefix: "/v2",
      self: "/v2/seen",
    });
  });
  it('requestProperties: "yes" → TypeError ERR_SVC_KERNEL_REQUEST_PROPERTIES; a misspelt option → ERR_SVC_KERNEL_UNKNOWN_OPTION', () => {
    expect(() => expressAdapter(pipeline(), { requestProperties: "yes" as never })).toThrow(
      expect.objectContaining({ code: "ERR_SVC_KERNEL_REQUEST_PROPERTIES" }),
    );
    expect(() => expressAdapter(pipeline(), { requestProperty: true } as never)).toThrow(
      expect.objectContaining({
        code: "ERR_SVC_KERNEL_UNKNOWN_OPTION",
        message: expect.stringContaining("requestProperties"),
      }),
    );
  });
});

describe("the version on Fastify's request", () => {
  it("GET /v2/seen → no apiVersion property on the request; requestState(request).version 2, prefix /v2", async () => {
    const svc = fastifyAdapter(pipeline());
    const app = fastifyPipelineApp(svc);
    app.get("/seen", async (request) => ({
      properties: "apiVersion" in request || "apiVersion" in request.raw,
      version: requestState(request).version ?? null,
      versionPrefix: routeOf(request).versionPrefix,
    }));
    await app.listen({ port: 0, host: "127.0.0.1" });
    onTestFinished(() => app.close());
    const { port } = app.server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/v2/seen`);
    expect(await res.json()).toEqual({ properties: false, version: 2, versionPrefix: "/v2" });
  });
});
