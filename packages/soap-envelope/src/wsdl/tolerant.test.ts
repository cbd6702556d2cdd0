import { describe, expect, it, vi } from "vitest";
import { createSoapService } from "../binding/service.js";
import { parseXmlString, resolveLimits } from "../xml/reader.js";
import { SchemaCompileError } from "../xsd/schema.js";
import {
  type Contract,
  type ContractDefect,
  type ContractOperation,
  type DefectClass,
  loadContract,
} from "./contract.js";

// Each defect class a tolerant load (`strict: false`) passes over, on a small contract: strict
// refuses it as it always has, tolerant loads it, reports exactly that defect with its file and
// line, and messages are validated against what the load assumed.

const WSDL = `<?xml version="1.0"?>
<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
    xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:tns="urn:t" xmlns:ty="urn:types" targetNamespace="urn:t">
  <types>
    <xs:schema targetNamespace="urn:t" elementFormDefault="qualified">
      <!--imports-->
      <xs:element name="Req">
        <xs:complexType>
          <xs:sequence>
            <xs:element name="id" type="xs:int"/>
            <!--members-->
          </xs:sequence>
          <!--attributes-->
        </xs:complexType>
      </xs:element>
      <xs:element name="Res"><xs:complexType><xs:sequence><xs:element name="ok" type="xs:boolean"/></xs:sequence></xs:complexType></xs:element>
      <xs:element name="Oops" type="xs:string"/>
      <!--globals-->
    </xs:schema>
  </types>
  <message name="In"><part name="p" element="tns:Req"/></message>
  <message name="Out"><part name="p" element="tns:Res"/></message>
  <message name="Fault"><part name="f" element="tns:Oops"/></message>
  <portType name="P">
    <operation name="Get">
      <input message="tns:In"/>
      <output message="tns:Out"/>
      <fault name="oops" message="tns:Fault"/>
    </operation>
  </portType>
  <binding name="B" type="tns:P">
    <soap:binding transport="http://schemas.xmlsoap.org/soap/http"/>
    <operation name="Get">
      <soap:operation soapAction="urn:get"/>
      <input><soap:body use="literal"/><!--input header--></input>
      <output><soap:body use="literal"/></output>
      <fault name="oops"><soap:fault name="oops" use="literal"/></fault>
    </operation>
    <!--binding operations-->
  </binding>
  <service name="S">
    <port name="Port" binding="tns:B"><soap:address location="http://localhost/"/></port>
  </service>
</definitions>
`;

/** The WSDL's service element, which some rows leave out. */
const SERVICE = `<service name="S">
    <port name="Port" binding="tns:B"><soap:address location="http://localhost/"/></port>
  </service>`;

/** The WSDL with each `<!--marker-->` (or other text) replaced. */
function wsdl(edits: Record<string, string>): string {
  let out = WSDL;
  for (const [from, to] of Object.entries(edits)) {
    expect(out, from).toContain(from);
    out = out.replace(from, to);
  }
  return out;
}

/** The 1-based line of the first line holding `text`. */
function lineOf(document: string, text: string): number {
  const index = document.split("\n").findIndex((line) => line.includes(text));
  expect(index, text).toBeGreaterThanOrEqual(0);
  return index + 1;
}

interface Loaded {
  contract: Contract;
  warn: ReturnType<typeof vi.fn>;
}

/** Loads `svc.wsdl` (and the other documents) strictly, expecting `refusal`, then tolerantly. */
function tolerated(documents: Record<string, string>, refusal: RegExp): Loaded {
  expect(() => loadContract("svc.wsdl", { documents })).toThrow(SchemaCompileError);
  expect(() => loadContract("svc.wsdl", { documents })).toThrow(refusal);
  const warn = vi.fn();
  const contract = loadContract("svc.wsdl", { documents, strict: false, logger: { warn, error: vi.fn() } });
  return { contract, warn };
}

/** The one defect reported, checked against its class, file and line, and logged once. */
function onlyDefect(
  loaded: Loaded,
  expected: { class: DefectClass; file: string; line: number },
): ContractDefect {
  expect(loaded.contract.defects.map(({ class: c, file, line }) => ({ class: c, file, line }))).toEqual([
    expected,
  ]);
  const defect = loaded.contract.defects[0] as ContractDefect;
  expect(loaded.warn).toHaveBeenCalledTimes(1);
  expect(loaded.warn.mock.calls[0]?.[0]).toEqual({
    defect: expected.class,
    file: expected.file,
    line: expected.line,
    problem: defect.problem,
    assumed: defect.assumed,
  });
  return defect;
}

