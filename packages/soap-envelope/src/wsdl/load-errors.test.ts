import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listen } from "@svc/test-utils";
import express from "express";
import { afterAll, describe, expect, it } from "vitest";
import {
  CUSTOMER_WSDL,
  customerHandlers,
  envelope,
  FIXTURES,
  getCustomer,
  post,
} from "../../test/helpers.js";
import { createSoapService } from "../binding/service.js";
import { soapEndpoint } from "../express.js";
import { SchemaCompileError } from "../xsd/schema.js";
import { loadContract } from "./contract.js";

const customerWsdl = readFileSync(CUSTOMER_WSDL, "utf8");
const customerXsd = readFileSync(join(FIXTURES, "customer.xsd"), "utf8");
const dir = mkdtempSync(join(tmpdir(), "svc-wsdl-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes customer.wsdl (changed by `edit`) and customer.xsd (by `editXsd`) into a fresh folder. */
function contract(edit: (wsdl: string) => string, editXsd: (xsd: string) => string = (x) => x): string {
  const folder = mkdtempSync(join(dir, "c-"));
  writeFileSync(join(folder, "customer.wsdl"), edit(customerWsdl));
  writeFileSync(join(folder, "customer.xsd"), editXsd(customerXsd));
  return join(folder, "customer.wsdl");
}

function thrown(fn: () => unknown): Error & { code?: string; problems?: readonly string[] } {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error("nothing was thrown");
}

describe("loading a contract: errors name the file, the line and the construct", () => {
  it("a WSDL path with no file → TypeError ERR_SVC_SOAP_ENVELOPE_WSDL naming the path, not a raw ENOENT", () => {
    const missing = join(dir, "contracts", "nope.wsdl");
    const err = thrown(() => soapEndpoint({ wsdl: missing, handlers: customerHandlers() }));
    expect(err).toBeInstanceOf(TypeError);
    expect(err.code).toBe("ERR_SVC_SOAP_ENVELOPE_WSDL");
    expect(err.message).toContain(missing);
    expect(err.message).toMatch(/ENOENT: no such file or directory/);
  });

  it("an xs:import whose file is missing → SchemaCompileError naming the import and the file", () => {
    const path = contract((w) => w.replace('schemaLocation="customer.xsd"', 'schemaLocation="gone.xsd"'));
    const err = thrown(() => loadContract(path));
    expect(err).toBeInstanceOf(SchemaCompileError);
    expect(err.message).toContain('xs:import schemaLocation="gone.xsd"');
    expect(err.message).toContain(join(dir));
    expect(err.message).toMatch(/ENOENT/);
  });

  it("a port naming its binding unprefixed, in WSDL's default namespace → the name it resolved to and the one declared", () => {
    const path = contract((w) =>
      w
        .replace("<wsdl:definitions ", '<wsdl:definitions xmlns="http://schemas.xmlsoap.org/wsdl/" ')
        .replace('binding="tns:CustomerBinding"', 'binding="CustomerBinding"'),
    );
    const err = thrown(() => loadContract(path));
    expect(err).toBeInstanceOf(SchemaCompileError);
    expect(err.problems).toEqual([
      `${path}: wsdl:port "CustomerPort": its binding {http://schemas.xmlsoap.org/wsdl/}CustomerBinding is not declared (declared: {http://svc.example.com/ws/customer/v1}CustomerBinding)`,
    ]);
  });

  it("a WSDL that is not well-formed → its path, line and column, never 'The message'", () => {
    const path = contract((w) => w.replace("</wsdl:portType>", "</wsdl:porttype>"));
    const err = thrown(() => loadContract(path));
    expect(err).toBeInstanceOf(SchemaCompileError);
    const line = customerWsdl.slice(0, customerWsdl.indexOf("</wsdl:portType>")).split("\n").length;
    expect(err.message).toMatch(
      new RegExp(`^${path.replace(/[.\\/]/g, "\\$&")}:${line}:\\d+: not well-formed XML: `),
    );
    expect(err.message).not.toMatch(/message is not/i);
  });

  it("an imported XSD that is not well-formed → the XSD's name and line", () => {
    const path = contract(
      (w) => w,
      (x) => x.replace("</xs:schema>", "<xs:element"),
    );
    expect(thrown(() => loadContract(path)).message).toMatch(/^customer\.xsd:\d+:\d+: not well-formed XML/);
  });

  it("a WSDL with a DOCTYPE → refused, said of the file", () => {
    const err = thrown(() => loadContract(`<!DOCTYPE x []>${customerWsdl.replace(/^<\?xml[^>]*>/, "")}`));
    expect(err.message).toBe(
      "WSDL: a document type declaration is not allowed (no DTD is read, so no entity is expanded)",
    );
  });

  it("<?xml-stylesheet?> before wsdl:definitions → loads and serves getCustomer", async () => {
    const path = contract((w) =>
      w.replace(/^(<\?xml[^>]*\?>)/, '$1\n<?xml-stylesheet type="text/xsl" href="wsdl.xsl"?>'),
    );
    expect(readFileSync(path, "utf8")).toContain("xml-stylesheet");
    const app = express();
    app.use("/ws", soapEndpoint({ wsdl: path, handlers: customerHandlers() }));
    const server = await listen(app);
    try {
      const res = await post(`${server.url}/ws`, envelope(getCustomer("42")));
      expect(res.status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("an element with type= and xs:unique → loads (an identity constraint is no inline type)", () => {
    const path = contract(
      (w) => w,
      (x) =>
        x.replace(
          '<xs:element name="customerId" type="xs:long"/>',
          '<xs:element name="customerId" type="xs:long"><xs:unique name="u"><xs:selector xpath="."/><xs:field xpath="."/></xs:unique></xs:element>',
        ),
    );
    expect(readFileSync(join(path, "../customer.xsd"), "utf8")).toContain("xs:unique");
    expect(loadContract(path).operations).toHaveLength(4);
  });
});

describe("soap12:headerfault", () => {
  const header = (inner: string) =>
    customerWsdl
      .replace(
        '<wsdl:message name="GetCustomerRequest">',
        '<wsdl:message name="Auth"><wsdl:part name="auth" element="tns:GetCustomerRequest"/></wsdl:message><wsdl:message name="GetCustomerRequest">',
      )
      .replace(
        '<wsdl:input><soap12:body use="literal"/></wsdl:input>',
        `<wsdl:input><soap12:body use="literal"/><soap12:header message="tns:Auth" part="auth" use="literal">${inner}</soap12:header></wsdl:input>`,
      );
  const load = (text: string) => loadContract(text, { baseDir: FIXTURES });

  it("naming a part the message lacks → SchemaCompileError naming it", () => {
    const text = header('<soap12:headerfault message="tns:Auth" part="nope" use="literal"/>');
    expect(text).toContain("headerfault");
    expect(() => load(text)).toThrow(
      /soap12:headerfault names part "nope" of message \{[^}]+\}Auth, which is not declared/,
    );
  });

  it("naming an undeclared message → SchemaCompileError", () => {
    expect(() => load(header('<soap12:headerfault message="tns:Gone" part="auth" use="literal"/>'))).toThrow(
      /\{[^}]+\}Gone, which is not declared/,
    );
  });

  it("use=encoded → SchemaCompileError", () => {
    expect(() => load(header('<soap12:headerfault message="tns:Auth" part="auth" use="encoded"/>'))).toThrow(
      /soap12:headerfault use="encoded" is not supported/,
    );
  });

  it("naming a declared part → loads", () => {
    expect(
      load(header('<soap12:headerfault message="tns:Auth" part="auth" use="literal"/>')).operations,
    ).toHaveLength(4);
  });
});

describe("every blocker at once, the binding first", () => {
  it("a SOAP-over-TCP-only binding and an undeclared type → both problems, the binding's first", () => {
    const path = contract(
      (w) =>
        w.replace(
          'transport="http://schemas.xmlsoap.org/soap/http"',
          'transport="http://schemas.microsoft.com/soap/tcp"',
        ),
      (x) => x.replace('type="xs:long"', 'type="tns:Missing"'),
    );
    const err = thrown(() => loadContract(path));
    expect(err).toBeInstanceOf(SchemaCompileError);
    expect(err.problems).toHaveLength(2);
    expect(err.problems?.[0]).toMatch(
      /customer\.wsdl: the WSDL's SOAP ports are bound to another transport than HTTP: wsdl:binding "\w+" \(transport "http:\/\/schemas\.microsoft\.com\/soap\/tcp"\)/,
    );
    expect(err.problems?.[1]).toMatch(/Missing/);
    expect(err.message).toMatch(/2 problems:\n- .*soap\/tcp.*\n- .*Missing/);
  });

  it("a SOAP 1.1-only binding in an unknown style and an undeclared type → both problems, the binding's first", () => {
    const path = contract(
      (w) =>
        w
          .replace(
            'xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/"',
            'xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap/"',
          )
          .replace('style="document"', 'style="message"'),
      (x) => x.replace('type="xs:long"', 'type="tns:Missing"'),
    );
    const err = thrown(() => loadContract(path));
    expect(err.problems).toHaveLength(2);
    expect(err.problems?.[0]).toMatch(/customer\.wsdl: soap:binding style="message" is not supported/);
    expect(err.problems?.[1]).toMatch(/Missing/);
  });

  it("an unknown style and an encoding not SOAP's in two operations, and a message naming an undeclared element → three problems", () => {
    const text = customerWsdl
      .replace(
        '<soap12:operation soapAction="getCustomer"',
        '<soap12:operation style="message" soapAction="getCustomer"',
      )
      .replace(
        /(<soap12:operation soapAction="createCustomer"[^>]*>\s*)<wsdl:input><soap12:body use="literal"\/>/,
        '$1<wsdl:input><soap12:body use="encoded" encodingStyle="urn:x:own-rules"/>',
      )
      .replace('element="tns:GetCustomerResponse"', 'element="tns:Nowhere"');
    const err = thrown(() => loadContract(text, { baseDir: FIXTURES }));
    expect(err.problems).toEqual([
      expect.stringMatching(/^WSDL: operation "getCustomer": style="message" is not supported/),
      expect.stringMatching(
        /^WSDL: operation "createCustomer" \(line \d+\): soap12:body use="encoded" encodingStyle="urn:x:own-rules" is not supported: this node reads and writes the SOAP 1\.2 encoding/,
      ),
      expect.stringMatching(
        /^WSDL: wsdl:message "GetCustomerResponse": element \{[^}]+\}Nowhere is not declared/,
      ),
    ]);
  });
});

describe("handlers: every mismatch named at once", () => {
  it("two handlers missing and one unknown → one error naming all three", () => {
    const { getCustomer: _g, createCustomer: _c, ...rest } = customerHandlers() as Record<string, unknown>;
    const err = thrown(() =>
      createSoapService({
        wsdl: CUSTOMER_WSDL,
        handlers: { ...rest, getCustomr: async () => ({}) } as never,
      }),
    );
    expect(err.code).toBe("ERR_SVC_SOAP_ENVELOPE_HANDLERS");
    expect(err.message).toContain('handler "getCustomr" matches no operation');
    expect(err.message).toContain('no handler for operations "getCustomer", "createCustomer"');
  });
});
