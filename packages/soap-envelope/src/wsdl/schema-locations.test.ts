import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envelope, post, startSoapService } from "../../test/helpers.js";
import { createSoapService } from "../binding/service.js";
import { runCli } from "../cli.js";
import { SchemaCompileError } from "../xsd/schema.js";
import { loadContract } from "./contract.js";
import { generateTypes } from "./generate-types.js";

/**
 * `schemaLocations`: a contract importing its documents by URL (`wsdl:import`, `xs:import`,
 * `xs:include`) loads from local copies, never from the network. `service.wsdl` imports the
 * interface WSDL and the types by URL; the types include `common.xsd` by a location relative to
 * their URL (RFC 3986 §5), which is another URL to map.
 */
const BASE = "https://schemas.example.com/hello/v1/";
const NS = "urn:example:hello";

const SERVICE_WSDL = `<?xml version="1.0"?>
<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/"
    xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:tns="${NS}" targetNamespace="${NS}">
  <wsdl:import namespace="${NS}" location="${BASE}interface.wsdl"/>
  <wsdl:types>
    <xs:schema targetNamespace="${NS}:wsdl">
      <xs:import namespace="${NS}" schemaLocation="${BASE}types.xsd"/>
    </xs:schema>
  </wsdl:types>
  <wsdl:binding name="HelloBinding" type="tns:Hello">
    <soap12:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <wsdl:operation name="greet">
      <soap12:operation soapAction="${NS}#greet"/>
      <wsdl:input><soap12:body use="literal"/></wsdl:input>
      <wsdl:output><soap12:body use="literal"/></wsdl:output>
    </wsdl:operation>
  </wsdl:binding>
  <wsdl:service name="HelloService">
    <wsdl:port name="HelloPort" binding="tns:HelloBinding"><soap12:address location="http://localhost/hello"/></wsdl:port>
  </wsdl:service>
</wsdl:definitions>`;

const INTERFACE_WSDL = `<?xml version="1.0"?>
<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:tns="${NS}" targetNamespace="${NS}">
  <wsdl:message name="greet"><wsdl:part name="parameters" element="tns:greet"/></wsdl:message>
  <wsdl:message name="greetResponse"><wsdl:part name="parameters" element="tns:greetResponse"/></wsdl:message>
  <wsdl:portType name="Hello">
    <wsdl:operation name="greet"><wsdl:input message="tns:greet"/><wsdl:output message="tns:greetResponse"/></wsdl:operation>
  </wsdl:portType>
</wsdl:definitions>`;

const TYPES_XSD = `<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:tns="${NS}" targetNamespace="${NS}" elementFormDefault="qualified">
  <xs:include schemaLocation="common.xsd"/>
  <xs:element name="greet"><xs:complexType><xs:sequence><xs:element name="name" type="tns:Name"/></xs:sequence></xs:complexType></xs:element>
  <xs:element name="greetResponse"><xs:complexType><xs:sequence><xs:element name="greeting" type="xs:string"/></xs:sequence></xs:complexType></xs:element>
</xs:schema>`;

const COMMON_XSD = `<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="${NS}">
  <xs:simpleType name="Name"><xs:restriction base="xs:string"><xs:maxLength value="20"/></xs:restriction></xs:simpleType>
</xs:schema>`;

let root: string;
let wsdl: string;
let copies: Record<string, string>;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "soap-schema-locations-"));
  mkdirSync(join(root, "hello/vendor"), { recursive: true });
  wsdl = join(root, "hello/service.wsdl");
  writeFileSync(wsdl, SERVICE_WSDL);
  writeFileSync(join(root, "hello/vendor/interface.wsdl"), INTERFACE_WSDL);
  writeFileSync(join(root, "hello/vendor/types.xsd"), TYPES_XSD);
  writeFileSync(join(root, "hello/vendor/common.xsd"), COMMON_XSD);
  writeFileSync(join(root, "outside.xsd"), COMMON_XSD);
  copies = {
    [`${BASE}interface.wsdl`]: join(root, "hello/vendor/interface.wsdl"),
    [`${BASE}types.xsd`]: join(root, "hello/vendor/types.xsd"),
    [`${BASE}common.xsd`]: join(root, "hello/vendor/common.xsd"),
  };
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const problems = (step: () => unknown): readonly string[] => {
  try {
    step();
  } catch (err) {
    expect(err).toBeInstanceOf(SchemaCompileError);
    return (err as SchemaCompileError).problems;
  }
  throw new Error("did not throw");
};

