import { createRequire } from "node:module";
import { errorHandler, notFound } from "@svc/errors";
import { type Listening, listen } from "@svc/test-utils";
import type express from "express";
import { afterAll, describe, expect, it } from "vitest";
import { apiVersioning, versioned } from "../src/index.js";

/** Express 4, installed beside Express 5 under the alias `express4` (a root dev dependency). */
const express4 = createRequire(import.meta.url)("express4") as typeof express;
const { version } = createRequire(import.meta.url)("express4/package.json") as { version: string };
const servers: Listening[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});
async function serve(app: express.Express): Promise<string> {
  const server = await listen(app);
  servers.push(server);
  return server.url;
}

describe(`apiVersioning() and versioned() on Express ${version}`, () => {
  it("the vendor media type picks the handler; version 1 carries Deprecation", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    app.use(
      apiVersioning({
        versions: [1, 2],
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
    const url = await serve(app);
    const v1 = await fetch(`${url}/employees`, { headers: { Accept: "application/vnd.svc.v1+json" } });
    expect(v1.status).toBe(200);
    expect(await v1.json()).toEqual({ v: 1 });
    expect(v1.headers.get("deprecation")).toBeTruthy();
    const v2 = await fetch(`${url}/employees`, { headers: { Accept: "application/vnd.svc.v2+json" } });
    expect(await v2.json()).toEqual({ v: 2 });
    expect(v2.headers.get("deprecation")).toBeNull();
  });
});
