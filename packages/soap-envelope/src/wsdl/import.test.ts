import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as soap from "soap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSoapService } from "../../test/helpers.js";
import { SchemaCompileError } from "../xsd/schema.js";
import { loadContract } from "./contract.js";
import { generateTypes } from "./generate-types.js";

/**
 * wsdl:import (WSDL 1.1 §2.1.1): a service WSDL whose binding and service import the messages,
 * port type and types of another WSDL (and an XSD) in its folder, each in its own namespace.
 */
const WSDL = "http://schemas.xmlsoap.org/wsdl/";
const SUB_NS = "http://svc.example.com/ws/version/interface";

const sub = `<?xml version="1.0"?>
<wsdl:definitions xmlns:wsdl="${WSDL}" xmlns:xs="http://www.w3.org/2001/XMLSchema"
    xmlns:i="${SUB_NS}" xmlns:v="http://svc.example.com/ws/version/types" targetNamespace="${SUB_NS}">
  <wsdl:import namespace="http://svc.example.com/ws/version/types" location="types/version.xsd"/>
  <wsdl:message name="GetVersion"><wsdl:part name="parameters" element="v:GetVersion"/></wsdl:message>
  <wsdl:message name="GetVersionResponse"><wsdl:part name="parameters" element="v:GetVersionResponse"/></wsdl:message>
  <wsdl:portType name="VersionPortType">
    <wsdl:operation name="getVersion">
      <wsdl:input message="i:GetVersion"/><wsdl:output message="i:GetVersionResponse"/>
    </wsdl:operation>
  </wsdl:portType>
</wsdl:definitions>`;

const xsd = `<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="http://svc.example.com/ws/version/types"
    elementFormDefault="qualified">
  <xs:element name="GetVersion"><xs:complexType><xs:sequence>
    <xs:element name="component" type="xs:string"/>
  </xs:sequence></xs:complexType></xs:element>
  <xs:element name="GetVersionResponse"><xs:complexType><xs:sequence>
    <xs:element name="version" type="xs:long"/>
  </xs:sequence></xs:complexType></xs:element>
</xs:schema>`;

