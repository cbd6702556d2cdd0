import { createRequire } from "node:module";
import { errorHandler } from "@svc/errors";
import { type Listening, listen } from "@svc/test-utils";
import type express from "express";
import { afterAll, describe, expect, it } from "vitest";
import { authenticate } from "../src/index.js";

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

describe(`authenticate() on Express ${version}`, () => {
  it("no credentials → 401 with a Basic challenge; good ones → 200 with req.principal", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    app.use(
      authenticate({
        realm: "employees",
        basic: {
          verify: async (user, password) => (user === "ada" && password === "secret" ? { id: "ada" } : null),
        },
      }),
    );
    app.get("/me", (req, res) => {
      res.json({ id: req.principal?.id });
    });
    app.use(errorHandler({ logger: { error() {} } }));
    const url = await serve(app);
    const anonymous = await fetch(`${url}/me`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Basic realm="employees"/);
    const ada = await fetch(`${url}/me`, {
      headers: { Authorization: `Basic ${Buffer.from("ada:secret").toString("base64")}` },
    });
    expect(ada.status).toBe(200);
    expect(await ada.json()).toEqual({ id: "ada" });
  });
});
