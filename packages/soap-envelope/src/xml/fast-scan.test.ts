import { describe, expect, it } from "vitest";
import { seededRandom } from "../../test/seeded-random.js";
import { envelopeCheckpoint } from "../envelope/envelope.js";
import {
  type ParsedElement,
  parseSimple,
  parseWithSaxes,
  type ResolvedXmlLimits,
  readXml,
  resolveLimits,
  type XmlCheckpoint,
} from "./reader.js";
import { XmlTemplates } from "./templates.js";

// The fast path must build exactly saxes' tree, and give up on everything saxes refuses.

const limits = resolveLimits({ maxDepth: 8, maxAttributes: 4, maxElements: 20 });

/** The tree as plain data, in-scope namespaces included (scope is a prototype chain). */
function plain(e: ParsedElement): unknown {
  const scope: Record<string, string> = {};
  for (const k in e.scope) scope[k] = e.scope[k] as string;
  return {
    namespace: e.namespace,
    localName: e.localName,
    attributes: { ...e.attributes },
    text: e.text,
    mixed: e.mixed,
    scope,
    children: e.children.map(plain),
  };
}

function saxes(doc: string): unknown {
  try {
    return plain(parseWithSaxes(doc, limits));
  } catch (err) {
    return err;
  }
}

/** Whatever the fast path returns saxes returns too; where saxes fails the fast path gives up. */
function agree(doc: string): boolean {
  const fast = parseSimple(doc, limits);
  const slow = saxes(doc);
  if (fast === undefined) return true;
  expect(slow, doc).not.toBeInstanceOf(Error);
  expect(plain(fast), doc).toEqual(slow);
  return false;
}

const ENVELOPE =
  '<?xml version="1.0" encoding="UTF-8"?>\n' +
  '<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope" xmlns:c="urn:c">' +
  '<soap:Header><w:Sec xmlns:w="urn:w" soap:mustUnderstand="true" a=\'1\'>x</w:Sec></soap:Header>' +
  '<soap:Body><c:Get xmlns="urn:d"><c:id>1</c:id> <n>Müller &gt;</n><e/><f  b = "2" /></c:Get>' +
  "</soap:Body></soap:Envelope>\n";

