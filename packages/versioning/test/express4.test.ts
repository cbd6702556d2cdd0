import { errorHandler, notFound } from "@svc/errors";
import { express4, listen, express4Version as version } from "@svc/test-utils";
import type express from "express";
import { describe, expect, it, onTestFinished } from "vitest";
import { apiVersioning, versioned } from "../src/index.js";

describe(`apiVersioning() and versioned() on Express ${version}`, () => {
  it("the vendor media type picks the handler; version 1 carries Deprecation", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    app.use(
      apiVersioning({
        versions: [1, 2],
        defaultVersion: 1,
        mediaType: { vendor: "svc" },
        deprecated: { 1: { deprecation: "2026-01-01T00:00:00Z" } },
      }),
    );
    app.get(
      "/employees",
      versioned<express.Request, express.Response>({
        1: (_req, res) => res.json({ v: 1 }),
        2: (_req, res) => res.json({ v: 2 }),
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

  it("res.json(status, body), Express 4's deprecated form, under a +xml label → that status, the +json label", async () => {
    const app = express4();
    app.use(apiVersioning({ versions: [1, 2], defaultVersion: 1, mediaType: { vendor: "svc" } }));
    // The versioning middleware mounted twice wraps res.json once.
    app.use(apiVersioning({ versions: [1, 2], defaultVersion: 1, mediaType: { vendor: "svc" } }));
    app.get("/created", (_req, res) => {
      (res.json as unknown as (status: number, body: unknown) => void)(201, { created: true });
    });
    const { url, close } = await listen(app);
    onTestFinished(close);
    const res = await fetch(`${url}/created`, { headers: { Accept: "application/vnd.svc.v2+xml" } });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/vnd.svc.v2+json; charset=utf-8");
    expect(await res.json()).toEqual({ created: true });
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
      app.use(apiVersioning({ versions: [1, 2], required: true, neutral: ["/health"] }));
      app.get("/health", (_req, res) => res.json({ ok: true }));
      app.use(notFound());
      app.use(errorHandler({ logger: { error() {} } }));
      const { url, close } = await listen(app);
      onTestFinished(close);
      expect((await fetch(`${url}${path}`)).status).toBe(status);
    },
  );
});
