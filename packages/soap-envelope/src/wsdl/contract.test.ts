import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listen } from "@svc/test-utils";
import express from "express";
import { describe, expect, it } from "vitest";
import {
  CUSTOMER_WSDL,
  customerHandlers,
  ENV,
  envelope,
  FIXTURES,
  getCustomer,
  PRICE_WSDL,
  post,
  readFault,
} from "../../test/helpers.js";
import { WSSE_NS } from "../envelope/fault.js";
import { soapEndpoint } from "../express.js";
import { SoapAuthenticationError } from "../wsse/credentials.js";
import { SchemaCompileError } from "../xsd/schema.js";
import { loadContract } from "./contract.js";

const customerWsdl = readFileSync(CUSTOMER_WSDL, "utf8");
const load = (text: string) => loadContract(text, { baseDir: FIXTURES });

describe("loadContract", () => {
  it("customer.wsdl → four operations with actions, one-way ones without output", () => {
    const c = loadContract(CUSTOMER_WSDL);
    expect(c.operations.map((o) => [o.name, o.soapAction, o.output !== undefined])).toEqual([
      ["getCustomer", "getCustomer", true],
      ["createCustomer", "createCustomer", true],
      ["logEvent", "logEvent", false],
      ["sendNotification", "sendNotification", false],
    ]);
    expect(c.operations[0]?.faults).toEqual({
      CustomerNotFound: "{http://svc.example.com/ws/customer/v1}CustomerNotFound",
    });
  });
  const rejects: [string, string, RegExp][] = [
    [
      "a style neither rpc nor document",
      customerWsdl.replace('style="document"', 'style="message"'),
      /style="message" is not supported/,
    ],
    [
      "use=encoded without encodingStyle",
      customerWsdl.replace('<soap12:body use="literal"/>', '<soap12:body use="encoded"/>'),
      /soap12:body use="encoded" needs encodingStyle="http:\/\/www\.w3\.org\/2003\/05\/soap-encoding"/,
    ],
    [
      "SOAP bindings over another transport only (SOAP over TCP)",
      customerWsdl.replace(
        'transport="http://schemas.xmlsoap.org/soap/http"',
        'transport="http://schemas.microsoft.com/soap/tcp"',
      ),
      /\(transport "http:\/\/schemas\.microsoft\.com\/soap\/tcp"\); this node implements SOAP over HTTP \("http:\/\/schemas\.xmlsoap\.org\/soap\/http" or/,
    ],
    [
      "SOAP 1.1 binding only, a style neither rpc nor document",
      customerWsdl
        .replace(
          'xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/"',
          'xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap/"',
        )
        .replace('style="document"', 'style="message"'),
      /soap:binding style="message" is not supported/,
    ],
    [
      "a message part with neither element= nor type=",
      customerWsdl.replace('element="tns:GetCustomerRequest"', 'kind="xs:string"'),
      /part "parameters" needs either element= or type=/,
    ],
    [
      "unknown element in a part",
      customerWsdl.replace('element="tns:GetCustomerRequest"', 'element="tns:Nope"'),
      /is not declared/,
    ],
    [
      "remote schemaLocation",
      customerWsdl.replace('schemaLocation="customer.xsd"', 'schemaLocation="http://example.com/c.xsd"'),
      /remote schemaLocation/,
    ],
    [
      "schema outside the WSDL's directory",
      customerWsdl.replace('schemaLocation="customer.xsd"', 'schemaLocation="../../package.json"'),
      /outside the WSDL's directory/,
    ],
    [
      "schema outside the WSDL's directory, percent-encoded",
      customerWsdl.replace(
        'schemaLocation="customer.xsd"',
        'schemaLocation="%2E%2E%2F%2E%2E%2Fpackage.json"',
      ),
      /outside the WSDL's directory/,
    ],
    [
      // Neither the Body element nor the action tells the operations apart (with distinct
      // soapActions they load: wsdl-actions.test.ts).
      "two operations taking one input element, with one soapAction",
      customerWsdl
        .replace(
          '<wsdl:part name="parameters" element="tns:CreateCustomerRequest"/>',
          '<wsdl:part name="parameters" element="tns:GetCustomerRequest"/>',
        )
        .replace('soapAction="createCustomer"', 'soapAction="getCustomer"'),
      /two operations take \{http:\/\/svc\.example\.com\/ws\/customer\/v1\}GetCustomerRequest and their soapActions do not tell them apart/,
    ],
    [
      "a DOCTYPE in the WSDL",
      customerWsdl.replace("<wsdl:definitions", "<!DOCTYPE x><wsdl:definitions"),
      /document type declaration/,
    ],
  ];
  it("SOAP 1.1 binding only → loads, served in SOAP 1.1", () => {
    const c = load(
      customerWsdl.replace(
        'xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/"',
        'xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap/"',
      ),
    );
    expect(c.versions).toEqual(["1.1"]);
    expect(c.bindings["1.2"]).toBeUndefined();
    expect(c.operations.map((o) => [o.name, o.soapAction])).toEqual([
      ["getCustomer", "getCustomer"],
      ["createCustomer", "createCustomer"],
      ["logEvent", "logEvent"],
      ["sendNotification", "sendNotification"],
    ]);
  });
  it("customer.wsdl → served in SOAP 1.2 only", () => {
    const c = loadContract(CUSTOMER_WSDL);
    expect(c.versions).toEqual(["1.2"]);
    expect(c.bindings["1.2"]).toEqual(c.operations);
  });
  it.each(rejects)("%s → SchemaCompileError", (_name, text, message) => {
    expect(() => load(text)).toThrow(SchemaCompileError);
    expect(() => load(text)).toThrow(message);
  });
});

/** The fixture with credentials declared as clients need them: a header block and a WS-Policy. */
const AUTH_NS = "urn:example:auth";
const withHeader = customerWsdl
  .replace(
    'xmlns:tns="',
    `xmlns:wsp="http://www.w3.org/ns/ws-policy" xmlns:sp="http://docs.oasis-open.org/ws-sx/ws-securitypolicy/200702" xmlns:a="${AUTH_NS}" xmlns:tns="`,
  )
  .replace(
    "<wsdl:types>",
    `<wsp:Policy Name="UT"><sp:SupportingTokens><wsp:Policy><sp:UsernameToken/></wsp:Policy></sp:SupportingTokens></wsp:Policy>
  <wsdl:types>
    <xs:schema targetNamespace="${AUTH_NS}" elementFormDefault="qualified">
      <xs:element name="Authentication"><xs:complexType><xs:sequence>
        <xs:element name="Username" type="xs:string"/><xs:element name="Password" type="xs:string"/>
      </xs:sequence></xs:complexType></xs:element>
    </xs:schema>`,
  )
  .replace(
    '<wsdl:message name="GetCustomerRequest">',
    '<wsdl:message name="AuthenticationHeader"><wsdl:part name="parameters" element="a:Authentication"/></wsdl:message><wsdl:message name="GetCustomerRequest">',
  )
  .replace(
    '<soap12:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>',
    '<soap12:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/><wsp:PolicyReference URI="UT"/>',
  )
  .replaceAll(
    '<wsdl:input><soap12:body use="literal"/></wsdl:input>',
    '<wsdl:input><soap12:body use="literal"/><soap12:header message="tns:AuthenticationHeader" part="parameters" use="literal"/></wsdl:input>',
  );

describe("loadContract: soap12:header and WS-Policy", () => {
  it("soap12:header in every input, wsp:Policy and wsp:PolicyReference → compiled, headers listed per operation", () => {
    expect(withHeader).toContain("soap12:header");
    const c = load(withHeader);
    expect(c.operations.map((o) => [o.name, o.headers])).toEqual([
      ["getCustomer", [`{${AUTH_NS}}Authentication`]],
      ["createCustomer", [`{${AUTH_NS}}Authentication`]],
      ["logEvent", [`{${AUTH_NS}}Authentication`]],
      ["sendNotification", [`{${AUTH_NS}}Authentication`]],
    ]);
  });
  it("the fixture without soap12:header → no headers", () => {
    expect(loadContract(CUSTOMER_WSDL).operations.every((o) => o.headers.length === 0)).toBe(true);
  });
  const header = '<soap12:header message="tns:AuthenticationHeader" part="parameters" use="literal"/>';
  const rejects: [string, string, RegExp][] = [
    [
      "soap12:header naming a part the message lacks",
      withHeader.replace(header, header.replace('part="parameters"', 'part="auth"')),
      /names part "auth" of message \{[^}]+\}AuthenticationHeader, which is not declared/,
    ],
    [
      "soap12:header without part",
      withHeader.replace(header, header.replace(' part="parameters"', "")),
      /names part "" of message/,
    ],
    [
      "soap12:header naming an undeclared message",
      withHeader.replace(header, header.replace("tns:AuthenticationHeader", "tns:Nope")),
      /\{[^}]+\}Nope, which is not declared/,
    ],
    [
      "soap12:header without message",
      withHeader.replace(header, header.replace(' message="tns:AuthenticationHeader"', "")),
      /message is missing or its prefix is undeclared/,
    ],
    [
      "soap12:header use=encoded",
      withHeader.replace(header, header.replace('use="literal"', 'use="encoded"')),
      /use="encoded" is not supported/,
    ],
    [
      "soap12:headerfault",
      withHeader.replace(
        header,
        `${header}<soap12:headerfault message="tns:AuthenticationHeader" part="parameters" use="literal"/>`,
      ),
      /soap12:headerfault is not supported/,
    ],
  ];
  it.each(rejects)("%s → SchemaCompileError", (_name, text, message) => {
    expect(text).not.toBe(withHeader);
    expect(() => load(text)).toThrow(SchemaCompileError);
    expect(() => load(text)).toThrow(message);
  });
  it("a message with an Authentication header block the hook reads → 200 through the endpoint", async () => {
    const app = express();
    app.use(
      "/ws/customer",
      soapEndpoint({
        wsdl: withHeader,
        contract: { baseDir: FIXTURES },
        handlers: customerHandlers(),
        authenticate: async (blocks) => {
          const auth = blocks.find((b) => b.namespace === AUTH_NS && b.localName === "Authentication");
          if (auth?.children.find((c) => c.localName === "Password")?.text !== "pw")
            throw new SoapAuthenticationError();
          return { id: "u" };
        },
        logger: { error: () => {} },
      }),
    );
    const server = await listen(app);
    try {
      const block = (pw: string) =>
        `<a:Authentication xmlns:a="${AUTH_NS}" xmlns:env="${ENV}" env:mustUnderstand="true"><a:Username>u</a:Username><a:Password>${pw}</a:Password></a:Authentication>`;
      expect((await post(`${server.url}/ws/customer`, envelope(getCustomer("42"), block("pw")))).status).toBe(
        200,
      );
      const refused = await post(`${server.url}/ws/customer`, envelope(getCustomer("42"), block("nope")));
      expect(refused.status).toBe(400);
      expect(readFault(refused.text).subcodes).toEqual([`{${WSSE_NS}}FailedAuthentication`]);
    } finally {
      await server.close();
    }
  });
});