describe("parseSimple (the fast path)", () => {
  it("builds saxes' tree for plain documents", () => {
    const docs = [
      '<a xmlns="urn:a"><b>1</b>text<c/></a>',
      "<a/>",
      "  <a>x</a>  \n",
      '<?xml version="1.0"?><p:a xmlns:p="urn:p" p:x="1" x="2"><b xmlns="">t</b></p:a>',
      "<a>one<b/>two</a>",
      "<a> <b/> </a>",
      '<a xmlns:p="urn:p"><p:b xmlns:p="urn:q"/></a>',
      ENVELOPE.replace("Müller &gt;", "Muller"),
    ];
    for (const doc of docs) {
      expect(parseSimple(doc, limits), doc).toBeDefined();
      agree(doc);
    }
  });

  it("gives up on every construct outside its subset, and on every error", () => {
    const docs = [
      "<!DOCTYPE a><a/>",
      "<?pi x?><a/>",
      "<a><!-- c --></a>",
      "<a><![CDATA[x]]></a>",
      "<a>&amp;</a>",
      "<a>&#65;</a>",
      "<a>x\r\ny</a>",
      "<a>]]></a>",
      '<a b="1" b="2"/>',
      '<a xmlns:p="urn:x" xmlns:q="urn:x" p:b="1" q:b="2"/>',
      "<p:a/>",
      '<a xmlns:p=""/>',
      '<a xmlns:xml="urn:x"/>',
      '<a xmlns:p="http://www.w3.org/2000/xmlns/"/>',
      '<a xml:lang="en"/>',
      "<a></b>",
      "<a>",
      "<a/><b/>",
      "<a/>x",
      "<a/><!-- c -->",
      '<?xml version="1.1"?><a/>',
      '<?xml encoding="UTF-8"?><a/>',
      '<a b="<"/>',
      '<a b="x\ty"/>',
      "<a b=1/>",
      '<a b="1"c="2"/>',
      "<a>\u0001</a>",
      "<a>\ud83d\ude00</a>",
      "<é/>",
      "<a:b:c/>",
      "<1a/>",
      "",
      "x<a/>",
      "<a>".repeat(9) + "</a>".repeat(9),
      '<a b="1" c="2" d="3" e="4" f="5"/>',
      `<a>${"<b/>".repeat(20)}</a>`,
    ];
    for (const doc of docs) expect(parseSimple(doc, limits), doc).toBeUndefined();
  });

  it("agrees with saxes on thousands of mutations of an envelope", () => {
    // A seeded generator: the same mutations on every run.
    const random = seededRandom(22);
    const pieces = [
      "<",
      ">",
      "/",
      "=",
      '"',
      "'",
      ":",
      " ",
      "\t",
      "\n",
      "\r",
      "&",
      "x",
      "é",
      "]]>",
      "<a>",
      "</a>",
      "xmlns",
      'xmlns:q="urn:q"',
      "q:",
      "!",
      "?",
      "-",
      "1",
    ];
    let accepted = 0;
    for (let i = 0; i < 5000; i++) {
      let doc = ENVELOPE.replace("Müller &gt;", "Muller");
      for (let m = 1 + random(3); m > 0; m--) {
        const at = random(doc.length + 1);
        const cut = random(3);
        doc =
          doc.slice(0, at) + (random(2) ? (pieces[random(pieces.length)] ?? "") : "") + doc.slice(at + cut);
      }
      if (!agree(doc)) accepted++;
    }
    // Both sides were exercised: many mutants still parse, many do not.
    expect(accepted).toBeGreaterThan(100);
    expect(accepted).toBeLessThan(4900);
  });
});

