import { describe, expect, it } from "vitest";
import { MemoryStore, StoreFullError } from "./memory-store.js";
import type { RateLimitPolicy } from "./types.js";

const fixed5: RateLimitPolicy = { algorithm: "fixed-window", limit: 5, windowMs: 1000, burst: 5 };

describe("MemoryStore capacity", () => {
  it("maxKeys 10, 1000 distinct keys → never more than 10 held", () => {
    const store = new MemoryStore({ maxKeys: 10 });
    for (let i = 0; i < 1000; i++) store.consume(`k${i}`, 1, fixed5, 0);
    expect(store.size).toBe(10);
  });

  it("limited key stays limited while 100 other keys churn through a 10-key store (20 of 20 must not pass)", () => {
    const store = new MemoryStore({ maxKeys: 10 });
    let passed = 0;
    for (let round = 0; round < 20; round++) {
      if (store.consume("attacker", 1, fixed5, 100).allowed) passed++;
      for (let i = 0; i < 5; i++) store.consume(`other${round}-${i}`, 1, fixed5, 100);
    }
    expect(passed).toBe(5);
  });

  it("full store: an expired key is dropped before a live one with quota left", () => {
    const store = new MemoryStore({ maxKeys: 2, evictionScan: 2 });
    store.consume("old", 1, fixed5, 0); // window [0, 1000)
    store.consume("live", 1, { ...fixed5, windowMs: 10_000 }, 1500); // window [0, 10000)
    // "old" is the coldest and expired at 1500: it goes, "live" keeps its count
    store.consume("new", 1, fixed5, 1500);
    expect(store.size).toBe(2);
    const live = store.consume("live", 0, { ...fixed5, windowMs: 10_000 }, 1500);
    expect(live.remaining).toBe(4);
  });

  it("full store, coldest key live but expired one behind it → the expired one goes", () => {
    const long: RateLimitPolicy = { ...fixed5, windowMs: 100_000 };
    const store = new MemoryStore({ maxKeys: 2 });
    store.consume("live", 1, long, 0); // coldest, live until 100000
    store.consume("short", 1, fixed5, 10); // expires at 1000
    store.consume("new", 1, fixed5, 2000);
    expect(store.consume("live", 0, long, 2000).remaining).toBe(4);
  });

  it("full of limited keys → StoreFullError, nothing evicted", () => {
    const store = new MemoryStore({ maxKeys: 3 });
    for (const k of ["a", "b", "c"]) for (let i = 0; i < 5; i++) store.consume(k, 1, fixed5, 0);
    expect(() => store.consume("d", 1, fixed5, 10)).toThrow(StoreFullError);
    expect(store.consume("a", 1, fixed5, 10).allowed).toBe(false);
    // once their window is over, their state has expired and new keys get in
    expect(store.consume("d", 1, fixed5, 1000).allowed).toBe(true);
  });

  it("gcra keys: limited ones survive eviction, ones with tokens left go", () => {
    const gcra: RateLimitPolicy = { algorithm: "gcra", limit: 2, windowMs: 1000, burst: 2 };
    const store = new MemoryStore({ maxKeys: 2 });
    store.consume("limited", 2, gcra, 0);
    store.consume("spare", 1, gcra, 0);
    store.consume("new", 1, gcra, 1);
    expect(store.consume("limited", 1, gcra, 1).allowed).toBe(false);
  });

  it("sliding keys: a key limited through its previous window's weight is not evicted", () => {
    const sliding: RateLimitPolicy = { algorithm: "sliding-window", limit: 4, windowMs: 1000, burst: 4 };
    const store = new MemoryStore({ maxKeys: 2 });
    store.consume("heavy", 4, sliding, 900); // previous window full
    store.consume("light", 1, sliding, 950);
    store.consume("new", 1, sliding, 1100); // heavy still ~3.6 of 4 at 1100: protected
    expect(store.consume("heavy", 1, sliding, 1100).allowed).toBe(false);
  });

  it("grows past its initial arrays and keeps every key's count", () => {
    const store = new MemoryStore({ maxKeys: 5000 });
    for (let i = 0; i < 5000; i++) store.consume(`k${i}`, 2, fixed5, 0);
    for (let i = 0; i < 5000; i += 499) expect(store.consume(`k${i}`, 0, fixed5, 0).remaining).toBe(3);
  });

  it("clear() forgets everything", () => {
    const store = new MemoryStore();
    store.consume("a", 5, fixed5, 0);
    store.clear();
    expect(store.size).toBe(0);
    expect(store.consume("a", 1, fixed5, 0).remaining).toBe(4);
  });

  it.each([0, -5, 2.5])("maxKeys %s → TypeError", (maxKeys) => {
    expect(() => new MemoryStore({ maxKeys })).toThrow(TypeError);
  });
});

describe("MemoryStore refund (skipSuccessfulRequests / skipFailedRequests)", () => {
  const policy = (algorithm: RateLimitPolicy["algorithm"]): RateLimitPolicy => ({
    algorithm,
    limit: 2,
    windowMs: 1000,
    burst: 2,
  });

  it.each(["fixed-window", "sliding-window", "gcra"] as const)(
    "%s: spend 2, refund 1 → one more allowed",
    (algorithm) => {
      const store = new MemoryStore();
      const p = policy(algorithm);
      store.consume("k", 1, p, 100);
      const second = store.consume("k", 1, p, 100);
      expect(store.consume("k", 1, p, 100).allowed).toBe(false);
      store.refund("k", 1, p, second);
      expect(store.consume("k", 1, p, 100).allowed).toBe(true);
      expect(store.consume("k", 1, p, 100).allowed).toBe(false);
    },
  );

  it("fixed-window: a refund after the window ended gives nothing to the new window", () => {
    const store = new MemoryStore();
    const p = policy("fixed-window");
    const old = store.consume("k", 1, p, 100);
    store.consume("k", 2, p, 1100); // new window, full
    store.refund("k", 1, p, old);
    expect(store.consume("k", 1, p, 1100).allowed).toBe(false);
  });

  it("sliding-window: a refund after the window rolled lowers the previous window's weight", () => {
    const store = new MemoryStore();
    const p = policy("sliding-window");
    const first = store.consume("k", 2, p, 900);
    // 1000 ms: previous window full (2 × 100% weight) → denied
    expect(store.consume("k", 1, p, 1000).allowed).toBe(false);
    store.refund("k", 2, p, first);
    expect(store.consume("k", 2, p, 1000).allowed).toBe(true);
  });

  it("a denied decision or an unknown key → nothing given back", () => {
    const store = new MemoryStore();
    const p = policy("fixed-window");
    store.consume("k", 2, p, 100);
    const denied = store.consume("k", 1, p, 100);
    store.refund("k", 1, p, denied);
    store.refund("other", 1, p, { ...denied, allowed: true });
    expect(store.consume("k", 1, p, 100).allowed).toBe(false);
    expect(store.size).toBe(1);
  });
});