const limits = resolveLimits();

/** Decodes `xml` as its global element: what a request's Body child goes through. */
function decode(contract: Contract, xml: string): unknown {
  return contract.schema.decode(parseXmlString(xml, limits));
}

const req = (inner: string, attrs = "") => `<Req xmlns="urn:t"${attrs}><id>1</id>${inner}</Req>`;

/** The simple type `Code` (an int up to 10) in `urn:types`: what several rows import. */
const TYPES = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:types">
  <xs:simpleType name="Code"><xs:restriction base="xs:int"><xs:maxInclusive value="10"/></xs:restriction></xs:simpleType>
</xs:schema>`;

/** One defect class on the contract above: strict refuses it, tolerant reports it once and goes on. */
interface Row {
  class: DefectClass;
  /** What the input is, and what it is read as. */
  name: string;
  /** The WSDL's edits: each `<!--marker-->` (or other text) and what replaces it. */
  edits: Record<string, string>;
  /** The other documents, by name. */
  others?: Record<string, string>;
  /** What a strict load says. */
  refusal: RegExp;
  /** Where the defect is: its document (the WSDL by default) and a text on its line, or the line. */
  at: { file?: string; text?: string; line?: number };
  /** What the defect says was assumed. */
  assumed?: RegExp;
  /** What messages are validated against afterwards. */
  validates: (contract: Contract) => void;
}

const ROWS: Row[] = [
  {
    class: "import-namespace",
    name: "the imported schema's own targetNamespace names its components",
    edits: {
      "<!--imports-->": `<xs:import namespace="urn:wrong" schemaLocation="types.xsd"/>`,
      "<!--members-->": `<xs:element name="code" type="ty:Code"/>`,
    },
    others: { "types.xsd": TYPES },
    refusal: /namespace="urn:wrong".*targetNamespace="urn:types"/,
    at: { text: "urn:wrong" },
    assumed: /targetNamespace "urn:types"/,
    validates: (c) => {
      expect(decode(c, req("<code>7</code>"))).toEqual({ id: 1, code: 7 });
      // The imported type's facets still apply.
      expect(() => decode(c, req("<code>11</code>"))).toThrow(/code/);
    },
  },
  {
    class: "import-unresolved",
    name: "an import by namespace alone that nothing declares adds nothing",
    edits: { "<!--imports-->": `<xs:import namespace="urn:absent"/>` },
    refusal: /urn:absent" has no schemaLocation/,
    at: { text: "urn:absent" },
    validates: (c) => {
      expect(decode(c, req(""))).toEqual({ id: 1 });
      expect(() => decode(c, req("<extra/>"))).toThrow();
    },
  },
  {
    class: "include-location",
    name: "location= on xs:include is read as schemaLocation",
    edits: {
      "<!--imports-->": `<xs:include location="inc.xsd"/>`,
      "<!--members-->": `<xs:element name="code" type="tns:Code"/>`,
    },
    others: { "inc.xsd": TYPES.replace(' targetNamespace="urn:types"', "") },
    refusal: /xs:include without schemaLocation/,
    at: { text: 'location="inc.xsd"' },
    validates: (c) => {
      expect(decode(c, req("<code>3</code>"))).toEqual({ id: 1, code: 3 });
      expect(() => decode(c, req("<code>12</code>"))).toThrow(/code/);
    },
  },
  {
    class: "include-namespace",
    name: "an included schema of another targetNamespace is read as an import of it",
    edits: {
      "<!--imports-->": `<xs:include schemaLocation="types.xsd"/>`,
      "<!--members-->": `<xs:element name="code" type="ty:Code"/>`,
    },
    others: { "types.xsd": TYPES },
    refusal: /xs:include of a schema whose targetNamespace "urn:types"/,
    at: { file: "types.xsd", line: 1 },
    validates: (c) => expect(() => decode(c, req("<code>11</code>"))).toThrow(/code/),
  },
  {
    class: "misspelled-construct",
    name: "xs:simpletype is read as xs:simpleType",
    edits: {
      "<!--globals-->": `<xs:simpletype name="Code"><xs:restriction base="xs:int"><xs:maxInclusive value="10"/></xs:restriction></xs:simpletype>`,
      "<!--members-->": `<xs:element name="code" type="tns:Code"/>`,
    },
    refusal: /xs:simpletype .*is not an element of XML Schema/,
    at: { text: "xs:simpletype" },
    validates: (c) => {
      expect(decode(c, req("<code>10</code>"))).toEqual({ id: 1, code: 10 });
      expect(() => decode(c, req("<code>11</code>"))).toThrow(/code/);
    },
  },
  {
    class: "global-occurrence",
    name: "minOccurs on a global element is left out; references say how often it occurs",
    edits: {
      "<!--globals-->": `<xs:element name="Note" type="xs:string" minOccurs="0"/>`,
      "<!--members-->": `<xs:element ref="tns:Note"/>`,
    },
    refusal: /attribute minOccurs="0" on xs:element is not supported/,
    at: { text: 'minOccurs="0"' },
    validates: (c) => {
      expect(decode(c, req("<Note>hi</Note>"))).toEqual({ id: 1, Note: "hi" });
      // The reference has no minOccurs: the element is required where it is referred to.
      expect(() => decode(c, req(""))).toThrow(/Note/);
    },
  },
  {
    class: "undeclared-type",
    name: "an element of an undeclared type takes any content; the rest is validated",
    edits: { "<!--members-->": `<xs:element name="detail" type="tns:Missing"/>` },
    refusal: /type \{urn:t\}Missing is not declared/,
    at: { text: "tns:Missing" },
    assumed: /xs:anyType/,
    validates: (c) => {
      expect(decode(c, req('<detail a="1"><anything>x</anything></detail>'))).toBeTruthy();
      // The sequence around it is still the declared one.
      expect(() => decode(c, `<Req xmlns="urn:t"><detail/></Req>`)).toThrow(/id/);
    },
  },
  {
    class: "undeclared-type",
    name: "an attribute of an undeclared type takes any text",
    edits: { "<!--attributes-->": `<xs:attribute name="kind" type="tns:Kind"/>` },
    refusal: /type \{urn:t\}Kind is not declared/,
    at: { text: "tns:Kind" },
    assumed: /xs:string/,
    validates: (c) => {
      expect(decode(c, req("", ' kind="whatever"'))).toEqual({ id: 1, kind: "whatever" });
      expect(() => decode(c, req("", ' other="x"'))).toThrow(/other/);
    },
  },
  {
    class: "undeclared-element",
    name: "a ref= to an undeclared element is an element of xs:anyType",
    edits: { "<!--members-->": `<xs:element ref="tns:Note"/>` },
    refusal: /element \{urn:t\}Note is not declared/,
    at: { text: "tns:Note" },
    validates: (c) => {
      expect(decode(c, req("<Note><any/></Note>"))).toBeTruthy();
      expect(() => decode(c, req(""))).toThrow(/Note/);
    },
  },
  {
    class: "undeclared-element",
    name: "a wsdl:part naming an undeclared element; the Body's element takes any content",
    edits: { '<part name="p" element="tns:Res"/>': `<part name="p" element="tns:Answer"/>` },
    refusal: /element \{urn:t\}Answer is not declared/,
    at: { text: "tns:Answer" },
    validates: (c) => {
      expect(c.operations[0]?.output).toBe("{urn:t}Answer");
      expect(decode(c, `<Answer xmlns="urn:t" n="1"><total>3</total>text</Answer>`)).toBeTruthy();
      expect(decode(c, req(""))).toEqual({ id: 1 });
    },
  },
  {
    class: "undeclared-attribute",
    name: "a ref= to an undeclared attribute takes any text",
    edits: { "<!--attributes-->": `<xs:attribute ref="tns:lang"/>` },
    refusal: /attribute \{urn:t\}lang is not declared/,
    at: { text: "tns:lang" },
    validates: (c) => {
      expect(decode(c, req("", ' xmlns:t="urn:t" t:lang="fr"'))).toBeTruthy();
      expect(() => decode(c, req("", ' other="x"'))).toThrow(/other/);
    },
  },
  {
    class: "undeclared-prefix",
    name: "a type QName whose prefix is undeclared is read as xs:anyType",
    edits: { "<!--members-->": `<xs:element name="name" type="s:string"/>` },
    refusal: /prefix of "s:string" is not declared/,
    at: { text: "s:string" },
    validates: (c) => {
      expect(decode(c, req("<name>Ada</name>"))).toBeTruthy();
      expect(() => decode(c, req("<nom>Ada</nom>"))).toThrow(/nom/);
    },
  },
  {
    class: "own-namespace-reference",
    name: "an unprefixed group name with no default namespace names the group of the schema's own namespace",
    edits: {
      "<!--imports-->": `<xs:import namespace="urn:types" schemaLocation="types.xsd"/>`,
      "<!--members-->": `<xs:element name="box" type="ty:Box"/>`,
    },
    others: {
      "types.xsd": TYPES.replace(
        "</xs:schema>",
        `  <xs:group name="Pair"><xs:sequence><xs:element name="k" type="xs:string"/><xs:element name="v" type="ty:Code"/></xs:sequence></xs:group>
  <xs:complexType name="Box"><xs:group ref="Pair"/></xs:complexType>
