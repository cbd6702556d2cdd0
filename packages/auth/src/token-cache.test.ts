import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { VerifiedTokenCache } from "./token-cache.js";

describe("VerifiedTokenCache", () => {
  it.each([
    ["a JWT", "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl"],
    ["an empty string", ""],
    ["non-ASCII text", "tökén-✓"],
  ])("keyOf(%s) is the base64url SHA-256 of its UTF-8 bytes, never the token", (_what, token) => {
    const key = VerifiedTokenCache.keyOf(token);
    expect(key).toBe(createHash("sha256").update(token, "utf8").digest("base64url"));
    expect(key).not.toContain(token || "\u0000");
  });

  it("an entry past its deadline is gone; the least recently used leaves when full", () => {
    const cache = new VerifiedTokenCache<string>(2, (value) => value.length);
    cache.set("a", "A", 100);
    cache.set("b", "B", 1000);
    expect(cache.get("a", 50)).toBe("A");
    cache.set("c", "C", 1000);
    expect(cache.get("b", 50)).toBeUndefined();
    expect(cache.get("a", 150)).toBeUndefined();
    expect(cache.get("c", 150)).toBe("C");
  });

  it("maxBytes 1000: two entries of 492 estimated bytes fit, a third evicts the oldest; one of 1092 is not kept and evicts nothing", () => {
    const cache = new VerifiedTokenCache<string>(10, (value) => value.length, 1000);
    cache.set("a", "A".repeat(300), 1000);
    cache.set("b", "B".repeat(300), 1000);
    expect(cache.bytes).toBe(984);
    cache.set("c", "C".repeat(300), 1000);
    expect([cache.get("a", 0), cache.size, cache.bytes]).toEqual([undefined, 2, 984]);
    cache.set("d", "D".repeat(900), 1000);
    expect([cache.get("d", 0), cache.size, cache.bytes]).toEqual([undefined, 2, 984]);
    cache.clear();
    expect(cache.bytes).toBe(0);
  });
});
