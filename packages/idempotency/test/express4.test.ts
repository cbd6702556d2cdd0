import { createRequire } from "node:module";
import { errorHandler } from "@svc/errors";
import { type Listening, listen } from "@svc/test-utils";
import type express from "express";
import { afterAll, describe, expect, it } from "vitest";
import { idempotency, MemoryStore } from "../src/index.js";

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

describe(`idempotency() on Express ${version}`, () => {
  it("a repeated POST with one Idempotency-Key runs the handler once and replays its response", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    let runs = 0;
    app.post("/orders", express4.json(), idempotency({ store: new MemoryStore() }), (req, res) => {
      runs++;
      res.status(201).json({ order: runs, item: (req.body as { item: string }).item });
    });
    app.use(errorHandler({ logger: { error() {} } }));
    const url = await serve(app);
    const post = () =>
      fetch(`${url}/orders`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Idempotency-Key": '"order-1"' },
        body: JSON.stringify({ item: "book" }),
      });
    const first = await post();
    const second = await post();
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(await second.json()).toEqual(await first.json());
    expect(runs).toBe(1);
  });
});
