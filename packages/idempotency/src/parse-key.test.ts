import { describe, expect, it } from "vitest";
import { parseIdempotencyKey } from "./parse-key.js";

describe("parseIdempotencyKey", () => {
  it.each([
    ['"8e03978e-40d5-43e8-bc93-6894a57f9324"', "8e03978e-40d5-43e8-bc93-6894a57f9324"],
    ["8e03978e-40d5-43e8-bc93-6894a57f9324", "8e03978e-40d5-43e8-bc93-6894a57f9324"],
    ['  "abc"  ', "abc"],
    ['"with space"', "with space"],
    ['"esc\\"aped"', 'esc"aped'],
    ['"abc";v=1', "abc"],
    ["token*with/odd:chars", "token*with/odd:chars"],
    [`"${"x".repeat(255)}"`, "x".repeat(255)],
  ])("%s → valid key", (header, key) => {
    expect(parseIdempotencyKey(header)).toEqual({ kind: "valid", key });
  });

  it.each([
    ['""', "empty sf-string"],
    ["", "empty"],
    ["   ", "only spaces"],
    ['"unterminated', "unterminated string"],
    ['"a", "b"', "a list of two"],
    ["a b", "a space in a bare key"],
    ["a,b", "a comma in a bare key"],
    ['"caf\u00e9"', "non-ASCII in a string"],
    ["caf\u00e9", "non-ASCII bare"],
    [`"${"x".repeat(256)}"`, "256 characters quoted"],
    ["x".repeat(256), "256 characters bare"],
    ['"tab\there"', "a control character"],
  ])("%s (%s) → invalid", (header) => {
    expect(parseIdempotencyKey(header).kind).toBe("invalid");
  });

  it("no header → absent", () => {
    expect(parseIdempotencyKey(undefined)).toEqual({ kind: "absent" });
  });

  it("two field lines → invalid", () => {
    expect(parseIdempotencyKey(['"a"', '"b"']).kind).toBe("invalid");
    expect(parseIdempotencyKey(['"a"'])).toEqual({ kind: "valid", key: "a" });
  });
});
