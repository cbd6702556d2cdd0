import { posix } from "node:path";
import { describe, expect, it } from "vitest";
import * as path from "./posix-path.js";

// The documents' names are resolved as node:path's posix functions resolve paths from `/`.
const pairs: [string, string][] = [
  ["/a/b", "c.xsd"],
  ["/a/b", "../c.xsd"],
  ["/a/b", "../../../c.xsd"],
  ["/a/b", "./c/./d/../e.xsd"],
  ["/", "a//b.xsd"],
  ["/a", "/b/c.xsd"],
  ["/a/b/", ".."],
  ["/", ""],
];

describe("posix-path: node:path's posix results on strings", () => {
  it.each(pairs)("resolve(%j, %j)", (from, to) => {
    expect(path.resolve(from, to)).toBe(posix.resolve(from, to));
  });
  it.each(pairs)("relative(%j, resolve(%j))", (from, to) => {
    const target = posix.resolve(from, to);
    expect(path.relative(from, target)).toBe(posix.relative(from, target));
  });
  it.each(["/a/b/c.xsd", "/a", "/", "a/b", "a", "../a/b.xsd", "a/./b/../c.xsd", "..", "../..", "a/../.."])(
    "dirname, normalize of %j",
    (p) => {
      expect(path.dirname(p)).toBe(posix.dirname(posix.normalize(p)));
      expect(path.normalize(p)).toBe(posix.normalize(p).replace(/(.)\/$/, "$1"));
    },
  );
  it.each([
    ["a", "b.xsd"],
    ["", "b.xsd"],
    ["a/b", "../c.xsd"],
    ["a", "../../c.xsd"],
  ])("join(%j, %j)", (a, b) => {
    expect(path.join(a, b)).toBe(posix.join(a, b));
  });
});
