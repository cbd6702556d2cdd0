import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadContract } from "../wsdl/contract.js";
import { generateTypes } from "../wsdl/generate-types.js";
import { parseXmlString, resolveLimits } from "../xml/reader.js";
import { compileSchemas, SchemaCompileError, type SchemaSource } from "./schema.js";

// How a schema set's QName references resolve (XML Schema 1.0 Part 1 §3.15.3, §4.2.1, §4.2.3):
// one table per rule, each row a schema set and what it compiles to or the error it gets.

const NS = "urn:r";
const XS = 'xmlns:xs="http://www.w3.org/2001/XMLSchema"';
const limits = resolveLimits({ maxBytes: 16 << 20, maxElements: 1_000_000 });
const schema = (attrs: string, body: string) => `<xs:schema ${XS} ${attrs}>${body}</xs:schema>`;
const sources = (...docs: (string | [string, string])[]): SchemaSource[] =>
  docs.map((d, i) =>
    typeof d === "string"
      ? { root: parseXmlString(d, limits), location: `s${i}.xsd` }
      : { root: parseXmlString(d[0], limits), location: `s${i}.xsd`, includedInto: d[1] },
  );
const compile = (...docs: (string | [string, string])[]) => compileSchemas(sources(...docs));
const doc = (xml: string) => parseXmlString(xml, limits);

function problems(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SchemaCompileError);
    return (err as SchemaCompileError).problems;
  }
  throw new Error("nothing was thrown");
}

const T = `<xs:complexType name="T"><xs:sequence><xs:element name="x" type="xs:int"/></xs:sequence></xs:complexType>`;

