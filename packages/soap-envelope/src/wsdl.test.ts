import { readFileSync } from "node:fs";
import { listen } from "@svc/test-utils";
import express from "express";
import { describe, expect, it } from "vitest";
import { soapEndpoint } from "./endpoint.js";
import { SchemaCompileError } from "./schema.js";
import { CUSTOMER_WSDL, envelope, FIXTURES, PRICE_WSDL, post, readFault } from "./test-utils.js";
import { loadContract } from "./wsdl.js";

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
    ["rpc style", customerWsdl.replace('style="document"', 'style="rpc"'), /style="rpc" is not supported/],
    [
      "use=encoded",
      customerWsdl.replace('<soap12:body use="literal"/>', '<soap12:body use="encoded"/>'),
      /use="encoded" is not supported/,
    ],
    [
      "SOAP 1.1 binding only",
      customerWsdl.replace(
        'xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/"',
        'xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap/"',
      ),
      /only SOAP 1.1 bindings/,
    ],
    [
      "type= message part",
      customerWsdl.replace('element="tns:GetCustomerRequest"', 'type="xs:string"'),
      /exactly one part with an element/,
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
      "notification operation",
      customerWsdl.replace(
        '<wsdl:input message="tns:LogEventRequest"/>',
        '<wsdl:output message="tns:LogEventRequest"/>',
      ),
      /notification/,
    ],
    [
      "a DOCTYPE in the WSDL",
      customerWsdl.replace("<wsdl:definitions", "<!DOCTYPE x><wsdl:definitions"),
      /document type declaration/,
    ],
  ];
  it.each(rejects)("%s → SchemaCompileError", (_name, text, message) => {
    expect(() => load(text)).toThrow(SchemaCompileError);
    expect(() => load(text)).toThrow(message);
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
