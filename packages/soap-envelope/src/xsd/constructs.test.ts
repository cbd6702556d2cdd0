import { describe, expect, it } from "vitest";
import { parseXmlString, resolveLimits } from "../xml/reader.js";
import { compileSchemas, SchemaCompileError, SchemaValidationError } from "./schema.js";

// XML Schema 1.0 Part 1 constructs beyond plain sequences: one table per construct, each row an
// instance (or a value) and what it decodes (encodes) to or the error it gets.

const NS = "urn:c";
const XSI = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"';
const limits = resolveLimits();
const xsd = (body: string, tns = NS) =>
  `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:t="${tns}" targetNamespace="${tns}" elementFormDefault="qualified">${body}</xs:schema>`;
const compile = (...bodies: string[]) =>
  compileSchemas(
    bodies.map((b, i) => ({
      root: parseXmlString(b.startsWith("<xs:schema") ? b : xsd(b), limits),
      location: `s${i}.xsd`,
    })),
  );
const doc = (xml: string) => parseXmlString(xml, limits);

type Row = [instance: string, expected: unknown];

/** Runs each row: an object is the decoded value, a RegExp the SchemaValidationError message. */
function decodes(schema: ReturnType<typeof compile>, rows: Row[]) {
  it.each(rows)("%s", (instance, expected) => {
    if (expected instanceof RegExp) {
      expect(() => schema.decode(doc(instance))).toThrow(SchemaValidationError);
      expect(() => schema.decode(doc(instance))).toThrow(expected);
    } else {
      expect(schema.decode(doc(instance))).toEqual(expected);
    }
  });
}

/** Each value encodes and decodes back to itself. */
function roundTrips(schema: ReturnType<typeof compile>, element: string, values: unknown[]) {
  it.each(values.map((v) => [JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? `${x}n` : x)), v]))(
    "%s encodes and decodes back",
    (_label, value) => {
      const xml = schema.encode(`{${NS}}${element}`, value);
      expect(schema.decode(doc(xml))).toEqual(value);
    },
  );
}

describe("an element without a type is xs:anyType (Part 1 §3.3.2, §3.4.7)", () => {
  const s = compile(`<xs:element name="A"/><xs:element name="N" type="xs:int"/>`);
  decodes(s, [
    [`<A xmlns="${NS}">hi</A>`, { $text: "hi" }],
    [`<A xmlns="${NS}"/>`, {}],
    [
      `<A xmlns="${NS}" x="1"><b>2</b></A>`,
      { $attributes: { x: "1" }, $any: [{ name: `{${NS}}b`, value: { $text: "2" } }] },
    ],
    // lax: a child the schema declares is validated against its declaration
    [`<A xmlns="${NS}"><N>7</N></A>`, { $any: [{ name: `{${NS}}N`, value: 7 }] }],
    [`<A xmlns="${NS}"><N>x</N></A>`, /A\/N: "x" is not a valid xs:int/],
    // xsi:type picks the type of the value
    [`<A xmlns="${NS}" ${XSI} xmlns:xs="http://www.w3.org/2001/XMLSchema" xsi:type="xs:int"> 5 </A>`, 5],
    [
      `<A xmlns="${NS}" ${XSI} xmlns:xs="http://www.w3.org/2001/XMLSchema" xsi:type="xs:int">x</A>`,
      /not a valid xs:int/,
    ],
    [`<A xmlns="${NS}" ${XSI} xsi:type="nope">x</A>`, /names no type of the schema/],
  ]);
  it("a string is written as text, an object as its attributes, elements and text", () => {
    expect(s.encode(`{${NS}}A`, "a<b")).toBe(`<A xmlns="${NS}">a&lt;b</A>`);
    expect(
      s.encode(`{${NS}}A`, { $attributes: { x: "1" }, $text: "t", $any: [{ name: `{${NS}}N`, value: 3 }] }),
    ).toBe(`<A xmlns="${NS}" x="1">t<N>3</N></A>`);
    expect(() => s.encode(`{${NS}}A`, { $any: [{ name: `{${NS}}N`, value: "x" }] })).toThrow(
      /"x" is not a valid xs:int/,
    );
  });
});

