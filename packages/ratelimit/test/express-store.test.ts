import { errorHandler } from "@svc/errors/express";
import { listen } from "@svc/test-utils";
import express from "express";
import { MemoryStore as ErlMemoryStore } from "express-rate-limit";
import { afterEach, describe, expect, it } from "vitest";
import { rateLimit } from "../src/express.js";
import {
  createRateLimiter,
  type ExpressRateLimitHits,
  type ExpressRateLimitStore,
  expressRateLimitStore,
  type RateLimitOptions,
} from "../src/index.js";
import { inTurn, limitedRoute } from "./requests.js";

// An express-rate-limit store kept through the adapter: a minimal one written to their Store
// interface (init, increment, decrement, resetKey, get), and express-rate-limit's own MemoryStore.

/** Fixed windows of `windowMs` (from init), one counter per key, every call recorded. */
class CountingStore implements ExpressRateLimitStore {
  windowMs = 0;
  readonly hits = new Map<string, { totalHits: number; resetTime: Date }>();
  readonly calls: string[] = [];
  localKeys = true;
  prefix = "";

  init(options: { windowMs: number }): void {
    this.calls.push(`init ${options.windowMs}`);
    this.windowMs = options.windowMs;
  }

  increment(key: string): ExpressRateLimitHits {
    this.calls.push(`increment ${key}`);
    const now = Date.now();
    let entry = this.hits.get(key);
    if (!entry || entry.resetTime.getTime() <= now) {
      entry = { totalHits: 0, resetTime: new Date(now + this.windowMs) };
      this.hits.set(key, entry);
    }
    entry.totalHits++;
    return { ...entry };
  }

  async decrement(key: string): Promise<void> {
    this.calls.push(`decrement ${key}`);
    const entry = this.hits.get(key);
    if (entry && entry.totalHits > 0) entry.totalHits--;
  }

  resetKey(key: string): void {
    this.calls.push(`resetKey ${key}`);
    this.hits.delete(key);
  }