const main = (location = "interface.wsdl") => `<?xml version="1.0"?>
<wsdl:definitions xmlns:wsdl="${WSDL}" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
    xmlns:tns="http://svc.example.com/ws/version" xmlns:i="${SUB_NS}" name="Version"
    targetNamespace="http://svc.example.com/ws/version">
  <wsdl:import namespace="${SUB_NS}" location="${location}"/>
  <wsdl:binding name="VersionBinding" type="i:VersionPortType">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="getVersion">
      <soap:operation soapAction="urn:getVersion"/>
      <wsdl:input><soap:body use="literal"/></wsdl:input>
      <wsdl:output><soap:body use="literal"/></wsdl:output>
    </wsdl:operation>
  </wsdl:binding>
  <wsdl:service name="VersionService">
    <wsdl:port name="VersionPort" binding="tns:VersionBinding">
      <soap:address location="http://localhost/ws/version"/>
    </wsdl:port>
  </wsdl:service>
</wsdl:definitions>`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "wsdl-import-"));
  mkdirSync(join(dir, "types"));
  writeFileSync(join(dir, "interface.wsdl"), sub);
  writeFileSync(join(dir, "types/version.xsd"), xsd);
  writeFileSync(join(dir, "version.wsdl"), main());
  writeFileSync(join(dir, "not-wsdl.xml"), "<x/>");
  // Two WSDLs that import each other: each is read once.
  writeFileSync(join(dir, "cycle.wsdl"), main("cycle-sub.wsdl"));
  writeFileSync(
    join(dir, "cycle-sub.wsdl"),
    sub.replace(
      '<wsdl:import namespace="http',
      '<wsdl:import namespace="x" location="cycle.wsdl"/><wsdl:import namespace="http',
    ),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("loadContract: wsdl:import", () => {
  it("a port type, messages and an XSD imported → the operation, its elements in their namespaces", () => {
    const c = loadContract(join(dir, "version.wsdl"));
    expect(c.operations.map((o) => [o.name, o.input, o.output])).toEqual([
      [
        "getVersion",
        "{http://svc.example.com/ws/version/types}GetVersion",
        "{http://svc.example.com/ws/version/types}GetVersionResponse",
      ],
    ]);
    expect([...c.schemaFiles.keys()].sort()).toEqual(["interface.wsdl", "types/version.xsd"]);
  });

  it("two WSDLs importing each other → each read once, loads", () => {
    expect(loadContract(join(dir, "cycle.wsdl")).operations.map((o) => o.name)).toEqual(["getVersion"]);
  });

  it.each([
    [
      "a remote location",
      "http://example.com/interface.wsdl",
      /WSDL: wsdl:import of the remote location "http:\/\/example\.com\/interface\.wsdl" is not fetched: name a local copy of http:\/\/example\.com\/interface\.wsdl in the schemaLocations option/,
    ],
    [
      "a location outside the WSDL's folder",
      "../interface.wsdl",
      /wsdl:import location "\.\.\/interface\.wsdl" is outside the WSDL's directory/,
    ],
    [
      "a missing file",
      "nope.wsdl",
      /wsdl:import location="nope\.wsdl" names .*nope\.wsdl, which cannot be read \(ENOENT/,
    ],
    [
      "a document that is neither WSDL nor XSD",
      "not-wsdl.xml",
      /not-wsdl\.xml: a wsdl:import names a document whose element is \{\}x/,
    ],
    ["no location", "", /wsdl:import without location cannot be resolved/],
  ])("%s → SchemaCompileError", (_name, location, message) => {
    const text = main(location);
    expect(() => loadContract(text, { baseDir: dir })).toThrow(SchemaCompileError);
    expect(() => loadContract(text, { baseDir: dir })).toThrow(message);
  });

  it("a remote location → the problem names the WSDL once", () => {
    let problems: readonly string[] = [];
    try {
      loadContract(main("http://example.com/interface.wsdl"), { baseDir: dir });
    } catch (err) {
      problems = (err as SchemaCompileError).problems;
    }
    expect(problems[0]).toBe(
      'WSDL: wsdl:import of the remote location "http://example.com/interface.wsdl" is not fetched: name a local copy of http://example.com/interface.wsdl in the schemaLocations option',
    );
  });

  it("a port of the imported WSDL naming an undeclared prefix → the problem names the imported file", () => {
    const folder = mkdtempSync(join(dir, "port-"));
    const withPort = sub.replace(
      "</wsdl:definitions>",
      '<wsdl:service name="S"><wsdl:port name="SubPort" binding="auth:SubBinding"/></wsdl:service></wsdl:definitions>',
    );
    writeFileSync(join(folder, "interface.wsdl"), withPort);
    mkdirSync(join(folder, "types"));
    writeFileSync(join(folder, "types/version.xsd"), xsd);
    writeFileSync(join(folder, "version.wsdl"), main());
    let problems: readonly string[] = [];
    try {
      loadContract(join(folder, "version.wsdl"));
    } catch (err) {
      problems = (err as SchemaCompileError).problems;
    }
    expect(problems).toEqual([
      'interface.wsdl: wsdl:port "SubPort": binding is missing or its prefix is undeclared',
    ]);
  });

  it("svc-soap-types writes the imported operation's types", () => {
    const types = generateTypes(main(), { baseDir: dir });
    expect(types).toContain("getVersion: { input: GetVersion; output: GetVersionResponseInit };");
  });
});

describe("wsdl:import through a listening endpoint", () => {
  let server: Awaited<ReturnType<typeof startSoapService>>;
  let endpoint: string;
  beforeAll(async () => {
    server = await startSoapService(
      {
        wsdl: join(dir, "version.wsdl"),
        handlers: {
          getVersion: ({ component }: { component: string }) => ({ version: component.length }),
        } as never,
      },
      "/ws/version",
    );
    endpoint = server.endpoint;
  });
  afterAll(() => server.close());

  it("?wsdl points the import at ?xsd=interface.wsdl, which is served with its own imports rewritten", async () => {
    const wsdl = await (await fetch(`${endpoint}?wsdl`)).text();
    expect(wsdl).toContain(`location="${endpoint}?xsd=interface.wsdl"`);
    const res = await fetch(`${endpoint}?xsd=interface.wsdl`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/wsdl+xml; charset=utf-8");
    expect(await res.text()).toContain(`location="${endpoint}?xsd=types/version.xsd"`);
    expect((await fetch(`${endpoint}?xsd=types/version.xsd`)).status).toBe(200);
  });

  it("node-soap loads the WSDL and its imports from the endpoint and calls getVersion", async () => {
    const client = await soap.createClientAsync(`${endpoint}?wsdl`);
    const [result] = await client.getVersionAsync({ component: "kernel" });
    expect(Number(result.version)).toBe(6);
    expect(client.lastResponse).toContain("<version>6</version>");
  });
});
