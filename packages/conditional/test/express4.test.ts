import { createRequire } from "node:module";
import { negotiate } from "@svc/negotiate";
import { type Listening, listen } from "@svc/test-utils";
import type express from "express";
import { afterAll, describe, expect, it } from "vitest";
import { conditional } from "../src/index.js";

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

describe(`conditional() on Express ${version}`, () => {
  it("a strong ETag on the 200, then 304 for If-None-Match with it", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    app.use(negotiate());
    app.use(conditional());
    app.get("/countries", async (_req, res) => {
      await res.represent([{ code: "DE" }, { code: "FR" }]);
    });
    const url = await serve(app);
    const first = await fetch(`${url}/countries`);
    expect(first.status).toBe(200);
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^"[^"]+"$/); // strong: no W/ prefix, not Express's weak tag
    const again = await fetch(`${url}/countries`, { headers: { "If-None-Match": etag as string } });
    expect(again.status).toBe(304);
  });
});