describe("xs:any and processContents (Part 1 §3.10)", () => {
  const s = compile(
    `<xs:element name="Known" type="xs:int"/>
     <xs:element name="Strict"><xs:complexType><xs:sequence><xs:any namespace="##targetNamespace" processContents="strict"/></xs:sequence></xs:complexType></xs:element>
     <xs:element name="Lax"><xs:complexType><xs:sequence><xs:element name="a" type="xs:string"/><xs:any namespace="##other" processContents="lax" minOccurs="0" maxOccurs="2"/></xs:sequence></xs:complexType></xs:element>
     <xs:element name="Skip"><xs:complexType><xs:sequence><xs:any namespace="##local urn:x" processContents="skip" maxOccurs="unbounded"/></xs:sequence></xs:complexType></xs:element>`,
  );
  decodes(s, [
    [`<Strict xmlns="${NS}"><Known>1</Known></Strict>`, { $any: [{ name: `{${NS}}Known`, value: 1 }] }],
    [`<Strict xmlns="${NS}"><Known>one</Known></Strict>`, /not a valid xs:int/],
    [
      `<Strict xmlns="${NS}"><Other/></Strict>`,
      /element Other \{urn:c\} is not declared \(xs:any processContents="strict"\)/,
    ],
    [
      `<Strict xmlns="${NS}"><o xmlns="urn:o"/></Strict>`,
      /expected an element of the namespaces urn:c, found o \{urn:o\}/,
    ],
    [`<Lax xmlns="${NS}"><a>x</a></Lax>`, { a: "x" }],
    [
      `<Lax xmlns="${NS}"><a>x</a><o xmlns="urn:o" k="v">t</o></Lax>`,
      { a: "x", $any: [{ name: "{urn:o}o", value: { $attributes: { k: "v" }, $text: "t" } }] },
    ],
    [`<Lax xmlns="${NS}"><a>x</a><Known>1</Known></Lax>`, /unexpected element Known \{urn:c\}/],
    [`<Lax xmlns="${NS}"><a>x</a><n xmlns="">1</n></Lax>`, /unexpected element n$/],
    [
      `<Lax xmlns="${NS}"><a>x</a><o xmlns="urn:o"/><o xmlns="urn:o"/><o xmlns="urn:o"/></Lax>`,
      /unexpected element o \{urn:o\}/,
    ],
    [
      `<Skip xmlns="${NS}"><n xmlns="" q="1"><deep>x</deep></n><m xmlns="urn:x"/></Skip>`,
      {
        $any: [
          { name: "n", value: { $attributes: { q: "1" }, $any: [{ name: "deep", value: { $text: "x" } }] } },
          { name: "{urn:x}m", value: {} },
        ],
      },
    ],
    [`<Skip xmlns="${NS}"/>`, /expected an element of the namespaces \(none\), urn:x/],
  ]);
  roundTrips(s, "Lax", [
    { a: "x", $any: [{ name: "{urn:o}o", value: { $attributes: { k: "v" }, $text: "t" } }] },
  ]);
  roundTrips(s, "Strict", [{ $any: [{ name: `{${NS}}Known`, value: 5 }] }]);
  it("entries in a namespace no wildcard takes, or undeclared under strict, are refused", () => {
    expect(() => s.encode(`{${NS}}Lax`, { a: "x", $any: [{ name: `{${NS}}x`, value: {} }] })).toThrow(
      /\$any\[0\]: matches no xs:any/,
    );
    expect(() => s.encode(`{${NS}}Strict`, { $any: [{ name: `{${NS}}Nope`, value: 1 }] })).toThrow(
      /not declared/,
    );
    expect(() => s.encode(`{${NS}}Lax`, { a: "x", $any: [{ name: "{urn:o}bad name", value: {} }] })).toThrow(
      /is not a name/,
    );
  });
});

