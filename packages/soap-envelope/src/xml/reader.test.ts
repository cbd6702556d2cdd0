import { describe, expect, it } from "vitest";
import { faultToXml, SoapFault } from "../envelope/fault.js";
import { parseXml, parseXmlString, resolveLimits, XmlError } from "./reader.js";

const limits = resolveLimits({ maxDepth: 8, maxAttributes: 4, maxElements: 50 });

/** An async stream of chunks that waits a turn between chunks, so two parses interleave. */
async function* chunks(parts: string[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) {
    await new Promise((resolve) => setImmediate(resolve));
    yield new TextEncoder().encode(part);
  }
}

describe("parser reuse (pooled saxes parsers)", () => {
  it("a parse that failed midway leaves nothing behind for the next document", async () => {
    const failures = [
      "<a><b></a>", // malformed
      "<!DOCTYPE a><a/>", // DTD
      `<a>${"<d>".repeat(9)}`, // depth limit
      '<a w="1" x="2" y="3" z="4" v="5"/>', // attribute limit
      `<a>${"<e/>".repeat(60)}</a>`, // element limit
      "<a><b>", // unexpected end
    ];
    for (const bad of failures) {
      await expect(parseXml(Buffer.from(bad), limits)).rejects.toBeInstanceOf(XmlError);
      const root = await parseXml(Buffer.from('<r xmlns="urn:r" k="v"><c>t</c></r>'), limits);
      expect(root).toMatchObject({
        namespace: "urn:r",
        localName: "r",
        attributes: { k: "v" },
        text: "",
        children: [{ localName: "c", namespace: "urn:r", text: "t", children: [] }],
      });
    }
  });
  it("maxNamespaces counts the declarations in scope, released when their element closes", async () => {
    const three = resolveLimits({ maxNamespaces: 3 });
    const nested = '<a xmlns:a="urn:1"><b xmlns:b="urn:2"><c xmlns:c="urn:3" xmlns:d="urn:4"/></b></a>';
    const siblings =
      '<r xmlns="urn:r"><a xmlns:a="urn:1" xmlns:b="urn:2"/><c xmlns:a="urn:1" xmlns:b="urn:2"/></r>';
    // The whole-string parser and the streaming one (saxes) refuse and accept the same documents.
    expect(() => parseXmlString(nested, three)).toThrow(/more than 3 namespace declarations in scope/);
    await expect(parseXml(chunks([nested]), three)).rejects.toThrow(/more than 3 namespace declarations/);
    expect(parseXmlString(siblings, three).children).toHaveLength(2);
    expect((await parseXml(chunks([siblings]), three)).children).toHaveLength(2);
  });
  it("limits are those of each parse, not of the parser's previous use", async () => {
    const deep = `<a>${"<d>".repeat(9)}${"</d>".repeat(9)}</a>`;
    await expect(parseXml(Buffer.from(deep), limits)).rejects.toThrow(/deeper than 8/);
    expect((await parseXml(Buffer.from(deep), resolveLimits())).localName).toBe("a");
    await expect(parseXml(Buffer.from(deep), limits)).rejects.toThrow(/deeper than 8/);
  });
  it("counts (elements, attributes) start from zero on every document", async () => {
    const doc = `<a>${"<e/>".repeat(40)}</a>`; // 41 elements: twice would pass 50
    for (let i = 0; i < 3; i++) expect((await parseXml(Buffer.from(doc), limits)).children).toHaveLength(40);
  });
  it("interleaved streamed documents each get their own parser and namespace scope", async () => {
    const one = parseXml(chunks(['<x:a xmlns:x="urn:one">', "<x:b>1</x:b>", "</x:a>"]), limits);
    const two = parseXml(chunks(['<x:a xmlns:x="urn:two">', "<x:b>2</x:b>", "<x:c/></x:a>"]), limits);
    const [a, b] = await Promise.all([one, two]);
    expect(a.namespace).toBe("urn:one");
    expect(a.children.map((c) => [c.namespace, c.text])).toEqual([["urn:one", "1"]]);
    expect(b.namespace).toBe("urn:two");
    expect(b.children.map((c) => [c.namespace, c.localName])).toEqual([
      ["urn:two", "b"],
      ["urn:two", "c"],
    ]);
  });
  it("a string parse after a failed streamed one", async () => {
    await expect(parseXml(chunks(["<a>", "<b>"]), limits)).rejects.toThrow(XmlError);
    expect(parseXmlString("<ok/>", limits).localName).toBe("ok");
  });
  it("decoders are reused cleanly: a split multi-byte character, a BOM, invalid UTF-8, then UTF-16", async () => {
    const euro = Buffer.from("<a>€</a>");
    // The three bytes of € split across chunks, left pending in the decoder's state.
    await expect(parseXml(chunks2([euro.subarray(0, 4)]), limits)).rejects.toThrow(XmlError);
    expect((await parseXml(Buffer.from("<b>x</b>"), limits)).text).toBe("x");
    expect((await parseXml(chunks2([euro.subarray(0, 4), euro.subarray(4)]), limits)).text).toBe("€");
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("<c>y</c>")]);
    expect((await parseXml(bom, limits)).text).toBe("y");
    expect((await parseXml(bom, limits)).text).toBe("y");
    await expect(
      parseXml(Buffer.from([0x3c, 0x61, 0x3e, 0xff, 0x3c, 0x2f, 0x61, 0x3e]), limits),
    ).rejects.toThrow(/not valid UTF-8/);
    expect((await parseXml(Buffer.from("<d>z</d>"), limits)).text).toBe("z");
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("<e>ü</e>", "utf16le")]);
    expect((await parseXml(utf16, limits)).text).toBe("ü");
    expect((await parseXml(Buffer.from("<f>ü</f>"), limits)).text).toBe("ü");
  });
});

async function* chunks2(parts: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield part;
}

describe("faults written with the shared escaper (escapeXml from @svc/errors)", () => {
  it.each([
    ["NUL and C0 controls", "a\u0000b\u0001c", "a\uFFFDb\uFFFDc"],
    ["lone surrogate", "x\uD800y", "x\uFFFDy"],
    ["U+FFFF", "x\uFFFFy", "x\uFFFDy"],
    ["CR LF tab", "one\r\ntwo\tthree", "one\r\ntwo\tthree"],
    ["markup", `</env:Text><evil a="1">&`, `</env:Text><evil a="1">&`],
  ])("Reason with %s → well-formed fault, text round-trips", (_name, reason, expected) => {
    const xml = faultToXml(new SoapFault({ code: "Sender", reason }));
    const doc = parseXmlString(xml, resolveLimits());
    const text = doc.children[0]?.children[0]?.children[1]?.children[0]?.text;
    expect(text).toBe(expected);
  });
});
