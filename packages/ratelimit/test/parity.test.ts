import type { ServerResponse } from "node:http";
import { errorHandler } from "@svc/errors/express";
import { requestState } from "@svc/kernel";
import { express4, express4Version, listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { rateLimit } from "../src/express.js";
import { MAX_POLICIES, type RateLimitInfo, type RateLimitOptions } from "../src/index.js";

// What users of express-rate-limit expect, on Express 5 and on the oldest Express 4 of the peer range.

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

const quiet = { warn() {} };
const silent = { error() {} };

type Factory = typeof express;
type Route = (req: express.Request, res: express.Response) => void;

/** A listening app: `limiters` on `GET /`, then `route` (default: 200 with `requestState(req).rateLimit`). */
async function serve(make: Factory, limiters: RateLimitOptions[], route?: Route): Promise<string> {
  const app = make();
  app.get(
    "/",
    ...limiters.map((o) => rateLimit({ logger: quiet, ...o })),
    route ??
      ((req, res) => {
        res.json(requestState(req).rateLimit ?? null);
      }),
  );
  app.use(errorHandler({ logger: silent }));
  const server = await listen(app);
  closers.push(server.close);
  return server.url;
}

const expresses: [string, Factory][] = [
  ["Express 5", express],
  [`Express ${express4Version}`, express4 as unknown as Factory],
];

describe.each(expresses)("%s", (_name, make) => {
  it("two limiters on one route (10/min global, 3/min route) → both policies listed, X-RateLimit-* = the tighter", async () => {
    const url = await serve(make, [
      { limit: 10, windowMs: 60_000, algorithm: "fixed-window", policyName: "global" },
      { limit: 3, windowMs: 60_000, algorithm: "fixed-window", policyName: "route" },
    ]);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit-policy")).toBe('"global";q=10;w=60, "route";q=3;w=60');
    expect(res.headers.get("ratelimit")).toMatch(/^"global";r=9;t=\d+, "route";r=2;t=\d+$/);
    expect(res.headers.get("x-ratelimit-limit")).toBe("3");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("2");
    const info = (await res.json()) as RateLimitInfo;
    expect(info).toMatchObject({ limit: 3, used: 1, remaining: 2, policy: "route" });
  });

  it("two limiters, the global one tighter (2/min vs 5/min) → X-RateLimit-* and requestState(req).rateLimit from the global one", async () => {
    const url = await serve(make, [
      // A fixed clock: on the real one a minute boundary between the requests let the 3rd through.
      { limit: 2, algorithm: "fixed-window", policyName: "global", now: () => 90_000 },
      { limit: 5, algorithm: "fixed-window", policyName: "route", now: () => 90_000 },
    ]);
    const res = await fetch(url);
    expect(res.headers.get("x-ratelimit-limit")).toBe("2");
    expect(((await res.json()) as RateLimitInfo).policy).toBe("global");
    await fetch(url);
    const denied = await fetch(url);
    expect(denied.status).toBe(429);
    expect(denied.headers.get("ratelimit")).toMatch(/^"global";r=0;t=\d+$/);
  });

  it("two limiters both named default → listed as default and default-2", async () => {
    const url = await serve(make, [{ limit: 10 }, { limit: 3 }]);
    const res = await fetch(url);
    expect(res.headers.get("ratelimit-policy")).toBe('"default";q=10;w=60, "default-2";q=3;w=60');
  });

  it(`${MAX_POLICIES + 4} limiters on one route → at most ${MAX_POLICIES} policies listed, the tightest kept, header under 1 KiB`, async () => {
    const limiters = Array.from({ length: MAX_POLICIES + 4 }, (_, i) => ({
      limit: 100 - i,
      policyName: `p${String(i).padStart(61, "0")}`,
    }));
    const url = await serve(make, limiters);
    const res = await fetch(url);
    const policy = res.headers.get("ratelimit-policy") ?? "";
    expect(policy.split(", ")).toHaveLength(MAX_POLICIES);
    expect(policy.length).toBeLessThan(1024);
    expect((res.headers.get("ratelimit") ?? "").length).toBeLessThan(1024);
    // The tightest (limit 89, the last one) is among them, and X-RateLimit-* is its.
    expect(policy).toContain(`q=${100 - (MAX_POLICIES + 3)}`);
    expect(res.headers.get("x-ratelimit-limit")).toBe(String(100 - (MAX_POLICIES + 3)));
  });

  it("skipFailedRequests: limit 1, the route answers 500 → not consumed, the next 200 still passes", async () => {
    const url = await serve(make, [{ limit: 1, skipFailedRequests: true }], (req, res) => {
      res.status(req.headers["x-fail"] ? 500 : 200).end();
    });
    for (let i = 0; i < 3; i++) expect((await fetch(url, { headers: { "X-Fail": "1" } })).status).toBe(500);
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(429);
  });

  it("skipSuccessfulRequests: limit 2, 200s are not counted, 404s are", async () => {
    const url = await serve(make, [{ limit: 2, skipSuccessfulRequests: true }], (req, res) => {
      res.status(req.headers["x-missing"] ? 404 : 200).end();
    });
    for (let i = 0; i < 4; i++) expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url, { headers: { "X-Missing": "1" } })).status).toBe(404);
    expect((await fetch(url, { headers: { "X-Missing": "1" } })).status).toBe(404);
    expect((await fetch(url)).status).toBe(429);
  });

  it("requestWasSuccessful: 201 only counts as success → skipSuccessfulRequests gives back only 201s", async () => {
    const url = await serve(
      make,
      [{ limit: 1, skipSuccessfulRequests: true, requestWasSuccessful: (_q, r) => r.statusCode === 201 }],
      (req, res) => {
        res.status(req.headers["x-created"] ? 201 : 200).end();
      },
    );
    expect((await fetch(url, { headers: { "X-Created": "1" } })).status).toBe(201);
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(429);
  });

  it("async limit(req): tier header gold → 3, else 1", async () => {
    const url = await serve(make, [
      {
        limit: async (req) => (req.headers["x-tier"] === "gold" ? 3 : 1),
        key: (req) => String(req.headers["x-tier"] ?? "none"),
      },
    ]);
    const gold = () => fetch(url, { headers: { "X-Tier": "gold" } });
    const first = await gold();
    expect(first.headers.get("x-ratelimit-limit")).toBe("3");
    expect(first.headers.get("ratelimit-policy")).toBe('"default";q=3;w=60');
    expect((await gold()).status).toBe(200);
    expect((await gold()).status).toBe(200);
    expect((await gold()).status).toBe(429);
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(429);
  });

  it("custom handler: 429 body of its own, Retry-After and the rate limit headers already set", async () => {
    const seen: { statusCode: number; remaining: number }[] = [];
    const url = await serve(make, [
      {
        limit: 1,
        handler: (_req, res, _next, exceeded) => {
          seen.push({ statusCode: exceeded.statusCode, remaining: exceeded.info.remaining });
          (res as express.Response)
            .status(exceeded.statusCode)
            .json({ slowDown: exceeded.retryAfterSeconds });
        },
      },
    ]);
    await fetch(url);
    const denied = await fetch(url);
    expect(denied.status).toBe(429);
    expect(Number(denied.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(denied.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(await denied.json()).toEqual({ slowDown: Number(denied.headers.get("retry-after")) });
    expect(seen).toEqual([{ statusCode: 429, remaining: 0 }]);
  });

  it("handler that calls next(exceeded.error) → the error record, as by default", async () => {
    const url = await serve(make, [{ limit: 1, handler: (_q, _r, next, exceeded) => next(exceeded.error) }]);
    await fetch(url);
    const denied = await fetch(url);
    expect(denied.status).toBe(429);
    expect(await denied.json()).toMatchObject({ status: 429, message: "Too many requests" });
  });

  it.each([
    ["string", "Slow down, please", { message: "Slow down, please" }],
    [
      "object",
      { plan: "free", upgrade: "/pricing" },
      { message: "Too many requests", plan: "free", upgrade: "/pricing" },
    ],
  ] as const)("message as a %s → the 429 record carries it", async (_kind, message, expected) => {
    const url = await serve(make, [{ limit: 1, message }]);
    await fetch(url);
    const denied = await fetch(url);
    expect(denied.status).toBe(429);
    expect(await denied.json()).toMatchObject({ status: 429, ...expected });
  });

  it("message as an async function of the request → the 429 record's message", async () => {
    const url = await serve(make, [{ limit: 1, message: async (req) => `limit for ${req.method}` }]);
    await fetch(url);
    expect(await (await fetch(url)).json()).toMatchObject({ status: 429, message: "limit for GET" });
  });

  it("requestState(req).rateLimit after the limiter: { limit, used, remaining, resetTime, key }", async () => {
    const before = Date.now();
    const url = await serve(make, [{ limit: 5, windowMs: 60_000, key: () => "k" }]);
    await fetch(url);
    const info = (await (await fetch(url)).json()) as Record<string, unknown>;
    expect(info).toMatchObject({ limit: 5, used: 2, remaining: 3, key: "k", policy: "default" });
    expect(Date.parse(String(info.resetTime))).toBeGreaterThan(before);
  });

  it('requestPropertyName "quota" → req.quota, req.rateLimit untouched', async () => {
    const url = await serve(make, [{ limit: 5, requestPropertyName: "quota" }], (req, res) => {
      const r = req as unknown as Record<string, unknown>;
      res.json({ quota: r.quota ?? null, rateLimit: r.rateLimit ?? null });
    });
    const body = (await (await fetch(url)).json()) as { quota: RateLimitInfo | null; rateLimit: unknown };
    expect(body.quota?.limit).toBe(5);
    expect(body.rateLimit).toBeNull();
  });

  it("async skip(req) true → not counted, no headers", async () => {
    const url = await serve(make, [{ limit: 1, skip: async (req) => req.headers["x-probe"] === "1" }]);
    for (let i = 0; i < 3; i++) {
      const res = await fetch(url, { headers: { "X-Probe": "1" } });
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit")).toBeNull();
    }
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(429);
  });
});

describe("a misbehaving option function is the configuration's fault: 500, not counted, never passed", () => {
  const cases: [string, RateLimitOptions][] = [
    [
      "limit(req) throws",
      {
        limit: () => {
          throw new Error("tier lookup failed");
        },
      },
    ],
    [
      "limit(req) rejects",
      {
        limit: async () => {
          throw new Error("tier lookup failed");
        },
      },
    ],
    ["limit(req) answers NaN", { limit: () => Number.NaN }],
    ["limit(req) answers -5", { limit: () => -5 }],
    ["limit(req) answers 0", { limit: () => 0 }],
    ["limit(req) answers 2.5", { limit: () => 2.5 }],
    [
      "skip(req) throws",
      {
        limit: 1,
        skip: () => {
          throw new Error("boom");
        },
      },
    ],
    [
      "skip(req) rejects",
      {
        limit: 1,
        skip: async () => {
          throw new Error("boom");
        },
      },
    ],
    [
      "key(req) throws",
      {
        limit: 1,
        key: () => {
          throw new Error("boom");
        },
      },
    ],
    ["key(req) answers a number", { limit: 1, key: (() => 42) as unknown as () => string }],
    [
      "cost(req) throws",
      {
        limit: 1,
        cost: () => {
          throw new Error("boom");
        },
      },
    ],
  ];

  it.each(cases)(
    "%s → 500 error record, the failure logged, the route never reached",
    async (_name, options) => {
      let reached = 0;
      const logged: unknown[] = [];
      const app = express();
      app.get("/", rateLimit({ logger: quiet, ...options }), (_req, res) => {
        reached++;
        res.end();
      });
      app.use(errorHandler({ logger: { error: (entry: { err: unknown }) => logged.push(entry.err) } }));
      const server = await listen(app);
      closers.push(server.close);
      for (let i = 0; i < 3; i++) {
        const res = await fetch(server.url);
        expect(res.status).toBe(500);
        expect(await res.json()).toMatchObject({ status: 500 });
      }
      expect(reached).toBe(0);
      expect(logged).toHaveLength(3);
      // The 500 names the option; below it, the option's own exception or ours naming the answer.
      for (const err of logged) {
        const messages: string[] = [];
        for (let e: unknown = err; e instanceof Error; e = e.cause) messages.push(e.message);
        expect(messages[0]).toMatch(/^rate limit: \w+\(req\)/);
        expect(messages.join(" <- ")).toMatch(/boom|tier lookup failed|rate limit: \w+\(req\) must answer/);
      }
    },
  );

  it("limit(req) fails only for one tier → the other tier is still counted and limited", async () => {
    const url = await serve(express, [
      {
        limit: (req) => {
          if (req.headers["x-tier"] === "broken") throw new Error("no such tier");
          return 1;
        },
      },
    ]);
    expect((await fetch(url, { headers: { "X-Tier": "broken" } })).status).toBe(500);
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(429);
  });

  it("message object with a reserved member (status) → refused at construction, not a 500 per request", () => {
    expect(() => rateLimit({ limit: 1, message: { status: 200 } })).toThrow(
      expect.objectContaining({ code: "ERR_SVC_RATELIMIT_MESSAGE" }),
    );
  });

  it("handler that throws → the error reaches the error handler (500)", async () => {
    const url = await serve(express, [
      {
        limit: 1,
        handler: () => {
          throw new Error("handler bug");
        },
      },
    ]);
    await fetch(url);
    expect((await fetch(url)).status).toBe(500);
  });
});

describe("key(req) or cost(req) answering a promise (express-rate-limit's async keyGenerator)", () => {
  const cases: [string, RateLimitOptions][] = [
    ["key(req) rejects", { limit: 1, key: (async () => Promise.reject(new Error("boom"))) as never }],
    ["cost(req) rejects", { limit: 1, cost: (async () => Promise.reject(new Error("boom"))) as never }],
  ];

  it.each(cases)("%s → 500, the route never reached, and no unhandled rejection", async (_name, options) => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on("unhandledRejection", onUnhandled);
    try {
      let reached = 0;
      const url = await serve(express, [options], (_req, res) => {
        reached++;
        res.end();
      });
      expect((await fetch(url)).status).toBe(500);
      // Node reports a rejection nobody handled once the microtask queue has drained.
      await new Promise((resolve) => setImmediate(resolve));
      expect(reached).toBe(0);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});

describe("skipFailedRequests and a dropped connection", () => {
  // Not express-rate-limit's behaviour, which gives the units back at the hang-up while the
  // handler still runs: a client closing every connection at once then skips the limit.
  it("the client goes away before the response ends → stays counted: the next request is 429", async () => {
    let closed: () => void = () => {};
    const gone = new Promise<void>((resolve) => {
      closed = resolve;
    });
    const url = await serve(express, [{ limit: 1, skipFailedRequests: true }], (req, res) => {
      if (req.headers["x-hang"]) {
        (res as ServerResponse).once("close", () => setImmediate(closed));
        res.write("partial");
        return;
      }
      res.end("ok");
    });
    const controller = new AbortController();
    const hung = await fetch(url, { headers: { "X-Hang": "1" }, signal: controller.signal });
    expect(hung.status).toBe(200);
    controller.abort();
    await gone;
    expect((await fetch(url)).status).toBe(429);
  });
});