describe("xs:anyAttribute (Part 1 §3.10)", () => {
  const s = compile(
    `<xs:element name="E"><xs:complexType><xs:attribute name="id" type="xs:int"/><xs:anyAttribute namespace="##other" processContents="lax"/></xs:complexType></xs:element>`,
  );
  decodes(s, [
    [`<E xmlns="${NS}" id="1" xmlns:o="urn:o" o:k="v"/>`, { id: 1, $attributes: { "{urn:o}k": "v" } }],
    [`<E xmlns="${NS}" k="v"/>`, /attribute "k" is not allowed/],
  ]);
  roundTrips(s, "E", [{ id: 2, $attributes: { "{urn:o}k": "v", "{urn:p}j": "w" } }]);
  it("an attribute outside the wildcard's namespaces is not encoded", () => {
    expect(() => s.encode(`{${NS}}E`, { $attributes: { k: "v" } })).toThrow(/does not allow/);
  });
});

describe("complexContent extension and restriction (Part 1 §3.4.2)", () => {
  const s = compile(
    `<xs:complexType name="Base"><xs:sequence><xs:element name="a" type="xs:int"/></xs:sequence><xs:attribute name="v" type="xs:string"/><xs:attribute name="w" type="xs:string"/></xs:complexType>
     <xs:complexType name="Ext"><xs:complexContent><xs:extension base="t:Base"><xs:sequence><xs:element name="b" type="xs:string"/></xs:sequence><xs:attribute name="x" type="xs:int"/></xs:extension></xs:complexContent></xs:complexType>
     <xs:complexType name="Res"><xs:complexContent><xs:restriction base="t:Base"><xs:sequence><xs:element name="a" type="xs:int" minOccurs="0"/></xs:sequence><xs:attribute name="w" use="prohibited"/></xs:restriction></xs:complexContent></xs:complexType>
     <xs:element name="E" type="t:Ext"/><xs:element name="R" type="t:Res"/>`,
  );
  decodes(s, [
    [`<E xmlns="${NS}" v="1" x="2"><a>1</a><b>z</b></E>`, { v: "1", x: 2, a: 1, b: "z" }],
    [`<E xmlns="${NS}"><b>z</b><a>1</a></E>`, /expected element a/],
    [`<R xmlns="${NS}" v="1"/>`, { v: "1" }],
    [`<R xmlns="${NS}" w="1"/>`, /attribute "w" is not allowed/],
  ]);
  it("the base's content comes first whatever the object's key order", () => {
    expect(s.encode(`{${NS}}E`, { b: "z", a: 1 })).toBe(`<E xmlns="${NS}"><a>1</a><b>z</b></E>`);
  });
});