describe("templates (documents that repeat an earlier one's markup)", () => {
  const big = resolveLimits();
  const BASE = ENVELOPE.replace("Müller &gt;", "Muller");
  const REBOUND = BASE.replace('<c:Get xmlns="urn:d">', '<c:Get xmlns="urn:d" xmlns:soap="urn:s">');

  /** The tree readXml builds (the rest of a stopped parse too), or the error it throws. */
  async function read(doc: string, checkpoint: XmlCheckpoint, at = big): Promise<unknown> {
    try {
      const parsed = await readXml(doc, at, undefined, undefined, checkpoint);
      return plain(parsed.rest === undefined ? parsed.root : parsed.rest());
    } catch (err) {
      return { error: (err as Error).message, kind: (err as { kind?: string }).kind };
    }
  }

  /**
   * Whether `doc` reads the same with templates as without them; true when a template built it
   * (only a template's scopes are frozen).
   */
  async function same(
    doc: string,
    templated: XmlCheckpoint,
    plainCheckpoint: XmlCheckpoint,
  ): Promise<boolean> {
    expect(await read(doc, templated), doc).toEqual(await read(doc, plainCheckpoint));
    try {
      return Object.isFrozen((await readXml(doc, big, undefined, undefined, templated)).root.scope);
    } catch {
      return false;
    }
  }

  it("builds the tree a parse builds, for other text in the same markup", async () => {
    const templated = envelopeCheckpoint(big, false, new XmlTemplates());
    const parsing = envelopeCheckpoint(big, false);
    const variants = [
      BASE,
      BASE,
      BASE.replace("<c:id>1<", "<c:id>2345<"),
      BASE.replace("<c:id>1<", "<c:id><"),
      BASE.replace(">x</w:Sec>", "></w:Sec>"),
      BASE.replace("Muller", "  "),
      BASE.replace("Muller", "Mü ller"),
      BASE.replace("</c:id> <n>", "</c:id>\n\t<n>"),
      BASE.replace("</c:id> <n>", "</c:id>text<n>"),
      BASE.replace("</c:id> <n>", "</c:id><n>"),
      BASE.replace("<e/>", " <e/>"),
      BASE.replace('UTF-8"?>\n', 'UTF-8"?>  \n\t'),
      BASE.replace('UTF-8"?>\n', 'UTF-8"?>x'),
      `${BASE}  `,
      `${BASE.trimEnd()}`,
      `${BASE}<a/>`,
      `${BASE}x`,
      BASE.replace("Muller", "a &amp; b"),
      BASE.replace("Muller", "a ]]> b"),
      BASE.replace("Muller", "a\r\nb"),
      BASE.replace("Muller", "\u0001"),
      BASE.replace("Muller", "\ud83d\ude00"),
      BASE.replace("Muller", "<!-- c -->"),
      BASE.replace("Muller", "<![CDATA[x]]>"),
      // Runs longer than the ones checked character by character.
      BASE.replace("Muller", "M".repeat(40)),
      BASE.replace("Muller", `${"M".repeat(40)}&`),
      BASE.replace("Muller", `${"M".repeat(40)}]]>`),
      BASE.replace("Muller", `${"M".repeat(40)}\u0001`),
      BASE.replace("Muller", " \t\n".repeat(20)),
      BASE.replace("Muller", `${" ".repeat(20)}\r`),
      BASE.replace('UTF-8"?>\n', `UTF-8"?>${" ".repeat(40)}`),
      BASE.replace('UTF-8"?>\n', `UTF-8"?>${" ".repeat(40)}x`),
      BASE.replace("Muller", "<x/>"),
      BASE.replace("Muller", "</n><n>"),
      BASE.replace("a='1'", "a='2'"),
      BASE.replace('xmlns:c="urn:c"', 'xmlns:c="urn:d"'),
      BASE.slice(0, BASE.indexOf("<n>")),
      BASE,
      // A prefix and the default namespace bound again below where they were first bound.
      REBOUND,
      REBOUND,
      REBOUND.replace("<c:id>1<", "<c:id>2<"),
      REBOUND.replace("<e/>", '<e xmlns="urn:e" xmlns:c="urn:f"><c:g>1</c:g></e>'),
      REBOUND.replace("<e/>", '<e xmlns="urn:e" xmlns:c="urn:f"><c:g>2</c:g></e>'),
    ];
    for (const doc of variants) await same(doc, templated, parsing);
  });

  it("agrees with a parse on thousands of mutations, in the text and in the markup", async () => {
    const templated = envelopeCheckpoint(big, false, new XmlTemplates());
    const parsing = envelopeCheckpoint(big, false);
    const random = seededRandom(7);
    const pieces = [
      " ",
      "\n",
      "\t",
      "\r",
      "x",
      "1",
      "é",
      "&",
      "&amp;",
      "]]>",
      ">",
      "<",
      "</a>",
      "<a/>",
      '"',
      "'",
      ' xmlns:soap="urn:s"',
      ' xmlns="urn:t"',
    ];
    // Where the base holds text: a mutation there keeps the markup, so the template answers.
    const texts: number[] = [];
    for (let i = 0; i < BASE.length; i++) {
      const before = BASE.lastIndexOf("<", i);
      const after = BASE.lastIndexOf(">", i);
      if (after > before && BASE[i] !== "<") texts.push(i);
    }
    await same(BASE, templated, parsing);
    let built = 0;
    for (let i = 0; i < 3000; i++) {
      let doc = BASE;
      for (let m = 1 + random(2); m > 0; m--) {
        const at = random(2) ? (texts[random(texts.length)] as number) : random(doc.length + 1);
        doc = doc.slice(0, at) + (pieces[random(pieces.length)] ?? "") + doc.slice(at + random(2));
      }
      if (await same(doc, templated, parsing)) built++;
      if (random(4) === 0) await same(BASE, templated, parsing);
    }
    // Both sides were exercised: many mutants were built from a template, many were parsed.
    expect(built).toBeGreaterThan(500);
    expect(built).toBeLessThan(2500);
  });

  it("shares the template's frozen scopes between the trees it builds, and only theirs", async () => {
    const templated = envelopeCheckpoint(big, false, new XmlTemplates());
    const tree = async (doc: string) => (await readXml(doc, big, undefined, undefined, templated)).root;
    // The first document leaves the template; the second, the first to repeat it, makes it keep.
    const first = await tree(BASE);
    await tree(BASE.replace("<c:id>1<", "<c:id>2<"));
    const second = await tree(BASE.replace("<c:id>1<", "<c:id>3<"));
    const third = await tree(BASE.replace("<c:id>1<", "<c:id>4<"));
    expect(second.scope).toBe(third.scope);
    expect(Object.isFrozen(second.scope)).toBe(true);
    expect(first.scope).not.toBe(second.scope);
    expect(third.children[1]?.children[0]?.children[0]?.text).toBe("4");
    const other = await tree(BASE.replace("<c:id>1<", "<c:id a='1'>1<"));
    expect(other.scope).not.toBe(second.scope);
    // A checkpoint without templates builds every tree anew.
    const parsing = envelopeCheckpoint(big, false);
    const a = (await readXml(BASE, big, undefined, undefined, parsing)).root;
    const b = (await readXml(BASE, big, undefined, undefined, parsing)).root;
    expect(a.scope).not.toBe(b.scope);
  });

  it("stops comparing after many documents no template built, and starts again", async () => {
    const templated = envelopeCheckpoint(big, false, new XmlTemplates());
    const built = async (doc: string) =>
      Object.isFrozen((await readXml(doc, big, undefined, undefined, templated)).root.scope);
    // Markup that differs in every message: no template ever builds one.
    for (let i = 0; i < 100; i++) {
      expect(await built(BASE.replace("a='1'", `a='${i}'`))).toBe(false);
    }
    // Then the same markup again and again: a sampled message leaves its template, the next
    // sampled one is built from it, and from then on every one is.
    const results: boolean[] = [];
    for (let i = 0; i < 40; i++) results.push(await built(BASE.replace("<c:id>1<", `<c:id>${i}<`)));
    // Not at once: warm, the second of them would have been built from the first one's template.
    expect(results.slice(0, 4)).toEqual([false, false, false, false]);
    expect(results.slice(-8)).toEqual(Array(8).fill(true));
    // And whatever the state, the trees are a parse's.
    const parsing = envelopeCheckpoint(big, false);
    for (let i = 0; i < 80; i++) {
      const doc = i % 2 ? BASE.replace("a='1'", `a='x${i}'`) : BASE.replace("<c:id>1<", `<c:id>${i}<`);
      await same(doc, templated, parsing);
    }
  });

  it("holds a template to the limits it was read under", async () => {
    const templates = new XmlTemplates();
    const few: ResolvedXmlLimits = resolveLimits({ maxElements: 5 });
    const templated = envelopeCheckpoint(big, false, templates);
    await read(BASE, templated);
    await read(BASE, templated);
    expect(await read(BASE, templated, few)).toEqual(await read(BASE, envelopeCheckpoint(few, false), few));
    expect(await read(BASE, templated, few)).toMatchObject({ kind: "limit" });
  });

  it("reads a repeated message whole where the first one stopped before the Body's content", async () => {
    const templated = envelopeCheckpoint(big, true, new XmlTemplates());
    const parsing = envelopeCheckpoint(big, true);
    const first = await readXml(BASE, big, undefined, undefined, templated);
    expect(first.rest).toBeDefined();
    const whole = plain((first.rest as () => ParsedElement)());
    const again = await readXml(BASE.replace("<c:id>1<", "<c:id>9<"), big, undefined, undefined, templated);
    expect(again.rest).toBeUndefined();
    expect(plain(again.root)).toEqual(JSON.parse(JSON.stringify(whole).replace('"text":"1"', '"text":"9"')));
    for (const doc of [BASE, BASE.replace("Muller", "&amp;"), BASE.replace("<e/>", "<e>")]) {
      await same(doc, templated, parsing);
    }
  });
});
