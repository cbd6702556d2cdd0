import { errorHandler, notFound } from "@svc/errors/express";
import { createPipeline, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { json, representations } from "@svc/negotiate";
import { express4, listen, express4Version as version } from "@svc/test-utils";
import type express from "express";
import { describe, expect, it, onTestFinished } from "vitest";
import { versioned } from "../src/express.js";
import { type ApiVersioningOptions, versions } from "../src/index.js";

/** The pipeline's versioning step in front of `app`'s routes, JSON offered through @svc/negotiate. */
function pipelined(app: express.Express, options: ApiVersioningOptions) {
  const svc = expressAdapter(
    createPipeline({ versioning: versions(options), representations: representations({ offers: [json] }) }),
  );
  app.use(svc.prepare);
  return svc;
}

describe(`versions() through the pipeline, and versioned(), on Express ${version}`, () => {
  it("the vendor media type picks the handler; version 1 carries Deprecation", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    const svc = pipelined(app, {
      versions: [1, 2],
      defaultVersion: 1,
      mediaType: { vendor: "svc" },
      deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z" } },
    });
    app.get(
      "/employees",
      versioned<express.Request, express.Response>({
        1: svc.handle(() => ({ v: 1 })),
        2: svc.handle(() => ({ v: 2 })),
      }),
    );
    app.use(notFound());
    app.use(errorHandler({ logger: { error() {} } }));
    const { url, close } = await listen(app);
    onTestFinished(close);
    const v1 = await fetch(`${url}/employees`, { headers: { Accept: "application/vnd.svc.v1+json" } });
    expect(v1.status).toBe(200);
    expect(await v1.json()).toEqual({ v: 1 });
    expect(v1.headers.get("deprecation")).toBeTruthy();
    const v2 = await fetch(`${url}/employees`, { headers: { Accept: "application/vnd.svc.v2+json" } });
    expect(await v2.json()).toEqual({ v: 2 });
    expect(v2.headers.get("deprecation")).toBeNull();
  });

  it("a reply with status 201 under the vendor +json label → that status, the label, the JSON", async () => {
    const app = express4();
    const svc = pipelined(app, { versions: [1, 2], defaultVersion: 1, mediaType: { vendor: "svc" } });
    app.get(
      "/created",
      svc.handle(() => reply({ created: true }, { status: 201 })),
    );
    const { url, close } = await listen(app);
    onTestFinished(close);
    const res = await fetch(`${url}/created`, { headers: { Accept: "application/vnd.svc.v2+json" } });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/vnd.svc.v2+json; charset=utf-8");
    expect(await res.json()).toEqual({ created: true });
    // A +xml label never names these JSON bytes: the representation step refuses instead.
    const xml = await fetch(`${url}/created`, { headers: { Accept: "application/vnd.svc.v2+xml" } });
    expect(xml.status).toBe(406);
    expect(xml.headers.get("content-type")).not.toMatch(/xml/);
  });

  it.each([
    [false, "/HEALTH", 200],
    [false, "/health", 200],
    [true, "/HEALTH", 400],
    [true, "/health", 200],
  ])(
    "case sensitive routing %s, GET %s without a version (required) → %i",
    async (caseSensitive, path, status) => {
      const app = express4();
      app.set("case sensitive routing", caseSensitive);
      pipelined(app, { versions: [1, 2], required: true, neutral: ["/health"] });
      app.get("/health", (_req, res) => res.json({ ok: true }));
      app.use(notFound());
      app.use(errorHandler({ logger: { error() {} } }));
      const { url, close } = await listen(app);
      onTestFinished(close);
      expect((await fetch(`${url}${path}`)).status).toBe(status);
    },
  );
});
