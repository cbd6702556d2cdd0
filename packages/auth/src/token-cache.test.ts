import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConnectionTokens, VerifiedTokenCache } from "./token-cache.js";

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

describe("ConnectionTokens", () => {
  it("answers a connection's last token only: the same characters, on that connection", () => {
    const tokens = new ConnectionTokens();
    const a = {};
    const b = {};
    tokens.remember(a, "header.payload.signature", "key-1");
    expect(tokens.keyOf(a, "header.payload.signature")).toBe("key-1");
    // One character off, at the end or the start, and a prefix: not the same token.
    expect(tokens.keyOf(a, "header.payload.signaturf")).toBeUndefined();
    expect(tokens.keyOf(a, "Header.payload.signature")).toBeUndefined();
    expect(tokens.keyOf(a, "header.payload.signatur")).toBeUndefined();
    expect(tokens.keyOf(b, "header.payload.signature")).toBeUndefined();
    // Characters whose low byte is the remembered one's ("Ł" is U+0141, "A" 0x41), or that take
    // more bytes than characters: not the same token either.
    tokens.remember(a, "A.b.c", "key-2");
    expect(tokens.keyOf(a, "A.b.c")).toBe("key-2");
    expect(tokens.keyOf(a, "\u0141.b.c")).toBeUndefined();
    expect(tokens.keyOf(a, "\ud800.b.c")).toBeUndefined();
    expect(tokens.keyOf(a, "\u00c1.b")).toBeUndefined();
  });

  it("one token per connection: 2,000 tokens on one connection leave the last one only", () => {
    const tokens = new ConnectionTokens();
    const connection = {};
    for (let i = 0; i < 2000; i++) tokens.remember(connection, `token-${i}`, `key-${i}`);
    expect(tokens.keyOf(connection, "token-1999")).toBe("key-1999");
    for (let i = 0; i < 1999; i++) expect(tokens.keyOf(connection, `token-${i}`)).toBeUndefined();
  });
});