describe("a reference that names nothing declared: every one at once, with what is near (Part 1 §3.15.3)", () => {
  type Row = [what: string, docs: string[], expected: RegExp[]];
  const rows: Row[] = [
    [
      "an unprefixed name with no default namespace names no namespace, not the targetNamespace",
      [schema(`targetNamespace="${NS}"`, `${T}<xs:element name="E" type="T"/>`)],
      [
        /^s0\.xsd: xs:element "E": type T is not declared \(an unprefixed name, with no default namespace in scope, names no namespace: type \{urn:r\}T is declared\)$/,
      ],
    ],
    [
      "an element's name used as a type",
      [
        schema(
          `xmlns:r="${NS}" targetNamespace="${NS}"`,
          `<xs:element name="A"/><xs:element name="E" type="r:A"/>`,
        ),
      ],
      [/xs:element "E": type \{urn:r\}A is not declared \(an element of that name is declared, not a type\)/],
    ],
    [
      "a base, an item type and a member type, each named",
      [
        schema(
          `xmlns:r="${NS}" targetNamespace="${NS}"`,
          `<xs:complexType name="C"><xs:complexContent><xs:extension base="r:B1"/></xs:complexContent></xs:complexType>
           <xs:simpleType name="L"><xs:list itemType="r:B2"/></xs:simpleType>
           <xs:simpleType name="U"><xs:union memberTypes="xs:int  r:B3"/></xs:simpleType>`,
        ),
      ],
      [
        /xs:extension \(in "C"\): type \{urn:r\}B1 is not declared$/,
        /xs:list \(in "L"\): type \{urn:r\}B2/,
        /xs:union \(in "U"\): type \{urn:r\}B3/,
      ],
    ],
    [
      "an element, an attribute, a group and an attribute group by ref",
      [
        schema(
          `xmlns:r="${NS}" targetNamespace="${NS}"`,
          `<xs:complexType name="C"><xs:sequence><xs:element ref="r:e"/><xs:group ref="r:g"/></xs:sequence>
             <xs:attribute ref="r:a"/><xs:attributeGroup ref="r:ag"/></xs:complexType>`,
        ),
      ],
      [
        /xs:element \(in "C"\): element \{urn:r\}e is not declared/,
        /xs:group \(in "C"\): group \{urn:r\}g is not declared/,
        /xs:attribute \(in "C"\): attribute \{urn:r\}a is not declared/,
        /xs:attributeGroup \(in "C"\): attribute group \{urn:r\}ag is not declared/,
      ],
    ],
    [
      "a name in XML Schema's namespace that is no built-in",
      [schema(`targetNamespace="${NS}"`, `<xs:element name="E" type="xs:text"/>`)],
      [
        /type \{http:\/\/www\.w3\.org\/2001\/XMLSchema\}text is not declared \(xs:text is not a built-in type/,
      ],
    ],
    [
      "a reference inside an xs:annotation is documentation, not a reference",
      [
        schema(
          `targetNamespace="${NS}"`,
          `<xs:annotation><xs:appinfo><xs:element name="Doc" type="Nope"/></xs:appinfo></xs:annotation><xs:element name="E" type="Missing"/>`,
        ),
      ],
      [/xs:element "E": type Missing is not declared$/],
    ],
  ];
  it.each(rows)("%s", (_what, docs, expected) => {
    const found = problems(() => compile(...docs));
    expect(found).toHaveLength(expected.length);
    for (const [i, re] of expected.entries()) expect(found[i]).toMatch(re);
  });
  it("the error's message lists them all", () => {
    expect(() =>
      compile(
        schema(`targetNamespace="${NS}"`, `<xs:element name="A" type="M1"/><xs:element name="B" type="M2"/>`),
      ),
    ).toThrow(
      /^2 references name nothing the schemas declare:\n- s0\.xsd: xs:element "A": type M1 .*\n- s0\.xsd: xs:element "B": type M2/,
    );
  });
});

describe("references that resolve (Part 1 §3.15.3, §4.2.3)", () => {
  type Row = [what: string, docs: string[], instance: string, value: unknown];
  const rows: Row[] = [
    [
      "an unprefixed name in the default namespace",
      [
        schema(
          `xmlns="${NS}" targetNamespace="${NS}" elementFormDefault="qualified"`,
          `${T}<xs:element name="E" type="T"/>`,
        ),
      ],
      `<E xmlns="${NS}"><x>1</x></E>`,
      { x: 1 },
    ],
    [
      "an unprefixed name in a schema without targetNamespace",
      [schema("", `${T}<xs:element name="E" type="T"/>`)],
      `<E><x>1</x></E>`,
      { x: 1 },
    ],
    [
      "a sibling schema's type, before or after the one that uses it",
      [
        schema(`xmlns:o="urn:o" targetNamespace="${NS}"`, `<xs:element name="E" type="o:T"/>`),
        schema(`targetNamespace="urn:o"`, T),
      ],
      `<r:E xmlns:r="${NS}"><x>1</x></r:E>`,
      { x: 1 },
    ],
    [
      "an extension of a type another schema declares, its content first",
      [
        schema(`targetNamespace="urn:o"`, T),
        schema(
          `xmlns:o="urn:o" xmlns:r="${NS}" targetNamespace="${NS}"`,
          `<xs:complexType name="D"><xs:complexContent><xs:extension base="o:T"><xs:sequence><xs:element name="y" type="xs:string"/></xs:sequence></xs:extension></xs:complexContent></xs:complexType>
           <xs:element name="E" type="r:D"/>`,
        ),
      ],
      `<r:E xmlns:r="${NS}"><x>1</x><y>b</y></r:E>`,
      { x: 1, y: "b" },
    ],
  ];
  it.each(rows)("%s", (_what, docs, instance, value) => {
    expect(compile(...docs).decode(doc(instance))).toEqual(value);
  });
});

describe("xs:include of a schema without targetNamespace takes the includer's (Part 1 §4.2.1, chameleon)", () => {
  const chameleon = schema(
    `elementFormDefault="qualified"`,
    `${T}<xs:element name="C" type="T"/><xs:element name="Local"><xs:complexType><xs:sequence><xs:element name="u" form="unqualified" type="xs:string"/></xs:sequence></xs:complexType></xs:element>`,
  );
  it("its components are in the includer's namespace and its unprefixed references resolve there", () => {
    const s = compile(
      schema(`xmlns:r="${NS}" targetNamespace="${NS}"`, `<xs:element name="E" type="r:T"/>`),
      [chameleon, NS],
    );
    expect(s.elementNames).toEqual(expect.arrayContaining([`{${NS}}E`, `{${NS}}C`, `{${NS}}Local`]));
    expect(s.decode(doc(`<C xmlns="${NS}"><x>1</x></C>`))).toEqual({ x: 1 });
    expect(s.decode(doc(`<E xmlns="${NS}"><x>2</x></E>`))).toEqual({ x: 2 });
    // A local element declared unqualified stays in no namespace.
    expect(s.decode(doc(`<r:Local xmlns:r="${NS}"><u>a</u></r:Local>`))).toEqual({ u: "a" });
  });
  it("included into two namespaces, it is two sets of components", () => {
    const s = compile([chameleon, "urn:a"], [chameleon, "urn:b"]);
    expect(s.decode(doc(`<C xmlns="urn:a"><x>1</x></C>`))).toEqual({ x: 1 });
    expect(s.decode(doc(`<C xmlns="urn:b"><x>1</x></C>`))).toEqual({ x: 1 });
  });
  it("included into a schema without targetNamespace, it stays in no namespace", () => {
    expect(compile([chameleon, ""]).decode(doc(`<C><x>1</x></C>`))).toEqual({ x: 1 });
  });
  it("a document with another targetNamespace cannot be included (src-include.2.1)", () => {
    expect(problems(() => compile([schema(`targetNamespace="urn:other"`, T), NS]))).toEqual([
      `s0.xsd: xs:include of a schema whose targetNamespace "urn:other" is not "${NS}", the including schema's (xs:import brings in another namespace)`,
    ]);
  });
  it("the same document with the includer's own targetNamespace is included as it is", () => {
    const s = compile([
      schema(
        `targetNamespace="${NS}" elementFormDefault="qualified"`,
        `${T}<xs:element name="C" type="r:T" xmlns:r="${NS}"/>`,
      ),
      NS,
    ]);
    expect(s.decode(doc(`<C xmlns="${NS}"><x>1</x></C>`))).toEqual({ x: 1 });
  });
});

describe("nesting is bounded: a deep chain is a SchemaCompileError, never a stack overflow", () => {
  const chain = (n: number, link: (i: number, next: string) => string) =>
    schema(
      `xmlns:r="${NS}" targetNamespace="${NS}"`,
      `<xs:element name="E" type="r:T0"/>${Array.from({ length: n }, (_, i) =>
        link(i, i + 1 < n ? `r:T${i + 1}` : ""),
      ).join("")}`,
    );
  const simple = (i: number, next: string) =>
    `<xs:simpleType name="T${i}"><xs:restriction base="${next || "xs:string"}"/></xs:simpleType>`;
  const extension = (i: number, next: string) =>
    `<xs:complexType name="T${i}"><xs:complexContent><xs:extension base="${next || "xs:anyType"}"><xs:sequence><xs:element name="e${i}" type="xs:string"/></xs:sequence></xs:extension></xs:complexContent></xs:complexType>`;
  const element = (i: number, next: string) =>
    `<xs:complexType name="T${i}"><xs:sequence><xs:element name="e" type="${next || "xs:string"}"/></xs:sequence></xs:complexType>`;
  const group = (i: number, next: string) =>
    next
      ? `<xs:group name="G${i}"><xs:sequence><xs:group ref="${next.replace("T", "G")}"/></xs:sequence></xs:group><xs:complexType name="T${i}"><xs:sequence><xs:group ref="r:G${i}"/></xs:sequence></xs:complexType>`
      : `<xs:group name="G${i}"><xs:sequence><xs:element name="x" type="xs:int"/></xs:sequence></xs:group><xs:complexType name="T${i}"><xs:sequence><xs:group ref="r:G${i}"/></xs:sequence></xs:complexType>`;
  type Row = [what: string, link: (i: number, next: string) => string, fits: number];
  const rows: Row[] = [
    ["simple types restricting one another", simple, 200],
    ["complex types extending one another", extension, 200],
    ["types whose element is of the next type", element, 100],
    ["model groups referring to one another", group, 100],
  ];
  it.each(rows)("%s: a chain compiles up to the bound, one of 6,000 is refused", (_w, link, fits) => {
    expect(() => compile(chain(fits, link))).not.toThrow();
    expect(problems(() => compile(chain(6_000, link)))[0]).toMatch(
      /^s0\.xsd: xs:\w+( "\w+")?: types, groups and derivations nest more than 256 deep/,
    );
  });
  it("a derivation chain compiled from its root up is bounded too", () => {
    const n = 6_000;
    const types = Array.from({ length: n }, (_, i) =>
      extension(n - 1 - i, n - i < n ? `r:T${n - i}` : ""),
    ).join("");
    const found = problems(() =>
      compile(
        schema(`xmlns:r="${NS}" targetNamespace="${NS}"`, `<xs:element name="E" type="xs:int"/>${types}`),
      ),
    );
    expect(found[0]).toMatch(/^s0\.xsd: xs:extension: type "T\d+" is derived in more than 256 steps/);
  });
});

describe("loadContract: an xs:include brings its document into the including namespace", () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-include-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const wsdl = (types: string) => `<?xml version="1.0"?>
<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/" ${XS} xmlns:r="${NS}" targetNamespace="${NS}">
  <wsdl:types>${types}</wsdl:types>
  <wsdl:message name="in"><wsdl:part name="p" element="r:Order"/></wsdl:message>
  <wsdl:message name="out"><wsdl:part name="p" element="r:Ack"/></wsdl:message>
  <wsdl:portType name="P"><wsdl:operation name="place"><wsdl:input message="r:in"/><wsdl:output message="r:out"/></wsdl:operation></wsdl:portType>
  <wsdl:binding name="B" type="r:P"><soap12:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="place"><soap12:operation soapAction=""/><wsdl:input><soap12:body use="literal"/></wsdl:input><wsdl:output><soap12:body use="literal"/></wsdl:output></wsdl:operation></wsdl:binding>
  <wsdl:service name="S"><wsdl:port name="p" binding="r:B"><soap12:address location="http://localhost/"/></wsdl:port></wsdl:service>
</wsdl:definitions>`;
  const files = (name: string, wsdlText: string, xsds: Record<string, string>) => {
    const folder = mkdtempSync(join(dir, `${name}-`));
    writeFileSync(join(folder, "c.wsdl"), wsdlText);
    for (const [file, text] of Object.entries(xsds)) writeFileSync(join(folder, file), text);
    return join(folder, "c.wsdl");
  };
  const common = schema(
    `elementFormDefault="qualified"`,
    `<xs:complexType name="Line"><xs:sequence><xs:element name="sku" type="xs:string"/><xs:element name="qty" type="xs:int"/></xs:sequence></xs:complexType>
     <xs:element name="Ack"><xs:complexType><xs:sequence><xs:element name="ok" type="xs:boolean"/></xs:sequence></xs:complexType></xs:element>`,
  );
  const inline = schema(
    `xmlns:r="${NS}" targetNamespace="${NS}" elementFormDefault="qualified"`,
    `<xs:include schemaLocation="common.xsd"/><xs:element name="Order"><xs:complexType><xs:sequence><xs:element name="line" type="r:Line" maxOccurs="unbounded"/></xs:sequence></xs:complexType></xs:element>`,
  );

  it("a no-namespace document included into wsdl:types: its types and elements are the contract's", () => {
    const path = files("chameleon", wsdl(inline), { "common.xsd": common });
    const contract = loadContract(path);
    expect(contract.operations[0]).toMatchObject({ input: `{${NS}}Order`, output: `{${NS}}Ack` });
    expect(
      contract.schema.decode(doc(`<Order xmlns="${NS}"><line><sku>a</sku><qty>2</qty></line></Order>`)),
    ).toEqual({ line: [{ sku: "a", qty: 2 }] });
    expect(contract.schemaFiles.has("common.xsd")).toBe(true);
  });

  it("svc-soap-types writes the included types", () => {
    const path = files("types", wsdl(inline), { "common.xsd": common });
    const ts = generateTypes(wsdl(inline), { baseDir: join(path, "..") });
    expect(ts).toContain("export type Line = {\n  /** xs:string */\n  sku: string;");
    expect(ts).toContain("  line: Line[];");
    expect(ts).toContain("ok: boolean;");
  });

  it("an included document of another namespace is refused, naming it", () => {
    const path = files("other", wsdl(inline), {
      "common.xsd": common.replace("<xs:schema ", '<xs:schema targetNamespace="urn:x" '),
    });
    expect(() => loadContract(path)).toThrow(
      /common\.xsd: xs:include of a schema whose targetNamespace "urn:x" is not "urn:r"/,
    );
  });

  it("xs:include without schemaLocation names the attribute that is not one (Part 1 §4.2.1)", () => {
    const path = files(
      "noloc",
      wsdl(inline.replace('schemaLocation="common.xsd"', 'location="common.xsd"')),
      {},
    );
    expect(() => loadContract(path)).toThrow(
      /wsdl:types: xs:include without schemaLocation cannot be resolved \(XML Schema Part 1 §4\.2\.1 requires it; location= is not an attribute of xs:include\)/,
    );
  });
});