describe("imports by URL without schemaLocations", () => {
  it("each one refused with its URL and the option named; nothing fetched", () => {
    expect(problems(() => loadContract(wsdl))).toEqual([
      `${wsdl}: wsdl:import of the remote location "${BASE}interface.wsdl" is not fetched: name a local copy of ${BASE}interface.wsdl in the schemaLocations option`,
      `${wsdl}: the binding's port type is not declared`,
      `${wsdl} wsdl:types: remote schemaLocation "${BASE}types.xsd" is not fetched: name a local copy of ${BASE}types.xsd in the schemaLocations option`,
    ]);
  });

  it("a location relative to a copy's URL → that URL named", () => {
    const { [`${BASE}common.xsd`]: _common, ...some } = copies;
    expect(problems(() => loadContract(wsdl, { schemaLocations: some }))).toEqual([
      `vendor/types.xsd: remote schemaLocation "common.xsd" is not fetched: name a local copy of ${BASE}common.xsd in the schemaLocations option`,
    ]);
  });

  it("an xs:import by URL in wsdl:types → named", () => {
    const { [`${BASE}types.xsd`]: _types, ...some } = copies;
    expect(problems(() => loadContract(wsdl, { schemaLocations: some }))).toEqual([
      `${wsdl} wsdl:types: remote schemaLocation "${BASE}types.xsd" is not fetched: name a local copy of ${BASE}types.xsd in the schemaLocations option`,
    ]);
  });
});

describe("imports by URL with schemaLocations", () => {
  it("loads from the copies; served documents name the copies at the endpoint", () => {
    const contract = loadContract(wsdl, { schemaLocations: copies });
    expect(contract.operations.map((o) => o.name)).toEqual(["greet"]);
    expect([...contract.schemaFiles.keys()].sort()).toEqual([
      "vendor/common.xsd",
      "vendor/interface.wsdl",
      "vendor/types.xsd",
    ]);
    const served = contract.render("http://h/ws") ?? "";
    expect(served).toContain('location="http://h/ws?xsd=vendor/interface.wsdl"');
    expect(served).toContain('schemaLocation="http://h/ws?xsd=vendor/types.xsd"');
    expect(served).not.toContain(BASE);
    expect(contract.render("http://h/ws", "vendor/types.xsd")).toContain(
      'schemaLocation="http://h/ws?xsd=vendor/common.xsd"',
    );
  });

  it("a URL key in another case of scheme and host → the same URL", () => {
    const upper = Object.fromEntries(
      Object.entries(copies).map(([url, file]) => [
        url.replace("https://schemas.example.com", "HTTPS://Schemas.Example.COM"),
        file,
      ]),
    );
    expect(loadContract(wsdl, { schemaLocations: upper }).operations).toHaveLength(1);
  });

  it("a copy outside importRoot → refused, importRoot named", () => {
    const outside = { ...copies, [`${BASE}common.xsd`]: join(root, "outside.xsd") };
    expect(problems(() => loadContract(wsdl, { schemaLocations: outside }))).toEqual([
      `vendor/types.xsd: schemaLocation "common.xsd": the schemaLocations option names ${join(root, "outside.xsd")} for ${BASE}common.xsd, which is outside the WSDL's directory (the importRoot option names a folder holding it)`,
    ]);
    expect(loadContract(wsdl, { schemaLocations: outside, importRoot: root }).operations).toHaveLength(1);
  });

  it("svc-soap-types takes it too (generateTypes, --schema-location)", () => {
    expect(generateTypes(wsdl, { schemaLocations: copies })).toContain("greet");
    let out = "";
    let err = "";
    const io = { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) } };
    expect(runCli([wsdl], io)).toBe(1);
    expect(err).toContain("schemaLocations option");
    const flags = Object.entries(copies).flatMap(([url, file]) => ["--schema-location", `${url}=${file}`]);
    expect(runCli([wsdl, ...flags], io)).toBe(0);
    expect(out).toContain("greet");
  });

  it("through an endpoint (contract.schemaLocations): a call, and the served documents", async () => {
    const server = await startSoapService(
      {
        wsdl,
        contract: { schemaLocations: copies },
        handlers: { greet: ({ name }: { name: string }) => ({ greeting: `Hello, ${name}` }) },
      },
      "/hello",
    );
    try {
      const res = await post(
        server.endpoint,
        envelope(`<h:greet xmlns:h="${NS}"><h:name>Ada</h:name></h:greet>`),
      );
      expect(res.status).toBe(200);
      expect(res.text).toContain("Hello, Ada");
      const tooLong = await post(
        server.endpoint,
        envelope(`<h:greet xmlns:h="${NS}"><h:name>${"a".repeat(21)}</h:name></h:greet>`),
      );
      expect(tooLong.status).toBe(400); // common.xsd's maxLength, read from its copy
      const served = await (await fetch(`${server.endpoint}?wsdl`)).text();
      const types = served.match(/schemaLocation="([^"]*)"/)?.[1] ?? "";
      expect(types).toBe(`${server.endpoint}?xsd=vendor/types.xsd`);
      const typesText = await (await fetch(types)).text();
      expect(typesText).toContain(`schemaLocation="${server.endpoint}?xsd=vendor/common.xsd"`);
    } finally {
      await server.close();
    }
  });
});

