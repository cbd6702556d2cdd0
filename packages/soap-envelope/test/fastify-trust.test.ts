import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { soap } from "../src/fastify.js";
import { CUSTOMER_WSDL, customerHandlers, silentLogger } from "./helpers.js";

/** The WSDL's soap12:address as a Fastify server configured `trustProxy` describes it. */
async function serve(
  trustProxy: string | false,
  options: { trustProxy?: string | false; forwardedHeaders?: "forwarded" } = {},
) {
  const app = Fastify({ trustProxy });
  await app.register(soap, {
    prefix: "/ws/customer",
    wsdl: CUSTOMER_WSDL,
    handlers: customerHandlers(),
    logger: silentLogger,
    ...options,
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as { port: number };
  return { app, url: `http://127.0.0.1:${port}/ws/customer?wsdl` };
}

/** What a proxy setting X-Forwarded-* sends, with a client's own Forwarded passed through. */
const X_FORWARDED = {
  "x-forwarded-proto": "https",
  "x-forwarded-host": "shop.example",
  forwarded: "proto=http;host=evil.example",
};

async function address(
  url: string,
  headers: Record<string, string> = X_FORWARDED,
): Promise<string | undefined> {
  const res = await fetch(url, { headers });
  expect(res.status).toBe(200);
  return /<soap12:address location="([^"]*)"/.exec(await res.text())?.[1];
}

describe("@svc/soap-envelope/fastify: the WSDL's address behind Fastify's trustProxy", () => {
  const apps: { close(): Promise<unknown> }[] = [];
  let trusted: string;
  let untrusted: string;
  let overridden: string;
  let rfc7239: string;
  beforeAll(async () => {
    const a = await serve("loopback");
    const b = await serve(false);
    const c = await serve("loopback", { trustProxy: false });
    const d = await serve("loopback", { forwardedHeaders: "forwarded" });
    apps.push(a.app, b.app, c.app, d.app);
    [trusted, untrusted, overridden, rfc7239] = [a.url, b.url, c.url, d.url];
  });
  afterAll(() => Promise.all(apps.map((app) => app.close())));

  it("X-Forwarded-Proto: https, X-Forwarded-Host: shop.example and a client's Forwarded from a peer Fastify trusts → https://shop.example", async () => {
    expect(await address(trusted)).toBe("https://shop.example/ws/customer");
  });

  it('forwardedHeaders "forwarded": Forwarded: proto=https;host=shop.example and a client\'s X-Forwarded-* → https://shop.example', async () => {
    expect(
      await address(rfc7239, {
        forwarded: "proto=https;host=shop.example",
        "x-forwarded-proto": "http",
        "x-forwarded-host": "evil.example",
      }),
    ).toBe("https://shop.example/ws/customer");
  });

  it("Forwarded from a peer Fastify does not trust → the request's own Host", async () => {
    expect(await address(untrusted)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ws\/customer$/);
  });

  it("trustProxy: false on the endpoint wins over Fastify's setting", async () => {
    expect(await address(overridden)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ws\/customer$/);
  });
});
