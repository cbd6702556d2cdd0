import { errorPlugin } from "@svc/errors/fastify";
import { fastifyTrustProxy } from "@svc/kernel/fastify";
import Fastify, { type FastifyServerOptions } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { type FastifyRateLimitOptions, rateLimit } from "../src/fastify.js";

/** A Fastify server behind a proxy on loopback, limited to one request a client a minute. */
async function server(
  options: Partial<FastifyRateLimitOptions> = {},
  trustProxy: FastifyServerOptions["trustProxy"] = "127.0.0.1",
) {
  const app = Fastify({ trustProxy });
  await app.register(errorPlugin);
  await app.register(rateLimit, { limit: 1, windowMs: 60_000, ...options });
  app.get("/", async () => ({ ok: true }));
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as { port: number };
  const send = (headers: Record<string, string>) =>
    fetch(`http://127.0.0.1:${port}/`, { headers }).then((r) => r.status);
  const get = (forwardedFor: string) => send({ "X-Forwarded-For": forwardedFor });
  return { app, get, send };
}

describe("@svc/ratelimit/fastify behind Fastify's trustProxy", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it("X-Forwarded-For from the trusted proxy → each forwarded client has its own limit", async () => {
    const { app, get } = await server();
    close = () => app.close();
    expect(await get("203.0.113.1")).toBe(200);
    expect(await get("203.0.113.2")).toBe(200);
    expect(await get("203.0.113.1")).toBe(429);
  });

  it("trustProxy: false on the limiter → the proxy's address is the one client", async () => {
    const { app, get } = await server({ trustProxy: false });
    close = () => app.close();
    expect(await get("203.0.113.1")).toBe(200);
    expect(await get("203.0.113.2")).toBe(429);
  });

  it("Fastify({ trustProxy: fastifyTrustProxy(1) }), X-Forwarded-For: 203.0.113.1 then .2 then .1 → 200, 200, 429", async () => {
    const { app, get } = await server({}, fastifyTrustProxy(1));
    close = () => app.close();
    expect(await get("198.51.100.9, 203.0.113.1")).toBe(200);
    expect(await get("198.51.100.9, 203.0.113.2")).toBe(200);
    expect(await get("203.0.113.1")).toBe(429);
  });

  it("Fastify({ trustProxy: 1 }) → registering the limiter fails with ERR_SVC_KERNEL_TRUST_PROXY, never one budget for every client", async () => {
    const app = Fastify({ trustProxy: 1 } as unknown as FastifyServerOptions);
    close = () => app.close();
    app.register(rateLimit, { limit: 1, windowMs: 60_000 });
    await expect(app.ready()).rejects.toThrow(
      expect.objectContaining({ code: "ERR_SVC_KERNEL_TRUST_PROXY" }),
    );
  });

  it('forwardedHeaders "forwarded": Forwarded: for=203.0.113.1 then for=203.0.113.2 (X-Forwarded-For: 192.0.2.9 on both) → 200, 200', async () => {
    const { app, send } = await server({ forwardedHeaders: "forwarded" });
    close = () => app.close();
    const from = (client: string) => ({ Forwarded: `for=${client}`, "X-Forwarded-For": "192.0.2.9" });
    expect(await send(from("203.0.113.1"))).toBe(200);
    expect(await send(from("203.0.113.2"))).toBe(200);
    expect(await send(from("203.0.113.1"))).toBe(429);
  });

  it("default forwardedHeaders: a client's Forwarded: for=… beside X-Forwarded-For: 192.0.2.9 → one client, 200 then 429", async () => {
    const { app, send } = await server();
    close = () => app.close();
    expect(await send({ Forwarded: "for=203.0.113.1", "X-Forwarded-For": "192.0.2.9" })).toBe(200);
    expect(await send({ Forwarded: "for=203.0.113.2", "X-Forwarded-For": "192.0.2.9" })).toBe(429);
  });

  it('forwardedHeaders: "Forwarded" → ERR_SVC_RATELIMIT_FORWARDED_HEADERS at registration', async () => {
    const app = Fastify();
    close = () => app.close();
    app.register(rateLimit, { limit: 1, forwardedHeaders: "Forwarded" as never });
    await expect(app.ready()).rejects.toThrow(
      expect.objectContaining({ code: "ERR_SVC_RATELIMIT_FORWARDED_HEADERS" }),
    );
  });
});

describe("@svc/ratelimit/fastify: trust mistakes are warned about as on Express", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  /** The limiter's warnings on a server with Fastify's `trustProxy` as given, after `requests`. */
  async function warnings(
    trustProxy: FastifyServerOptions["trustProxy"],
    requests: Record<string, string>[],
  ): Promise<string[]> {
    const lines: string[] = [];
    const { app, send } = await server(
      { limit: 100, logger: { warn: (_o: unknown, msg: string) => lines.push(msg) } },
      trustProxy,
    );
    close = () => app.close();
    for (const headers of requests) await send(headers);
    return lines;
  }

  it("trustProxy trusting every hop → one warning that clients can choose their IP", async () => {
    const lines = await warnings(fastifyTrustProxy(true), [{}, {}]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/any client can choose its IP/);
  });

  it("no trustProxy and X-Forwarded-For arriving → one warning about the shared bucket", async () => {
    const forwarded = { "X-Forwarded-For": "203.0.113.9" };
    const lines = await warnings(false, [{}, forwarded, forwarded]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/"trust proxy" is off/);
  });

  it("trustProxy naming the proxy, X-Forwarded-For arriving → no warning", async () => {
    expect(await warnings("127.0.0.1", [{ "X-Forwarded-For": "203.0.113.9" }])).toEqual([]);
  });
});