</xs:schema>`,
      ).replace("<xs:schema ", '<xs:schema xmlns:ty="urn:types" '),
    },
    refusal:
      /group Pair is not declared \(an unprefixed name, with no default namespace in scope, names no namespace: group \{urn:types\}Pair is declared\)/,
    at: { file: "types.xsd", text: 'ref="Pair"' },
    assumed: /ref="Pair" names group \{urn:types\}Pair/,
    validates: (c) => {
      // The group's elements are local to an unqualified schema: in no namespace.
      const box = (inner: string) => req(`<box>${inner.replace(/<(\w)/g, '<$1 xmlns=""')}</box>`);
      expect(decode(c, box("<k>a</k><v>3</v>"))).toEqual({ id: 1, box: { k: "a", v: 3 } });
      // The group's content model and its types are the declared ones.
      expect(() => decode(c, box("<k>a</k><v>11</v>"))).toThrow(/v/);
      expect(() => decode(c, box("<v>3</v>"))).toThrow(/k/);
    },
  },
  {
    class: "own-namespace-reference",
    name: "a type in the XML Schema namespace that is not built in names the type of the schema's own namespace",
    edits: {
      "<!--globals-->": `<xs:simpleType name="Code"><xs:restriction base="xs:int"><xs:maxInclusive value="10"/></xs:restriction></xs:simpleType>`,
      "<!--members-->": `<xs:element name="code" type="xs:Code"/>`,
    },
    refusal:
      /type \{http:\/\/www\.w3\.org\/2001\/XMLSchema\}Code is not declared \(xs:Code is not a built-in type of XML Schema 1\.0\)/,
    at: { text: 'type="xs:Code"' },
    assumed: /type="xs:Code" names type \{urn:t\}Code/,
    validates: (c) => {
      expect(decode(c, req("<code>10</code>"))).toEqual({ id: 1, code: 10 });
      expect(() => decode(c, req("<code>11</code>"))).toThrow(/code/);
    },
  },
  {
    class: "undeclared-message",
    name: "a fault whose message is not declared is left out; the operation is served",
    edits: { '<fault name="oops" message="tns:Fault"/>': `<fault name="oops" message="tns:Gone"/>` },
    refusal: /message \{urn:t\}Gone is not declared/,
    at: { text: "tns:Gone" },
    validates: (c) => {
      expect(c.operations.map((o) => [o.name, o.faults])).toEqual([["Get", {}]]);
      expect(decode(c, req(""))).toEqual({ id: 1 });
    },
  },
  {
    class: "undeclared-message",
    name: "an operation whose output message is not declared is not served",
    edits: { '<output message="tns:Out"/>': `<output message="tns:Gone"/>` },
    refusal: /message \{urn:t\}Gone is not declared/,
    at: { text: "tns:Gone" },
    validates: (c) => {
      expect(c.operations).toEqual([]);
      expect(c.notServed).toEqual([
        { operation: "Get", reason: "its output message {urn:t}Gone is not declared" },
      ]);
    },
  },
  {
    class: "undeclared-header-part",
    name: "a soap:header naming a part its message lacks is left out",
    edits: { "<!--input header-->": `<soap:header message="tns:In" part="token" use="literal"/>` },
    refusal: /soap:header names part "token"/,
    at: { text: 'part="token"' },
    validates: (c) => {
      expect(c.operations[0]?.headers).toEqual([]);
      expect(c.operations[0]?.inputBody).toEqual(["{urn:t}Req"]);
    },
  },
  {
    class: "undeclared-body-part",
    name: "a soap:body parts= name the message lacks adds nothing to the Body",
    edits: {
      '<output><soap:body use="literal"/></output>': `<output><soap:body parts="p result" use="literal"/></output>`,
    },
    refusal: /soap:body parts names "result", which message "Out" does not have/,
    at: { text: 'parts="p result"' },
    validates: (c) => expect(c.operations[0]?.outputBody).toEqual(["{urn:t}Res"]),
  },
  {
    class: "operation-not-in-port-type",
    name: "the binding operation is not served, the others are",
    edits: {
      "<!--binding operations-->": `<operation name="Extra"><soap:operation soapAction="urn:extra"/></operation>`,
    },
    refusal: /binding operation "Extra" is not in the port type/,
    at: { text: '"Extra"' },
    validates: (c) => {
      expect(c.operations.map((o) => o.name)).toEqual(["Get"]);
      expect(c.notServed.map((n) => n.operation)).toEqual(["Extra"]);
    },
  },
  {
    class: "wsdl-name",
    name: "a port's unprefixed binding (WSDL's namespace) names the one binding of that local name",
    edits: { 'binding="tns:B"': 'binding="B"' },
    refusal: /its binding \{http:\/\/schemas\.xmlsoap\.org\/wsdl\/\}B is not declared/,
    at: { text: 'binding="B"' },
    validates: (c) => {
      expect(c.operations.map((o) => o.name)).toEqual(["Get"]);
      expect(decode(c, req(""))).toEqual({ id: 1 });
    },
  },
  {
    class: "wsdl-name",
    name: "an operation's unprefixed message (WSDL's namespace) names the one message of that local name",
    edits: { '<input message="tns:In"/>': '<input message="In"/>' },
    refusal: /message \{http:\/\/schemas\.xmlsoap\.org\/wsdl\/\}In is not declared/,
    at: { text: 'message="In"' },
    assumed: /\{urn:t\}In/,
    validates: (c) => expect(c.operations[0]?.input).toBe("{urn:t}Req"),
  },
  {
    class: "wsdl-name",
    name: "a part's type named in another namespace names the one type of that local name",
    edits: {
      '<part name="p" element="tns:Req"/>': '<part name="p" type="ty:Box"/>',
      "<!--globals-->": `<xs:complexType name="Box"><xs:sequence><xs:element name="n" type="xs:int"/></xs:sequence></xs:complexType>`,
    },
    refusal: /wsdl:message "In": type \{urn:types\}Box is not declared/,
    at: { text: 'type="ty:Box"' },
    assumed: /\{urn:t\}Box/,
    validates: (c) => {
      const op = c.operations[0] as ContractOperation;
      expect(op.inputBody).toEqual(["p"]);
      // The part's content is the type's: a Body of parts decodes as the element the loader declares.
      const body = (p: string) =>
        `<Get xmlns="urn:svc:soap-envelope:document-parts"><p xmlns="">${p}</p></Get>`;
      expect(decode(c, body('<n xmlns="urn:t">1</n>'))).toEqual({ p: { n: 1 } });
      expect(() => decode(c, body('<n xmlns="urn:t">x</n>'))).toThrow(/n/);
    },
  },
  {
    class: "unported-binding",
    name: "no wsdl:service: the one SOAP 1.1 binding over HTTP is served",
    edits: { [SERVICE]: "" },
    refusal: /the WSDL has no wsdl:service port with a soap12:binding or soap:binding/,
    at: { text: '<binding name="B"' },
    assumed: /wsdl:binding \{urn:t\}B is served/,
    validates: (c) => {
      expect(c.versions).toEqual(["1.1"]);
      expect(c.operations.map((o) => o.name)).toEqual(["Get"]);
      expect(decode(c, req(""))).toEqual({ id: 1 });
    },
  },
  {
    class: "unported-binding",
    name: "a port naming no declared binding: the one SOAP 1.1 binding over HTTP is served",
    edits: { 'binding="tns:B"': 'binding="tns:Gone"' },
    refusal: /wsdl:port "Port": its binding \{urn:t\}Gone is not declared/,
    at: { text: "tns:Gone" },
    validates: (c) => expect(c.operations.map((o) => [o.name, o.soapAction])).toEqual([["Get", "urn:get"]]),
  },
  {
    class: "xml-declaration",
    name: "an XML declaration after a comment is left out",
    edits: { '<?xml version="1.0"?>': '<!-- generated -->\n<?xml version="1.0"?>' },
    refusal: /2:6: not well-formed XML: an XML declaration must be at the start of the document/,
    at: { line: 2 },
    validates: (c) => {
      expect(c.operations.map((o) => o.name)).toEqual(["Get"]);
      // The WSDL served (?wsdl) is the one read: well-formed, its lines where they were.
      expect(c.wsdlText).not.toContain("<?xml");
      expect(c.wsdlText.split("\n")[2]).toMatch(/^<definitions /);
    },
  },
  {
    class: "wsdl-namespace",
    name: "a WSDL in no namespace: its elements of WSDL 1.1's names are read as WSDL 1.1's",
    edits: { '<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" ': "<definitions " },
    refusal: /the document element must be wsdl:definitions \(WSDL 1\.1\), not \{\}definitions/,
    at: { text: "<definitions " },
    validates: (c) => {
      expect(c.operations.map((o) => [o.name, o.input, o.output])).toEqual([
        ["Get", "{urn:t}Req", "{urn:t}Res"],
      ]);
      expect(decode(c, req(""))).toEqual({ id: 1 });
    },
  },
  {
    class: "types-import",
    name: "an xs:import straight in wsdl:types is read as a schema's import",
    edits: {
      "<types>": `<types>\n    <xs:import namespace="urn:types" schemaLocation="types.xsd"/>`,
      "<!--members-->": `<xs:element name="code" type="ty:Code"/>`,
    },
    others: { "types.xsd": TYPES },
    refusal: /wsdl:types: \{http:\/\/www\.w3\.org\/2001\/XMLSchema\}import is not supported/,
    at: { text: 'schemaLocation="types.xsd"' },
    validates: (c) => {
      expect(decode(c, req("<code>7</code>"))).toEqual({ id: 1, code: 7 });
      expect(() => decode(c, req("<code>11</code>"))).toThrow(/code/);
    },
  },
];

describe("strict: false: each defect class, passed over once with its file and line", () => {
  it.each(ROWS.map((row) => [`${row.class}: ${row.name}`, row] as const))("%s", (_name, row) => {
    const documents: Record<string, string> = { "svc.wsdl": wsdl(row.edits), ...row.others };
    const loaded = tolerated(documents, row.refusal);
    const file = row.at.file ?? "svc.wsdl";
    const line = row.at.line ?? lineOf(documents[file] as string, row.at.text as string);
    const defect = onlyDefect(loaded, { class: row.class, file, line });
    if (row.assumed) expect(defect.assumed).toMatch(row.assumed);
    row.validates(loaded.contract);
  });

  it("undeclared-type: one stand-in per name, simple when any reference needs a simple type, said so for each", () => {
    const svc = wsdl({
      "<!--members-->": `<xs:element name="detail" type="tns:Code"/>`,
      "<!--attributes-->": `<xs:attribute name="kind" type="tns:Code"/>`,
    });
    const loaded = tolerated({ "svc.wsdl": svc }, /type \{urn:t\}Code is not declared/);
    expect(loaded.contract.defects.map((d) => [d.class, d.line, d.assumed])).toEqual([
      [
        "undeclared-type",
        lineOf(svc, 'name="detail"'),
        expect.stringContaining("a restriction of xs:string"),
      ],
      ["undeclared-type", lineOf(svc, 'name="kind"'), expect.stringContaining("a restriction of xs:string")],
    ]);
    expect(decode(loaded.contract, req("<detail>text</detail>", ' kind="k"'))).toEqual({
      id: 1,
      detail: "text",
      kind: "k",
    });
    expect(() => decode(loaded.contract, req("<detail><x/></detail>"))).toThrow(/detail/);
  });
});

describe("strict: false never tolerates what has two meanings or is unsafe", () => {
  it("a port's binding naming two bindings of that local name in other namespaces", () => {
    const svc = wsdl({
      'binding="tns:B"': 'binding="B"',
      "<!--binding operations-->": "",
    }).replace("</definitions>", `<import namespace="urn:other" location="other.wsdl"/></definitions>`);
    const other = `<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" targetNamespace="urn:other"><binding name="B" type="x"/></definitions>`;
    expect(() =>
      loadContract("svc.wsdl", { documents: { "svc.wsdl": svc, "other.wsdl": other }, strict: false }),
    ).toThrow(/its binding \{http:\/\/schemas\.xmlsoap\.org\/wsdl\/\}B is not declared \(declared: /);
  });

  it("no port naming a declared binding, and two SOAP 1.1 bindings over HTTP: serving either is a choice", () => {
    const svc = wsdl({
      [SERVICE]: "",
      "<!--binding operations-->": "",
    }).replace(
      "</definitions>",
      `<binding name="B2" type="tns:P"><soap:binding transport="http://schemas.xmlsoap.org/soap/http"/></binding></definitions>`,
    );
    expect(() => loadContract("svc.wsdl", { documents: { "svc.wsdl": svc }, strict: false })).toThrow(
      /the WSDL has no wsdl:service port with a soap12:binding or soap:binding/,
    );
  });

  it("an unprefixed group name that the schema's own namespace does not declare either", () => {
    const svc = wsdl({ "<!--members-->": `<xs:group ref="Parts" xmlns=""/>` });
    expect(() => loadContract("svc.wsdl", { documents: { "svc.wsdl": svc }, strict: false })).toThrow(
      /group Parts is not declared/,
    );
  });

  it("a reference to an undeclared model group (its place in the content model cannot be assumed)", () => {
    const svc = wsdl({ "<!--members-->": `<xs:group ref="tns:Parts"/>` });
    expect(() => loadContract("svc.wsdl", { documents: { "svc.wsdl": svc }, strict: false })).toThrow(
      /group \{urn:t\}Parts is not declared/,
    );
  });

  it("a document that is not namespace-well-formed, and an import outside the WSDL's folder", () => {
    const unbound = wsdl({ "<!--members-->": `<q:element name="x"/>` });
    expect(() => loadContract("svc.wsdl", { documents: { "svc.wsdl": unbound }, strict: false })).toThrow(
      /not well-formed XML: unbound namespace prefix/,
    );
    const outside = wsdl({
      "<!--imports-->": `<xs:import namespace="urn:types" schemaLocation="../types.xsd"/>`,
    });
    expect(() =>
      loadContract("c/svc.wsdl", {
        documents: { "c/svc.wsdl": outside, "types.xsd": "<x/>" },
        strict: false,
      }),
    ).toThrow(/outside the WSDL's directory/);
  });

  it("strict must be a boolean", () => {
    expect(() =>
      loadContract("svc.wsdl", { documents: { "svc.wsdl": WSDL }, strict: "no" as never }),
    ).toThrow(expect.objectContaining({ code: "ERR_SVC_SOAP_ENVELOPE_STRICT" }));
  });
});

