import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { seededRandom } from "../../test/seeded-random.js";
import { ITEM_SCHEMA_BODY } from "../__fixtures__/item-schema.js";
import { loadContract } from "../wsdl/contract.js";
import { parseXmlString, resolveLimits } from "../xml/reader.js";
import { decodeElement } from "./decode.js";
import { encodeElement } from "./encode.js";
import type { ElementDecl, Particle, SimpleType } from "./model.js";
import { XSI_NS } from "./model.js";
import { type CompiledSchema, compileSchemas, schemaComponents } from "./schema.js";

// The compiled decoders and encoders (CompiledSchema.decode / encode) must decide, decode, encode
// and fail exactly as the interpreting walk (decodeElement / encodeElement) they replace: both
// run over seeded random instances of every global element of the fixture contracts, good and
// bad alike, and must agree on every result and every error message.

const fixture = (name: string) => fileURLToPath(new URL(`../__fixtures__/${name}`, import.meta.url));

const NS = "urn:test";
const RICH = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:t="${NS}" targetNamespace="${NS}" elementFormDefault="qualified">
  ${ITEM_SCHEMA_BODY}
  <xs:complexType name="Node"><xs:sequence><xs:element name="label" type="xs:string"/><xs:element name="child" type="t:Node" minOccurs="0" maxOccurs="2"/></xs:sequence></xs:complexType>
  <xs:simpleType name="Three"><xs:restriction base="xs:string"><xs:length value="3"/></xs:restriction></xs:simpleType>
  <xs:element name="Word" type="t:Three"/>
  <xs:element name="Tree" type="t:Node"/>
  <xs:element name="Empty"><xs:complexType/></xs:element>
  <xs:element name="Optional"><xs:complexType><xs:sequence><xs:element name="a" type="xs:int" minOccurs="0"/><xs:element name="b" type="xs:long" minOccurs="0" maxOccurs="unbounded"/></xs:sequence></xs:complexType></xs:element>
</xs:schema>`;

const CONSTRUCTS = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:t="${NS}" targetNamespace="${NS}" elementFormDefault="qualified">
  <xs:complexType name="Base"><xs:sequence><xs:element name="a" type="xs:short"/></xs:sequence></xs:complexType>
  <xs:complexType name="Ext"><xs:complexContent><xs:extension base="t:Base"><xs:sequence><xs:element name="b" type="xs:double" minOccurs="0"/><xs:any namespace="##other" processContents="lax" minOccurs="0"/></xs:sequence></xs:extension></xs:complexContent></xs:complexType>
  <xs:simpleType name="Ints"><xs:list itemType="xs:unsignedByte"/></xs:simpleType>
  <xs:simpleType name="IntOrWord"><xs:union memberTypes="xs:int xs:NCName"/></xs:simpleType>
  <xs:group name="G"><xs:sequence><xs:element name="l" type="t:Ints"/><xs:element name="u" type="t:IntOrWord" maxOccurs="2"/></xs:sequence></xs:group>
  <xs:element name="Derived" type="t:Ext"/>
  <xs:element name="Untyped"/>
  <xs:element name="Grouped"><xs:complexType><xs:group ref="t:G"/></xs:complexType></xs:element>
  <xs:element name="Bytes" type="xs:base64Binary"/>
  <xs:element name="Token" type="xs:token"/>
</xs:schema>`;

const limits = resolveLimits();
const schemas: [string, CompiledSchema][] = [
  ["customer.wsdl", loadContract(fixture("customer.wsdl")).schema],
  ["customer.wsdl (longAs string)", loadContract(fixture("customer.wsdl"), { longAs: "string" }).schema],
  ["price.wsdl", loadContract(fixture("price.wsdl")).schema],
  ["orders.wsdl", loadContract(fixture("orders.wsdl")).schema],
  ["inline", compileSchemas([{ root: parseXmlString(RICH, limits), location: "rich.xsd" }])],
  ["constructs", compileSchemas([{ root: parseXmlString(CONSTRUCTS, limits), location: "constructs.xsd" }])],
];

const LEXICALS = [
  "",
  " ",
  "1",
  " 42 ",
  "\t7\n",
  "1  2",
  "-0",
  "+5",
  "9223372036854775807",
  "9223372036854775808",
  "2147483648",
  "1.50",
  "100.001",
  "x",
  "ABC",
  "X1",
  "AB",
  "red",
  "blue",
  "true",
  "0",
  "2024-02-29",
  "2023-02-29",
  "2024-01-01T10:00:00Z",
  "ada@example.com",
  "not an email",
  "a".repeat(300),
  "Müller",
  "\u00a0 1 \u00a0",
];

function escapeText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;");
}

/** A random instance of `decl` (mostly valid, often not), as XML text. */
function instance(decl: ElementDecl, pick: (n: number) => number, depth = 0): string {
  const name = decl.localName;
  const xmlns = ` xmlns="${decl.namespace}"`;
  let attrs = "";
  if (pick(20) === 0) attrs += ` xmlns:xsi="${XSI_NS}" xsi:nil="${pick(2) ? "true" : " 1 "}"`;
  else if (pick(40) === 0) attrs += ` xmlns:xsi="${XSI_NS}" xsi:type="x"`;
  if (pick(25) === 0) attrs += ` stray="1"`;
  const type = decl.type;
  if (type.kind === "simple") {
    const inner = pick(30) === 0 ? "<x/>" : escapeText(value(type, pick));
    return `<${name}${xmlns}${attrs}>${inner}</${name}>`;
  }
  for (const a of type.attributes) {
    if (pick(4) === 0) continue;
    attrs += a.qualifiedNs
      ? ` xmlns:q="${a.qualifiedNs}" q:${a.name}="${escapeText(value(a.type, pick))}"`
      : ` ${a.name}="${escapeText(value(a.type, pick))}"`;
  }
  let inner = "";
  if (type.simpleContent) inner = escapeText(value(type.simpleContent, pick));
  else if (type.content && depth < 4) inner = particle(type.content, pick, depth);
  if (pick(15) === 0) inner = `${inner}text`;
  if (pick(15) === 0) inner += "<unexpected/>";
  return `<${name}${xmlns}${attrs}>${inner}</${name}>`;
}

