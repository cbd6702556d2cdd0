import Fastify, { type FastifyServerOptions } from "fastify";
import { describe, expect, it } from "vitest";
import { appWide, fastifyTrustProxy, fastifyView } from "../src/fastify.js";
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
    ["trustProxy: 0 (a hop count trusting no peer, on every framework)", 0, "10.0.0.1", false],
    ["trustProxy: fastifyTrustProxy(1)", fastifyTrustProxy(1), "10.0.0.1", true],
    ["trustProxy: fastifyTrustProxy(false)", fastifyTrustProxy(false), "10.0.0.1", false],
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

  it("fastifyTrustProxy(1) names the client Express's trust proxy 1 names: the nearest hop's", async () => {
    const got = await read(fastifyTrustProxy(1), "10.0.0.1");
    expect(got.client).toBe("198.51.100.7");
    expect(got.ip).toBe("198.51.100.7");
    const two = await read(fastifyTrustProxy(2), "10.0.0.1");
    expect([two.client, two.ip]).toEqual(["203.0.113.9", "203.0.113.9"]);
  });

  it("an explicit trust given to requestFacts wins over Fastify's setting", async () => {
    const app = Fastify({ trustProxy: true });
    app.get("/", async (request) => ({ scheme: requestFacts(fastifyView(request), false).scheme }));
    const response = await app.inject({ url: "/", headers: { "x-forwarded-proto": "https" } });
    await app.close();
    expect(response.json()).toEqual({ scheme: "http" });
  });
});

describe("Fastify({ trustProxy: <a hop count> }) is refused, naming fastifyTrustProxy", () => {
  // Fastify 5.0's types take a number; later ones leave it out, but JavaScript still passes one.
  const hopCount = () => ({ trustProxy: 1 }) as unknown as FastifyServerOptions;
  const refusal = expect.objectContaining({
    name: "TypeError",
    code: "ERR_SVC_KERNEL_TRUST_PROXY",
    message: expect.stringContaining("fastifyTrustProxy(1)"),
  });

  it("trustProxy: 1 and an @svc plugin → ready() rejects with ERR_SVC_KERNEL_TRUST_PROXY", async () => {
    const app = Fastify(hopCount());
    app.register(appWide("@svc/test", (_app, _options, done) => done()));
    await expect(app.ready()).rejects.toThrow(refusal);
    await app.close().catch(() => undefined);
  });

  it("trustProxy: 1 and a route reading fastifyView(request) → the refusal, never the proxy as the client", async () => {
    const app = Fastify(hopCount());
    let caught: unknown;
    app.get("/", async (request) => {
      try {
        return { client: requestFacts(fastifyView(request)).client };
      } catch (err) {
        caught = err;
        throw err;
      }
    });
    const response = await app.inject({ url: "/", headers: { "x-forwarded-for": "203.0.113.9" } });
    await app.close();
    expect(response.statusCode).toBe(500);
    expect(caught).toEqual(refusal);
  });

  it("fastifyTrustProxy(-1) → ERR_SVC_KERNEL_TRUST_PROXY at once", () => {
    expect(() => fastifyTrustProxy(-1)).toThrow(
      expect.objectContaining({ code: "ERR_SVC_KERNEL_TRUST_PROXY" }),
    );
  });
});