describe("real-world contracts refused for a type they do not declare say what is near (test/corpus)", () => {
  const corpus = join(import.meta.dirname, "../../test/corpus/node-soap");
  it.each([
    [
      "typeref/order.wsdl",
      /^ns2\.xsd: xs:element "backupItem": type LineItemType is not declared \(an unprefixed name, with no default namespace in scope, names no namespace: type \{http:\/\/example\.org\/ns2\}LineItemType is declared\)$/,
    ],
    [
      "extended_element.wsdl",
      /xs:extension \(in "ExtendedDummyRequest"\): type \{http:\/\/www\.Dummy\.com\/Name\/Types\}DummyRequest is not declared \(an element of that name is declared, not a type\)$/,
    ],
    [
      "perf/order.wsdl",
      /xs:element "rabbitHole": type RabbitHole is not declared \(an element of that name is declared, not a type\)$/,
    ],
  ])("%s", (file, first) => {
    expect(problems(() => loadContract(join(corpus, file)))[0]).toMatch(first);
  });
  it("a fragment cut short: every missing type at once", () => {
    const found = problems(() => loadContract(join(corpus, "typeof_null_extend_check.wsdl")));
    expect(
      found.filter((p) => / is not declared$/.test(p)).map((p) => p.replace(/^.*: type \{[^}]*\}/, "")),
    ).toEqual([
      "QAConfigType is not declared",
      "QALocator is not declared",
      "QAPicklistType is not declared",
      "QAAddressType is not declared",
      "VerifyLevelType is not declared",
    ]);
  });
});
