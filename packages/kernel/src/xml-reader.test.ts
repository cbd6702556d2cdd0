import { describe, expect, it } from "vitest";
import {
  UNBOUNDED_XML_RULES,
  type XmlEvents,
  XmlReadError,
  XmlReader,
  type XmlReaderOptions,
  type XmlReadRules,
} from "./xml-reader.js";

/** The events of one document, as a list: `<a` for a start tag, `>` for an end tag, `"text"`. */
function read(
  source: string,
  rules: Partial<XmlReadRules> = {},
  options: Partial<XmlReaderOptions> = {},
): string[] {
  const seen: string[] = [];
  const events: XmlEvents<boolean> = {
    open: (tag) => seen.push(`<${"uri" in tag && tag.uri ? `{${tag.uri}}${tag.local}` : tag.name}`),
    text: (text) => seen.push(JSON.stringify(text)),
    close: () => seen.push(">"),
  };
  const reader = new XmlReader({ namespaces: false, otherVersions: "refuse", ...options }, events);
  reader.rules = { ...UNBOUNDED_XML_RULES, ...rules };
  reader.write(source);
  reader.close();
  return seen;
}

function refusal(source: string, rules: Partial<XmlReadRules> = {}, options: Partial<XmlReaderOptions> = {}) {
  try {
    read(source, rules, options);
  } catch (err) {
    if (err instanceof XmlReadError) return { problem: err.problem, message: err.message, limit: err.limit };
    throw err;
  }
  throw new Error("read without a refusal");
}

describe("XmlReader: the rules every document is read by", () => {
  it.each([
    ['<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>', "dtd"],
    ["<!DOCTYPE a><a/>", "dtd"],
    ["<?pi data?><a/>", "pi"],
    ["<a><?pi data?></a>", "pi"],
    ['<?xml version="1.1"?><a/>', "version"],
    ["<a><b></a>", "malformed"],
    ["<a>&unknown;</a>", "malformed"],
    ["<a/><b/>", "malformed"],
    ["", "malformed"],
  ])("%j → %s", (source, problem) => {
    expect(refusal(source).problem).toBe(problem);
  });

  it("a malformed document: where it broke, the parser's words as the cause only", () => {
    try {
      read("<a>\n  <secret>");
      expect.unreachable();
    } catch (err) {
      const e = err as XmlReadError;
      expect(e.message).toBe("not well-formed XML (line 2, column 10)");
      expect(e.position).toEqual({ line: 2, column: 10, problem: "unclosed tag: secret" });
      expect((e.cause as Error).message).toBe("2:10: unclosed tag: secret");
      expect(e.message).not.toContain("secret");
    }
  });

  it("processing instructions skipped where the caller skips them", () => {
    expect(read("<?pi data?><a>1</a>", { instructions: "skip" })).toEqual(["<a", '"1"', ">"]);
  });

  it('<?xml version="1.1"?> read as 1.0 where the caller reads it so', () => {
    expect(read('<?xml version="1.1"?><a>1</a>', {}, { otherVersions: "read-as-1.0" })).toEqual([
      "<a",
      '"1"',
      ">",
    ]);
    // Read as 1.0, a reference to a C0 control (allowed in 1.1) is not well-formed.
    expect(refusal('<?xml version="1.1"?><a>&#1;</a>', {}, { otherVersions: "read-as-1.0" }).problem).toBe(
      "malformed",
    );
  });

  it.each([
    ["<a><b><c/></b></a>", { maxDepth: 2 }, "depth", 2],
    ["<a><b/><b/><b/></a>", { maxElements: 3 }, "elements", 3],
    ['<a x="1" y="2" z="3"/>', { maxAttributes: 2 }, "attributes", 2],
    ['<a xmlns:p="urn:p"><b xmlns:q="urn:q"/></a>', { maxNamespaces: 1 }, "namespaces", 1],
  ] as const)("%j under %j → %s", (source, rules, problem, limit) => {
    expect(refusal(source, rules)).toMatchObject({ problem, limit });
    expect(refusal(source, rules, { namespaces: true })).toMatchObject({ problem, limit });
  });

  it.each([
    ["<a><b><c/></b></a>", { maxDepth: 3 }],
    ["<a><b/><b/></a>", { maxElements: 3 }],
    ['<a x="1" y="2"/>', { maxAttributes: 2 }],
    // Declarations end with their element; `xmlns:xml` binds nothing new.
    [
      '<a><b xmlns:p="urn:p"/><b xmlns:q="urn:q" xmlns:xml="http://www.w3.org/XML/1998/namespace"/></a>',
      { maxNamespaces: 1 },
    ],
  ])("%j under %j is read", (source, rules) => {
    expect(() => read(source, rules)).not.toThrow();
    expect(() => read(source, rules, { namespaces: true })).not.toThrow();
  });

  it("namespace-aware: an undeclared prefix is malformed unless resolvePrefix knows it", () => {
    expect(read("<p:a/>")).toEqual(["<p:a", ">"]);
    expect(refusal("<p:a/>", {}, { namespaces: true }).problem).toBe("malformed");
    expect(
      read("<p:a/>", {}, { namespaces: true, resolvePrefix: (p) => (p === "p" ? "urn:p" : undefined) }),
    ).toEqual(["<{urn:p}a", ">"]);
  });

  it("within(): declarations around the document count; countSkipped(): held elements count", () => {
    const reader = new XmlReader(
      { namespaces: true, otherVersions: "read-as-1.0" },
      {
        open() {},
        text() {},
        close() {},
      },
    );
    reader.rules = { ...UNBOUNDED_XML_RULES, maxNamespaces: 2, maxElements: 3 };
    reader.within(2);
    expect(() => reader.write('<a xmlns:p="urn:p"/>')).toThrow(
      expect.objectContaining({ problem: "namespaces" }),
    );
    const second = new XmlReader(
      { namespaces: true, otherVersions: "read-as-1.0" },
      {
        open() {},
        text() {},
        close() {},
      },
    );
    second.rules = { ...UNBOUNDED_XML_RULES, maxElements: 3 };
    second.write("<a>");
    expect(() => second.countSkipped(3, 2)).toThrow(expect.objectContaining({ problem: "elements" }));
  });

  it("a reader closed on one document reads the next from a clean state", () => {
    const seen: string[] = [];
    const reader = new XmlReader(
      { namespaces: false, otherVersions: "refuse" },
      { open: (tag) => seen.push(tag.name), text() {}, close() {} },
    );
    reader.rules = { ...UNBOUNDED_XML_RULES, maxElements: 2 };
    reader.write("<a><b/></a>");
    reader.close();
    reader.rules = { ...UNBOUNDED_XML_RULES, maxElements: 2 };
    reader.write("<c><d/></c>");
    reader.close();
    expect(seen).toEqual(["a", "b", "c", "d"]);
  });

  it("an error a builder throws reaches the caller as it is", () => {
    const mine = new Error("mine");
    const reader = new XmlReader(
      { namespaces: false, otherVersions: "refuse" },
      {
        open() {
          throw mine;
        },
        text() {},
        close() {},
      },
    );
    expect(() => reader.write("<a/>")).toThrow(mine);
  });
});