describe("abstract types and xsi:type (Part 1 §3.3.4 clause 4, §3.4.6)", () => {
  const s = compile(
    `<xs:complexType name="Shape" abstract="true"><xs:sequence><xs:element name="id" type="xs:int"/></xs:sequence></xs:complexType>
     <xs:complexType name="Circle"><xs:complexContent><xs:extension base="t:Shape"><xs:sequence><xs:element name="r" type="xs:double"/></xs:sequence></xs:extension></xs:complexContent></xs:complexType>
     <xs:complexType name="Square"><xs:complexContent><xs:extension base="t:Shape"><xs:sequence><xs:element name="side" type="xs:double"/></xs:sequence></xs:extension></xs:complexContent></xs:complexType>
     <xs:complexType name="Other"><xs:sequence><xs:element name="id" type="xs:int"/></xs:sequence></xs:complexType>
     <xs:complexType name="Sealed" block="extension"><xs:sequence><xs:element name="id" type="xs:int"/></xs:sequence></xs:complexType>
     <xs:complexType name="More"><xs:complexContent><xs:extension base="t:Sealed"/></xs:complexContent></xs:complexType>
     <xs:element name="S" type="t:Shape"/><xs:element name="Z" type="t:Sealed"/><xs:element name="C" type="t:Circle"/>
     <xs:element name="List"><xs:complexType><xs:sequence><xs:element name="s" type="t:Shape" maxOccurs="unbounded"/></xs:sequence></xs:complexType></xs:element>`,
  );
  const at = (type: string, inner: string, el = "S") =>
    `<${el} xmlns="${NS}" xmlns:t="${NS}" ${XSI} xsi:type="${type}">${inner}</${el}>`;
  decodes(s, [
    [
      `<S xmlns="${NS}"><id>1</id></S>`,
      /abstract type \{urn:c\}Shape: xsi:type must name a type derived from it/,
    ],
    [at("t:Circle", "<id>1</id><r>2.5</r>"), { $type: `{${NS}}Circle`, id: 1, r: 2.5 }],
    [at("t:Square", "<id>1</id><r>2.5</r>"), /expected element side/],
    [at("t:Other", "<id>1</id>"), /cannot replace \{urn:c\}Shape: it is not derived from the declared type/],
    [at("t:Shape", "<id>1</id>"), /abstract type/],
    [at("t:More", "<id>1</id>", "Z"), /derivation by extension is blocked/],
    [at("u:Circle", "<id>1</id>"), /its prefix is not declared/],
    [
      `<List xmlns="${NS}" xmlns:t="${NS}" ${XSI}><s xsi:type="t:Square"><id>1</id><side>2</side></s><s xsi:type="t:Circle"><id>2</id><r>1</r></s></List>`,
      {
        s: [
          { $type: `{${NS}}Square`, id: 1, side: 2 },
          { $type: `{${NS}}Circle`, id: 2, r: 1 },
        ],
      },
    ],
  ]);
  roundTrips(s, "S", [{ $type: `{${NS}}Circle`, id: 1, r: 0.5 }]);
  roundTrips(s, "List", [{ s: [{ $type: `{${NS}}Square`, id: 1, side: 2 }] }]);
  it("a value without $type, or naming a type not derived from the declared one, is not encoded", () => {
    expect(() => s.encode(`{${NS}}S`, { id: 1 })).toThrow(/abstract type/);
    expect(() => s.encode(`{${NS}}S`, { $type: `{${NS}}Other`, id: 1 })).toThrow(/not derived/);
    expect(() => s.encode(`{${NS}}Z`, { $type: `{${NS}}More`, id: 1 })).toThrow(/blocked/);
    expect(s.encode(`{${NS}}S`, { $type: `{${NS}}Circle`, id: 1, r: 1 })).toContain('xsi:type="xt:Circle"');
  });
  it("an element of a derived type takes a value whose $type names that type, and no other", () => {
    expect(s.encode(`{${NS}}C`, { $type: `{${NS}}Circle`, id: 1, r: 1 })).toBe(
      `<C xmlns="${NS}"><id>1</id><r>1</r></C>`,
    );
    expect(() => s.encode(`{${NS}}C`, { $type: `{${NS}}Square`, id: 1, side: 1 })).toThrow(/not derived/);
  });
});

describe("simpleContent extension and restriction (Part 1 §3.4.2)", () => {
  const s = compile(
    `<xs:complexType name="Money"><xs:simpleContent><xs:extension base="xs:decimal"><xs:attribute name="cur" type="xs:string" use="required"/></xs:extension></xs:simpleContent></xs:complexType>
     <xs:complexType name="Small"><xs:simpleContent><xs:restriction base="t:Money"><xs:maxInclusive value="10"/></xs:restriction></xs:simpleContent></xs:complexType>
     <xs:complexType name="Tagged"><xs:simpleContent><xs:extension base="t:Money"><xs:attribute name="tag" type="xs:token"/></xs:extension></xs:simpleContent></xs:complexType>
     <xs:complexType name="Coded"><xs:simpleContent><xs:restriction base="t:Money"><xs:maxInclusive value="10"/><xs:attribute name="cur" use="required"><xs:simpleType><xs:restriction base="xs:string"><xs:length value="3"/></xs:restriction></xs:simpleType></xs:attribute></xs:restriction></xs:simpleContent></xs:complexType>
     <xs:element name="S" type="t:Small"/><xs:element name="T" type="t:Tagged"/><xs:element name="C" type="t:Coded"/>`,
  );
  decodes(s, [
    [`<S xmlns="${NS}" cur="EUR">9.5</S>`, { cur: "EUR", $value: "9.5" }],
    // A restriction's attribute uses follow its facets: each restricts the base's of its name.
    [`<C xmlns="${NS}" cur="EUR">9.5</C>`, { cur: "EUR", $value: "9.5" }],
    [`<C xmlns="${NS}" cur="EURO">9.5</C>`, /length/],
    [`<C xmlns="${NS}" cur="EUR">11</C>`, /must be ≤ 10/],
    [`<S xmlns="${NS}" cur="EUR">10.5</S>`, /must be ≤ 10/],
    [`<S xmlns="${NS}">1</S>`, /@cur: is required/],
    [`<T xmlns="${NS}" cur="EUR" tag=" a  b ">1</T>`, { cur: "EUR", tag: "a b", $value: "1" }],
  ]);
});

