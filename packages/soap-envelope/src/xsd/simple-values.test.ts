import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { envelope, post, readFault, silentLogger, soapErrors } from "../../test/helpers.js";
import { soapEndpoint } from "../express.js";
import { parseXmlString, resolveLimits } from "../xml/reader.js";

// Simple values of a request as a one-way operation receives them: what the handler gets, or the
// Sender fault (400) that refuses the message instead.

const NS = "urn:example:values";
const XSI = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"';
const wsdl = `<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"
    xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/" xmlns:xs="http://www.w3.org/2001/XMLSchema"
    xmlns:tns="${NS}" targetNamespace="${NS}">
  <wsdl:types>
    <xs:schema targetNamespace="${NS}" elementFormDefault="qualified">
      <xs:element name="record"><xs:complexType><xs:sequence>
        <xs:element name="note" type="xs:string" nillable="true" minOccurs="0"/>
        <xs:element name="count" type="xs:int" nillable="true" minOccurs="0"/>
        <xs:element name="price" nillable="true" minOccurs="0"><xs:complexType><xs:simpleContent>
          <xs:extension base="xs:decimal"><xs:attribute name="currency" type="xs:string" use="required"/></xs:extension>
        </xs:simpleContent></xs:complexType></xs:element>
      </xs:sequence></xs:complexType></xs:element>
      <xs:element name="echo"><xs:complexType><xs:sequence>
        <xs:element name="key" type="xs:string"/>
      </xs:sequence></xs:complexType></xs:element>
      <xs:element name="echoResponse"><xs:complexType><xs:sequence>
        <xs:element name="text" type="xs:string"/>
        <xs:element name="marked" minOccurs="0"><xs:complexType><xs:simpleContent>
          <xs:extension base="xs:string"><xs:attribute name="mark" type="xs:string"/></xs:extension>
        </xs:simpleContent></xs:complexType></xs:element>
      </xs:sequence></xs:complexType></xs:element>
    </xs:schema>
  </wsdl:types>
  <wsdl:message name="record"><wsdl:part name="parameters" element="tns:record"/></wsdl:message>
  <wsdl:message name="echo"><wsdl:part name="parameters" element="tns:echo"/></wsdl:message>
  <wsdl:message name="echoResponse"><wsdl:part name="parameters" element="tns:echoResponse"/></wsdl:message>
  <wsdl:portType name="Values">
    <wsdl:operation name="record"><wsdl:input message="tns:record"/></wsdl:operation>
    <wsdl:operation name="echo"><wsdl:input message="tns:echo"/><wsdl:output message="tns:echoResponse"/></wsdl:operation>
  </wsdl:portType>
  <wsdl:binding name="ValuesSoap12" type="tns:Values">
    <soap12:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="record"><soap12:operation soapAction="${NS}#record"/><wsdl:input><soap12:body use="literal"/></wsdl:input></wsdl:operation>
    <wsdl:operation name="echo"><soap12:operation soapAction="${NS}#echo"/><wsdl:input><soap12:body use="literal"/></wsdl:input><wsdl:output><soap12:body use="literal"/></wsdl:output></wsdl:operation>
  </wsdl:binding>
  <wsdl:service name="ValueService">
    <wsdl:port name="ValuePort" binding="tns:ValuesSoap12"><soap12:address location="http://localhost/values"/></wsdl:port>
  </wsdl:service>
</wsdl:definitions>`;

const received: Record<string, unknown>[] = [];
/** What the echo handler returns, by the request's key. */
const results: Record<string, unknown> = {};
let server: Listening;
beforeAll(async () => {
  const app = express();
  app.use(
    "/values",
    soapEndpoint({
      wsdl,
      handlers: {
        record: (payload: Record<string, unknown>) => void received.push(payload),
        echo: ({ key }: { key: string }) => results[key],
      } as never,
      logger: silentLogger,
    }),
  );
  app.use(soapErrors("/values"));
  server = await listen(app);
});
afterAll(() => server.close());
beforeEach(() => {
  received.length = 0;
});