describe("strict: false on an endpoint (contract.strict)", () => {
  const svc = wsdl({ "<!--members-->": `<xs:element name="detail" type="tns:Missing"/>` });
  const handlers = { Get: async () => ({ ok: true }) };

  it("refused by default; loaded with contract.strict: false, the defect logged through the endpoint's logger", () => {
    expect(() =>
      createSoapService({ wsdl: "svc.wsdl", handlers, contract: { documents: { "svc.wsdl": svc } } }),
    ).toThrow(/type \{urn:t\}Missing is not declared/);
    const warn = vi.fn();
    // A pino logger: the endpoint's option asks for error(), and defects go to warn() when it has one.
    const logger = { warn, error: vi.fn() };
    createSoapService({
      wsdl: "svc.wsdl",
      handlers,
      contract: { documents: { "svc.wsdl": svc }, strict: false },
      logger,
    });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[0]).toMatchObject({
      defect: "undeclared-type",
      file: "svc.wsdl",
      line: lineOf(svc, "tns:Missing"),
    });
  });

  it("contract.strict must be a boolean", () => {
    expect(() =>
      createSoapService({
        wsdl: "svc.wsdl",
        handlers,
        contract: { documents: { "svc.wsdl": svc }, strict: 0 as never },
      }),
    ).toThrow(expect.objectContaining({ code: "ERR_SVC_SOAP_ENVELOPE_CONTRACT_STRICT" }));
  });
});
