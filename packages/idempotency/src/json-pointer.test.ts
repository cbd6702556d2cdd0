import { describe, expect, it } from "vitest";
import { NOTHING, parseJsonPointer, selectJsonPointer } from "./json-pointer.js";

const doc = { foo: ["bar", "baz"], "": 0, "a/b": 1, "m~n": 8, nul: null, "01": "x" };

describe("parseJsonPointer (RFC 6901 §3)", () => {
  it.each([
    ["", []],
    ["/foo", ["foo"]],
    ["/foo/0", ["foo", "0"]],
    ["/", [""]],
    ["/a~1b", ["a/b"]],
    ["/m~0n", ["m~n"]],
    ["/~01", ["~1"]],
  ])("%j → %j", (pointer, tokens) => {
    expect(parseJsonPointer(pointer)).toEqual(tokens);
  });
  it.each(["foo", "#/foo", "/a~", "/a~2", "/~x"])("%j → refused", (pointer) => {
    expect(parseJsonPointer(pointer)).toBeUndefined();
  });
});

describe("selectJsonPointer (RFC 6901 §4, §5 examples)", () => {
  it.each([
    ["", doc],
    ["/foo", ["bar", "baz"]],
    ["/foo/0", "bar"],
    ["/", 0],
    ["/a~1b", 1],
    ["/m~0n", 8],
    ["/nul", null],
    ["/01", "x"],
  ])("%j → %j", (pointer, value) => {
    expect(selectJsonPointer(doc, parseJsonPointer(pointer) as string[])).toEqual(value);
  });
  it.each(["/missing", "/foo/2", "/foo/-", "/foo/01", "/foo/0/x", "/nul/x", "/constructor", "/__proto__"])(
    "%j → nothing",
    (pointer) => {
      expect(selectJsonPointer(doc, parseJsonPointer(pointer) as string[])).toBe(NOTHING);
    },
  );
});