describe("complexContent extension of a type with simple content, attributes only (Part 1 §3.4.2, clause 3.2.1)", () => {
  const s = compile(
    `<xs:complexType name="Money"><xs:simpleContent><xs:extension base="xs:decimal"><xs:attribute name="cur" type="xs:string" use="required"/></xs:extension></xs:simpleContent></xs:complexType>
     <xs:complexType name="Keyed"><xs:complexContent><xs:extension base="t:Money"><xs:attribute name="key" type="xs:int"/></xs:extension></xs:complexContent></xs:complexType>
     <xs:complexType name="Same"><xs:complexContent><xs:extension base="t:Money"><xs:sequence/></xs:extension></xs:complexContent></xs:complexType>
     <xs:element name="K" type="t:Keyed"/><xs:element name="S" type="t:Same"/>`,
  );
  decodes(s, [
    [`<K xmlns="${NS}" cur="EUR" key="7">9.5</K>`, { cur: "EUR", key: 7, $value: "9.5" }],
    [`<K xmlns="${NS}" cur="EUR">x</K>`, /not a valid xs:decimal/],
    [`<K xmlns="${NS}" key="7">1</K>`, /@cur: is required/],
    [`<K xmlns="${NS}" cur="EUR"><a/></K>`, /K/],
    [`<S xmlns="${NS}" cur="EUR">1</S>`, { cur: "EUR", $value: "1" }],
  ]);
  roundTrips(s, "K", [{ cur: "EUR", key: 7, $value: "9.5" }]);

  it.each([
    ["with elements of its own", `<xs:sequence><xs:element name="e" type="xs:int"/></xs:sequence>`],
    ["by restriction with a content model", ""],
  ])("refused %s: the base's content is text (cos-ct-extends 1.4)", (_label, content) => {
    const method = content === "" ? "restriction" : "extension";
    const body = content || `<xs:sequence><xs:element name="e" type="xs:int"/></xs:sequence>`;
    expect(() =>
      compile(
        `<xs:complexType name="Money"><xs:simpleContent><xs:extension base="xs:decimal"/></xs:simpleContent></xs:complexType>
         <xs:complexType name="X"><xs:complexContent><xs:${method} base="t:Money">${body}</xs:${method}></xs:complexContent></xs:complexType>`,
      ),
    ).toThrow(/base Money has simple content; derive it with xs:simpleContent/);
  });
});

describe("xs:group and xs:attributeGroup (Part 1 §3.7, §3.6)", () => {
  const s = compile(
    `<xs:group name="Pair"><xs:sequence><xs:element name="k" type="xs:string"/><xs:element name="v" type="xs:int"/></xs:sequence></xs:group>
     <xs:attributeGroup name="Common"><xs:attribute name="id" type="xs:ID"/><xs:attributeGroup ref="t:More"/></xs:attributeGroup>
     <xs:attributeGroup name="More"><xs:attribute name="lang" type="xs:language"/></xs:attributeGroup>
     <xs:element name="One"><xs:complexType><xs:group ref="t:Pair"/><xs:attributeGroup ref="t:Common"/></xs:complexType></xs:element>
     <xs:element name="Many"><xs:complexType><xs:sequence><xs:group ref="t:Pair" maxOccurs="unbounded"/></xs:sequence></xs:complexType></xs:element>`,
  );
  decodes(s, [
    [`<One xmlns="${NS}" id="a" lang="en"><k>a</k><v>1</v></One>`, { id: "a", lang: "en", k: "a", v: 1 }],
    [`<One xmlns="${NS}" lang="english!"><k>a</k><v>1</v></One>`, /not a valid xs:language/],
    [`<Many xmlns="${NS}"><k>a</k><v>1</v><k>b</k><v>2</v></Many>`, { k: ["a", "b"], v: [1, 2] }],
  ]);
  roundTrips(s, "One", [{ id: "a", lang: "en", k: "a", v: 1 }]);
});

