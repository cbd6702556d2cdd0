import type { IncomingMessage, ServerResponse } from "node:http";
import { connect } from "node:net";
import { exchangeOf, HttpError, requestState } from "@svc/kernel";
import {
  conformance,
  FRAMEWORKS,
  fallbackErrors,
  type Mounts,
  type Row,
  send,
  serve,
} from "@svc/test-utils/conformance";
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
/** The routes of the response-dependent limiters (`/ss/ok`, `/sf/fail`, `/rws/missing`), counted by their own only. */
const OWN_ONLY = /^\/(ss|sf|rws)\//;
const skip = (req: object) =>
  UNLIMITED.has(pathOf(req)) ||
  OWN_ONLY.test(pathOf(req)) ||
  (req as { method?: string }).method === "OPTIONS";
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
    state: { ...window, limit: 5, policyName: "state", store: new MemoryStore() },
    down: { limit: 5, store: down(), failMode: "closed", logger: silent } as const,
    broken: { limit: () => 0, logger: silent },
    /** Successes given back: only failures spend the quota of 2. */
    ss: { ...window, limit: 2, policyName: "ss", store: new MemoryStore(), skipSuccessfulRequests: true },
    /** Failures given back: only successes spend the quota of 2. */
    sf: { ...window, limit: 2, policyName: "sf", store: new MemoryStore(), skipFailedRequests: true },
    /** Failures given back, where a 404 is the only failure (a 400 is the client's success here). */
    rws: {
      ...window,
      limit: 2,
      policyName: "rws",
      store: new MemoryStore(),
      skipFailedRequests: true,
      requestWasSuccessful: (_req: unknown, res: { statusCode: number }) => res.statusCode !== 404,
    },
  };
}

/** The status each outcome route answers: `/ok` 200, `/fail` a 400 thrown, `/missing` a 404 thrown. */
function outcome(path: string): string {
  const last = path.slice(path.lastIndexOf("/") + 1);
  if (last === "fail") throw HttpError.badRequest("The request failed");
  if (last === "missing") throw HttpError.notFound();
  return "ok";
}

/** What the request's exchange holds of the limiters that counted it: the tightest decision. */
function state(request: object): string {
  const limit = exchangeOf(request).rateLimit;
  return JSON.stringify(limit && { policy: limit.policy, limit: limit.limit, remaining: limit.remaining });
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
    app.get("/state", expressRateLimit(l.state), (req, res) => {
      res.end(state(req));
    });
    app.get("/down", expressRateLimit(l.down), (_req, res) => {
      res.end("ok");
    });
    app.get("/broken", expressRateLimit(l.broken), (_req, res) => {
      res.end("ok");
    });
    for (const name of ["ss", "sf", "rws"] as const) {
      app.get(`/${name}/:outcome`, expressRateLimit(l[name]), (req, res) => {
        res.end(outcome(req.path));
      });
    }
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
      "/state": nodeRateLimit(l.state),
      "/down": nodeRateLimit(l.down),
      "/broken": nodeRateLimit(l.broken),
      "/ss": nodeRateLimit(l.ss),
      "/sf": nodeRateLimit(l.sf),
      "/rws": nodeRateLimit(l.rws),
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
        await (routes[path] ?? routes[path.slice(0, path.lastIndexOf("/"))])?.(req, res);
        res.end(path === "/state" ? state(req) : outcome(path));
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
      limited.get("/state", { onRequest: rateLimitHook(l.state) }, async (request) => state(request));
      limited.get("/down", { onRequest: rateLimitHook(l.down) }, async () => "ok");
      limited.get("/broken", { onRequest: rateLimitHook(l.broken) }, async () => "ok");
      limited.all("/*", async () => "ok");
    });
    // A route's hook (skipSuccessfulRequests), and the plugin in scopes of their own (its onResponse hook).
    app.get("/ss/:outcome", { onRequest: rateLimitHook(l.ss) }, async (request) => outcome(request.url));
    for (const name of ["sf", "rws"] as const) {
      app.register(async (scope) => {
        await scope.register(fastifyRateLimit, { ...l[name], requestPropertyName: false });
        scope.get(`/${name}/:outcome`, async (request) => outcome(request.url));
      });
    }
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
    app.get("/state", fetchRateLimit(l.state), (c) => c.text(state(c.req.raw)));
    app.get("/down", fetchRateLimit(l.down), (c) => c.text("ok"));
    app.get("/broken", fetchRateLimit(l.broken), (c) => c.text("ok"));
    for (const name of ["ss", "sf", "rws"] as const) {
      app.get(`/${name}/:outcome`, fetchRateLimit(l[name]), (c) => c.text(outcome(c.req.path)));
    }
    app.all("*", (c) => c.text("ok"));
    app.onError(fallbackErrors.fetch);
    return app.fetch;
  },
};

