import { describe, expect, it, vi } from "vitest";
import { createSoapService } from "../envelope/service.js";
import { parseXmlString, resolveLimits } from "../xml/reader.js";
import { SchemaCompileError } from "../xsd/schema.js";
import { type Contract, type ContractDefect, type DefectClass, loadContract } from "./contract.js";

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

describe("strict: false: each defect class, passed over once with its file and line", () => {
  it("import-namespace: the imported schema's own targetNamespace names its components", () => {
    const svc = wsdl({
      "<!--imports-->": `<xs:import namespace="urn:wrong" schemaLocation="types.xsd"/>`,
      "<!--members-->": `<xs:element name="code" type="ty:Code"/>`,
    });
    const types = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:types">
  <xs:simpleType name="Code"><xs:restriction base="xs:int"><xs:maxInclusive value="10"/></xs:restriction></xs:simpleType>
</xs:schema>`;
    const loaded = tolerated(
      { "svc.wsdl": svc, "types.xsd": types },
      /namespace="urn:wrong".*targetNamespace="urn:types"/,
    );
    const defect = onlyDefect(loaded, {
      class: "import-namespace",
      file: "svc.wsdl",
      line: lineOf(svc, "urn:wrong"),
    });
    expect(defect.assumed).toContain('targetNamespace "urn:types"');
    expect(decode(loaded.contract, req("<code>7</code>"))).toEqual({ id: 1, code: 7 });
    // The imported type's facets still apply.
    expect(() => decode(loaded.contract, req("<code>11</code>"))).toThrow(/code/);
  });

  it("import-unresolved: an import by namespace alone that nothing declares adds nothing", () => {
    const svc = wsdl({ "<!--imports-->": `<xs:import namespace="urn:absent"/>` });
    const loaded = tolerated({ "svc.wsdl": svc }, /urn:absent" has no schemaLocation/);
    onlyDefect(loaded, { class: "import-unresolved", file: "svc.wsdl", line: lineOf(svc, "urn:absent") });
    expect(decode(loaded.contract, req(""))).toEqual({ id: 1 });
    expect(() => decode(loaded.contract, req("<extra/>"))).toThrow();
  });

  it("include-location: location= on xs:include is read as schemaLocation", () => {
    const svc = wsdl({
      "<!--imports-->": `<xs:include location="inc.xsd"/>`,
      "<!--members-->": `<xs:element name="code" type="tns:Code"/>`,
    });
    const inc = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:simpleType name="Code"><xs:restriction base="xs:int"><xs:maxInclusive value="10"/></xs:restriction></xs:simpleType>
</xs:schema>`;
    const loaded = tolerated({ "svc.wsdl": svc, "inc.xsd": inc }, /xs:include without schemaLocation/);
    onlyDefect(loaded, {
      class: "include-location",
      file: "svc.wsdl",
      line: lineOf(svc, 'location="inc.xsd"'),
    });
    expect(decode(loaded.contract, req("<code>3</code>"))).toEqual({ id: 1, code: 3 });
    expect(() => decode(loaded.contract, req("<code>12</code>"))).toThrow(/code/);
  });

  it("include-namespace: an included schema of another targetNamespace is read as an import of it", () => {
    const svc = wsdl({
      "<!--imports-->": `<xs:include schemaLocation="types.xsd"/>`,
      "<!--members-->": `<xs:element name="code" type="ty:Code"/>`,
    });
    const types = `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:types">
  <xs:simpleType name="Code"><xs:restriction base="xs:int"><xs:maxInclusive value="10"/></xs:restriction></xs:simpleType>
</xs:schema>`;
    const loaded = tolerated(
      { "svc.wsdl": svc, "types.xsd": types },
      /xs:include of a schema whose targetNamespace "urn:types"/,
    );
    onlyDefect(loaded, { class: "include-namespace", file: "types.xsd", line: 1 });
    expect(() => decode(loaded.contract, req("<code>11</code>"))).toThrow(/code/);
  });

  it("misspelled-construct: xs:simpletype is read as xs:simpleType", () => {
    const svc = wsdl({
      "<!--globals-->": `<xs:simpletype name="Code"><xs:restriction base="xs:int"><xs:maxInclusive value="10"/></xs:restriction></xs:simpletype>`,
      "<!--members-->": `<xs:element name="code" type="tns:Code"/>`,
    });
    const loaded = tolerated({ "svc.wsdl": svc }, /xs:simpletype .*is not an element of XML Schema/);
    onlyDefect(loaded, {
      class: "misspelled-construct",
      file: "svc.wsdl",
      line: lineOf(svc, "xs:simpletype"),
    });
    expect(decode(loaded.contract, req("<code>10</code>"))).toEqual({ id: 1, code: 10 });
    expect(() => decode(loaded.contract, req("<code>11</code>"))).toThrow(/code/);
  });

  it("global-occurrence: minOccurs on a global element is left out; references say how often it occurs", () => {
    const svc = wsdl({
      "<!--globals-->": `<xs:element name="Note" type="xs:string" minOccurs="0"/>`,
      "<!--members-->": `<xs:element ref="tns:Note"/>`,
    });
    const loaded = tolerated({ "svc.wsdl": svc }, /attribute minOccurs="0" on xs:element is not supported/);
    onlyDefect(loaded, { class: "global-occurrence", file: "svc.wsdl", line: lineOf(svc, 'minOccurs="0"') });
    expect(decode(loaded.contract, req("<Note>hi</Note>"))).toEqual({ id: 1, Note: "hi" });
    // The reference has no minOccurs: the element is required where it is referred to.
    expect(() => decode(loaded.contract, req(""))).toThrow(/Note/);
  });

  it("undeclared-type: an element of an undeclared type takes any content; the rest is validated", () => {
    const svc = wsdl({ "<!--members-->": `<xs:element name="detail" type="tns:Missing"/>` });
    const loaded = tolerated({ "svc.wsdl": svc }, /type \{urn:t\}Missing is not declared/);
    const defect = onlyDefect(loaded, {
      class: "undeclared-type",
      file: "svc.wsdl",
      line: lineOf(svc, "tns:Missing"),
    });
    expect(defect.assumed).toMatch(/xs:anyType/);
    expect(decode(loaded.contract, req('<detail a="1"><anything>x</anything></detail>'))).toBeTruthy();
    // The sequence around it is still the declared one.
    expect(() => decode(loaded.contract, `<Req xmlns="urn:t"><detail/></Req>`)).toThrow(/id/);
  });

  it("undeclared-type in an attribute: any text", () => {
    const svc = wsdl({ "<!--attributes-->": `<xs:attribute name="kind" type="tns:Kind"/>` });
    const loaded = tolerated({ "svc.wsdl": svc }, /type \{urn:t\}Kind is not declared/);
    const defect = onlyDefect(loaded, {
      class: "undeclared-type",
      file: "svc.wsdl",
      line: lineOf(svc, "tns:Kind"),
    });
    expect(defect.assumed).toMatch(/xs:string/);
    expect(decode(loaded.contract, req("", ' kind="whatever"'))).toEqual({ id: 1, kind: "whatever" });
    expect(() => decode(loaded.contract, req("", ' other="x"'))).toThrow(/other/);
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

  it("undeclared-element: a ref= to an undeclared element is an element of xs:anyType", () => {
    const svc = wsdl({ "<!--members-->": `<xs:element ref="tns:Note"/>` });
    const loaded = tolerated({ "svc.wsdl": svc }, /element \{urn:t\}Note is not declared/);
    onlyDefect(loaded, { class: "undeclared-element", file: "svc.wsdl", line: lineOf(svc, "tns:Note") });
    expect(decode(loaded.contract, req("<Note><any/></Note>"))).toBeTruthy();
    expect(() => decode(loaded.contract, req(""))).toThrow(/Note/);
  });

  it("undeclared-element: a wsdl:part naming an undeclared element; the Body's element takes any content", () => {
    const svc = wsdl({ '<part name="p" element="tns:Res"/>': `<part name="p" element="tns:Answer"/>` });
    const loaded = tolerated({ "svc.wsdl": svc }, /element \{urn:t\}Answer is not declared/);
    onlyDefect(loaded, { class: "undeclared-element", file: "svc.wsdl", line: lineOf(svc, "tns:Answer") });
    expect(loaded.contract.operations[0]?.output).toBe("{urn:t}Answer");
    expect(decode(loaded.contract, `<Answer xmlns="urn:t" n="1"><total>3</total>text</Answer>`)).toBeTruthy();
    expect(decode(loaded.contract, req(""))).toEqual({ id: 1 });
  });

  it("undeclared-attribute: a ref= to an undeclared attribute takes any text", () => {
    const svc = wsdl({ "<!--attributes-->": `<xs:attribute ref="tns:lang"/>` });
    const loaded = tolerated({ "svc.wsdl": svc }, /attribute \{urn:t\}lang is not declared/);
    onlyDefect(loaded, { class: "undeclared-attribute", file: "svc.wsdl", line: lineOf(svc, "tns:lang") });
    expect(decode(loaded.contract, req("", ' xmlns:t="urn:t" t:lang="fr"'))).toBeTruthy();
    expect(() => decode(loaded.contract, req("", ' other="x"'))).toThrow(/other/);
  });

  it("undeclared-prefix: a type QName whose prefix is undeclared is read as xs:anyType", () => {
    const svc = wsdl({ "<!--members-->": `<xs:element name="name" type="s:string"/>` });
    const loaded = tolerated({ "svc.wsdl": svc }, /prefix of "s:string" is not declared/);
    onlyDefect(loaded, { class: "undeclared-prefix", file: "svc.wsdl", line: lineOf(svc, "s:string") });
    expect(decode(loaded.contract, req("<name>Ada</name>"))).toBeTruthy();
    expect(() => decode(loaded.contract, req("<nom>Ada</nom>"))).toThrow(/nom/);
  });

  it("undeclared-message: a fault whose message is not declared is left out; the operation is served", () => {
    const svc = wsdl({
      '<fault name="oops" message="tns:Fault"/>': `<fault name="oops" message="tns:Gone"/>`,
    });
    const loaded = tolerated({ "svc.wsdl": svc }, /message \{urn:t\}Gone is not declared/);
    onlyDefect(loaded, { class: "undeclared-message", file: "svc.wsdl", line: lineOf(svc, "tns:Gone") });
    expect(loaded.contract.operations.map((o) => [o.name, o.faults])).toEqual([["Get", {}]]);
    expect(decode(loaded.contract, req(""))).toEqual({ id: 1 });
  });

  it("undeclared-message: an operation whose output message is not declared is not served", () => {
    const svc = wsdl({ '<output message="tns:Out"/>': `<output message="tns:Gone"/>` });
    const loaded = tolerated({ "svc.wsdl": svc }, /message \{urn:t\}Gone is not declared/);
    onlyDefect(loaded, { class: "undeclared-message", file: "svc.wsdl", line: lineOf(svc, "tns:Gone") });
    expect(loaded.contract.operations).toEqual([]);
    expect(loaded.contract.notServed).toEqual([
      { operation: "Get", reason: "its output message {urn:t}Gone is not declared" },
    ]);
  });

  it("undeclared-header-part: a soap:header naming a part its message lacks is left out", () => {
    const svc = wsdl({ "<!--input header-->": `<soap:header message="tns:In" part="token" use="literal"/>` });
    const loaded = tolerated({ "svc.wsdl": svc }, /soap:header names part "token"/);
    onlyDefect(loaded, {
      class: "undeclared-header-part",
      file: "svc.wsdl",
      line: lineOf(svc, 'part="token"'),
    });
    expect(loaded.contract.operations[0]?.headers).toEqual([]);
    expect(loaded.contract.operations[0]?.inputBody).toEqual(["{urn:t}Req"]);
  });

  it("undeclared-body-part: a soap:body parts= name the message lacks adds nothing to the Body", () => {
    const svc = wsdl({
      '<output><soap:body use="literal"/></output>': `<output><soap:body parts="p result" use="literal"/></output>`,
    });
    const loaded = tolerated(
      { "svc.wsdl": svc },
      /soap:body parts names "result", which message "Out" does not have/,
    );
    onlyDefect(loaded, {
      class: "undeclared-body-part",
      file: "svc.wsdl",
      line: lineOf(svc, 'parts="p result"'),
    });
    expect(loaded.contract.operations[0]?.outputBody).toEqual(["{urn:t}Res"]);
  });

  it("operation-not-in-port-type: the binding operation is not served, the others are", () => {
    const svc = wsdl({
      "<!--binding operations-->": `<operation name="Extra"><soap:operation soapAction="urn:extra"/></operation>`,
    });
    const loaded = tolerated({ "svc.wsdl": svc }, /binding operation "Extra" is not in the port type/);
    onlyDefect(loaded, {
      class: "operation-not-in-port-type",
      file: "svc.wsdl",
      line: lineOf(svc, '"Extra"'),
    });
    expect(loaded.contract.operations.map((o) => o.name)).toEqual(["Get"]);
    expect(loaded.contract.notServed.map((n) => n.operation)).toEqual(["Extra"]);
  });

  it("wsdl-name: a port's unprefixed binding (WSDL's namespace) names the one binding of that local name", () => {
    const svc = wsdl({ 'binding="tns:B"': 'binding="B"' });
    const loaded = tolerated(
      { "svc.wsdl": svc },
      /its binding \{http:\/\/schemas\.xmlsoap\.org\/wsdl\/\}B is not declared/,
    );
    onlyDefect(loaded, { class: "wsdl-name", file: "svc.wsdl", line: lineOf(svc, 'binding="B"') });
    expect(loaded.contract.operations.map((o) => o.name)).toEqual(["Get"]);
    expect(decode(loaded.contract, req(""))).toEqual({ id: 1 });
  });

  it("wsdl-name: an operation's unprefixed message (WSDL's namespace) names the one message of that local name", () => {
    const svc = wsdl({ '<input message="tns:In"/>': '<input message="In"/>' });
    const loaded = tolerated(
      { "svc.wsdl": svc },
      /message \{http:\/\/schemas\.xmlsoap\.org\/wsdl\/\}In is not declared/,
    );
    const defect = onlyDefect(loaded, {
      class: "wsdl-name",
      file: "svc.wsdl",
      line: lineOf(svc, 'message="In"'),
    });
    expect(defect.assumed).toContain("{urn:t}In");
    expect(loaded.contract.operations[0]?.input).toBe("{urn:t}Req");
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
