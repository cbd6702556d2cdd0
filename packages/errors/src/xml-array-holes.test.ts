import { listen } from "@svc/test-utils";
import { SaxesParser } from "saxes";
import { afterEach, describe, expect, it } from "vitest";
import { errorHandler } from "./express.js";
import { HttpError } from "./index.js";

// RFC 9457 Appendix B maps the JSON object to XML. JSON.stringify writes an empty slot of an array
// as null (ECMA-262 SerializeJSONArray reads every index up to length); the XML forms used to
// leave it out (Array.prototype.map skips holes), so `[1, , 3]` read as two items in XML, three
// in JSON, and the items after the hole moved up a place.

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

async function serve(extensions: Record<string, unknown>): Promise<string> {
  const handle = errorHandler({ logger: { error() {} } });
  const server = await listen((req, res) =>
    handle(HttpError.unprocessable("Bad slots", { extensions }), req, res, () => res.destroy()),
  );
  closers.push(server.close);
  return server.url;
}

/** The `<i>` items under `<list>` of a well-formed document: their text, or null when xsi:nil. */
function listItems(xml: string, list: string): (string | null)[] {
  const items: (string | null)[] = [];
  const stack: string[] = [];
  const parser = new SaxesParser({ xmlns: true });
  parser.on("opentag", (tag) => {
    stack.push(tag.local ?? tag.name);
    if (stack.at(-2) === list && tag.local === "i") {
      const nil = tag.attributes["xsi:nil"];
      const nilValue = typeof nil === "string" ? nil : nil?.value;
      if (nilValue === "true") {
        expect((nil as { uri?: string }).uri).toBe("http://www.w3.org/2001/XMLSchema-instance");
      }
      items.push(nilValue === "true" ? null : "");
    }
    if (tag.isSelfClosing) stack.pop();
  });
  parser.on("text", (t) => {
    if (stack.at(-2) === list && stack.at(-1) === "i" && items.length > 0) items[items.length - 1] += t;
  });
  parser.on("closetag", (tag) => {
    if (!tag.isSelfClosing) stack.pop();
  });
  parser.write(xml).close();
  return items;
}

describe("empty array slots in an extension member: null in JSON, nil items in XML", () => {
  /** An array of `length` whose only own indices are those of `items`: the rest are holes. */
  const sparse = (length: number, items: Record<number, unknown>) => Object.assign(new Array(length), items);
  it.each([
    ["[1, , 3]", { list: sparse(3, { 0: 1, 2: 3 }) }, "list", ["1", null, "3"]],
    ["new Array(2)", { list: new Array(2) }, "list", [null, null]],
    [
      "a hole in a nested array",
      { outer: { list: sparse(3, { 0: "a", 2: "c" }) } },
      "list",
      ["a", null, "c"],
    ],
    ["a trailing hole", { list: Object.assign(["a"], { length: 2 }) }, "list", ["a", null]],
  ])("%s → the same items in JSON and in both XML forms", async (_, extensions, list, expected) => {
    const url = await serve(extensions as Record<string, unknown>);
    const json = (await (await fetch(url)).json()) as Record<string, unknown>;
    const fromJson = JSON.stringify(json).match(new RegExp(`"${list}":\\[([^\\]]*)\\]`))?.[1];
    expect(fromJson).toBe(
      expected.map((v) => (v === null ? "null" : /^\d+$/.test(v) ? v : `"${v}"`)).join(","),
    );
    for (const accept of ["application/xml", "application/problem+xml"]) {
      const res = await fetch(url, { headers: { Accept: accept } });
      expect(res.status).toBe(422);
      expect(listItems(await res.text(), list)).toEqual(expected);
    }
  });

  it("an array without holes (and an explicit undefined, JSON's null) is unchanged", async () => {
    const url = await serve({ list: ["a", undefined, ""] });
    const json = (await (await fetch(url)).json()) as Record<string, unknown>;
    expect(json.list).toEqual(["a", null, ""]);
    const xml = await (await fetch(url, { headers: { Accept: "application/xml" } })).text();
    expect(listItems(xml, "list")).toEqual(["a", null, ""]);
  });
});