describe("price service: xs:decimal with an attribute through the endpoint", () => {
  it("GetPrice → Price 19.99 EUR, exact, in schema order", async () => {
    const app = express();
    app.use(
      "/ws/PriceService",
      soapEndpoint({
        wsdl: PRICE_WSDL,
        handlers: {
          GetPrice: async (p: { Item: string; Category: string }) =>
            p.Item === "gone"
              ? Promise.reject(new Error("x"))
              : { Availability: "IN_STOCK", Price: { $value: "12345678901234567.01", currency: "EUR" } },
        },
        logger: { error: () => {} },
      }),
    );
    const server = await listen(app);
    try {
      const body = envelope(
        '<p:GetPrice xmlns:p="http://svc.example.com/ws/price/v1"><p:Item>Pen</p:Item><p:Category>Office</p:Category></p:GetPrice>',
      );
      const res = await post(`${server.url}/ws/PriceService`, body);
      expect(res.status).toBe(200);
      expect(res.text).toContain(
        '<GetPriceResponse xmlns="http://svc.example.com/ws/price/v1"><Price currency="EUR">12345678901234567.01</Price><Availability>IN_STOCK</Availability></GetPriceResponse>',
      );
      const missing = await post(
        `${server.url}/ws/PriceService`,
        body.replace("<p:Category>Office</p:Category>", ""),
      );
      expect(missing.status).toBe(400);
      expect(readFault(missing.text).reason).toContain("expected element Category");
    } finally {
      await server.close();
    }
  });
});