describe("a type recursive through an extension or a group compiles once and decodes to the depth sent", () => {
  const s = compile(
    `<xs:complexType name="Node"><xs:sequence><xs:element name="v" type="xs:int"/></xs:sequence></xs:complexType>
     <xs:complexType name="Tree"><xs:complexContent><xs:extension base="t:Node"><xs:sequence><xs:element name="kid" type="t:Tree" minOccurs="0" maxOccurs="unbounded"/></xs:sequence></xs:extension></xs:complexContent></xs:complexType>
     <xs:group name="G"><xs:sequence><xs:element name="n" minOccurs="0"><xs:complexType><xs:group ref="t:G"/></xs:complexType></xs:element></xs:sequence></xs:group>
     <xs:element name="T" type="t:Tree"/><xs:element name="N"><xs:complexType><xs:group ref="t:G"/></xs:complexType></xs:element>`,
  );
  decodes(s, [
    [
      `<T xmlns="${NS}"><v>1</v><kid><v>2</v><kid><v>3</v></kid></kid></T>`,
      { v: 1, kid: [{ v: 2, kid: [{ v: 3 }] }] },
    ],
    [`<N xmlns="${NS}"><n><n><n/></n></n></N>`, { n: { n: { n: {} } } }],
  ]);
  it("an instance deeper than the parser's depth limit is refused by the parser", () => {
    const deep = `<N xmlns="${NS}">${"<n>".repeat(100)}${"</n>".repeat(100)}</N>`;
    expect(() => doc(deep)).toThrow(/deeper than 64/);
  });
});

describe("xs:list and xs:union (Part 2 §2.5.1)", () => {
  const s = compile(
    `<xs:simpleType name="Ints"><xs:list itemType="xs:int"/></xs:simpleType>
     <xs:simpleType name="TwoInts"><xs:restriction base="t:Ints"><xs:length value="2"/></xs:restriction></xs:simpleType>
     <xs:simpleType name="Size"><xs:union memberTypes="xs:int"><xs:simpleType><xs:restriction base="xs:token"><xs:enumeration value="small"/><xs:enumeration value="large"/></xs:restriction></xs:simpleType></xs:union></xs:simpleType>
     <xs:simpleType name="Sizes"><xs:list itemType="t:Size"/></xs:simpleType>
     <xs:element name="L" type="t:TwoInts"/><xs:element name="U" type="t:Size"/><xs:element name="M" type="t:Sizes"/>`,
  );
  decodes(s, [
    [`<L xmlns="${NS}"> 1 \n 2 </L>`, [1, 2]],
    [`<L xmlns="${NS}">1 2 3</L>`, /length must be 2 items/],
    [`<L xmlns="${NS}">1 x</L>`, /"x" is not a valid xs:int/],
    [`<U xmlns="${NS}"> 42 </U>`, 42],
    [`<U xmlns="${NS}"> small </U>`, "small"],
    [`<U xmlns="${NS}">medium</U>`, /is not a value of any member type of Size/],
    [`<M xmlns="${NS}">1 large 3</M>`, [1, "large", 3]],
  ]);
  roundTrips(s, "L", [[3, 4]]);
  roundTrips(s, "U", [7, "large"]);
  roundTrips(s, "M", [[1, "small"]]);
  it("a list item holding white space, or a value no member takes, is not encoded", () => {
    expect(() => s.encode(`{${NS}}M`, ["a b"])).toThrow(SchemaValidationError);
    expect(() => s.encode(`{${NS}}U`, "medium")).toThrow(/any member type/);
  });
});

