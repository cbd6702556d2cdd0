import Fastify, { type FastifyServerOptions } from "fastify";
import { describe, expect, it } from "vitest";
import { fastifyView } from "../src/fastify.js";
import { requestFacts } from "../src/index.js";

/** The facts a route inside a plugin reads, beside Fastify's own reading, for one request. */
async function read(trustProxy: FastifyServerOptions["trustProxy"], remoteAddress: string) {
  const app = Fastify(trustProxy === undefined ? {} : { trustProxy });
  await app.register(async (scope) => {
    scope.get("/", async (request) => {
      const facts = requestFacts(fastifyView(request));
      return { scheme: facts.scheme, client: facts.client, protocol: request.protocol, ip: request.ip };
    });
  });
  const response = await app.inject({
    url: "/",
    remoteAddress,
    headers: { "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.9, 198.51.100.7" },
  });
  await app.close();
  return response.json() as { scheme: string; client: string; protocol: string; ip: string };
}

describe("fastifyView(request): Fastify's trustProxy, read as Fastify reads it", () => {
  it.each([
    ["no trustProxy", undefined, "10.0.0.1", false],
    ["trustProxy: false", false, "10.0.0.1", false],
    ["trustProxy: true", true, "10.0.0.1", true],
    ['trustProxy: "10.0.0.0/8" from 10.0.0.1', "10.0.0.0/8", "10.0.0.1", true],
    ['trustProxy: "10.0.0.0/8" from 192.0.2.1', "10.0.0.0/8", "192.0.2.1", false],
    ['trustProxy: "127.0.0.1, 10.0.0.1" (a list in a string)', "127.0.0.1, 10.0.0.1", "10.0.0.1", true],
    ['trustProxy: ["10.0.0.1"]', ["10.0.0.1"], "10.0.0.1", true],
    ["trustProxy: (address) => address === 10.0.0.1", (a: string) => a === "10.0.0.1", "10.0.0.1", true],
    ["trustProxy: 1 (a hop count, which Fastify does not trust)", 1, "10.0.0.1", false],
  ] as const)("%s", async (_name, trustProxy, peer, trusted) => {
    const got = await read(trustProxy as FastifyServerOptions["trustProxy"], peer);
    expect(got.scheme).toBe(trusted ? "https" : "http");
    // Fastify's own reading of the same request agrees, where the floor's reading is sound: before
    // Fastify 5.8.3 request.protocol took X-Forwarded-Proto from any peer once trustProxy was set,
    // and before 5.12.1 a hop count trusted the peer (request.ip and request.protocol alike).
    const floor = process.env.FASTIFY_FLOOR === "1";
    if (!(floor && trustProxy && !trusted)) expect(got.scheme).toBe(got.protocol);
    if (!(floor && typeof trustProxy === "number")) expect(got.client).toBe(got.ip);
  });

  it("a function trusting every hop names the first address of X-Forwarded-For, as request.ip does", async () => {
    const got = await read(() => true, "10.0.0.1");
    expect(got.client).toBe("203.0.113.9");
    expect(got.client).toBe(got.ip);
  });

  it("an explicit trust given to requestFacts wins over Fastify's setting", async () => {
    const app = Fastify({ trustProxy: true });
    app.get("/", async (request) => ({ scheme: requestFacts(fastifyView(request), false).scheme }));
    const response = await app.inject({ url: "/", headers: { "x-forwarded-proto": "https" } });
    await app.close();
    expect(response.json()).toEqual({ scheme: "http" });
  });
});
