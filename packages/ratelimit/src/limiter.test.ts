import { describe, expect, it } from "vitest";
import { createRateLimiter } from "./limiter.js";
import { MemoryStore } from "./memory-store.js";
import type { Algorithm } from "./types.js";

function clock(start = 1_000_000) {
  let now = start;
  return {
    now: () => now,
    set: (t: number) => {
      now = t;
    },
    advance: (ms: number) => {
      now += ms;
    },
  };
}

async function spend(limiter: { consume(k: string, c?: number): Promise<{ allowed: boolean }> }, n: number) {
  let allowed = 0;
  for (let i = 0; i < n; i++) if ((await limiter.consume("k")).allowed) allowed++;
  return allowed;
}

describe("fixed window", () => {
  it("limit 3 in a 1000 ms window: 3 allowed, the 4th denied until the window ends", async () => {
    const c = clock(10_000);
    const limiter = createRateLimiter({ algorithm: "fixed-window", limit: 3, windowMs: 1000, now: c.now });
    expect(await spend(limiter, 3)).toBe(3);
    c.set(10_999);
    const denied = await limiter.consume("k");
    expect(denied).toMatchObject({ allowed: false, remaining: 0, resetAt: 11_000, retryAfterMs: 1 });
    c.set(11_000);
    expect(await limiter.consume("k")).toMatchObject({ allowed: true, remaining: 2, resetAt: 12_000 });
  });

  it("a denied request spends nothing: remaining stays 0, never negative", async () => {
    const c = clock(0);
    const limiter = createRateLimiter({ algorithm: "fixed-window", limit: 2, windowMs: 1000, now: c.now });
    await spend(limiter, 10);
    expect(await limiter.consume("k")).toMatchObject({ allowed: false, remaining: 0 });
  });

  it("cost 3 with 2 left → denied, cost 2 → allowed", async () => {
    const c = clock(0);
    const limiter = createRateLimiter({ algorithm: "fixed-window", limit: 5, windowMs: 1000, now: c.now });
    await limiter.consume("k", 3);
    expect((await limiter.consume("k", 3)).allowed).toBe(false);
    expect(await limiter.consume("k", 2)).toMatchObject({ allowed: true, remaining: 0 });
  });
});

describe("keys longer than 256 characters", () => {
  it("consume, refund and reset reach one bucket per long key; a digest-looking short key is its own", async () => {
    const store = new MemoryStore();
    const limiter = createRateLimiter({ limit: 1, store, prefix: "p:" });
    const long = "k".repeat(5000);
    const first = await limiter.consume(long);
    expect(first.allowed).toBe(true);
    expect((await limiter.consume(`${long}x`)).allowed).toBe(true);
    expect((await limiter.consume(long)).allowed).toBe(false);
    await limiter.refund(long, 1, first);
    expect((await limiter.consume(long)).allowed).toBe(true);
    await limiter.reset(long);
    expect((await limiter.consume(long)).allowed).toBe(true);
    expect((await limiter.consume("sha256:abc")).allowed).toBe(true);
    expect((await limiter.consume("sha256:abc")).allowed).toBe(false);
    expect(store.size).toBe(3);
  });
});

describe("sliding window", () => {
  it("previous window full, 25% into the next: 75% of it still counts, so 1 of 4 is free", async () => {
    const c = clock(0);
    const limiter = createRateLimiter({ algorithm: "sliding-window", limit: 4, windowMs: 1000, now: c.now });
    expect(await spend(limiter, 4)).toBe(4);
    c.set(1250); // estimate = 4 × 0.75 = 3
    expect(await limiter.consume("k")).toMatchObject({ allowed: true, remaining: 0 });
    const denied = await limiter.consume("k");
    expect(denied.allowed).toBe(false);
    // estimate 4×(1-e)+1 + 1 <= 4 ⇔ e >= 0.5: at 1500, 250 ms from now
    expect(denied.retryAfterMs).toBe(250);
    c.set(1499);
    expect((await limiter.consume("k")).allowed).toBe(false);
    c.set(1500);
    expect((await limiter.consume("k")).allowed).toBe(true);
  });

  it("idle for two windows → the full limit again", async () => {
    const c = clock(0);
    const limiter = createRateLimiter({ algorithm: "sliding-window", limit: 3, windowMs: 1000, now: c.now });
    await spend(limiter, 3);
    c.set(2000);
    expect(await spend(limiter, 5)).toBe(3);
  });

  it("current window full → retry after it rolls and decays enough", async () => {
    const c = clock(0);
    const limiter = createRateLimiter({ algorithm: "sliding-window", limit: 4, windowMs: 1000, now: c.now });
    await spend(limiter, 4);
    const denied = await limiter.consume("k");
    // next window: 4×(1-e)+1 <= 4 ⇔ e >= 0.25 → at 1250
    expect(denied).toMatchObject({ allowed: false, retryAfterMs: 1250, resetAt: 2000 });
    c.set(1249);
    expect((await limiter.consume("k")).allowed).toBe(false);
    c.set(1250);
    expect((await limiter.consume("k")).allowed).toBe(true);
  });
});

