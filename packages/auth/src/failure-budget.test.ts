import { describe, expect, it } from "vitest";
import { MemoryFailureBudget } from "./failure-budget.js";

/** A budget of 3 failures per 3 s (a unit back every second) on a clock the test moves. */
function budget(maxKeys = 100) {
  const clock = { now: 1_000_000 };
  return { budget: new MemoryFailureBudget(3, 3000, maxKeys, () => clock.now), clock };
}

describe("MemoryFailureBudget (the default failure budget)", () => {
  it("3 failures → allowed, remaining 2, 1, 0; the 4th → denied, retry after 1000 ms, nothing spent", () => {
    const { budget: b } = budget();
    expect([1, 2, 3].map(() => b.consume("k", 1))).toEqual([
      { allowed: true, remaining: 2, limit: 3, retryAfterMs: 0 },
      { allowed: true, remaining: 1, limit: 3, retryAfterMs: 0 },
      { allowed: true, remaining: 0, limit: 3, retryAfterMs: 0 },
    ]);
    expect(b.consume("k", 1)).toEqual({ allowed: false, remaining: 0, limit: 3, retryAfterMs: 1000 });
    expect(b.consume("k", 0)).toMatchObject({ remaining: 0 });
  });

  it("units leak back: 1.5 s after 3 failures → 1 left; 3 s → whole again, and the key is gone", () => {
    const { budget: b, clock } = budget();
    for (let i = 0; i < 3; i++) b.consume("k", 1);
    clock.now += 1500;
    expect(b.consume("k", 0)).toMatchObject({ allowed: true, remaining: 1 });
    clock.now += 1500;
    expect(b.consume("k", 0)).toEqual({ allowed: true, remaining: 3, limit: 3, retryAfterMs: 0 });
    expect(b.size).toBe(0);
  });

  it("cost 0 on a key never counted → remaining = limit, and no key is kept", () => {
    const { budget: b } = budget();
    expect(b.consume("never", 0)).toEqual({ allowed: true, remaining: 3, limit: 3, retryAfterMs: 0 });
    expect(b.size).toBe(0);
  });

  it("maxKeys 2: a third key counted → the least recently counted one leaves (its failures forgotten)", () => {
    const { budget: b } = budget(2);
    b.consume("a", 1);
    b.consume("b", 1);
    b.consume("a", 1); // a is now the most recent
    b.consume("c", 1);
    expect(b.size).toBe(2);
    expect(b.consume("b", 0).remaining).toBe(3);
    expect(b.consume("a", 0).remaining).toBe(1);
  });

  it("10,000 keys at most whatever is counted: 25,000 distinct keys → size 10,000", () => {
    const b = new MemoryFailureBudget(10, 900_000, 10_000);
    for (let i = 0; i < 25_000; i++) b.consume(`u:${i}`, 1);
    expect(b.size).toBe(10_000);
  });
});
