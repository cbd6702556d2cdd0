import { describe, expect, it } from "vitest";
import { canonicalJson, requestFingerprint } from "./fingerprint.js";

describe("canonicalJson", () => {
  it("sorts keys at every depth and drops whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}',
    );
  });
  it("drops undefined members as JSON.stringify does", () => {
    expect(canonicalJson({ a: undefined, b: [undefined] })).toBe('{"b":[null]}');
  });
  it("refuses circular structures", () => {
    const o: Record<string, unknown> = {};
    o.self = o;
    expect(() => canonicalJson(o)).toThrow(TypeError);
  });
});

describe("requestFingerprint", () => {
  const fp = (body: unknown, method = "POST", url = "/orders") => requestFingerprint({ method, url, body });

  it("key order does not matter", () => {
    expect(fp(JSON.parse('{"a":1,"b":[1,2]}'))).toBe(fp(JSON.parse('{ "b" : [1, 2], "a" : 1 }')));
  });
  it("values, method, path and query all matter", () => {
    const base = fp({ a: 1 });
    expect(fp({ a: 2 })).not.toBe(base);
    expect(fp({ a: 1 }, "PATCH")).not.toBe(base);
    expect(fp({ a: 1 }, "POST", "/payments")).not.toBe(base);
    expect(fp({ a: 1 }, "POST", "/orders?x=1")).not.toBe(base);
    expect(fp([1, 2])).not.toBe(fp([2, 1]));
  });
  it("raw bodies are hashed byte for byte; string and Buffer agree", () => {
    expect(fp(Buffer.from("a=1"))).toBe(fp("a=1"));
    expect(fp(Buffer.from("a=1"))).not.toBe(fp(Buffer.from("a=2")));
    expect(fp(Buffer.from("{}"))).not.toBe(fp({}));
  });
  it("no body differs from an empty body", () => {
    expect(fp(undefined)).not.toBe(fp(""));
    expect(fp(undefined)).toMatch(/^[0-9a-f]{64}$/);
  });
});