describe("mixed content and the whiteSpace facet", () => {
  const s = compile(
    `<xs:element name="P"><xs:complexType mixed="true"><xs:sequence><xs:element name="b" type="xs:string" minOccurs="0"/></xs:sequence></xs:complexType></xs:element>
     <xs:simpleType name="Code"><xs:restriction base="xs:string"><xs:whiteSpace value="collapse"/><xs:maxLength value="3"/></xs:restriction></xs:simpleType>
     <xs:element name="C" type="t:Code"/>`,
  );
  decodes(s, [
    [`<P xmlns="${NS}">one <b>two</b> three</P>`, { $text: "one  three", b: "two" }],
    [`<C xmlns="${NS}">  a  b </C>`, "a b"],
    [`<C xmlns="${NS}"> abcd </C>`, /length must be at most 3/],
  ]);
});

describe("identity constraints are read, not enforced (Part 1 §3.11)", () => {
  it("an element with type= and xs:unique compiles, and duplicates are not refused", () => {
    const s = compile(
      `<xs:complexType name="L"><xs:sequence><xs:element name="i" type="xs:int" maxOccurs="unbounded"/></xs:sequence></xs:complexType>
       <xs:element name="E" type="t:L"><xs:unique name="u"><xs:selector xpath="t:i"/><xs:field xpath="."/></xs:unique><xs:key name="k"><xs:selector xpath="t:i"/><xs:field xpath="."/></xs:key><xs:keyref name="r" refer="t:k"><xs:selector xpath="t:i"/><xs:field xpath="."/></xs:keyref></xs:element>`,
    );
    expect(s.decode(doc(`<E xmlns="${NS}"><i>1</i><i>1</i></E>`))).toEqual({ i: [1, 1] });
  });
});

describe("xs:import without schemaLocation (Part 1 §4.2.3)", () => {
  const other = xsd(
    `<xs:complexType name="T"><xs:sequence><xs:element name="x" type="xs:int"/></xs:sequence></xs:complexType>`,
    "urn:other",
  );
  it("resolves to a sibling schema with that targetNamespace", () => {
    const s = compile(
      `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:o="urn:other" targetNamespace="${NS}" elementFormDefault="qualified"><xs:import namespace="urn:other"/><xs:element name="E" type="o:T"/></xs:schema>`,
      other,
    );
    expect(s.decode(doc(`<E xmlns="${NS}"><x xmlns="urn:other">1</x></E>`))).toEqual({ x: 1 });
  });
  it("a namespace no schema of the set declares stops the load, naming it", () => {
    expect(() => compile(`<xs:import namespace="urn:missing"/>`)).toThrow(SchemaCompileError);
    expect(() => compile(`<xs:import namespace="urn:missing"/>`)).toThrow(
      /urn:missing.*no schema of the contract/,
    );
  });
  it("the SOAP-ENC and xml namespaces are known: a SOAP-ENC array (its wsdl:arrayType's items as `item`) and xml:lang compile", () => {
    const s = compile(
      `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:t="${NS}" xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/" xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" targetNamespace="${NS}">
        <xs:import namespace="http://schemas.xmlsoap.org/soap/encoding/"/><xs:import namespace="http://www.w3.org/XML/1998/namespace"/>
        <xs:complexType name="Names"><xs:complexContent><xs:restriction base="soapenc:Array"><xs:attribute ref="soapenc:arrayType" wsdl:arrayType="xs:string[]"/></xs:restriction></xs:complexContent></xs:complexType>
        <xs:element name="A" type="t:Names"/>
        <xs:element name="L"><xs:complexType><xs:attribute ref="xml:lang"/></xs:complexType></xs:element>
      </xs:schema>`,
    );
    expect(
      s.decode(
        doc(
          `<t:A xmlns:t="${NS}" ${XSI} xmlns:xs="http://www.w3.org/2001/XMLSchema"><item xsi:type="xs:string">a</item></t:A>`,
        ),
      ),
    ).toEqual({ item: ["a"] });
    expect(s.decode(doc(`<t:L xmlns:t="${NS}" xml:lang="en"/>`))).toEqual({ lang: "en" });
    expect(() => s.decode(doc(`<t:L xmlns:t="${NS}" xml:lang="not a tag"/>`))).toThrow(/xs:language/);
    // Namespaces in XML 1.0 §3: written with the xml prefix, which no other prefix may stand for.
    expect(s.encode(`{${NS}}L`, { lang: "en" })).toBe(`<L xmlns="${NS}" xml:lang="en"></L>`);
    expect(s.decode(doc(s.encode(`{${NS}}L`, { lang: "en" })))).toEqual({ lang: "en" });
  });
});

