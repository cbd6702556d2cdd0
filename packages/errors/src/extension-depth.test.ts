import { SaxesParser } from "saxes";
import { describe, expect, it } from "vitest";
import { ACCEPTS, useErrorServer } from "../test/error-server.js";
import { HttpError, MAX_EXTENSION_DEPTH } from "./index.js";

// RFC 9457 Appendix B: the XML forms carry the same problem as the JSON ones. An extension member
// nested deeper than XML's old bound (100) made the XML forms a 500 while the JSON forms sent it
// whole: the status followed Accept. Both now cut at the same depth, MAX_EXTENSION_DEPTH arrays
// and objects, the value below it written "…"; a cycle is still no JSON and a 500 in every format.

const serve = useErrorServer();

/** `levels` objects (`{ a: … }`) or arrays (`[…]`) nested, innermost holding `"leaf"`. */
function nested(levels: number, kind: "object" | "array" | "mixed"): unknown {
  let value: unknown = "leaf";
  for (let i = 0; i < levels; i++) {
    const array = kind === "array" || (kind === "mixed" && i % 2 === 0);
    value = array ? [value] : { a: value };
  }
  return value;
}

/** From the JSON member: how many arrays/objects lead to the innermost value, and that value. */
function jsonDepth(value: unknown): [number, unknown] {
  let depth = 0;
  let at = value;
  while (typeof at === "object" && at !== null) {
    depth++;
    at = Array.isArray(at) ? at[0] : (at as { a: unknown }).a;
  }
  return [depth, at];
}

/** From the XML: how many elements below `<deep>` lead to the innermost text, and that text. */
function xmlDepth(xml: string): [number, string] {
  const stack: string[] = [];
  let deepest = 0;
  let text = "";
  const parser = new SaxesParser({ xmlns: true });
  parser.on("opentag", (tag) => {
    stack.push(tag.local ?? tag.name);
    const below = stack.length - 1 - stack.indexOf("deep");
    if (stack.includes("deep") && below > deepest) deepest = below;
    if (tag.isSelfClosing) stack.pop();
  });
  parser.on("text", (t) => {
    if (stack.includes("deep")) text = t;
  });
  parser.on("closetag", (tag) => {
    if (!tag.isSelfClosing) stack.pop();
  });
  parser.write(xml).close();
  // `<deep>` is the outermost container and the innermost element holds the text, not a container.
  return [deepest, text];
}

describe("deeply nested extension members: the same cut in every format", () => {
  it("MAX_EXTENSION_DEPTH is 32", () => {
    expect(MAX_EXTENSION_DEPTH).toBe(32);
  });

  it.each([
    [150, "object", 32, "…"],
    [150, "array", 32, "…"],
    [150, "mixed", 32, "…"],
    [101, "object", 32, "…"],
    [40, "array", 32, "…"],
    [33, "object", 32, "…"],
    [32, "object", 32, "leaf"],
    [32, "mixed", 32, "leaf"],
    [5, "array", 5, "leaf"],
  ] as const)(
    "%i levels of %s → 422 everywhere, %i levels sent, then %j",
    async (levels, kind, sent, leaf) => {
      const url = await serve(() =>
        HttpError.unprocessable("Too deep", { extensions: { deep: nested(levels, kind) } }),
      );
      for (const accept of ACCEPTS) {
        const res = await fetch(url, { headers: { Accept: accept } });
        const body = await res.text();
        expect([accept, res.status]).toEqual([accept, 422]);
        if (accept.endsWith("json")) expect(jsonDepth(JSON.parse(body).deep)).toEqual([sent, leaf]);
        else expect(xmlDepth(body)).toEqual([sent, leaf]);
      }
    },
  );

  it("a cycle → a 500 in every format, logged", async () => {
    const cycle: Record<string, unknown> = { name: "loop" };
    cycle.self = { again: [cycle] };
    const url = await serve(() => HttpError.conflict("taken", { extensions: { cycle } }));
    for (const accept of ACCEPTS) {
      const res = await fetch(url, { headers: { Accept: accept } });
      expect([accept, res.status]).toEqual([accept, 500]);
      expect(await res.text()).not.toContain("loop");
    }
  });

  it("the same object twice, side by side (no cycle) → sent twice", async () => {
    const shared = { id: 7 };
    const url = await serve(() => HttpError.conflict("taken", { extensions: { pair: [shared, shared] } }));
    const json = (await (await fetch(url)).json()) as { pair: unknown };
    expect(json.pair).toEqual([{ id: 7 }, { id: 7 }]);
    const xml = await (await fetch(url, { headers: { Accept: "application/xml" } })).text();
    expect(xml).toContain("<pair><i><id>7</id></i><i><id>7</id></i></pair>");
  });
});

describe("values JSON writes otherwise than String() does: the same in XML", () => {
  it("NaN, Infinity, new Number(5), new String('s') → null, null, 5, s in JSON and in XML", async () => {
    const extensions = { a: Number.NaN, b: [Number.POSITIVE_INFINITY], c: new Number(5), d: new String("s") };
    const url = await serve(() => HttpError.conflict("taken", { extensions }));
    expect(await (await fetch(url)).json()).toMatchObject({ a: null, b: [null], c: 5, d: "s" });
    const xml = await (await fetch(url, { headers: { Accept: "application/xml" } })).text();
    expect(xml).toContain('<a xsi:nil="true"/><b><i xsi:nil="true"/></b><c>5</c><d>s</d>');
  });
});
