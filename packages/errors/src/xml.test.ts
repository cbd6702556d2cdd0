import { SaxesParser } from "saxes";
import { describe, expect, it } from "vitest";
import { escapeXml } from "./index.js";

describe("escapeXml", () => {
  it.each([
    ["plain text", "plain text"],
    ["", ""],
    ["a & b", "a &amp; b"],
    ["<tag>", "&lt;tag&gt;"],
    [`say "hi"`, "say &quot;hi&quot;"],
    ["it's", "it&apos;s"],
    ["&amp;", "&amp;amp;"],
    ["]]>", "]]&gt;"],
    ["tab\there", "tab&#9;here"],
    ["line\nfeed", "line&#10;feed"],
    ["carriage\rreturn", "carriage&#13;return"],
    ["é ü 中 \u{1F600}", "é ü 中 \u{1F600}"],
    ["\uD7FF\uE000\uFFFD", "\uD7FF\uE000\uFFFD"],
    // XML 1.0 §2.2: not a Char, cannot be written even as a reference → U+FFFD
    ["a\u0000b", "a\uFFFDb"],
    ["\u0001\u0008\u000B\u000C\u001F", "\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD"],
    ["x\uFFFEy\uFFFFz", "x\uFFFDy\uFFFDz"],
    ["lone high \uD800 end", "lone high \uFFFD end"],
    ["lone low \uDC00 end", "lone low \uFFFD end"],
    ["reversed pair \uDC00\uD800", "reversed pair \uFFFD\uFFFD"],
    ["<\u0000&", "&lt;\uFFFD&amp;"],
  ])("%j → %j", (input, expected) => {
    expect(escapeXml(input)).toBe(expected);
  });

  it("DEL and C1 controls (allowed in XML 1.0) pass through", () => {
    expect(escapeXml("\u007F\u0085\u009F")).toBe("\u007F\u0085\u009F");
  });

  it("every BMP character (and a surrogate pair) as element text and as attribute value → well-formed, round-trips", () => {
    let all = "\u{1F600}";
    for (let c = 0; c < 0x10000; c++) if (c < 0xd800 || c > 0xdfff) all += String.fromCharCode(c);
    const escaped = escapeXml(all);
    const doc = `<r a="${escaped}" b='${escaped}'>${escaped}</r>`;
    // saxes checks XML 1.0 well-formedness, character ranges included, and applies §2.11/§3.3.3.
    const parser = new SaxesParser();
    const attributes: Record<string, string> = {};
    let text = "";
    parser.on("opentag", (tag) => Object.assign(attributes, tag.attributes));
    parser.on("text", (t) => {
      text += t;
    });
    parser.write(doc).close();
    const expected = all.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "\uFFFD");
    // Compared as booleans: a failure diff of 64K characters helps nobody.
    expect(text === expected).toBe(true);
    expect(attributes.a === expected).toBe(true);
    expect(attributes.b === expected).toBe(true);
    expect(escaped.length).toBeGreaterThan(all.length);
  });
});
