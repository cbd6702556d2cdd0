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

/**
 * A predicate may answer at once (the hook calls `done` in the same turn) or with a promise (the
 * hook returns one): in each of the three places, both answers and a failing predicate give the
 * same status as on Express (200, 403, and 500 for a predicate that throws or rejects).
 */
describe("@svc/auth/fastify authorize, answered at once or later, in each hook place", () => {
  let app: FastifyInstance;
  let url: string;
  const answers = {
    yes: () => true,
    no: () => false,
    "later-yes": () => Promise.resolve(true),
    "later-no": () => Promise.resolve(false),
    throws: () => {
      throw new Error("policy engine down");
    },
    rejects: () => Promise.reject(new Error("policy engine down")),
  } as const;
  const places = ["onRequest", "preParsing", "preHandler"] as const;
  beforeAll(async () => {
    app = Fastify();
    await app.register(errorPlugin);
    await app.register(auth, {
      realm: "api",
      basic: { verify: (u) => ({ id: u, roles: [], scopes: ["read"] }) },
    });
    for (const place of places)
      for (const [name, predicate] of Object.entries(answers))
        app.post(`/${place}/${name}`, { [place]: authorize(predicate) }, async () => ({ ok: true }));
    for (const place of places) {
      app.post(`/${place}/scopes`, { [place]: requireScopes("read") }, async () => ({ ok: true }));
      app.post(`/${place}/roles`, { [place]: requireRoles("admin") }, async () => ({ ok: true }));
    }
    await app.listen({ port: 0, host: "127.0.0.1" });
    url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  afterAll(() => app.close());

  const expected = {
    yes: 200,
    no: 403,
    "later-yes": 200,
    "later-no": 403,
    throws: 500,
    rejects: 500,
    scopes: 200,
    roles: 403,
  };
  const cases = places.flatMap((place) =>
    Object.entries(expected).map(([name, status]) => [place, name, status] as const),
  );
  it.each(cases)("%s, %s → %i", async (place, name, status) => {
    const res = await fetch(`${url}/${place}/${name}`, {
      method: "POST",
      headers: { authorization: basic("clerk"), "content-type": "application/json" },
      body: JSON.stringify({ x: 1 }),
    });
    expect(res.status).toBe(status);
    if (status === 200) expect(await res.json()).toEqual({ ok: true });
  });

  it("called without `done` (outside Fastify's hook runner), a guard returns a promise of its decision", async () => {
    const request = { raw: {} } as never;
    const reply = {} as never;
    const hook = requireScopes("read") as unknown as (request: never, reply: never) => Promise<unknown>;
    await expect(hook(request, reply)).rejects.toMatchObject({ status: 500 });
  });
});
