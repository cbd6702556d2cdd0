import { describe, expect, it } from "vitest";
import { canonicalJson, requestFingerprint, resolveFingerprint } from "./fingerprint.js";

describe("canonicalJson", () => {
  it("sorts keys at every depth and drops whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}',
    );
  });
  it("drops undefined members as JSON.stringify does", () => {
    expect(canonicalJson({ a: undefined, b: [undefined] })).toBe('{"b":[null]}');
  });
  it("writes what JSON.stringify writes for the key-sorted value: index names first, toJSON, Buffers, null for undefined in arrays", () => {
    const value = {
      b: [1, "two", null, true, undefined, () => 1, -0, 1e21, Number.NaN],
      10: "ten",
      2: "two",
      a: { when: new Date(0), bytes: Buffer.from("hi"), skip: undefined, é: "\u2028" },
      "": { z: {}, y: [] },
    };
    // The recursive form: toJSON first, then every object's keys sorted.
    const sorted = (v: unknown): unknown => {
      if (v === null || typeof v !== "object") return v;
      if ("toJSON" in v && typeof v.toJSON === "function") return sorted(v.toJSON());
      if (Array.isArray(v)) return v.map(sorted);
      const keys = Object.keys(v).sort();
      return Object.fromEntries(keys.map((k) => [k, sorted((v as Record<string, unknown>)[k])]));
    };
    expect(canonicalJson(value)).toBe(JSON.stringify(sorted(value)));
    expect(canonicalJson(undefined)).toBe("null");
    expect(canonicalJson('a"b')).toBe('"a\\"b"');
  });
  it("nesting deeper than the call stack (200,000 arrays) → written, not a RangeError", () => {
    const depth = 200_000;
    const value = JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);
    expect(canonicalJson(value)).toBe(`${"[".repeat(depth)}${"]".repeat(depth)}`);
    const objects = JSON.parse(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`);
    expect(canonicalJson(objects)).toHaveLength(depth * 6 + 1);
  });
  it('keeps a "__proto__" member (JSON.parse makes it an own property)', () => {
    expect(canonicalJson(JSON.parse('{"b":1,"__proto__":{"x":1}}'))).toBe('{"__proto__":{"x":1},"b":1}');
  });
  it("a shared (not circular) object is written each time it appears", () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: [shared, shared] })).toBe('{"a":{"x":1},"b":[{"x":1},{"x":1}]}');
  });
  it("refuses circular structures", () => {
    const o: Record<string, unknown> = {};
    o.self = o;
    expect(() => canonicalJson(o)).toThrow(TypeError);
    const list: unknown[] = [1];
    list.push({ back: list });
    expect(() => canonicalJson(list)).toThrow(TypeError);
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
  // Records in a shared store carry the fingerprint of the first request: a fingerprint that
  // changed between versions would answer every retry across an upgrade with a 422.
  it.each([
    [undefined, "da724aa5b3dd7ce9a4de9ccadcd05585f337592f923117cf60b3860619ee3a89"],
    ["naïve", "e6081754aee26377284d523a72c57c38a7a34c6d9ee70a647e75c534553919c6"],
    [new Uint8Array([0xff, 0, 0x80]), "0aeb64bae58b703806015508b3595d4ba7f4174b1d5fa5dcf9991c496b6764d3"],
    [{ b: 1, a: "€" }, "8e8f8b38753f783225c0793be67a0710792d583b32b69e27751f0aec36af567f"],
  ])("POST /orders/é with body %j → %s", (body, hex) => {
    expect(fp(body, "POST", "/orders/é")).toBe(hex);
  });
});

describe("the fingerprint option", () => {
  const request = (body: unknown, fields = {}) => ({ method: "POST", target: "/pay", fields, body });
  it("pointers: a member left out may differ; a member selected may not", () => {
    const { of } = resolveFingerprint(["/amount", "/to"]);
    const first = of(request({ amount: 5, to: "a", sentAt: "10:00" }));
    expect(of(request({ to: "a", amount: 5, sentAt: "10:01" }))).toBe(first);
    expect(of(request({ amount: 6, to: "a", sentAt: "10:00" }))).not.toBe(first);
  });
  it("pointers: a member absent differs from a member null, and from no body", () => {
    const { of } = resolveFingerprint(["/note"]);
    const absent = of(request({}));
    expect(of(request({ note: null }))).not.toBe(absent);
    expect(of(request({ other: 1 }))).toBe(absent);
    expect(of(request(undefined))).toBe(absent);
  });
  it("pointers: the method and the target still count", () => {
    const { of } = resolveFingerprint(["/amount"]);
    expect(of({ ...request({ amount: 5 }), target: "/pay?x=1" })).not.toBe(of(request({ amount: 5 })));
  });
  it("pointers over a raw body → the default fingerprint of those bytes", () => {
    const raw = new TextEncoder().encode('{"amount":5}');
    expect(resolveFingerprint(["/amount"]).of(request(raw))).toBe(
      resolveFingerprint(undefined).of(request(raw)),
    );
  });
  it("no option → requestFingerprint, as before", () => {
    expect(resolveFingerprint(undefined).of(request({ a: 1 }))).toBe(
      requestFingerprint({ method: "POST", url: "/pay", body: { a: 1 } }),
    );
  });
  it("a function: only what it answers counts; a string and its bytes hash alike", () => {
    const { of } = resolveFingerprint((r) => String(r.fields["x-account"]));
    expect(of(request({ a: 1 }, { "x-account": "7" }))).toBe(of(request({ a: 2 }, { "x-account": "7" })));
    expect(of(request({ a: 1 }, { "x-account": "8" }))).not.toBe(of(request({ a: 1 }, { "x-account": "7" })));
    const bytes = resolveFingerprint(() => new TextEncoder().encode("7"));
    expect(bytes.of(request({}))).toBe(resolveFingerprint(() => "7").of(request({})));
  });
  it("a function answering neither a string nor bytes → TypeError", () => {
    expect(() => resolveFingerprint((() => 7) as never).of(request({}))).toThrow(TypeError);
  });
});
