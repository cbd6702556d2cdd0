import { describe, expect, it } from "vitest";
import { envelopeCheckpoint } from "../envelope/envelope.js";
import { type ParsedElement, parseXml, readXml, resolveLimits, type XmlElement, XmlError } from "./reader.js";
import { MarkupScanner } from "./skip.js";

const ENV = "http://www.w3.org/2003/05/soap-envelope";

/** Where a skip of the text in `pieces` ends: the offset of its end tag's `/`, elements, deepest. */
function skipEnd(pieces: readonly string[]) {
  const scanner = new MarkupScanner(3);
  scanner.skip();
  let offset = 0;
  let elements = 0;
  for (const piece of pieces) {
    const end = scanner.scan(piece, 0, piece.length);
    elements += scanner.elements;
    scanner.elements = 0;
    if (!scanner.skipping) return { end: offset + end, elements, deepest: scanner.deepest };
    offset += piece.length;
  }
  return { end: -1, elements, deepest: scanner.deepest };
}

/** Every way to cut `s` in two, and `s` one character at a time. */
function cuts(s: string): string[][] {
  const out: string[][] = [[s], [...s]];
  for (let i = 1; i < s.length; i++) out.push([s.slice(0, i), s.slice(i)]);
  return out;
}

describe("MarkupScanner: where a skipped element's content ends, read in any pieces", () => {
  it.each([
    ["text alone", "a > b", 0, 3],
    ["an empty content", "", 0, 3],
    ["nested elements", "<a><b/><c>x</c></a>", 3, 5],
    ["60 levels", `${"<a>".repeat(60)}${"</a>".repeat(60)}`, 60, 63],
    ["an end tag in a quoted attribute value", `<x a="</h:b>" b='>'/>`, 1, 4],
    ["a `/` before `>` inside a value is no empty-element tag", `<x a="/">y</x>`, 1, 4],
    ["an end tag in a comment", "<!-- </h:b> --->", 0, 3],
    ["an empty comment", "<!---->", 0, 3],
    ["an end tag in a CDATA section", "<![CDATA[</h:b>]]]>", 0, 3],
    ["an end tag in a processing instruction", "<?pi </h:b>??>", 0, 3],
    ["white space in the end tags", "<a>x</a >", 1, 4],
  ])("%s", (_name, content, elements, deepest) => {
    const s = `${content}</h:b>`;
    for (const pieces of cuts(s)) {
      expect(skipEnd(pieces), JSON.stringify(pieces)).toEqual({
        end: content.length + 1,
        elements,
        deepest,
      });
    }
  });

  it("content that never reaches its end tag: the scan is still skipping", () => {
    expect(skipEnd(["<a></h:b>"]).end).toBe(-1);
  });

  it("without a skip, it stops after each start tag at the pause depth", () => {
    const s = `<e><h><b1>x</b1><b2/><b3 a=">"><c>y</c></b3></h></e>`;
    const scanner = new MarkupScanner(0, 3);
    const stops: number[] = [];
    let at = 0;
    while (at < s.length) {
      at = scanner.scan(s, at, s.length);
      if (at < s.length) stops.push(at);
    }
    const after = (tag: string) => s.indexOf(tag) + tag.length;
    expect(stops).toEqual([after("<b1>"), after("<b2/>"), after(`<b3 a=">">`)]);
  });
});

const limits = resolveLimits({ maxElements: 1000, maxDepth: 64 });
/** Blocks named Credentials are processed; any other's content is held. */
const checkpoint = envelopeCheckpoint(limits, true, undefined, (b) => b.localName === "Credentials");
const content = `<x:a xmlns:x="urn:x&amp;&quot;y"><d>one</d><p:e>two<!-- c --></p:e> tail</x:a>`;
const message = (block: string) =>
  `<env:Envelope xmlns:env="${ENV}" xmlns:p="urn:p" xmlns="urn:default"><env:Header>` +
  `<c:Credentials xmlns:c="urn:c"><c:user>ada</c:user></c:Credentials>${block}` +
  `</env:Header><env:Body><p:op><p:n>1</p:n></p:op></env:Body></env:Envelope>`;
const document = message(`<h:b xmlns:h="urn:h" h:n="1">${content}</h:b>`);

/** An element as a hook sees it (no scope objects, which the held content makes anew). */
function view(e: XmlElement): unknown {
  return {
    namespace: e.namespace,
    localName: e.localName,
    attributes: e.attributes,
    text: e.text,
    children: e.children.map(view),
  };
}

function block(root: ParsedElement, index: number): ParsedElement {
  return root.children[0]?.children[index] as ParsedElement;
}