function particle(p: Particle, pick: (n: number) => number, depth: number): string {
  if (p.kind === "element") {
    let count = p.min + (pick(3) === 0 ? pick(3) : 0);
    if (pick(12) === 0) count = Math.max(0, count - 1);
    count = Math.min(count, p.max === Number.POSITIVE_INFINITY ? 3 : p.max + (pick(12) === 0 ? 1 : 0));
    let out = "";
    for (let i = 0; i < count; i++) out += instance(p.decl, pick, depth + 1);
    return out;
  }
  if (p.kind === "any") return pick(2) === 0 ? "" : `<extra xmlns="urn:other">${pick(3)}</extra>`;
  const parts = p.kind === "choice" ? [p.items[pick(p.items.length)] as Particle] : [...p.items];
  if (p.kind === "all" || pick(25) === 0) parts.reverse();
  return parts.map((item) => particle(item, pick, depth)).join("");
}

function value(type: SimpleType, pick: (n: number) => number): string {
  if (pick(3) === 0) return LEXICALS[pick(LEXICALS.length)] as string;
  switch (type.base) {
    case "long":
    case "int":
      return String(pick(20));
    case "decimal":
      return `${pick(200)}.${pick(10)}`;
    case "boolean":
      return pick(2) ? "true" : "0";
    case "date":
      return "2024-05-01";
    case "dateTime":
      return "2024-05-01T12:00:00Z";
    default:
      return type.facets.enumeration?.[pick(type.facets.enumeration.length)] ?? (pick(2) ? "ABC" : "a@b.cd");
  }
}

function outcome(run: () => unknown): unknown {
  try {
    return { value: run() };
  } catch (err) {
    return { error: String(err) };
  }
}

describe("compiled decoders and encoders", () => {
  for (const [label, schema] of schemas) {
    const components = schemaComponents(schema);
    if (components === undefined) throw new Error("no components");
    const longAs = components.longAs;
    it(`decode as decodeElement does, and encode as encodeElement does: ${label}`, () => {
      const pick = seededRandom(22); // the same instances on every run
      let decoded = 0;
      let refused = 0;
      for (const decl of components.elements.values()) {
        for (let i = 0; i < 300; i++) {
          const xml = instance(decl, pick);
          const element = parseXmlString(xml, limits);
          const compiled = outcome(() => schema.decode(element));
          const interpreted = outcome(() => decodeElement(element, decl, element.localName, longAs));
          expect(compiled, xml).toEqual(interpreted);
          if ("error" in (compiled as object)) {
            refused++;
            continue;
          }
          decoded++;
          // The decoded value and a few damaged copies of it back through both encoders.
          const good = (compiled as { value: unknown }).value;
          for (const v of [good, ...damaged(good, pick)]) {
            const enc = outcome(() => schema.encode(decl.clark, v));
            const ref = outcome(() => encodeElement(decl, v, "", decl.localName));
            expect(enc, `${xml} → ${String(v)}`).toEqual(ref);
          }
        }
      }
      // Both sides were exercised.
      expect(decoded).toBeGreaterThan(20);
      expect(refused).toBeGreaterThan(20);
    });
  }
});

describe("length facets count characters, not UTF-16 code units (XML Schema Part 2 §4.3.1)", () => {
  const schema = schemas.find(([label]) => label === "inline")?.[1] as CompiledSchema;
  const word = (text: string) => parseXmlString(`<Word xmlns="${NS}">${text}</Word>`, limits);
  it("a pair of surrogates is one character", () => {
    expect(schema.decode(word("a\u{1F600}b"))).toBe("a\u{1F600}b");
    expect(schema.decode(word("\u{1F600}\u{1F600}\u{1F600}"))).toBe("\u{1F600}\u{1F600}\u{1F600}");
    expect(() => schema.decode(word("\u{1F600}\u{1F600}"))).toThrow(/length must be 3/);
    expect(() => schema.decode(word("abcd"))).toThrow(/length must be 3/);
    expect(schema.encode(`{${NS}}Word`, "x\u{1F600}y")).toBe(`<Word xmlns="${NS}">x\u{1F600}y</Word>`);
  });
});

/** Copies of a decoded value with one property dropped, retyped, added or nulled. */
function damaged(value: unknown, pick: (n: number) => number): unknown[] {
  if (value === null || typeof value !== "object") return [5, "x", null, undefined, [value]];
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  const out: unknown[] = [{ ...obj, extra: 1 }, { ...obj, extra: undefined }, [obj], new Date(0)];
  if (keys.length > 0) {
    const key = keys[pick(keys.length)] as string;
    const replacements = [
      undefined,
      null,
      7,
      7n,
      "7",
      "x",
      // Characters to escape, and characters XML 1.0 does not allow.
      `a<b&c>"d'\te`,
      "\u0001",
      "x\ud800",
      true,
      [],
      [obj[key], obj[key]],
      { a: 1 },
    ];
    for (const r of replacements) out.push({ ...obj, [key]: r });
    const inner = obj[key];
    if (inner !== null && typeof inner === "object" && !Array.isArray(inner)) {
      for (const d of damaged(inner, pick).slice(0, 3)) out.push({ ...obj, [key]: d });
    }
  }
  return out;
}
