import { errorHandler } from "@svc/errors";
import { listen } from "@svc/test-utils";
import express from "express";
import { MemoryStore as ErlMemoryStore } from "express-rate-limit";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ExpressRateLimitHits,
  type ExpressRateLimitStore,
  expressRateLimitStore,
  type RateLimitOptions,
  rateLimit,
} from "../src/index.js";
import { inTurn } from "./requests.js";

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
