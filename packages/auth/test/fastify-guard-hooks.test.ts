import { errorPlugin } from "@svc/errors/fastify";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auth, authorize, requireRoles, requireScopes } from "../src/fastify.js";

const basic = (user: string) => `Basic ${Buffer.from(`${user}:pw`).toString("base64")}`;

/**
 * The guards in each position of a route's lifecycle. A guard given as `onRequest` or `preParsing`
 * refuses before the body is read (RFC 9110 §15.5.4: the 403 needs nothing from the content), so
 * an unauthorised client cannot make the server read and parse what it sends; as `preHandler`
 * (needed with the plugin's `hook: "preHandler"`) it runs after the body was parsed.
 */
describe("@svc/auth/fastify guards as onRequest, preParsing and preHandler hooks", () => {
  let app: FastifyInstance;
  let url: string;
  const parsed: string[] = [];
  beforeAll(async () => {
    app = Fastify();
    await app.register(errorPlugin);
    await app.register(auth, {
      realm: "api",
      basic: { verify: (u) => (u === "clerk" ? { id: u, roles: ["clerk"], scopes: ["read"] } : null) },
    });
    app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
      parsed.push(request.url);
      done(null, JSON.parse(String(body)));
    });
    const ok = async () => ({ ok: true });
    app.post("/on-request", { onRequest: requireScopes("write") }, ok);
    app.post("/pre-parsing", { preParsing: requireRoles("admin") }, ok);
    app.post("/pre-handler", { preHandler: authorize((p) => p.id === "admin") }, ok);
    app.post("/allowed", { preParsing: requireScopes("read") }, async (request) => ({ got: request.body }));
    await app.listen({ port: 0, host: "127.0.0.1" });
    url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  afterAll(() => app.close());

  const post = (path: string, authorization?: string) =>
    fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
      body: JSON.stringify({ x: 1 }),
    });

  it.each(["/on-request", "/pre-parsing"])(
    "%s, a principal without the permission → 403, the body never parsed",
    async (path) => {
      const res = await post(path, basic("clerk"));
      expect(res.status).toBe(403);
      expect(parsed).not.toContain(path);
    },
  );

  it.each(["/on-request", "/pre-parsing"])(
    "%s, no credentials → 401 with the challenge, the body never parsed",
    async (path) => {
      const res = await post(path);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Basic realm="api"/);
      expect(parsed).not.toContain(path);
    },
  );

  it("/pre-handler, a principal without the permission → 403 after the body was parsed", async () => {
    const res = await post("/pre-handler", basic("clerk"));
    expect(res.status).toBe(403);
    expect(parsed).toContain("/pre-handler");
  });

  it("a preParsing guard that lets the request through leaves the body to the parser", async () => {
    const res = await post("/allowed", basic("clerk"));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ got: { x: 1 } });
  });
});
