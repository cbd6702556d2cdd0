import { createRequire } from "node:module";
import { errorHandler } from "@svc/errors";
import { type Listening, listen } from "@svc/test-utils";
import type express from "express";
import { afterAll, describe, expect, it } from "vitest";
import { rateLimit } from "../src/index.js";

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

describe(`rateLimit() on Express ${version}`, () => {
  it("limit 2: 200, 200, then 429 with RateLimit fields", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    app.use(rateLimit({ limit: 2, windowMs: 60_000 }));
    app.get("/", (_req, res) => {
      res.send("ok");
    });
    app.use(errorHandler({ logger: { error() {} } }));
    const url = await serve(app);
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 3; i++) {
      last = await fetch(url);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(Number(last?.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