describe("?xsd= URIs of schema files whose names are not URI-safe (RFC 3986 §2.1, §3.4)", () => {
  it.each([
    // A space, `+` (a space in a query), `&` (a parameter separator), `#` (the fragment), `%`,
    // written as they are (XML-escaped) in the schemaLocation.
    ["sub dir/customer v1+&#%.xsd", "sub dir/customer v1+&amp;#%.xsd"],
    // schemaLocation is an xs:anyURI (XML Schema Part 1 §4.2.3): %20 is a space in the file name.
    ["my types/customer+v1.xsd", "my%20types/customer%2Bv1.xsd"],
  ])(
    "the schema file %j (schemaLocation %j) loads and its published URI fetches it",
    async (file, location) => {
      const dir = mkdtempSync(join(tmpdir(), "soap-xsd-names-"));
      try {
        mkdirSync(join(dir, file, ".."), { recursive: true });
        writeFileSync(join(dir, file), readFileSync(join(FIXTURES, "customer.xsd"), "utf8"));
        writeFileSync(
          join(dir, "customer.wsdl"),
          customerWsdl.replace('schemaLocation="customer.xsd"', `schemaLocation="${location}"`),
        );
        const app = express();
        app.use(
          "/ws/customer",
          soapEndpoint({
            wsdl: join(dir, "customer.wsdl"),
            handlers: customerHandlers(),
            logger: { error: () => {} },
          }),
        );
        const server = await listen(app);
        try {
          const wsdl = await (await fetch(`${server.url}/ws/customer?wsdl`)).text();
          const locations = [...wsdl.matchAll(/schemaLocation="([^"]*)"/g)].map((m) =>
            unescapeXml(m[1] ?? ""),
          );
          expect(locations).toHaveLength(1);
          const res = await fetch(locations[0] ?? "");
          expect(res.status).toBe(200);
          expect(await res.text()).toContain('<xs:complexType name="Customer">');
        } finally {
          await server.close();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

const unescapeXml = (s: string) =>
  s.replace(
    /&(amp|lt|gt|quot|apos);/g,
    (_m, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" })[e] ?? "",
  );

describe("schema files in the WSDL's directory", () => {
  it("a file whose name starts with two dots is inside it, not outside", () => {
    const dir = mkdtempSync(join(tmpdir(), "soap-dotdot-"));
    try {
      writeFileSync(join(dir, "..customer.xsd"), readFileSync(join(FIXTURES, "customer.xsd"), "utf8"));
      writeFileSync(
        join(dir, "customer.wsdl"),
        customerWsdl.replace('schemaLocation="customer.xsd"', 'schemaLocation="..customer.xsd"'),
      );
      expect([...loadContract(join(dir, "customer.wsdl")).schemaFiles.keys()]).toEqual(["..customer.xsd"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("xs:import namespace and the imported schema's targetNamespace (XML Schema Part 1 §4.2.3)", () => {
  const imports = (attrs: string) =>
    customerWsdl.replace(
      '<xs:import namespace="http://svc.example.com/ws/customer/v1" schemaLocation="customer.xsd"/>',
      `<xs:import ${attrs}/>`,
    );

  it("a namespace other than the document's targetNamespace → SchemaCompileError naming both", () => {
    expect(() => load(imports('namespace="customer.xsd" schemaLocation="customer.xsd"'))).toThrow(
      'WSDL wsdl:types: xs:import namespace="customer.xsd" names schemaLocation="customer.xsd", which has targetNamespace="http://svc.example.com/ws/customer/v1" (XML Schema Part 1 §4.2.3: the two must be the same)',
    );
  });

  it("the same schema imported twice, the second time under another namespace → refused too", () => {
    const twice = customerWsdl.replace(
      '<xs:import namespace="http://svc.example.com/ws/customer/v1" schemaLocation="customer.xsd"/>',
      '<xs:import namespace="http://svc.example.com/ws/customer/v1" schemaLocation="customer.xsd"/><xs:import namespace="urn:other" schemaLocation="customer.xsd"/>',
    );
    expect(() => load(twice)).toThrow(/xs:import namespace="urn:other" names schemaLocation="customer\.xsd"/);
  });

  it("no namespace, the document having one → loads, its components in its own targetNamespace", () => {
    const c = load(imports('schemaLocation="customer.xsd"'));
    expect(c.operations[0]?.input).toBe("{http://svc.example.com/ws/customer/v1}GetCustomerRequest");
  });
});

describe("a contract saved as UTF-16 (XML 1.0 §4.3.3: processors MUST read UTF-16)", () => {
  it.each([
    ["utf-16le", Buffer.from([0xff, 0xfe])],
    ["utf-16be", Buffer.from([0xfe, 0xff])],
  ] as const)(
    "%s with its byte order mark: loads, answers, and is published as UTF-8",
    async (encoding, bom) => {
      const dir = mkdtempSync(join(tmpdir(), "soap-utf16-"));
      const utf16 = (text: string) => {
        const le = Buffer.from(text, "utf16le");
        if (encoding === "utf-16be") le.swap16();
        return Buffer.concat([bom, le]);
      };
      try {
        writeFileSync(
          join(dir, "customer.wsdl"),
          utf16(customerWsdl.replace('encoding="UTF-8"', 'encoding="UTF-16"')),
        );
        writeFileSync(
          join(dir, "customer.xsd"),
          utf16(
            readFileSync(join(FIXTURES, "customer.xsd"), "utf8").replace(
              /encoding="UTF-8"/i,
              'encoding="UTF-16"',
            ),
          ),
        );
        const app = express();
        app.use(
          "/ws/customer",
          soapEndpoint({
            wsdl: join(dir, "customer.wsdl"),
            handlers: customerHandlers(),
            logger: { error: () => {} },
          }),
        );
        const server = await listen(app);
        try {
          expect((await post(`${server.url}/ws/customer`, envelope(getCustomer("42")))).status).toBe(200);
          for (const query of ["?wsdl", "?xsd=customer.xsd"]) {
            const res = await fetch(`${server.url}/ws/customer${query}`);
            expect(res.status).toBe(200);
            const text = new TextDecoder("utf-8", { fatal: true }).decode(await res.arrayBuffer());
            expect(text).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>/);
            expect(text).toContain("Customer");
          }
        } finally {
          await server.close();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
