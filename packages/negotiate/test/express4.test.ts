import { createRequire } from "node:module";
import { errorHandler } from "@svc/errors";
import { type Listening, listen } from "@svc/test-utils";
import type express from "express";
import { afterAll, describe, expect, it } from "vitest";
import { negotiate } from "../src/index.js";

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

describe(`negotiate() on Express ${version}`, () => {
  it("res.represent answers in the media type Accept asks for, with Vary: Accept; 406 for none", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    app.use(negotiate());
    app.get("/employees/1", async (_req, res) => {
      await res.represent({ id: 1, name: "Ada" });
    });
    app.use(errorHandler({ logger: { error() {} } }));
    const url = await serve(app);
    const xml = await fetch(`${url}/employees/1`, { headers: { Accept: "application/xml" } });
    expect(xml.status).toBe(200);
    expect(xml.headers.get("content-type")).toMatch(/^application\/xml/);
    expect(xml.headers.get("vary")).toMatch(/Accept/);
    expect(await xml.text()).toContain("Ada");
    const json = await fetch(`${url}/employees/1`, { headers: { Accept: "application/json" } });
    expect(await json.json()).toEqual({ id: 1, name: "Ada" });
    const none = await fetch(`${url}/employees/1`, { headers: { Accept: "image/png" } });
    expect(none.status).toBe(406);
  });
});
