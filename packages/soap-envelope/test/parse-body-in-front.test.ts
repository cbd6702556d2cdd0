import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { errorHandler } from "@svc/errors/express";
import { parseBody } from "@svc/negotiate/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { soapFaults } from "../src/binding/fault-renderer.js";
import { soapEndpoint } from "../src/express.js";

const TNS = "http://svc.example.com/ws/echo/v1";
const WSDL = `<?xml version="1.0" encoding="UTF-8"?>
<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"
    xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/" xmlns:xs="http://www.w3.org/2001/XMLSchema"
    xmlns:tns="${TNS}" name="EchoService" targetNamespace="${TNS}">
  <wsdl:types>
    <xs:schema targetNamespace="${TNS}/wsdl">
      <xs:import namespace="${TNS}" schemaLocation="echo.xsd"/>
    </xs:schema>
  </wsdl:types>
  <wsdl:message name="Echo"><wsdl:part name="parameters" element="tns:Echo"/></wsdl:message>
  <wsdl:message name="EchoResponse"><wsdl:part name="parameters" element="tns:EchoResponse"/></wsdl:message>
  <wsdl:portType name="EchoPortType">
    <wsdl:operation name="Echo">
      <wsdl:input message="tns:Echo"/>
      <wsdl:output message="tns:EchoResponse"/>
    </wsdl:operation>
  </wsdl:portType>
  <wsdl:binding name="EchoBinding" type="tns:EchoPortType">
    <soap12:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="Echo">
      <soap12:operation soapAction="Echo" soapActionRequired="false"/>
      <wsdl:input><soap12:body use="literal"/></wsdl:input>
      <wsdl:output><soap12:body use="literal"/></wsdl:output>
    </wsdl:operation>
  </wsdl:binding>
  <wsdl:service name="EchoService">
    <wsdl:port name="EchoPort" binding="tns:EchoBinding">
      <soap12:address location="http://localhost:3000/ws/echo"/>
    </wsdl:port>
  </wsdl:service>
</wsdl:definitions>`;
const XSD = `<?xml version="1.0" encoding="UTF-8"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:tns="${TNS}" targetNamespace="${TNS}"
    elementFormDefault="qualified">
  <xs:element name="Echo"><xs:complexType><xs:sequence>
    <xs:element name="Text" type="xs:string"/>
  </xs:sequence></xs:complexType></xs:element>
  <xs:element name="EchoResponse"><xs:complexType><xs:sequence>
    <xs:element name="Text" type="xs:string"/>
  </xs:sequence></xs:complexType></xs:element>
</xs:schema>`;

const envelope = `<?xml version="1.0" encoding="utf-8"?><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body><e:Echo xmlns:e="${TNS}"><e:Text>hello</e:Text></e:Echo></env:Body></env:Envelope>`;

let dir: string;
let server: Listening;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-negotiate-soap-"));
  writeFileSync(join(dir, "echo.wsdl"), WSDL);
  writeFileSync(join(dir, "echo.xsd"), XSD);
  const app = express();
  // As the README mounts it: for the whole app, in front of every route.
  app.use(parseBody());
  app.post("/orders", (req, res) => {
    res.status(201).json({ received: req.body ?? null });
  });
  app.use(
    "/ws/echo",
    soapEndpoint({
      wsdl: join(dir, "echo.wsdl"),
      handlers: { Echo: async (payload: { Text: string }) => ({ Text: payload.Text.toUpperCase() }) },
      logger: { error() {} },
    }),
  );
  app.use(errorHandler({ logger: { error() {} }, renderers: [soapFaults({ path: "/ws/echo" })] }));
  server = await listen(app);
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("app.use(parseBody()), then a soapEndpoint of @svc/soap-envelope", () => {
  it.each(["application/soap+xml; charset=utf-8", 'application/soap+xml; charset=utf-8; action="Echo"'])(
    "POST /ws/echo, Content-Type: %s → the endpoint reads the envelope: 200 with the response",
    async (contentType) => {
      const res = await fetch(`${server.url}/ws/echo`, {
        method: "POST",
        headers: { "content-type": contentType },
        body: envelope,
      });
      const body = await res.text();
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/soap\+xml/);
      expect(body).toContain("HELLO");
      expect(body).not.toContain("Fault");
    },
  );

  it("POST /orders, application/xml → still parsed by parseBody", async () => {
    const res = await fetch(`${server.url}/orders`, {
      method: "POST",
      headers: { "content-type": "application/xml" },
      body: "<order><id>3</id></order>",
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ received: { order: { id: "3" } } });
  });

  it("POST /orders, text/plain → left unread, req.body undefined (no 415 for another route's type)", async () => {
    const res = await fetch(`${server.url}/orders`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "hello",
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ received: null });
  });
});

describe('parseBody({ types: ["application/soap+xml"] }): named exactly, a SOAP envelope is read', () => {
  it("POST application/soap+xml → parsed as XML", async () => {
    const app = express();
    app.post("/", parseBody({ types: ["application/soap+xml"] }), (req, res) => {
      res.json({ root: Object.keys((req.body ?? {}) as object) });
    });
    const named = await listen(app);
    try {
      const res = await fetch(named.url, {
        method: "POST",
        headers: { "content-type": "application/soap+xml" },
        body: envelope,
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ root: ["env:Envelope"] });
    } finally {
      await named.close();
    }
  });
});
