import { describe, expect, it } from "vitest";
import { mergeVary, varyStepCount } from "./vary.js";

// The Vary steps appendVary and mergeVary remember are bounded (256), whatever names they see.
describe("mergeVary's remembered steps", () => {
  it("2,000 distinct field names (eight times the bound) → each appended as if nothing were held, at most 256 steps held", () => {
    for (let i = 0; i < 2_000; i++) {
      expect(mergeVary("Accept", [`X-Field-${i}`, "accept"])).toBe(`Accept, X-Field-${i}`);
      expect(varyStepCount()).toBeLessThanOrEqual(256);
    }
  });

  it("a value longer than 1024 characters → the right answer, no step held", () => {
    const long = Array.from({ length: 200 }, (_, i) => `X-Long-${i}`).join(", ");
    const before = varyStepCount();
    expect(mergeVary(long, ["Accept"])).toBe(`${long}, Accept`);
    expect(mergeVary(long, ["x-long-7"])).toBeUndefined();
    expect(varyStepCount()).toBeLessThanOrEqual(before);
  });

  it("two values asked in turn → each gets its own answer", () => {
    for (let i = 0; i < 50; i++) {
      expect(mergeVary("Origin", ["Accept"])).toBe("Origin, Accept");
      expect(mergeVary("Accept", ["Accept"])).toBeUndefined();
      expect(mergeVary("Origin, *", ["Accept"])).toBeUndefined();
      expect(mergeVary("Origin", ["Accept", "*"])).toBe("*");
    }
  });
});
