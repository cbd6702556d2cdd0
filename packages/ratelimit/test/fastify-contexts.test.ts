import { errorPlugin } from "@svc/errors/fastify";
import { HttpError, requestState } from "@svc/kernel";
import { whenListening } from "@svc/test-utils";
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyRequest } from "fastify";
import { describe, expect, it, onTestFinished } from "vitest";
import { type FastifyRateLimitOptions, rateLimit, rateLimitHook } from "../src/fastify.js";
import { createRateLimiter, MemoryStore, type RateLimitInfo, rateLimitGate } from "../src/index.js";

const silent = { warn() {}, error() {} };

/**
 * An app of sibling scopes `/a`, `/b` (and `/c` when given), each registering `rateLimit` with
 * what `limits` gives for it, listening on loopback. Each scope has `/ok` (200, with the
 * `remaining` of `request[property]`, or of `requestState(request).rateLimit` without a property,
 * and whether `property`, by default `rateLimit`, is declared) and `/fail` (400).
 */
async function siblings(
  limits: Record<string, FastifyRateLimitOptions>,
  property?: string,
): Promise<(path: string) => Promise<{ status: number; ratelimit: string | null; body: unknown }>> {
  const app = Fastify();
  await app.register(errorPlugin, { logger: { error() {} } });
  for (const [name, options] of Object.entries(limits)) {
    const scope: FastifyPluginAsync = async (s) => {
      await s.register(rateLimit, options);
      s.get("/ok", async (request) => ({
        remaining:
          (property === undefined
            ? requestState(request).rateLimit
            : (request as unknown as Record<string, RateLimitInfo | null>)[property]
          )?.remaining ?? null,
        decorated: s.hasRequestDecorator(property ?? "rateLimit"),
      }));
      s.get("/fail", async () => {
        throw HttpError.badRequest("no");
      });
    };
    await app.register(scope, { prefix: `/${name}` });
  }
  const url = await listening(app);
  return async (path) => {
    const res = await fetch(`${url}${path}`);
    return { status: res.status, ratelimit: res.headers.get("ratelimit"), body: await res.json() };
  };
}

async function listening(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { url, close } = await whenListening(app.server);
  onTestFinished(async () => {
    await close();
    await app.close();
  });
  return url;
}

const statuses = async (get: (path: string) => Promise<{ status: number }>, paths: string[]) => {
  const seen: number[] = [];
  for (const path of paths) seen.push((await get(path)).status);
  return seen;
};

const ALTERNATE = ["/a/ok", "/b/ok", "/a/ok", "/b/ok", "/a/ok", "/b/ok"];

