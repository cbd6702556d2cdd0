import { describe, expect, it } from "vitest";
import { hal } from "../src/index.js";

describe("HalResource relation names and relation bookkeeping", () => {
  it("refuses a relation name holding any character /\\s/ matches, and only those", () => {
    const refused: number[] = [];
    const expected: number[] = [];
    const resource = hal({});
    for (let code = 0; code <= 0xffff; code++) {
      const char = String.fromCharCode(code);
      if (/\s/.test(char)) expected.push(code);
      try {
        resource.link(`a${char}b`, "/x", { array: true });
      } catch {
        refused.push(code);
      }
    }
    expect(refused).toEqual(expected);
  });

  it("many relations keep the order they were added in, each one still single or array", () => {
    const rels = Array.from({ length: 40 }, (_, i) => `rel-${i}`);
    const resource = hal({ id: 1 });
    for (const rel of rels) resource.link(rel, `/${rel}`);
    resource.link("list", ["/a"]).link("list", "/b");
    expect(Object.keys(resource.toJSON()._links ?? {})).toEqual([...rels, "list"]);
    expect(resource.links("rel-33")).toEqual([{ href: "/rel-33" }]);
    expect(resource.links("list")).toEqual([{ href: "/a" }, { href: "/b" }]);
    expect(() => resource.link("rel-39", "/again")).toThrow(/relation rel-39 already has a link/);
    for (let i = 0; i < 20; i++) resource.embed(`e-${i}`, { i });
    expect(() => resource.embed("e-19", { i: 0 })).toThrow(/embedded relation e-19 is single/);
    expect(Object.keys(resource.toJSON()._embedded ?? {})).toHaveLength(20);
  });

  it("links() of a name never added, or of no string, is undefined", () => {
    const resource = hal({}).link("7", "/seven");
    expect(resource.links("toString")).toBeUndefined();
    expect(resource.links(7 as never)).toBeUndefined();
    expect(resource.links("7")).toEqual([{ href: "/seven" }]);
  });

  it("each toJSON() renders fresh link arrays: changing one document leaves the next intact", () => {
    const resource = hal({ id: 1 }).link("item", ["/a", "/b"]);
    const first = resource.toJSON();
    (first._links as Record<string, unknown[]>).item?.pop();
    expect(resource.toJSON()._links?.item).toEqual([{ href: "/a" }, { href: "/b" }]);
  });
});
