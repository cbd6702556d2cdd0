import { errorPlugin } from "@svc/errors/fastify";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { rateLimit } from "../src/fastify.js";

/** A Fastify server behind a proxy on loopback, limited to one request a client a minute. */
async function server(options: { trustProxy?: false } = {}) {
  const app = Fastify({ trustProxy: "127.0.0.1" });
  await app.register(errorPlugin);
  await app.register(rateLimit, { limit: 1, windowMs: 60_000, ...options });
  app.get("/", async () => ({ ok: true }));
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as { port: number };
  const get = (forwardedFor: string) =>
    fetch(`http://127.0.0.1:${port}/`, { headers: { "X-Forwarded-For": forwardedFor } }).then(
      (r) => r.status,
    );
  return { app, get };
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
});