/** The text in one string, in one-character pieces (saxes), and with a comment first (saxes on the whole text). */
const sources: [string, (s: string) => string | AsyncIterable<string>][] = [
  ["one string (the fast parser)", (s) => s],
  [
    "one character at a time (saxes, read ahead)",
    (s) =>
      (async function* () {
        yield* s;
      })(),
  ],
  ["one string with a comment first (saxes)", (s) => `<!-- c -->${s}`],
];

describe("readXml with envelopeCheckpoint: a block nobody processes is held, read when read", () => {
  it.each(sources)("%s", async (_name, source) => {
    const whole = await parseXml(document, limits);
    const parse = await readXml(source(document), limits, undefined, undefined, checkpoint);
    const held = block(parse.root, 1);
    // Its start tag is built, its content not; the processed block is built whole.
    expect(held.attributes).toEqual({ "{urn:h}n": "1" });
    expect(Object.getOwnPropertyDescriptor(held, "children")?.get).toBeTypeOf("function");
    expect(Object.getOwnPropertyDescriptor(block(parse.root, 0), "children")?.get).toBeUndefined();
    // Read, it is what a whole parse builds (namespaces from every ancestor, references read).
    expect(view(held)).toEqual(view(block(whole, 1)));
    expect(held.mixed).toBe(block(whole, 1).mixed);
    expect(Object.getOwnPropertyDescriptor(held, "children")?.get).toBeUndefined();
    expect(view((parse.rest as () => ParsedElement)())).toEqual(view(whole));
  });

  it.each(sources)("%s: content not well-formed → rest() and a read throw XmlError", async (_n, source) => {
    const text = message(`<h:b xmlns:h="urn:h">${"<a>".repeat(30)}<x></y>${"</a>".repeat(30)}</h:b>`);
    const parse = await readXml(source(text), limits, undefined, undefined, checkpoint);
    const held = block(parse.root, 1);
    expect(() => held.children).toThrow(XmlError);
    expect(() => held.text).toThrow(/not well-formed/);
    expect(parse.rest).toThrow(/not well-formed/);
  });

  it.each(sources)('%s: a namespace URI with & and " in scope', async (_name, source) => {
    const text = message(`<h:b xmlns:h="urn:h"><q:e/></h:b>`).replace(
      "<env:Header>",
      '<env:Header xmlns:q="urn:q&amp;&quot;&lt;z">',
    );
    const parse = await readXml(source(text), limits, undefined, undefined, checkpoint);
    expect(block(parse.root, 1).children[0]?.namespace).toBe('urn:q&"<z');
  });

  it.each(sources)("%s: its declarations count with those around it", async (_name, source) => {
    // Four bindings in scope at h:b (env, p, the default, h), a fifth in its content.
    const four = resolveLimits({ ...limits, maxNamespaces: 4 });
    const narrow = envelopeCheckpoint(four, true, undefined, (b) => b.localName === "Credentials");
    const text =
      `<env:Envelope xmlns:env="${ENV}" xmlns:p="urn:p" xmlns="urn:default"><env:Header>` +
      `<p:Credentials>ada</p:Credentials><h:b xmlns:h="urn:h"><x:a xmlns:x="urn:x"/></h:b>` +
      "</env:Header><env:Body><p:op/></env:Body></env:Envelope>";
    const parse = await readXml(source(text), four, undefined, undefined, narrow);
    expect(parse.rest).toThrow("The message has more than 4 namespace declarations in scope");
  });

  it.each(sources)("%s: text alone is built", async (_name, source) => {
    const parse = await readXml(
      source(message(`<h:b xmlns:h="urn:h">id-1</h:b>`)),
      limits,
      undefined,
      undefined,
      checkpoint,
    );
    const held = block(parse.root, 1);
    expect(Object.getOwnPropertyDescriptor(held, "text")?.value).toBe("id-1");
  });

  it.each(sources)("%s: its elements count against limits.maxElements", async (_name, source) => {
    const text = message(`<h:b xmlns:h="urn:h">${"<a/>".repeat(1000)}</h:b>`);
    await expect(readXml(source(text), limits, undefined, undefined, checkpoint)).rejects.toThrow(
      "The message has more than 1000 elements",
    );
  });

  it.each(sources)("%s: and their depth against limits.maxDepth", async (_name, source) => {
    const text = message(`<h:b xmlns:h="urn:h">${"<a>".repeat(62)}${"</a>".repeat(62)}</h:b>`);
    await expect(readXml(source(text), limits, undefined, undefined, checkpoint)).rejects.toThrow(
      "The message nests elements deeper than 64",
    );
  });
});