describe("gcra", () => {
  it("limit 10 per 1000 ms, burst 3: 3 at once, then one every 100 ms", async () => {
    const c = clock(5000);
    const limiter = createRateLimiter({ algorithm: "gcra", limit: 10, windowMs: 1000, burst: 3, now: c.now });
    expect(await spend(limiter, 3)).toBe(3);
    const denied = await limiter.consume("k");
    expect(denied).toMatchObject({ allowed: false, limit: 3, remaining: 0, retryAfterMs: 100 });
    c.advance(99);
    expect((await limiter.consume("k")).allowed).toBe(false);
    c.advance(1);
    expect(await limiter.consume("k")).toMatchObject({ allowed: true, remaining: 0 });
    c.advance(300);
    expect(await limiter.consume("k")).toMatchObject({ allowed: true, remaining: 2, resetAt: 5500 });
  });

  it("burst defaults to limit: 5 at once, the 6th waits one interval", async () => {
    const c = clock(0);
    const limiter = createRateLimiter({ algorithm: "gcra", limit: 5, windowMs: 1000, now: c.now });
    expect(await spend(limiter, 6)).toBe(5);
    expect((await limiter.consume("k")).retryAfterMs).toBe(200);
  });

  it("cost 0 reports without spending", async () => {
    const c = clock(0);
    const limiter = createRateLimiter({ algorithm: "gcra", limit: 5, windowMs: 1000, now: c.now });
    await limiter.consume("k", 2);
    expect(await limiter.consume("k", 0)).toMatchObject({ allowed: true, remaining: 3 });
    expect(await limiter.consume("k", 0)).toMatchObject({ allowed: true, remaining: 3 });
  });
});

describe("each algorithm keeps keys apart and honours reset()", () => {
  for (const algorithm of ["fixed-window", "sliding-window", "gcra"] as Algorithm[]) {
    it(`${algorithm}: key a limited, key b untouched, reset(a) → a allowed`, async () => {
      const c = clock(0);
      const limiter = createRateLimiter({ algorithm, limit: 2, windowMs: 1000, now: c.now });
      await limiter.consume("a");
      await limiter.consume("a");
      expect((await limiter.consume("a")).allowed).toBe(false);
      expect((await limiter.consume("b")).allowed).toBe(true);
      await limiter.reset("a");
      expect((await limiter.consume("a")).allowed).toBe(true);
    });
  }
});

describe("a cost larger than the quota", () => {
  for (const [algorithm, cost] of [
    ["fixed-window", 6],
    ["sliding-window", 6],
    ["gcra", 6],
  ] as [Algorithm, number][]) {
    it(`${algorithm}, limit 5, cost ${cost} → denied, retryAfterMs Infinity, nothing spent`, async () => {
      const c = clock(10_000);
      const limiter = createRateLimiter({ algorithm, limit: 5, windowMs: 1000, now: c.now });
      await limiter.consume("k", 2);
      const d = await limiter.consume("k", cost);
      expect(d).toMatchObject({ allowed: false, limit: 5, remaining: 3 });
      expect(d.retryAfterMs).toBe(Number.POSITIVE_INFINITY);
      expect(await limiter.consume("k", 3)).toMatchObject({ allowed: true, remaining: 0 });
    });
  }

  it("gcra burst 2 < limit 5: cost 3 never fits the bucket → retryAfterMs Infinity", async () => {
    const limiter = createRateLimiter({
      algorithm: "gcra",
      limit: 5,
      burst: 2,
      windowMs: 1000,
      now: () => 0,
    });
    expect((await limiter.consume("k", 3)).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
    expect(await limiter.consume("k", 2)).toMatchObject({ allowed: true });
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, "2"])("cost %s → rejected", async (cost) => {
    const limiter = createRateLimiter({ limit: 5 });
    await expect(limiter.consume("k", cost as number)).rejects.toThrow(/cost must be a non-negative integer/);
  });
});

describe("decide", () => {
  it("MemoryStore → the decision itself, no promise; cost -1 → throws", () => {
    const limiter = createRateLimiter({ limit: 2, now: () => 0 });
    const d = limiter.decide("k");
    expect("then" in d).toBe(false);
    expect(d).toMatchObject({ allowed: true, remaining: 1 });
    expect(() => limiter.decide("k", -1)).toThrow(/cost/);
  });
});

describe("misconfiguration is rejected at construction", () => {
  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])("limit %s → TypeError", (limit) => {
    expect(() => createRateLimiter({ limit })).toThrow(/limit must be a positive integer/);
  });
  it("unknown algorithm → TypeError naming the valid ones", () => {
    expect(() => createRateLimiter({ limit: 1, algorithm: "leaky" as Algorithm })).toThrow(
      'algorithm must be one of "fixed-window", "sliding-window", "gcra", got "leaky"',
    );
  });
  it("windowMs 0 → TypeError", () => {
    expect(() => createRateLimiter({ limit: 1, windowMs: 0 })).toThrow(/windowMs/);
  });
  it("burst with fixed-window → TypeError", () => {
    expect(() => createRateLimiter({ limit: 5, burst: 2, algorithm: "fixed-window" })).toThrow(/burst/);
  });
  it("one store, two limiters, same prefix → TypeError; distinct prefixes → fine", () => {
    const store = new MemoryStore();
    createRateLimiter({ limit: 1, store });
    expect(() => createRateLimiter({ limit: 2, store })).toThrow(/already used by another limiter/);
    expect(() => createRateLimiter({ limit: 2, store, prefix: "search:" })).not.toThrow();
  });
  it("cost -1 or 1.5 at consume → rejected", async () => {
    const limiter = createRateLimiter({ limit: 1 });
    await expect(limiter.consume("k", -1)).rejects.toThrow(/cost/);
    await expect(limiter.consume("k", 1.5)).rejects.toThrow(/cost/);
  });
});