const send = (inner: string) =>
  post(`${server.url}/values`, envelope(`<v:record xmlns:v="${NS}" ${XSI}>${inner}</v:record>`));

describe("xsi:nil (XML Schema 1.0 Part 1 §3.3.4, Element Locally Valid (Element) 3.2.1)", () => {
  it.each([
    ["<v:note xsi:nil='true'/>", { note: null }],
    ["<v:note xsi:nil=' 1 '></v:note>", { note: null }],
    ["<v:note xsi:nil='true'><!-- none --></v:note>", { note: null }],
    ["<v:note xsi:nil='true'><![CDATA[]]></v:note>", { note: null }],
    ["<v:count xsi:nil='true'/>", { count: null }],
  ])("%s → 202, null", async (inner, value) => {
    expect((await send(inner)).status).toBe(202);
    expect(received).toEqual([value]);
  });

  it.each([
    "<v:note xsi:nil='true'>  </v:note>",
    "<v:note xsi:nil='true'>\n</v:note>",
    "<v:note xsi:nil='true'><![CDATA[ ]]></v:note>",
    "<v:count xsi:nil='true'> </v:count>",
  ])("%s (white space is character content) → 400 Sender, not null", async (inner) => {
    // §3.3.4 clause 3.2.1: a nilled element "must have no character or element information item
    // [children]", white space included. An xs:string note of two spaces and a null note are two
    // values: a reader that takes the text and this node, which took null, would disagree.
    const res = await send(inner);
    expect(res.status).toBe(400);
    expect(readFault(res.text).reason).toContain("has xsi:nil and content");
    expect(received).toEqual([]);
  });
});

describe("xsi:type on a simple element (XML Schema 1.0 Part 1 §3.3.4 clause 4, §3.14.6)", () => {
  const XS = "xmlns:xs='http://www.w3.org/2001/XMLSchema'";
  it.each([
    [`<v:count ${XS} xsi:type='xs:short'>5</v:count>`, { count: 5 }],
    [`<v:count ${XS} xsi:type='xs:byte'>-128</v:count>`, { count: -128 }],
    [`<v:count ${XS} xsi:type=' xs:int '>7</v:count>`, { count: 7 }],
  ])("%s (a type derived from xs:int) → 202", async (inner, value) => {
    expect((await send(inner)).status).toBe(202);
    expect(received).toEqual([value]);
  });
  it.each([
    [`<v:count ${XS} xsi:type='xs:short'>40000</v:count>`, "out of the xs:short range"],
    [`<v:count ${XS} xsi:type='xs:long'>5</v:count>`, "it is not derived from the declared type"],
    [`<v:count ${XS} xsi:type='xs:nope'>5</v:count>`, "names no type of the schema"],
  ])("%s → 400 Sender", async (inner, reason) => {
    const res = await send(inner);
    expect(res.status).toBe(400);
    expect(readFault(res.text).reason).toContain(reason);
    expect(received).toEqual([]);
  });
});

describe("a nilled element's attributes (XML Schema 1.0 Part 1 §3.3.4 clause 5, §3.4.4 clauses 3 and 4)", () => {
  // xsi:nil="true" exempts an element's content from its type, not its attributes: a simple
  // type allows none but xsi:*, a complex type's required attributes are still required and an
  // undeclared one is still refused. Nil returned null before any of that was looked at.
  it.each([
    ["<v:note xsi:nil='true' smuggled='1'/>", 'attribute "smuggled" is not allowed'],
    ["<v:count xsi:nil='true' smuggled='1'/>", 'attribute "smuggled" is not allowed'],
    [
      "<v:note xsi:nil='true' xmlns:xs='http://www.w3.org/2001/XMLSchema' xsi:type='xs:int'/>",
      'xsi:type="xs:int" cannot replace {http://www.w3.org/2001/XMLSchema}string: it is not derived from the declared type',
    ],
    ["<v:note xsi:nil='true' xsi:other='1'/>", "attribute xsi:other is not supported"],
    ["<v:price xsi:nil='true'/>", "record/price/@currency: is required"],
    ["<v:price xsi:nil='true' currency='EUR' smuggled='1'/>", 'attribute "smuggled" is not allowed'],
  ])("%s → 400 Sender", async (inner, reason) => {
    const res = await send(inner);
    expect(res.status).toBe(400);
    expect(readFault(res.text).reason).toContain(reason);
    expect(received).toEqual([]);
  });
  it("<v:price xsi:nil='true' currency='EUR'/> → 202, null", async () => {
    expect((await send("<v:price xsi:nil='true' currency='EUR'/>")).status).toBe(202);
    expect(received).toEqual([{ price: null }]);
  });
});

