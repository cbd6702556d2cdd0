import { errorPlugin } from "@svc/errors/fastify";
import { requestState } from "@svc/kernel";
import { rateLimit } from "@svc/ratelimit/fastify";
import Fastify, { type FastifyInstance, type FastifyRequest } from "fastify";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auth } from "../src/fastify.js";

const secret = new TextEncoder().encode("fastify-principal-secret-32-bytes");
const token = (sub: string) =>
  new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject(sub).setExpirationTime("5m").sign(secret);

/**
 * The packages composed on Fastify as their READMEs show: `@svc/auth`'s plugin, then the rate
 * limit and an idempotent route. Each reads the principal auth found, as on Express.
 */
describe("@svc/auth/fastify's principal, read by the other packages", () => {
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    app = Fastify();
    await app.register(errorPlugin);
    await app.register(auth, { realm: "api", bearer: { secret, algorithms: ["HS256"] } });
    await app.register(rateLimit, { limit: 2, windowMs: 60_000 });
    app.get("/me", async (request: FastifyRequest) => ({ id: requestState(request).principal?.id ?? null }));
    await app.listen({ port: 0, host: "127.0.0.1" });
    url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  afterAll(() => app.close());

  it("GET /me with a Bearer token → requestState(request).principal is the token's subject", async () => {
    const res = await fetch(`${url}/me`, { headers: { authorization: `Bearer ${await token("ada")}` } });
    expect(await res.json()).toEqual({ id: "ada" });
  });

  it("two principals from one address → each has its own limit (u:<id>, not the address)", async () => {
    const [ada, bob] = [await token("ada-2"), await token("bob-2")];
    const get = (t: string) => fetch(`${url}/me`, { headers: { authorization: `Bearer ${t}` } });
    expect((await get(ada)).status).toBe(200);
    expect((await get(ada)).status).toBe(200);
    expect((await get(ada)).status).toBe(429);
    expect((await get(bob)).status).toBe(200);
  });
});
