import Fastify from "fastify";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import * as onFastify from "./fastify.js";
import * as onFetch from "./fetch.js";

const secret = new TextEncoder().encode("adapters-test-secret-of-32-bytes");
const options = { realm: "api", bearer: { secret, algorithms: ["HS256"] } };
const token = await new SignJWT({ scope: "a" })
  .setProtectedHeader({ alg: "HS256" })
  .setSubject("ada")
  .setExpirationTime("5m")
  .sign(secret);

describe("@svc/auth/fetch without Hono", () => {
  const handler = onFetch
    .authenticate(options)
    .wrap(
      onFetch
        .requireScopes("a")
        .wrap((request) => Response.json({ id: onFetch.authOf(request)?.principal?.id })),
    );

  it("wrap: a valid token → the handler, authOf(request) its principal", async () => {
    const response = await handler(
      new Request("http://x/me", { headers: { Authorization: `Bearer ${token}` } }),
    );
    expect(await response.json()).toEqual({ id: "ada" });
  });

  it("wrap: no credentials → rejects with the 401 and its challenge", async () => {
    await expect(handler(new Request("http://x/me"))).rejects.toMatchObject({
      status: 401,
      headers: { "WWW-Authenticate": 'Bearer realm="api"' },
    });
  });

  it("wrap: two Authorization lines given by info → 400", async () => {
    const wrapped = onFetch.authenticate(options).wrap(
      () => new Response("no"),
      () => ({ rawHeaders: ["Authorization", `Bearer ${token}`, "Authorization", `Bearer ${token}`] }),
    );
    const request = new Request("http://x/me", { headers: { Authorization: `Bearer ${token}` } });
    await expect(wrapped(request)).rejects.toMatchObject({ status: 400 });
  });

  it("a guard without authenticate in front → 500 (a wiring bug)", async () => {
    const guarded = onFetch.requireScopes("a").wrap(() => new Response("no"));
    await expect(guarded(new Request("http://x/"))).rejects.toMatchObject({ status: 500 });
  });
});

describe("@svc/auth/fastify", () => {
  it("registered in a plugin: its routes are protected, the parent's are not", async () => {
    const app = Fastify();
    app.get("/open", async (request) => ({ auth: request.auth ?? null }));
    app.register(async (api) => {
      await api.register(onFastify.auth, options);
      api.get("/closed", async (request) => ({ id: request.auth?.principal?.id }));
    });
    expect((await app.inject("/open")).json()).toEqual({ auth: null });
    expect((await app.inject("/closed")).statusCode).toBe(401);
    const ok = await app.inject({ url: "/closed", headers: { authorization: `Bearer ${token}` } });
    expect(ok.json()).toEqual({ id: "ada" });
    await app.close();
  });

  it('hook: "preHandler" → an access_token in a parsed form body → 400', async () => {
    const app = Fastify();
    app.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string" },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    app.register(onFastify.auth, { ...options, hook: "preHandler" });
    app.post("/me", async (request) => request.auth?.principal?.id ?? null);
    const response = await app.inject({
      method: "POST",
      url: "/me",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/x-www-form-urlencoded" },
      payload: `access_token=${token}`,
    });
    expect(response.statusCode).toBe(400);
    await app.close();
  });

  it("a refused option fails the registration", async () => {
    const app = Fastify();
    app.register(onFastify.auth, { realm: "api" });
    await expect(app.ready()).rejects.toThrow(/bearer, basic or both/);
  });

  it('hook: "onSend" → a coded TypeError at registration', async () => {
    const app = Fastify();
    app.register(onFastify.auth, { ...options, hook: "onSend" as "onRequest" });
    await expect(app.ready()).rejects.toMatchObject({ code: "ERR_SVC_AUTH_HOOK" });
  });
});
