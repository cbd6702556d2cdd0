import { createRequire } from "node:module";
import { type Listening, listen } from "@svc/test-utils";
import type express from "express";
import { afterAll, describe, expect, it } from "vitest";
import { allowedMethods, errorHandler, HttpError, notFound } from "../src/index.js";

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

describe(`errorHandler(), notFound(), allowedMethods() on Express ${version}`, () => {
  it("a thrown HttpError, an unmatched route and a wrong method each become the error record", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    app
      .route("/employees/:id")
      .get((req, _res, next) => next(HttpError.notFound(`Employee ${req.params.id} does not exist`)))
      .all(allowedMethods(["GET", "HEAD", "OPTIONS"]));
    app.use(notFound());
    app.use(errorHandler({ logger: { error() {} } }));
    const url = await serve(app);
    const missing = await fetch(`${url}/employees/42`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ status: 404, message: "Employee 42 does not exist" });
    expect((await fetch(`${url}/nowhere`)).status).toBe(404);
    const put = await fetch(`${url}/employees/42`, { method: "PUT" });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
  });
});
