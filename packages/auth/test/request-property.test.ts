import { errorPlugin } from "@svc/errors/fastify";
import { requestState } from "@svc/kernel";
import { listen } from "@svc/test-utils";
import express from "express";
import Fastify, { type FastifyRequest } from "fastify";
import { SignJWT } from "jose";
import { describe, expect, it, onTestFinished } from "vitest";
import { authenticate } from "../src/express.js";
import { auth } from "../src/fastify.js";

const secret = new TextEncoder().encode("request-property-secret-of-32-by");
const bearer = { secret, algorithms: ["HS256" as const] };
const token = (sub: string) =>
  new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject(sub).setExpirationTime("5m").sign(secret);

/** `GET /me` with ada's token, answered with what the handler sees of the principal. */
async function me(url: string): Promise<unknown> {
  const res = await fetch(`${url}/me`, { headers: { authorization: `Bearer ${await token("ada")}` } });
  expect(res.status).toBe(200);
  return res.json();
}

async function expressMe(requestProperty?: boolean): Promise<unknown> {
  const app = express();
  app.use(
    authenticate({ realm: "api", bearer, ...(requestProperty === undefined ? {} : { requestProperty }) }),
  );
  app.get("/me", (req, res) => {
    res.json({
      written: "principal" in req,
      property: req.principal?.id ?? null,
      state: requestState(req).principal?.id ?? null,
    });
  });
  const { url, close } = await listen(app);
  onTestFinished(close);
  return me(url);
}

async function fastifyMe(requestProperty?: boolean): Promise<unknown> {
  const app = Fastify();
  await app.register(errorPlugin);
  await app.register(auth, {
    realm: "api",
    bearer,
    ...(requestProperty === undefined ? {} : { requestProperty }),
  });
  app.get("/me", async (request: FastifyRequest) => ({
    written: "principal" in request,
    property: request.principal?.id ?? null,
    state: requestState(request).principal?.id ?? null,
  }));
  await app.listen({ port: 0, host: "127.0.0.1" });
  onTestFinished(() => app.close());
  return me(`http://127.0.0.1:${(app.server.address() as { port: number }).port}`);
}

describe("req.principal on Express: authenticate's requestProperty", () => {
  it("by default → req.principal not written; requestState(req).principal is ada", async () => {
    expect(await expressMe()).toEqual({ written: false, property: null, state: "ada" });
  });
  it("requestProperty: true → req.principal is ada, as requestState(req).principal", async () => {
    expect(await expressMe(true)).toEqual({ written: true, property: "ada", state: "ada" });
  });
  it('requestProperty: "yes" → TypeError ERR_SVC_AUTH_REQUEST_PROPERTY at construction', () => {
    expect(() => authenticate({ realm: "api", bearer, requestProperty: "yes" as never })).toThrow(
      expect.objectContaining({ code: "ERR_SVC_AUTH_REQUEST_PROPERTY" }),
    );
  });
});

describe("request.principal on Fastify: the auth plugin's requestProperty", () => {
  it("by default → request.principal neither declared nor written; requestState(request).principal is ada", async () => {
    expect(await fastifyMe()).toEqual({ written: false, property: null, state: "ada" });
  });
  it("requestProperty: true → request.principal is ada, as requestState(request).principal", async () => {
    expect(await fastifyMe(true)).toEqual({ written: true, property: "ada", state: "ada" });
  });
  it('requestProperty: "yes" → registration rejects with ERR_SVC_AUTH_REQUEST_PROPERTY', async () => {
    const app = Fastify();
    onTestFinished(() => app.close());
    await expect(
      app.register(auth, { realm: "api", bearer, requestProperty: "yes" as never }).ready(),
    ).rejects.toMatchObject({ code: "ERR_SVC_AUTH_REQUEST_PROPERTY" });
  });
});
