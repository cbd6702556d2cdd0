import { describe, expect, it } from "vitest";
import { type ParsedElement, parseSimple, parseWithSaxes, resolveLimits } from "./xml.js";

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
    let seed = 22;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
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
