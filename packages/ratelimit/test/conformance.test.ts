import type { IncomingMessage, ServerResponse } from "node:http";
import { conformance, FRAMEWORKS, fallbackErrors, type Mounts, type Row } from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { rateLimit as expressRateLimit } from "../src/express.js";
import { rateLimit as fastifyRateLimit, rateLimitHook } from "../src/fastify.js";
import { rateLimit as fetchRateLimit } from "../src/fetch.js";
import { MemoryStore, type RateLimitStore } from "../src/index.js";
import { rateLimit as nodeRateLimit } from "../src/node.js";

/** A field of whichever framework's request: `node:http`'s (Express, Fastify) or a Fetch `Request`'s. */
function field(req: object, name: string): string | undefined {
  const headers = (req as { headers: Headers | Record<string, string | string[] | undefined> }).headers;
  const value = headers instanceof Headers ? headers.get(name) : headers[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

function pathOf(req: object): string {
  return new URL((req as { url: string }).url, "http://localhost").pathname;
}

/** Not counted: the health check, the test clock, the routes with limits of their own only, OPTIONS. */
const UNLIMITED = new Set(["/health", "/tick", "/down", "/broken"]);
const skip = (req: object) => UNLIMITED.has(pathOf(req)) || (req as { method?: string }).method === "OPTIONS";
/** An API key, when the client sends one, is its bucket. */
const key = (req: object) => {
  const apiKey = field(req, "x-api-key");
  return apiKey === undefined ? undefined : `key:${apiKey}`;
};

const silent = { warn() {} };

/** A store that is down: every decision fails (one per limiter: a store serves one limiter per prefix). */
const down = (): RateLimitStore => ({
  consume() {
    throw new Error("connection refused");
  },
  reset() {},
});

/** The limiters of one server, on a clock the test moves (`POST /tick`: one window on). */
function limiters() {
  const clock = { now: 90_000 };
  const window = {
    algorithm: "fixed-window",
    windowMs: 60_000,
    now: () => clock.now,
    logger: silent,
  } as const;
  return {
    clock,
    app: { ...window, limit: 2, skip, key },
    search: { ...window, limit: 5, policyName: "search", store: new MemoryStore() },
    down: { limit: 5, store: down(), failMode: "closed", logger: silent } as const,
    broken: { limit: () => 0, logger: silent },
  };
}

const mounts: Mounts = {
  express() {
    const l = limiters();
    const app = express();
    app.disable("x-powered-by");
    app.set("trust proxy", "loopback");
    app.post("/tick", (_req, res) => {
      l.clock.now += 60_000;
      res.end("ticked");
    });
    app.use(expressRateLimit(l.app));
    app.get("/search", expressRateLimit(l.search), (_req, res) => {
      res.end("ok");
    });
    app.get("/down", expressRateLimit(l.down), (_req, res) => {
      res.end("ok");
    });
    app.get("/broken", expressRateLimit(l.broken), (_req, res) => {
      res.end("ok");
    });
    app.use((_req, res) => {
      res.end("ok");
    });
    app.use(fallbackErrors.express);
    return app;
  },
  node() {
    const l = limiters();
    const limit = nodeRateLimit({ ...l.app, trustProxy: "loopback" });
    const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => Promise<boolean>> = {
      "/search": nodeRateLimit(l.search),
      "/down": nodeRateLimit(l.down),
      "/broken": nodeRateLimit(l.broken),
    };
    return (req, res) => {
      const run = async () => {
        const path = pathOf(req);
        if (path === "/tick") {
          l.clock.now += 60_000;
          res.end("ticked");
          return;
        }
        await limit(req, res);
        await routes[path]?.(req, res);
        res.end("ok");
      };
      run().catch((err) => fallbackErrors.node(err, req, res));
    };
  },
  fastify() {
    const l = limiters();
    const app = Fastify();
    app.post("/tick", async () => {
      l.clock.now += 60_000;
      return "ticked";
    });
    app.register(async (limited) => {
      await limited.register(fastifyRateLimit, { ...l.app, trustProxy: "loopback" });
      limited.get("/search", { onRequest: rateLimitHook(l.search) }, async () => "ok");
      limited.get("/down", { onRequest: rateLimitHook(l.down) }, async () => "ok");
      limited.get("/broken", { onRequest: rateLimitHook(l.broken) }, async () => "ok");
      limited.all("/*", async () => "ok");
    });
    app.setErrorHandler(fallbackErrors.fastify);
    return app;
  },
  fetch() {
    const l = limiters();
    const app = new Hono();
    app.post("/tick", (c) => {
      l.clock.now += 60_000;
      return c.text("ticked");
    });
    app.use(fetchRateLimit({ ...l.app, trustProxy: "loopback" }));
    app.get("/search", fetchRateLimit(l.search), (c) => c.text("ok"));
    app.get("/down", fetchRateLimit(l.down), (c) => c.text("ok"));
    app.get("/broken", fetchRateLimit(l.broken), (c) => c.text("ok"));
    app.all("*", (c) => c.text("ok"));
    app.onError(fallbackErrors.fetch);
    return app.fetch;
  },
};

const get = (path: string, headers?: Record<string, string>) => ({ path, ...(headers ? { headers } : {}) });

/** Clock at 90 s, fixed window of 60 s: the window ends at 120 s, 30 s away. */
const rows: Row[] = [
  {
    name: "GET /a, limit 2 → 200 with X-RateLimit-* and RateLimit-Policy/RateLimit, r=1",
    fresh: true,
    request: get("/a"),
    status: 200,
    headers: {
      "x-ratelimit-limit": "2",
      "x-ratelimit-remaining": "1",
      "x-ratelimit-reset": "120",
      "ratelimit-policy": '"default";q=2;w=60',
      ratelimit: '"default";r=1;t=30',
      "retry-after": null,
    },
    body: "ok",
  },
  {
    name: "GET /a a third time in the window → 429, Retry-After 30, r=0, the error record's status",
    fresh: true,
    before: [get("/a"), get("/a")],
    request: get("/a"),
    status: 429,
    headers: {
      "retry-after": "30",
      "x-ratelimit-limit": "2",
      "x-ratelimit-remaining": "0",
      "ratelimit-policy": '"default";q=2;w=60',
      ratelimit: '"default";r=0;t=30',
    },
    body: { status: 429, message: "Too many requests" },
  },
  {
    name: "X-Forwarded-For from a trusted proxy: each client its own bucket (203.0.113.9 spent, 203.0.113.10 not)",
    fresh: true,
    before: [
      get("/a", { "X-Forwarded-For": "203.0.113.9" }),
      get("/a", { "X-Forwarded-For": "203.0.113.9" }),
    ],
    request: get("/a", { "X-Forwarded-For": "203.0.113.10" }),
    status: 200,
    headers: { ratelimit: '"default";r=1;t=30' },
  },
  {
    name: "X-Api-Key: the key's own bucket (key a spent, key b not)",
    fresh: true,
    before: [get("/a", { "X-Api-Key": "a" }), get("/a", { "X-Api-Key": "a" })],
    request: get("/a", { "X-Api-Key": "b" }),
    status: 200,
    headers: { ratelimit: '"default";r=1;t=30' },
  },
  {
    name: "X-Api-Key a spent → its next request 429",
    fresh: true,
    before: [get("/a", { "X-Api-Key": "a" }), get("/a", { "X-Api-Key": "a" })],
    request: get("/a", { "X-Api-Key": "a" }),
    status: 429,
    headers: { "retry-after": "30", ratelimit: '"default";r=0;t=30' },
  },
  {
    name: "quota spent, then the window ends → 200 with a new quota (r=1)",
    fresh: true,
    before: [get("/a"), get("/a"), get("/a"), { method: "POST", path: "/tick", body: "" }],
    request: get("/a"),
    status: 200,
    headers: { "x-ratelimit-remaining": "1", ratelimit: '"default";r=1;t=30', "x-ratelimit-reset": "180" },
  },
  {
    name: "GET /health (skipped) after the quota is spent → 200, no rate limit fields",
    fresh: true,
    before: [get("/a"), get("/a"), get("/a")],
    request: get("/health"),
    status: 200,
    headers: { ratelimit: null, "ratelimit-policy": null, "x-ratelimit-remaining": null },
  },
  {
    name: "OPTIONS /a (skipped) after the quota is spent → not refused, no rate limit fields",
    fresh: true,
    before: [get("/a"), get("/a"), get("/a")],
    request: { method: "OPTIONS", path: "/a" },
    status: 200,
    headers: { ratelimit: null },
  },
  {
    name: "GET /search behind the app's limit and its own → both policies in RateLimit-Policy and RateLimit",
    request: get("/search", { "X-Api-Key": "search" }),
    status: 200,
    headers: {
      "ratelimit-policy": '"default";q=2;w=60, "search";q=5;w=60',
      ratelimit: '"default";r=1;t=30, "search";r=4;t=30',
      "x-ratelimit-remaining": "1",
    },
  },
  {
    name: "store down with failMode closed → 503, not passed",
    request: get("/down"),
    status: 503,
    headers: { ratelimit: null },
    body: { status: 503, message: "Internal Server Error" },
  },
  {
    name: "limit(req) answering 0 (misconfigured) → 500, not passed",
    request: get("/broken"),
    status: 500,
    body: { status: 500, message: "Internal Server Error" },
  },
];

conformance("ratelimit", mounts, rows);

describe("ratelimit: a misconfigured limiter is refused at construction, on every framework", () => {
  const refusals = {
    async express(options: object) {
      expressRateLimit(options as Parameters<typeof expressRateLimit>[0]);
    },
    async node(options: object) {
      nodeRateLimit(options as Parameters<typeof nodeRateLimit>[0]);
    },
    async fastify(options: object) {
      const app = Fastify();
      app.register(fastifyRateLimit, options as never);
      try {
        await app.ready();
      } finally {
        await app.close();
      }
    },
    async fetch(options: object) {
      fetchRateLimit(options as Parameters<typeof fetchRateLimit>[0]);
    },
  };
  it.each(FRAMEWORKS)(
    "%s: store {} → TypeError ERR_SVC_RATELIMIT_STORE naming the store's methods",
    async (framework) => {
      await expect(refusals[framework]({ limit: 5, store: {} })).rejects.toMatchObject({
        name: "TypeError",
        code: "ERR_SVC_RATELIMIT_STORE",
        message: expect.stringContaining("consume(key, cost, policy, now) and reset(key)"),
      });
    },
  );
  it.each(FRAMEWORKS.filter((f) => f !== "express"))(
    "%s: skipSuccessfulRequests (reads the response) → TypeError ERR_SVC_RATELIMIT_SKIP_SUCCESSFUL_REQUESTS",
    async (framework) => {
      await expect(refusals[framework]({ limit: 5, skipSuccessfulRequests: true })).rejects.toMatchObject({
        code: "ERR_SVC_RATELIMIT_SKIP_SUCCESSFUL_REQUESTS",
      });
    },
  );
});

describe("ratelimit on fastify: the plugin applies to the scope it is registered in", () => {
  it("registered in the /api scope: /api/a → 200, 200, 429 with its fields; /health (outside) → 200 without fields", async () => {
    const app = Fastify();
    app.setErrorHandler(fallbackErrors.fastify);
    await app.register(
      async (api) => {
        await api.register(fastifyRateLimit, {
          limit: 2,
          windowMs: 60_000,
          keyPrefix: "api:",
          logger: silent,
        });
        api.get("/a", async (request) => ({
          remaining: (request as { rateLimit?: { remaining: number } }).rateLimit?.remaining,
        }));
      },
      { prefix: "/api" },
    );
    app.get("/health", async () => "ok");
    try {
      const statuses: number[] = [];
      let last: Awaited<ReturnType<typeof app.inject>> | undefined;
      for (let i = 0; i < 3; i++) {
        last = await app.inject({ method: "GET", url: "/api/a" });
        statuses.push(last.statusCode);
        if (i === 0) expect(last.json()).toEqual({ remaining: 1 });
      }
      expect(statuses).toEqual([200, 200, 429]);
      expect(last?.headers["retry-after"]).toMatch(/^\d+$/);
      expect(last?.headers.ratelimit).toMatch(/^"default";r=0;t=\d+$/);
      const health = await app.inject({ method: "GET", url: "/health" });
      expect(health.statusCode).toBe(200);
      expect(health.headers.ratelimit).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});
