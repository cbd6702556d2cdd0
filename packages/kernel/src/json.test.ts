import { describe, expect, it } from "vitest";
import { stringifyJson } from "./json.js";

describe("stringifyJson", () => {
  it("{ id: 2^63 − 1 as BigInt } → the exact digits as a JSON number", () => {
    const text = stringifyJson({ id: 9223372036854775807n, n: [-12345678901234567890n, 1n] });
    expect(text).toBe('{"id":9223372036854775807,"n":[-12345678901234567890,1]}');
  });

  it("data without a BigInt → the same text as JSON.stringify", () => {
    const data = { a: 1.5, b: 'x\u0000"y', c: [null, true], d: { toJSON: () => "z" } };
    expect(stringifyJson(data)).toBe(JSON.stringify(data));
  });

  it("a string that looks like a number next to a BigInt stays a string", () => {
    expect(stringifyJson({ s: "123", t: "bigint-00:1", b: 2n })).toBe('{"s":"123","t":"bigint-00:1","b":2}');
  });

  it("a BigInt returned by toJSON, and a top-level BigInt", () => {
    expect(stringifyJson({ v: { toJSON: () => 5n } })).toBe('{"v":5}');
    expect(stringifyJson(18446744073709551616n)).toBe("18446744073709551616");
  });

  it("undefined → null", () => {
    expect(stringifyJson(undefined)).toBe("null");
  });

  it("a circular structure still throws the TypeError of JSON.stringify", () => {
    const a: Record<string, unknown> = { big: 1n };
    a.self = a;
    expect(() => stringifyJson(a)).toThrow(TypeError);
  });
});