describe("an element's default and fixed value (Part 1 §3.3.4 clause 5)", () => {
  const s = compile(
    `<xs:element name="D" type="xs:boolean" default="false"/>
     <xs:element name="F" type="xs:token" fixed="v1"/>
     <xs:complexType name="Amount"><xs:simpleContent><xs:extension base="xs:int"><xs:attribute name="u" type="xs:string"/></xs:extension></xs:simpleContent></xs:complexType>
     <xs:element name="A" type="t:Amount" default="0"/>`,
  );
  decodes(s, [
    [`<D xmlns="${NS}"/>`, false],
    [`<D xmlns="${NS}">1</D>`, true],
    [`<F xmlns="${NS}"/>`, "v1"],
    [`<F xmlns="${NS}"> v1 </F>`, "v1"],
    [`<F xmlns="${NS}">v2</F>`, /F: must be v1 \(fixed\)/],
    [`<A xmlns="${NS}" u="x"/>`, { u: "x", $value: 0 }],
  ]);
  it("a default on an element of element-only content is refused at start-up", () => {
    expect(() =>
      compile(
        `<xs:element name="E" default="x"><xs:complexType><xs:sequence><xs:element name="a" type="xs:int"/></xs:sequence></xs:complexType></xs:element>`,
      ),
    ).toThrow(/default or fixed needs a simple type or simple content/);
  });
});

describe("range facets on xs:duration, a partial order (Part 2 §3.2.6.2)", () => {
  // The bounds .NET's serialization schema gives its TimeSpan (ser:duration).
  const s = compile(
    `<xs:simpleType name="TimeSpan"><xs:restriction base="xs:duration"><xs:pattern value="\\-?P(\\d*D)?(T(\\d*H)?(\\d*M)?(\\d*(\\.\\d*)?S)?)?"/><xs:minInclusive value="-P10675199DT2H48M5.4775808S"/><xs:maxInclusive value="P10675199DT2H48M5.4775807S"/></xs:restriction></xs:simpleType>
     <xs:simpleType name="UpToAMonth"><xs:restriction base="xs:duration"><xs:maxExclusive value="P1M"/></xs:restriction></xs:simpleType>
     <xs:element name="T" type="t:TimeSpan"/><xs:element name="M" type="t:UpToAMonth"/>`,
  );
  decodes(s, [
    [`<T xmlns="${NS}">PT1H</T>`, "PT1H"],
    [`<T xmlns="${NS}">P10675199DT2H48M5.4775807S</T>`, "P10675199DT2H48M5.4775807S"],
    [`<T xmlns="${NS}">P10675199DT2H48M5.4775808S</T>`, /must be ≤/],
    [`<T xmlns="${NS}">-P10675199DT2H48M5.4775808S</T>`, "-P10675199DT2H48M5.4775808S"],
    [`<T xmlns="${NS}">-P10675199DT2H48M5.4775809S</T>`, /must be ≥/],
    [`<M xmlns="${NS}">P27D</M>`, "P27D"],
    [`<M xmlns="${NS}">P32D</M>`, /must be < P1M/],
    // P30D is neither shorter nor longer than P1M (28 to 31 days): not ordered, so not < P1M.
    [`<M xmlns="${NS}">P30D</M>`, /must be < P1M/],
  ]);
});