describe("schemaLocations refused", () => {
  it.each([
    ["a list", [`${BASE}types.xsd`]],
    ["a relative key", { "types.xsd": "vendor/types.xsd" }],
    ["an empty path", { [`${BASE}types.xsd`]: "" }],
    ["a path that is not a string", { [`${BASE}types.xsd`]: 1 }],
  ])("%s → TypeError naming the option", (_name, schemaLocations) => {
    const load = () => loadContract(wsdl, { schemaLocations: schemaLocations as Record<string, string> });
    expect(load).toThrow(TypeError);
    expect(load).toThrow(expect.objectContaining({ code: "ERR_SVC_SOAP_ENVELOPE_SCHEMA_LOCATIONS" }));
    const service = () =>
      createSoapService({
        wsdl,
        handlers: {},
        contract: { schemaLocations: schemaLocations as Record<string, string> },
      });
    expect(service).toThrow(
      expect.objectContaining({ code: "ERR_SVC_SOAP_ENVELOPE_CONTRACT_SCHEMA_LOCATIONS" }),
    );
  });
});

describe("an import outside the contract's folder names importRoot", () => {
  it.each([
    [
      "xs:import",
      (w: string) => w.replace(`${BASE}types.xsd`, "../outside.xsd"),
      'schemaLocation "../outside.xsd"',
    ],
    [
      "xs:include",
      (w: string) =>
        w.replace(
          `<xs:import namespace="${NS}" schemaLocation="${BASE}types.xsd"/>`,
          '<xs:include schemaLocation="../outside.xsd"/>',
        ),
      'schemaLocation "../outside.xsd"',
    ],
    [
      "wsdl:import",
      (w: string) => w.replace(`${BASE}interface.wsdl`, "../outside.wsdl"),
      'wsdl:import location "../outside.wsdl"',
    ],
  ])("%s → the problem names importRoot", (name, edit, what) => {
    const file = join(root, `hello/outside-${name.replace(":", "-")}.wsdl`);
    writeFileSync(file, edit(SERVICE_WSDL));
    const all = problems(() => loadContract(file, { schemaLocations: copies }));
    expect(
      all.some((p) =>
        p.includes(
          `${what} is outside the WSDL's directory (the importRoot option names a folder holding it)`,
        ),
      ),
    ).toBe(true);
  });
});