const get = (path: string, headers?: Record<string, string>) => ({ path, ...(headers ? { headers } : {}) });

/** Clock at 90 s, fixed window of 60 s: the window ends at 120 s, 30 s away. */
const rows: Row[] = [
  {
    name: "the request's exchange holds the tightest limiter decision (default r=1 of 2, not state r=4 of 5)",
    fresh: true,
    request: get("/state"),
    status: 200,
    body: JSON.stringify({ policy: "default", limit: 2, remaining: 1 }),
  },
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
    name: "Authorization with no authentication step in front → 500, not counted in the address's bucket",
    fresh: true,
    before: [get("/a", { Authorization: "Bearer t1" })],
    request: get("/a", { Authorization: "Bearer t2" }),
    status: 500,
    body: { status: 500, message: "Internal Server Error" },
  },
  {
    name: "Authorization refused (500) twice, then a request without credentials → 200, r=1",
    fresh: true,
    before: [get("/a", { Authorization: "Bearer t1" }), get("/a", { Authorization: "Bearer t2" })],
    request: get("/a"),
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
  {
    name: "skipSuccessfulRequests: three 200s, then GET /ss/ok → 200 with r=1 (each success given back)",
    fresh: true,
    before: [get("/ss/ok"), get("/ss/ok"), get("/ss/ok")],
    request: get("/ss/ok"),
    status: 200,
    headers: { ratelimit: '"ss";r=1;t=30' },
    body: "ok",
  },
  {
    name: "skipSuccessfulRequests: three HEAD /ss/ok (200), then GET /ss/ok → 200 with r=1",
    fresh: true,
    before: [
      { method: "HEAD", path: "/ss/ok" },
      { method: "HEAD", path: "/ss/ok" },
      { method: "HEAD", path: "/ss/ok" },
    ],
    request: get("/ss/ok"),
    status: 200,
    headers: { ratelimit: '"ss";r=1;t=30' },
  },
  {
    name: "skipSuccessfulRequests: two 400s stay counted → GET /ss/ok 429",
    fresh: true,
    before: [get("/ss/fail"), get("/ss/fail")],
    request: get("/ss/ok"),
    status: 429,
    headers: { "retry-after": "30", ratelimit: '"ss";r=0;t=30' },
  },
  {
    name: "skipFailedRequests: three 400s, then GET /sf/ok → 200 with r=1 (each failure given back)",
    fresh: true,
    before: [get("/sf/fail"), get("/sf/fail"), get("/sf/fail")],
    request: get("/sf/ok"),
    status: 200,
    headers: { ratelimit: '"sf";r=1;t=30' },
  },
  {
    name: "skipFailedRequests: two 200s stay counted → GET /sf/ok 429",
    fresh: true,
    before: [get("/sf/ok"), get("/sf/ok")],
    request: get("/sf/ok"),
    status: 429,
    headers: { "retry-after": "30", ratelimit: '"sf";r=0;t=30' },
  },
  {
    name: "requestWasSuccessful (a 404 fails) with skipFailedRequests: three 404s given back → GET /rws/ok 200, r=1",
    fresh: true,
    before: [get("/rws/missing"), get("/rws/missing"), get("/rws/missing")],
    request: get("/rws/ok"),
    status: 200,
    headers: { ratelimit: '"rws";r=1;t=30' },
  },
  {
    name: "requestWasSuccessful (a 400 succeeds) with skipFailedRequests: two 400s stay counted → GET /rws/ok 429",
    fresh: true,
    before: [get("/rws/fail"), get("/rws/fail")],
    request: get("/rws/ok"),
    status: 429,
    headers: { "retry-after": "30", ratelimit: '"rws";r=0;t=30' },
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
  it("node: handler (the limiter rejects for the caller to answer) → TypeError ERR_SVC_RATELIMIT_HANDLER", async () => {
    await expect(refusals.node({ limit: 5, handler: () => {} })).rejects.toMatchObject({
      name: "TypeError",
      code: "ERR_SVC_RATELIMIT_HANDLER",
    });
  });
  it.each(FRAMEWORKS.filter((f) => f !== "node"))(
    "%s: handler 42 → TypeError ERR_SVC_RATELIMIT_HANDLER",
    async (framework) => {
      await expect(refusals[framework]({ limit: 5, handler: 42 })).rejects.toMatchObject({
        name: "TypeError",
        code: "ERR_SVC_RATELIMIT_HANDLER",
      });
    },
  );
  it.each(FRAMEWORKS.filter((f) => f !== "node"))(
    "%s: handlr (misspelt) → TypeError ERR_SVC_RATELIMIT_UNKNOWN_OPTION naming handler",
    async (framework) => {
      await expect(refusals[framework]({ limit: 5, handlr: () => {} })).rejects.toMatchObject({
        name: "TypeError",
        code: "ERR_SVC_RATELIMIT_UNKNOWN_OPTION",
        message: expect.stringContaining("handler"),
      });
    },
  );
  it.each(FRAMEWORKS)(
    "%s: skipFailedRequests with a store that cannot give units back → TypeError ERR_SVC_RATELIMIT_SKIP_FAILED_REQUESTS",
    async (framework) => {
      const store: RateLimitStore = {
        consume: () => ({ allowed: true, remaining: 1, resetAt: 0, limit: 2 }),
        reset() {},
      } as never;
      await expect(refusals[framework]({ limit: 5, store, skipFailedRequests: true })).rejects.toMatchObject({
        name: "TypeError",
        code: "ERR_SVC_RATELIMIT_SKIP_FAILED_REQUESTS",
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
          remaining: requestState(request).rateLimit?.remaining,
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

describe("ratelimit: a client that hangs up before its response stays counted, on every framework", () => {
  /** GET /slow answers 200 after 150 ms, by when its client has gone; limit 2, successes given back. */
  const options = () => ({
    limit: 2,
    windowMs: 60_000,
    skipSuccessfulRequests: true,
    store: new MemoryStore(),
    logger: silent,
  });
  /** Resolved once a handler of /slow runs (the request was counted): the client hangs up then. */
  let started: () => void = () => {};
  const later = <T>(value: T) => {
    started();
    return new Promise<T>((resolve) => setTimeout(() => resolve(value), 150));
  };
  const slowMounts: Mounts = {
    express() {
      const app = express();
      app.use(expressRateLimit(options()));
      app.get("/slow", async (_req, res) => {
        res.end(await later("ok"));
      });
      app.get("/ok", (_req, res) => {
        res.end("ok");
      });
      return app;
    },
    node() {
      const limit = nodeRateLimit(options());
      return (req, res) => {
        limit(req, res)
          .then(async () => res.end(pathOf(req) === "/slow" ? await later("ok") : "ok"))
          .catch((err) => fallbackErrors.node(err, req, res));
      };
    },
    fastify() {
      const app = Fastify();
      app.register(fastifyRateLimit, options());
      app.get("/slow", async () => later("ok"));
      app.get("/ok", async () => "ok");
      app.setErrorHandler(fallbackErrors.fastify);
      return app;
    },
    fetch() {
      const app = new Hono();
      app.use(fetchRateLimit(options()));
      app.get("/slow", async (c) => c.text(await later("ok")));
      app.get("/ok", (c) => c.text("ok"));
      app.onError(fallbackErrors.fetch);
      return app.fetch;
    },
  };
  it.each(FRAMEWORKS)(
    "%s: GET /slow, the connection closed while its handler runs, then GET /ok → r=0 (the hung-up request not given back)",
    async (framework) => {
      const server = await serve(framework, slowMounts);
      try {
        const running = new Promise<void>((resolve) => {
          started = resolve;
        });
        const port = Number(new URL(server.url).port);
        const socket = connect(port, "127.0.0.1", () => {
          socket.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
        });
        socket.on("error", () => {});
        await running;
        socket.destroy();
        // The handler answers into the closed connection, and the limiter hears of it, or not.
        await new Promise((resolve) => setTimeout(resolve, 300));
        const after = await send(server.url, { path: "/ok" });
        expect(after.status).toBe(200);
        expect(after.headers.ratelimit).toMatch(/^"default";r=0;t=\d+$/);
      } finally {
        await server.close();
      }
    },
  );
  it("fastify, a route's rateLimitHook: GET /slow hung up while its handler runs, then GET /ok → r=0", async () => {
    const hook = rateLimitHook(options());
    const server = await serve("fastify", {
      ...slowMounts,
      fastify() {
        const app = Fastify();
        app.get("/slow", { onRequest: hook }, async () => later("ok"));
        app.get("/ok", { onRequest: hook }, async () => "ok");
        app.setErrorHandler(fallbackErrors.fastify);
        return app;
      },
    });
    try {
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const port = Number(new URL(server.url).port);
      const socket = connect(port, "127.0.0.1", () => {
        socket.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
      });
      socket.on("error", () => {});
      await running;
      socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 300));
      const after = await send(server.url, { path: "/ok" });
      expect(after.headers.ratelimit).toMatch(/^"default";r=0;t=\d+$/);
      // And a finished 200 is given back: the next one still has r=0, not a 429.
      expect((await send(server.url, { path: "/ok" })).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe("ratelimit/fetch: .wrap(handler) decides on the Response the handler returns", () => {
  const wrapped = (handler: (request: Request) => Response) =>
    fetchRateLimit({
      limit: 2,
      windowMs: 60_000,
      skipSuccessfulRequests: true,
      store: new MemoryStore(),
      logger: silent,
    }).wrap(handler, () => ({ address: "203.0.113.7" }));
  const request = () => new Request("http://svc.example/ok");

  it("three 200s read to the end → the fourth has r=1 (each given back)", async () => {
    const fetch = wrapped(() => new Response("ok"));
    for (let i = 0; i < 3; i++) expect(await (await fetch(request())).text()).toBe("ok");
    expect((await fetch(request())).headers.get("ratelimit")).toMatch(/^"default";r=1;t=\d+$/);
  });
  it("a 200 whose body the server cancels (the client went away) → stays counted", async () => {
    const fetch = wrapped(() => new Response("ok"));
    await (await fetch(request())).body?.cancel();
    expect((await fetch(request())).headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+$/);
  });
  it("a request whose signal is aborted before its body is read → stays counted", async () => {
    const fetch = wrapped(() => new Response("ok"));
    const controller = new AbortController();
    const response = await fetch(new Request("http://svc.example/ok", { signal: controller.signal }));
    controller.abort();
    await response.text();
    expect((await fetch(request())).headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+$/);
  });
  it("a 204 without a body → given back as it is handed over", async () => {
    const fetch = wrapped(() => new Response(null, { status: 204 }));
    await fetch(request());
    await fetch(request());
    expect((await fetch(request())).status).toBe(204);
  });
});