  get(key: string): ExpressRateLimitHits | undefined {
    const entry = this.hits.get(key);
    return entry && { ...entry };
  }
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function serve(options: RateLimitOptions, status = 200): Promise<string> {
  const app = express();
  app.get("/", rateLimit({ logger: { warn() {} }, ...options }), (req, res) => {
    res.status(req.headers["x-fail"] ? 500 : status).end("ok");
  });
  app.use(errorHandler({ logger: { error() {} } }));
  const server = await listen(app);
  closers.push(server.close);
  return server.url;
}

describe("expressRateLimitStore(a store written to express-rate-limit's Store interface)", () => {
  it("init once with windowMs; limit 2 → 200, 200, 429 with Retry-After; the refused request is given back", async () => {
    const store = new CountingStore();
    const url = await serve({
      limit: 2,
      windowMs: 30_000,
      algorithm: "fixed-window",
      store: expressRateLimitStore(store),
      key: () => "client",
    });
    const { statuses, last } = await inTurn(url, 3);
    expect(statuses).toEqual([200, 200, 429]);
    expect(Number(last.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(last.headers.get("ratelimit-policy")).toBe('"default";q=2;w=30');
    expect(last.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(store.calls).toEqual([
      "init 30000",
      "increment client",
      "increment client",
      "increment client",
      "decrement client",
    ]);
    expect(store.get("client")?.totalHits).toBe(2);
  });

  it("skipFailedRequests: the 500s are given back with decrement", async () => {
    const store = new CountingStore();
    const url = await serve({
      limit: 1,
      algorithm: "fixed-window",
      store: expressRateLimitStore(store),
      skipFailedRequests: true,
    });
    for (let i = 0; i < 3; i++) expect((await fetch(url, { headers: { "X-Fail": "1" } })).status).toBe(500);
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(429);
    expect(store.calls.filter((c) => c.startsWith("decrement"))).toHaveLength(4); // 3 failures + the refused one
  });

  it("cost 3 → three increments, remaining counts them", async () => {
    const store = new CountingStore();
    const url = await serve({
      limit: 5,
      algorithm: "fixed-window",
      store: expressRateLimitStore(store),
      cost: 3,
    });
    expect((await fetch(url)).headers.get("x-ratelimit-remaining")).toBe("2");
    expect((await fetch(url)).status).toBe(429);
    expect(store.calls.filter((c) => c.startsWith("increment"))).toHaveLength(6);
  });

  it.each([
    [
      "a store answering totalHits 0",
      (store: CountingStore) => {
        store.increment = () => ({ totalHits: 0, resetTime: undefined });
      },
    ],
    [
      // An Invalid Date would put NaN into RateLimit and Retry-After, which carry non-negative
      // integers (RFC 9110 §10.2.3 delay-seconds): a malformed answer, as totalHits 0 is.
      "a store answering resetTime: Invalid Date",
      (store: CountingStore) => {
        store.increment = () => ({ totalHits: 1, resetTime: new Date(Number.NaN) });
      },
    ],
    [
      "an async init that fails",
      (store: CountingStore) => {
        store.init = async () => {
          throw new Error("cannot load script");
        };
      },
    ],
  ])("%s → a store failure (failMode closed: 503), not a pass", async (_name, breakIt) => {
    const store = new CountingStore();
    breakIt(store);
    const url = await serve({
      limit: 1,
      algorithm: "fixed-window",
      store: expressRateLimitStore(store),
      failMode: "closed",
    });
    expect((await fetch(url)).status).toBe(503);
    expect(store.hits.size).toBe(0);
  });
});

describe("expressRateLimitStore: the store's init fails", () => {
  it("init throws → the limiter is not built: TypeError ERR_SVC_RATELIMIT_STORE, the store's error as cause", () => {
    const store = new CountingStore();
    const cause = new Error("no connection");
    store.init = () => {
      throw cause;
    };
    expect(() =>
      rateLimit({ limit: 1, algorithm: "fixed-window", store: expressRateLimitStore(store) }),
    ).toThrow(
      expect.objectContaining({
        name: "TypeError",
        code: "ERR_SVC_RATELIMIT_STORE",
        message:
          "rate limit: expressRateLimitStore: the store's init({ windowMs, limit }) threw: no connection",
        cause,
      }),
    );
  });

  it.each([
    ["open", 200, "requests pass unlimited (failMode open)"],
    ["closed", 503, "requests are answered 503 (failMode closed)"],
  ] as const)(
    "init rejects, failMode %s → logged once when it rejects, before any request; requests then answer %d",
    async (failMode, status, says) => {
      const store = new CountingStore();
      let rejectInit: (err: Error) => void = () => {};
      store.init = () =>
        new Promise<void>((_resolve, reject) => {
          rejectInit = reject;
        });
      const lines: { obj: { err?: Error }; msg: string }[] = [];
      let logged: () => void = () => {};
      const firstLine = new Promise<void>((resolve) => {
        logged = resolve;
      });
      const url = await serve({
        limit: 5,
        algorithm: "fixed-window",
        store: expressRateLimitStore(store),
        failMode,
        logger: {
          warn(obj: { err?: Error }, msg: string) {
            lines.push({ obj, msg });
            logged();
          },
        },
      });
      rejectInit(new Error("cannot load script"));
      await firstLine;
      expect(lines).toHaveLength(1);
      expect(lines[0]?.msg).toBe(
        `rate limit: the store failed to initialise; its decisions fail, so ${says}`,
      );
      expect(lines[0]?.obj.err?.message).toBe(
        "expressRateLimitStore: the store's init({ windowMs, limit }) rejected: cannot load script",
      );
      expect((await fetch(url)).status).toBe(status);
      expect(store.calls.filter((c) => c.startsWith("increment"))).toEqual([]);
    },
  );
});

describe("expressRateLimitStore: resetTime an Invalid Date", () => {
  it("failMode open → the request passes, and no header carries NaN (RFC 9110 §10.2.3)", async () => {
    const store = new CountingStore();
    store.increment = () => ({ totalHits: 1, resetTime: new Date("not a date") });
    const url = await serve({
      limit: 5,
      algorithm: "fixed-window",
      store: expressRateLimitStore(store),
      failMode: "open",
    });
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const values = [...res.headers.values()];
    expect(values.filter((v) => v.includes("NaN"))).toEqual([]);
  });
});

describe("expressRateLimitStore(express-rate-limit's MemoryStore)", () => {
  it("limit 2 → 200, 200, 429; skipFailedRequests gives a 500 back", async () => {
    const erl = new ErlMemoryStore();
    closers.push(async () => erl.shutdown());
    const url = await serve({
      limit: 2,
      windowMs: 60_000,
      algorithm: "fixed-window",
      store: expressRateLimitStore(erl),
      skipFailedRequests: true,
      key: () => "c",
    });
    expect((await fetch(url, { headers: { "X-Fail": "1" } })).status).toBe(500);
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(429);
    expect((await erl.get("c"))?.totalHits).toBe(2);
  });
});

describe("what an express-rate-limit store cannot do is refused at construction", () => {
  it.each([
    ["sliding-window", { algorithm: "sliding-window" }, "ERR_SVC_RATELIMIT_ALGORITHM"],
    ["the default algorithm", {}, "ERR_SVC_RATELIMIT_ALGORITHM"],
    ["gcra", { algorithm: "gcra" }, "ERR_SVC_RATELIMIT_ALGORITHM"],
  ] as const)("%s → TypeError %s", (_name, extra, code) => {
    const store = expressRateLimitStore(new CountingStore());
    expect(() => rateLimit({ limit: 1, store, ...extra })).toThrow(expect.objectContaining({ code }));
  });

  it("one express-rate-limit store wrapped twice → ERR_SVC_RATELIMIT_STORE (its counters would be shared)", () => {
    const store = new CountingStore();
    expressRateLimitStore(store);
    expect(() => expressRateLimitStore(store)).toThrow(
      expect.objectContaining({
        name: "TypeError",
        code: "ERR_SVC_RATELIMIT_STORE",
        message: expect.stringMatching(/already wrapped/),
      }),
    );
  });

  it("a second limiter on the same wrapped store with another windowMs → ERR_SVC_RATELIMIT_WINDOW_MS", () => {
    const store = expressRateLimitStore(new CountingStore());
    rateLimit({ limit: 1, windowMs: 60_000, algorithm: "fixed-window", store, prefix: "a:" });
    expect(() =>
      rateLimit({ limit: 1, windowMs: 1000, algorithm: "fixed-window", store, prefix: "b:" }),
    ).toThrow(
      expect.objectContaining({
        code: "ERR_SVC_RATELIMIT_WINDOW_MS",
        message: expect.stringMatching(/got 1000/),
      }),
    );
  });

  it.each([
    ["no decrement", { increment() {}, resetKey() {} }, "ERR_SVC_RATELIMIT_STORE_DECREMENT"],
    ["no increment", { decrement() {}, resetKey() {} }, "ERR_SVC_RATELIMIT_STORE_INCREMENT"],
    [
      "init not a function",
      { increment() {}, decrement() {}, resetKey() {}, init: 5 },
      "ERR_SVC_RATELIMIT_STORE_INIT",
    ],
    ["null", null, "ERR_SVC_RATELIMIT_STORE"],
  ] as const)("store with %s → %s", (_name, store, code) => {
    expect(() => expressRateLimitStore(store as unknown as ExpressRateLimitStore)).toThrow(
      expect.objectContaining({ name: "TypeError", code }),
    );
  });
});

// An express-rate-limit store can only add one hit per `increment` call, so a request of cost n
// is n calls (n round trips for rate-limit-redis). cost(req) may be the request's size against a
// byte quota, so n comes from the client: bounded per wrapped store (`maxCost`, default 100),
// and a request whose increments fail half-way is not left half counted.
describe("expressRateLimitStore: cost n is n increments, bounded and all or nothing", () => {
  /** A limiter whose cost is the request's X-Cost header (a size, say), route reached counted. */
  async function costly(
    store: ReturnType<typeof expressRateLimitStore>,
    extra: Partial<RateLimitOptions> = {},
  ) {
    const server = await limitedRoute({
      limit: 1_000_000,
      windowMs: 60_000,
      algorithm: "fixed-window",
      store,
      key: () => "client",
      cost: (req) => Number(req.headers["x-cost"] ?? 1),
      logger: { warn() {} },
      ...extra,
    });
    closers.push(server.close);
    const send = (cost: number) => fetch(server.url, { headers: { "X-Cost": String(cost) } });
    return { send, reached: server.reached, logged: server.logged };
  }

  const increments = (store: CountingStore) => store.calls.filter((c) => c.startsWith("increment")).length;

  it.each([
    ["failMode open", "open", 200],
    ["failMode closed", "closed", 503],
  ] as const)(
    "%s: the 3rd of 5 increments fails → the failMode's answer, and the 2 applied are taken back",
    async (_name, failMode, status) => {
      const store = new CountingStore();
      const increment = store.increment.bind(store);
      let calls = 0;
      store.increment = (key) => {
        if (++calls === 3) throw new Error("connection reset");
        return increment(key);
      };
      const s = await costly(expressRateLimitStore(store), { failMode });
      expect((await s.send(5)).status).toBe(status);
      expect(store.get("client")?.totalHits ?? 0).toBe(0);
      expect(store.calls.filter((c) => c.startsWith("decrement"))).toHaveLength(2);
      // The store answers again: the next request counts its own units only.
      const next = await s.send(5);
      expect(next.status).toBe(200);
      expect(next.headers.get("x-ratelimit-remaining")).toBe("999995");
      expect(store.get("client")?.totalHits).toBe(5);
    },
  );

  it("a failed increment whose take-back fails too → still the increment's failure (503), no unhandled rejection", async () => {
    const store = new CountingStore();
    const increment = store.increment.bind(store);
    let calls = 0;
    store.increment = (key) => {
      if (++calls === 2) throw new Error("connection reset");
      return increment(key);
    };
    store.decrement = async () => {
      throw new Error("still down");
    };
    const s = await costly(expressRateLimitStore(store), { failMode: "closed" });
    expect((await s.send(3)).status).toBe(503);
    const causes: string[] = [];
    for (let e: unknown = s.logged[0]; e instanceof Error; e = e.cause) causes.push(e.message);
    expect(causes.join(" <- ")).toMatch(/connection reset/);
  });

  it.each([
    ["failMode open", "open"],
    ["failMode closed", "closed"],
  ] as const)(
    "%s: cost 101 (over the default maxCost 100) → 500 before any increment, never a pass",
    async (_name, failMode) => {
      const store = new CountingStore();
      const s = await costly(expressRateLimitStore(store), { failMode });
      for (const cost of [101, 100_000]) {
        const res = await s.send(cost);
        expect(res.status).toBe(500);
        expect(res.headers.get("ratelimit")).toBeNull();
        expect(res.headers.get("retry-after")).toBeNull();
      }
      expect(increments(store)).toBe(0);
      expect(s.reached()).toBe(0);
      for (const err of s.logged) {
        const messages: string[] = [];
        for (let e: unknown = err; e instanceof Error; e = e.cause) messages.push(e.message);
        expect(messages.join(" <- ")).toMatch(/maxCost 100/);
      }
      // At the bound: 100 increments, counted exactly.
      const ok = await s.send(100);
      expect(ok.status).toBe(200);
      expect(ok.headers.get("x-ratelimit-remaining")).toBe("999900");
      expect(increments(store)).toBe(100);
      expect(s.reached()).toBe(1);
    },
  );

  it("maxCost 1000: cost 1000 → 1000 increments, 200; cost 1001 → 500", async () => {
    const store = new CountingStore();
    const s = await costly(expressRateLimitStore(store, { maxCost: 1000 }));
    const ok = await s.send(1000);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-ratelimit-remaining")).toBe("999000");
    expect((await s.send(1001)).status).toBe(500);
    expect(increments(store)).toBe(1000);
  });

  it("a refused request of cost n within maxCost: n increments then n decrements, nothing kept", async () => {
    const store = new CountingStore();
    const s = await costly(expressRateLimitStore(store), { limit: 50 });
    expect((await s.send(30)).status).toBe(200);
    const refused = await s.send(30);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("20");
    expect(store.get("client")?.totalHits).toBe(30);
  });

  it.each([
    [0, "ERR_SVC_RATELIMIT_MAX_COST"],
    [-1, "ERR_SVC_RATELIMIT_MAX_COST"],
    [1.5, "ERR_SVC_RATELIMIT_MAX_COST"],
    [Number.POSITIVE_INFINITY, "ERR_SVC_RATELIMIT_MAX_COST"],
    ["100", "ERR_SVC_RATELIMIT_MAX_COST"],
  ] as const)("maxCost %s → TypeError %s", (maxCost, code) => {
    expect(() => expressRateLimitStore(new CountingStore(), { maxCost: maxCost as number })).toThrow(
      expect.objectContaining({ name: "TypeError", code }),
    );
  });

  it("an unknown option (maxcost) → ERR_SVC_RATELIMIT_UNKNOWN_OPTION", () => {
    expect(() => expressRateLimitStore(new CountingStore(), { maxcost: 5 } as never)).toThrow(
      expect.objectContaining({ name: "TypeError", code: "ERR_SVC_RATELIMIT_UNKNOWN_OPTION" }),
    );
  });

  it.each([1, 100, Number.MAX_SAFE_INTEGER])("maxCost %d → accepted", (maxCost) => {
    expect(() => expressRateLimitStore(new CountingStore(), { maxCost })).not.toThrow();
  });
});

// The give-back of a refused request only keeps the store's count right: the request was counted
// past the limit, so it is refused whether or not the give-back works. Were its failure a store
// failure, failMode "open" would let a client past the limit whenever decrement fails.
describe("expressRateLimitStore: a refused request whose give-back fails", () => {
  it.each([
    ["failMode open, decrement rejects", "open", "async"],
    ["failMode open, decrement throws", "open", "sync"],
    ["failMode closed, decrement rejects", "closed", "async"],
    ["failMode closed, decrement throws", "closed", "sync"],
  ] as const)("%s → still 429 with Retry-After, the route not reached", async (_name, failMode, how) => {
    const store = new CountingStore();
    const decrement = store.decrement.bind(store);
    let down = false;
    store.decrement = (key: string): Promise<void> => {
      if (down) {
        if (how === "sync") throw new Error("connection reset");
        return Promise.reject(new Error("connection reset"));
      }
      return decrement(key);
    };
    const warned: unknown[] = [];
    const server = await limitedRoute({
      limit: 2,
      windowMs: 60_000,
      algorithm: "fixed-window",
      store: expressRateLimitStore(store),
      key: () => "client",
      cost: (req) => Number(req.headers["x-cost"] ?? 1),
      failMode,
      logger: { warn: (o: unknown) => warned.push(o) },
    });
    closers.push(server.close);

    const { statuses } = await inTurn(server.url, 2);
    expect(statuses).toEqual([200, 200]);
    down = true;
    for (const cost of [1, 2]) {
      const res = await fetch(server.url, { headers: { "X-Cost": String(cost) } });
      expect(res.status).toBe(429);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      // the store still holds the hits it could not give back: nothing remains
      expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(res.headers.get("ratelimit")).toMatch(/^"default";r=0;t=\d+$/);
    }
    expect(server.reached()).toBe(2);
    expect(warned).toEqual([]);
    // the store answers again: a refused request is given back, and the client stays limited
    down = false;
    expect((await fetch(server.url)).status).toBe(429);
    expect(store.get("client")?.totalHits).toBe(5);
  });

  it("a give-back that fails half-way → 429; remaining counts only what was given back", async () => {
    const store = new CountingStore();
    const decrement = store.decrement.bind(store);
    let calls = 0;
    store.decrement = (key: string): Promise<void> =>
      ++calls === 2 ? Promise.reject(new Error("connection reset")) : decrement(key);
    const url = await serve({
      limit: 10,
      algorithm: "fixed-window",
      store: expressRateLimitStore(store),
      key: () => "client",
      cost: (req) => Number(req.headers["x-cost"] ?? 1),
      failMode: "open",
    });
    expect((await fetch(url, { headers: { "X-Cost": "6" } })).status).toBe(200);
    // 12 counted, 1 given back before the 2nd decrement failed: the store holds 11 of 10
    const refused = await fetch(url, { headers: { "X-Cost": "6" } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(store.get("client")?.totalHits).toBe(11);
  });
});

// A fixed `cost` is known at construction, and so is the wrapped store's maxCost: a cost above it
// would fail every request with a 500, so the combination is refused when the middleware is built.
describe("expressRateLimitStore: a fixed cost above maxCost", () => {
  const base = { windowMs: 60_000, algorithm: "fixed-window" } as const;

  it.each([
    ["cost 101, default maxCost 100", 101, undefined, {}],
    ["cost 1001, maxCost 1000", 1001, 1000, {}],
    ["cost 101, per-request limit", 101, undefined, { limit: () => 10_000 }],
  ] as const)("%s → TypeError ERR_SVC_RATELIMIT_COST naming maxCost", (_name, cost, maxCost, extra) => {
    const store = new CountingStore();
    const wrapped = expressRateLimitStore(store, maxCost === undefined ? {} : { maxCost });
    expect(() => rateLimit({ limit: 10_000, ...base, store: wrapped, cost, ...extra })).toThrow(
      expect.objectContaining({
        name: "TypeError",
        code: "ERR_SVC_RATELIMIT_COST",
        message: expect.stringContaining(`maxCost ${maxCost ?? 100}`),
      }),
    );
    expect(store.calls.filter((c) => !c.startsWith("init"))).toEqual([]);
  });

  it("cost 101 with a limiter built on the wrapped store → TypeError ERR_SVC_RATELIMIT_COST", () => {
    const limiter = createRateLimiter({
      limit: 10_000,
      ...base,
      store: expressRateLimitStore(new CountingStore()),
    });
    expect(() => rateLimit({ limiter, cost: 101 })).toThrow(
      expect.objectContaining({ name: "TypeError", code: "ERR_SVC_RATELIMIT_COST" }),
    );
  });

  it("cost 100 (the bound), cost 0 and a cost function are accepted; 100 is counted over HTTP", async () => {
    const store = new CountingStore();
    const wrapped = expressRateLimitStore(store);
    const url = await serve({ limit: 250, ...base, store: wrapped, cost: 100, key: () => "c" });
    const { statuses, last } = await inTurn(url, 3);
    expect(statuses).toEqual([200, 200, 429]);
    expect(last.headers.get("x-ratelimit-remaining")).toBe("50");
    expect(store.get("c")?.totalHits).toBe(200);
    const other = expressRateLimitStore(new CountingStore());
    expect(() => rateLimit({ limit: 250, ...base, store: other, cost: 0 })).not.toThrow();
    const third = expressRateLimitStore(new CountingStore());
    expect(() => rateLimit({ limit: 250, ...base, store: third, cost: () => 101 })).not.toThrow();
  });
});
