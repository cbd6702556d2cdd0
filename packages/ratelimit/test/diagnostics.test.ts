import { tracingChannel } from "node:diagnostics_channel";
import type { IncomingMessage, ServerResponse } from "node:http";
import { subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { serviceUrl, uniquePrefix } from "@svc/test-utils";
import {
  FRAMEWORKS,
  type Framework,
  fallbackErrors,
  type Mounts,
  send,
  serve,
} from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { rateLimit as expressRateLimit } from "../src/express.js";
import { rateLimit as fastifyRateLimit } from "../src/fastify.js";
import { rateLimit as fetchRateLimit } from "../src/fetch.js";
import { MemoryStore, type RateLimitDiagnostic, type RateLimitStoreCall, RedisStore } from "../src/index.js";
import { rateLimit as nodeRateLimit } from "../src/node.js";

const silent = { warn() {}, info() {} };

/**
 * One server per framework: `/a` under a limit of 1, `/h` under a limit of 1 with a `handler`
 * (none on `node:http`, whose limiter rejects for the caller to answer). `key` keeps the request
 * each limiter was given, to compare with the messages' `request`.
 */
function mounts(given: object[]): Mounts {
  const options = () => ({
    limit: 1,
    windowMs: 60_000,
    store: new MemoryStore(),
    logger: silent,
    key: (request: object) => {
      given.push(request);
      return undefined;
    },
  });
  return {
    express() {
      const app = express();
      app.get("/a", expressRateLimit(options()), (_req, res) => {
        res.end("ok");
      });
      app.get(
        "/h",
        expressRateLimit({
          ...options(),
          handler: (_req, res, _next, exceeded) => {
            res.statusCode = 429;
            res.end(`handled ${exceeded.info.remaining}`);
          },
        }),
        (_req, res) => {
          res.end("ok");
        },
      );
      app.use(fallbackErrors.express);
      return app;
    },
    node() {
      const limit = nodeRateLimit(options());
      return (req: IncomingMessage, res: ServerResponse) => {
        limit(req, res)
          .then(() => res.end("ok"))
          .catch((err) => fallbackErrors.node(err, req, res));
      };
    },
    fastify() {
      const app = Fastify();
      app.register(async (scope) => {
        await scope.register(fastifyRateLimit, options());
        scope.get("/a", async () => "ok");
      });
      app.register(async (scope) => {
        await scope.register(fastifyRateLimit, {
          ...options(),
          handler: (_request, reply, exceeded) => {
            reply.code(429).send(`handled ${exceeded.info.remaining}`);
          },
        });
        scope.get("/h", async () => "ok");
      });
      app.setErrorHandler(fallbackErrors.fastify);
      return app;
    },
    fetch() {
      const app = new Hono();
      app.get("/a", fetchRateLimit({ ...options(), trustProxy: "loopback" }), (c) => c.text("ok"));
      app.get(
        "/h",
        fetchRateLimit({
          ...options(),
          trustProxy: "loopback",
          handler: (_request, exceeded) =>
            new Response(`handled ${exceeded.info.remaining}`, { status: 429 }),
        }),
        (c) => c.text("ok"),
      );
      app.onError(fallbackErrors.fetch);
      return app.fetch;
    },
  };
}

interface Row {
  name: string;
  path: string;
  /** Requests sent first. */
  before: number;
  status: number;
  text?: string;
  retryAfter?: boolean;
  decision: RateLimitDiagnostic["decision"];
  frameworks?: readonly Framework[];
}

const rows: Row[] = [
  { name: "first GET /a → one allowed message", path: "/a", before: 0, status: 200, decision: "allowed" },
  {
    name: "second GET /a over the limit of 1 → 429 and one limited message",
    path: "/a",
    before: 1,
    status: 429,
    retryAfter: true,
    decision: "limited",
  },
  {
    name: "second GET /h with a handler → the handler's 429, Retry-After, one limited message",
    path: "/h",
    before: 1,
    status: 429,
    text: "handled 0",
    retryAfter: true,
    decision: "limited",
    frameworks: ["express", "fastify", "fetch"],
  },
];

describe.each(FRAMEWORKS)("svc:ratelimit on %s", (framework) => {
  let listener: ((message: unknown) => void) | undefined;
  afterEach(() => {
    if (listener) unsubscribeDiagnostics("svc:ratelimit", listener);
    listener = undefined;
  });

  it.each(rows.filter((row) => !row.frameworks || row.frameworks.includes(framework)))(
    "$name",
    async (row) => {
      const given: object[] = [];
      const server = await serve(framework, mounts(given));
      try {
        for (let i = 0; i < row.before; i++) await send(server.url, { path: row.path });
        const seen: RateLimitDiagnostic[] = [];
        listener = (message) => seen.push(message as RateLimitDiagnostic);
        subscribeDiagnostics("svc:ratelimit", listener);
        const response = await send(server.url, { path: row.path });
        expect(response.status).toBe(row.status);
        if (row.text !== undefined) expect(response.text).toBe(row.text);
        if (row.retryAfter) expect(response.headers["retry-after"]).toMatch(/^\d+$/);
        expect(seen.map((m) => m.decision)).toEqual([row.decision]);
        const message = seen[0] as RateLimitDiagnostic & { request: object };
        // The framework's own request: what the limiter's option functions were given.
        expect(message.request).toBe(given.at(-1));
        expect(message).toMatchObject({ policy: "default", keyKind: "address", limit: 1, remaining: 0 });
      } finally {
        await server.close();
      }
    },
  );
});

const url = serviceUrl("REDIS_URL");

describe.skipIf(!url)("svc:ratelimit:store around RedisStore", () => {
  const prefix = uniquePrefix("rl-trace");
  let client: Redis;
  const channel = tracingChannel("svc:ratelimit:store");

  beforeAll(async () => {
    client = new Redis(url as string, {
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
    });
    await client.connect();
  });
  afterAll(async () => {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(...keys);
    await client.quit();
  });

  it("consume, refund, reset → start and asyncEnd each, with the Redis key", async () => {
    const events: [string, RateLimitStoreCall & { error?: unknown }][] = [];
    const handlers = {
      start: (c: unknown) => events.push(["start", { ...(c as RateLimitStoreCall) }]),
      end: () => {},
      asyncStart: () => {},
      asyncEnd: (c: unknown) => events.push(["asyncEnd", { ...(c as RateLimitStoreCall) }]),
      error: (c: unknown) => events.push(["error", { ...(c as RateLimitStoreCall) }]),
    };
    channel.subscribe(handlers);
    const store = new RedisStore({ client, prefix });
    try {
      const policy = { algorithm: "fixed-window", limit: 2, windowMs: 60_000, burst: 2 } as const;
      const decision = await store.consume("k1", 1, policy);
      await store.refund("k1", 1, policy, decision);
      await store.reset("k1");
    } finally {
      channel.unsubscribe(handlers);
      store.close();
    }
    const key = `${prefix}{k1}`;
    expect(events.map(([event, c]) => [event, c.store, c.operation, c.key])).toEqual([
      ["start", "redis", "consume", key],
      ["asyncEnd", "redis", "consume", key],
      ["start", "redis", "refund", key],
      ["asyncEnd", "redis", "refund", key],
      ["start", "redis", "reset", key],
      ["asyncEnd", "redis", "reset", key],
    ]);
  });

  it("a closed store's consume → start and error", async () => {
    const events: string[] = [];
    const handlers = {
      start: () => events.push("start"),
      end: () => {},
      asyncStart: () => {},
      asyncEnd: () => {},
      error: () => events.push("error"),
    };
    const store = new RedisStore({ client, prefix: `${prefix}closed:` });
    store.close();
    channel.subscribe(handlers);
    try {
      const policy = { algorithm: "fixed-window", limit: 2, windowMs: 60_000, burst: 2 } as const;
      await expect(store.consume("k1", 1, policy)).rejects.toThrow(/closed/);
    } finally {
      channel.unsubscribe(handlers);
    }
    expect(events).toEqual(["start", "error"]);
  });
});