describe("xs:int signed zero (XML Schema 1.0 Part 2 §3.3.17, §3.3.13.1)", () => {
  it.each(["-0", "-000", " -0 ", "+0", "0"])(
    "count %j → 202, the number 0 (not JavaScript's -0)",
    async (lexical) => {
      // xs:int's value space is the integers: "-0" is a lexical of 0, which has no sign. Number("-0")
      // is -0, which Object.is, 1 / x, Math.sign and Intl.NumberFormat ("-0") tell from 0.
      expect((await send(`<v:count>${lexical}</v:count>`)).status).toBe(202);
      expect(received).toHaveLength(1);
      expect(Object.is(received[0]?.count, 0)).toBe(true);
    },
  );
});

describe("strings in a result that XML 1.0 cannot carry (XML Schema 1.0 Part 2 §3.2.1, XML 1.0 §2.2)", () => {
  const echo = (key: string) =>
    post(`${server.url}/values`, envelope(`<v:echo xmlns:v="${NS}"><v:key>${key}</v:key></v:echo>`));

  it("]]>, quotes, tab, CR LF in text and in an attribute → 200, read back as written", async () => {
    const tricky = "]]> \"q\" 'a' <&>\t\r\n";
    results.tricky = { text: tricky, marked: { $value: tricky, mark: tricky } };
    const res = await echo("tricky");
    expect(res.status).toBe(200);
    const body = parseXmlString(res.text, resolveLimits()).children[0]?.children[0];
    const [text, marked] = body?.children ?? [];
    expect(text?.text).toBe(tricky);
    expect(marked?.text).toBe(tricky);
    expect(marked?.attributes.mark).toBe(tricky);
  });

  it.each([
    ["U+0000", { text: "a\u0000b" }, "echoResponse.text"],
    ["U+0001", { text: "\u0001" }, "echoResponse.text"],
    ["U+FFFE", { text: "\uFFFE" }, "echoResponse.text"],
    ["U+FFFF", { text: "x\uFFFF" }, "echoResponse.text"],
    ["a lone high surrogate", { text: "x\uD800y" }, "echoResponse.text"],
    ["a lone low surrogate", { text: "\uDC00" }, "echoResponse.text"],
    ["U+0000 in simple content", { text: "ok", marked: { $value: "\u0000" } }, "echoResponse.marked.$value"],
    [
      "U+0000 in an attribute",
      { text: "ok", marked: { $value: "", mark: "\u0000" } },
      "echoResponse.marked.mark",
    ],
  ])(
    "%s in a result's xs:string → 500 Receiver naming the field, not a U+FFFD the handler never wrote",
    async (name, result, path) => {
      // An xs:string is a sequence of XML characters (Part 2 §3.2.1: those matching XML 1.0 §2.2's
      // Char), which these are not; no character reference can carry them either (§4.1 WFC: Legal
      // Character). Replaced by U+FFFD, the client read a value the handler never returned.
      const key = `bad${name.replace(/\W/g, "")}`;
      results[key] = result;
      silentLogger.errors.length = 0;
      const res = await echo(key);
      expect(res.status).toBe(500);
      expect(res.text).not.toContain("\uFFFD");
      expect(readFault(res.text).code).toBe("{http://www.w3.org/2003/05/soap-envelope}Receiver");
      expect(silentLogger.errors).toHaveLength(1);
      expect(JSON.stringify(silentLogger.errors[0])).toContain(path);
    },
  );
});