describe("ratelimit on fastify: sibling contexts, limit 2, requests alternating /a, /b", () => {
  it("rateLimit registered with its options in each → a budget each: 200 ×4, then 429 ×2; requestState's, no request.rateLimit declared", async () => {
    const options = { limit: 2, windowMs: 60_000, logger: silent };
    const get = await siblings({ a: options, b: options });
    expect((await get("/a/ok")).body).toEqual({ remaining: 1, decorated: false });
    expect((await get("/b/ok")).body).toEqual({ remaining: 1, decorated: false });
    expect(await statuses(get, ALTERNATE.slice(2))).toEqual([200, 200, 429, 429]);
  });

  it("one store given to both registrations, the same keyPrefix → the second is refused (one limiter a prefix)", async () => {
    const store = new MemoryStore();
    const options = { limit: 2, windowMs: 60_000, store, logger: silent };
    await expect(siblings({ a: options, b: options })).rejects.toMatchObject({
      code: "ERR_SVC_RATELIMIT_PREFIX",
    });
  });

  it("one store, keyPrefix a: and b: → still a budget each", async () => {
    const store = new MemoryStore();
    const get = await siblings({
      a: { limit: 2, windowMs: 60_000, store, keyPrefix: "a:", logger: silent },
      b: { limit: 2, windowMs: 60_000, store, keyPrefix: "b:", logger: silent },
    });
    expect(await statuses(get, ALTERNATE)).toEqual([200, 200, 200, 200, 429, 429]);
  });

  it("one limiter given to both ({ limiter: createRateLimiter(…) }) → its counters are shared: 200, 200, then 429", async () => {
    const limiter = createRateLimiter({ limit: 2, windowMs: 60_000 });
    const get = await siblings({ a: { limiter, logger: silent }, b: { limiter, logger: silent } });
    expect(await statuses(get, ALTERNATE.slice(0, 3))).toEqual([200, 200, 429]);
  });

  it("one gate registered in both ({ gate }) → one budget: 200, 200, then 429 ×4, RateLimit r=1 then r=0", async () => {
    const gate = rateLimitGate<FastifyRequest>({
      limit: 2,
      windowMs: 60_000,
      requestPropertyName: "rateLimit",
      logger: silent,
    });
    const get = await siblings({ a: { gate }, b: { gate } }, "rateLimit");
    const first = await get("/a/ok");
    const second = await get("/b/ok");
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.ratelimit).toMatch(/^"default";r=1;t=\d+$/);
    expect(second.ratelimit).toMatch(/^"default";r=0;t=\d+$/);
    // request.rateLimit, declared with decorateRequest, in either context.
    expect(first.body).toEqual({ remaining: 1, decorated: true });
    expect(second.body).toEqual({ remaining: 0, decorated: true });
    expect(await statuses(get, ALTERNATE.slice(2))).toEqual([429, 429, 429, 429]);
  });

  it("one gate with requestPropertyName: 'limits' → request.limits declared in both contexts", async () => {
    const gate = rateLimitGate<FastifyRequest>({
      limit: 2,
      windowMs: 60_000,
      requestPropertyName: "limits",
      logger: silent,
    });
    const get = await siblings({ a: { gate }, b: { gate } }, "limits");
    expect((await get("/a/ok")).body).toEqual({ remaining: 1, decorated: true });
    expect((await get("/b/ok")).body).toEqual({ remaining: 0, decorated: true });
  });

  it("one gate with skipSuccessfulRequests: 200s given back in either context, 400s counted across both", async () => {
    const gate = rateLimitGate<FastifyRequest>({
      limit: 2,
      windowMs: 60_000,
      skipSuccessfulRequests: true,
      logger: silent,
    });
    const get = await siblings({ a: { gate }, b: { gate } });
    expect(await statuses(get, ["/a/ok", "/b/ok", "/a/ok", "/b/ok", "/a/ok"])).toEqual([
      200, 200, 200, 200, 200,
    ]);
    expect(await statuses(get, ["/a/fail", "/b/fail", "/a/ok", "/b/ok"])).toEqual([400, 400, 429, 429]);
  });

  it("a gate with its store key prefix, and /c on the same store with keyPrefix c: → /c keeps its own budget", async () => {
    const store = new MemoryStore();
    const gate = rateLimitGate<FastifyRequest>({
      limit: 2,
      windowMs: 60_000,
      store,
      prefix: "ab:",
      logger: silent,
    });
    const get = await siblings({
      a: { gate },
      b: { gate },
      c: { limit: 2, windowMs: 60_000, store, keyPrefix: "c:", logger: silent },
    });
    expect(await statuses(get, ["/a/ok", "/b/ok", "/a/ok"])).toEqual([200, 200, 429]);
    expect(await statuses(get, ["/c/ok", "/c/ok", "/c/ok"])).toEqual([200, 200, 429]);
  });
});

describe("ratelimit on fastify: rateLimitHook({ gate }) on a route", () => {
  it("GET /a/ok (the plugin with the gate), GET /search (a route's hook of the same gate), again → 200, 200, 429", async () => {
    const gate = rateLimitGate<FastifyRequest>({ limit: 2, windowMs: 60_000, logger: silent });
    const app = Fastify();
    await app.register(errorPlugin, { logger: { error() {} } });
    await app.register(
      async (a) => {
        await a.register(rateLimit, { gate });
        a.get("/ok", async () => "ok");
      },
      { prefix: "/a" },
    );
    app.get("/search", { onRequest: rateLimitHook({ gate }) }, async () => "found");
    const url = await listening(app);
    const seen: number[] = [];
    for (const path of ["/a/ok", "/search", "/a/ok"]) seen.push((await fetch(`${url}${path}`)).status);
    expect(seen).toEqual([200, 200, 429]);
    expect(() => rateLimitHook({ gate, limit: 3 })).toThrow(
      expect.objectContaining({ code: "ERR_SVC_RATELIMIT_GATE" }),
    );
  });
});

describe("ratelimit on fastify: { gate } refuses what the gate already decides", () => {
  const gate = rateLimitGate<FastifyRequest>({ limit: 2, logger: silent });
  it.each([
    ["{ gate, limit: 5 }", { gate, limit: 5 }, "ERR_SVC_RATELIMIT_GATE", /limit/],
    ["{ gate, keyPrefix: 'x:' }", { gate, keyPrefix: "x:" }, "ERR_SVC_RATELIMIT_GATE", /keyPrefix/],
    ["{ gate: {} }", { gate: {} }, "ERR_SVC_RATELIMIT_GATE", /rateLimitGate/],
  ])("%s → register refused with %s", async (_label, options, code, message) => {
    const app = Fastify();
    onTestFinished(() => app.close());
    await expect(app.register(rateLimit, options as FastifyRateLimitOptions)).rejects.toMatchObject({
      code,
      message: expect.stringMatching(message),
    });
  });

  it("{ gate, prefix: '/api' } (Fastify's own register option) → accepted", async () => {
    const app = Fastify();
    onTestFinished(() => app.close());
    await expect(app.register(rateLimit, { gate, prefix: "/api" })).resolves.toBeDefined();
  });
});
