// biome-ignore-all assist/source/organizeImports: the README block below keeps its own imports, in its own order
import { assertReadmeShows, type Listening, readmeRegion, whenListening } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// README "Fastify that answers as Express": the block below is the README's code, line for line
// (with the package's own sources standing in for "@svc/kernel" and "@svc/kernel/fastify", and
// port 0 for 3000).
// #region readme-core
import Fastify from "fastify";
import { HttpError, isHttpError } from "../src/index.js";
import { expressRouting } from "../src/fastify.js";

const things = new Map([["7", { id: 7, name: "lamp" }]]);
// With @svc/errors: expressRouting({ notFound: notFoundError, methodNotAllowed: methodNotAllowedError }).
const routing = expressRouting();
const app = Fastify({ ...routing.serverOptions });
await app.register(routing.plugin);
app.get("/things/:id", async (request) => {
  const thing = things.get((request.params as { id: string }).id);
  if (thing === undefined) throw HttpError.notFound();
  return thing;
});
app.delete("/things/:id", async (_request, reply) => reply.code(204).send());
// @svc/errors/fastify renders the error record; here its status and fields (a 405's Allow).
app.setErrorHandler((err, _request, reply) => {
  if (!isHttpError(err)) return reply.code(500).send();
  return reply.code(err.status).headers(err.headers).send();
});
await app.listen({ port: 0 });
// #endregion readme-core

let url = "";
let listening: Listening;
beforeAll(async () => {
  listening = await whenListening(app.server);
  url = listening.url;
});
afterAll(async () => {
  await listening.close();
  await app.close();
});

describe("README: Fastify that answers as Express", () => {
  it("the README shows this file's block", () => {
    const shown = readmeRegion(import.meta.url, [
      ['"../src/index.js"', '"@svc/kernel"'],
      ['"../src/fastify.js"', '"@svc/kernel/fastify"'],
      ["app.listen({ port: 0 })", "app.listen({ port: 3000 })"],
    ]);
    expect(() => assertReadmeShows(import.meta.url, shown)).not.toThrow();
  });

  it.each<[string, string, number, string | null]>([
    ["GET", "/things/7", 200, null],
    ["HEAD", "/things/7", 200, null],
    ["PUT", "/things/7", 405, "GET, HEAD, DELETE, OPTIONS"],
    ["QUERY", "/things/7", 405, "GET, HEAD, DELETE, OPTIONS"],
    ["OPTIONS", "/things/7", 204, "GET, HEAD, DELETE, OPTIONS"],
    ["GET", "/things/", 404, null],
    ["GET", "/things/%zz", 400, null],
  ])("%s %s → %i, Allow: %s", async (method, path, status, allow) => {
    const res = await fetch(`${url}${path}`, { method });
    expect(res.status).toBe(status);
    expect(res.headers.get("allow")).toBe(allow);
  });
});
