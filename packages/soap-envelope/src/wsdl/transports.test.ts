import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { envelope, FIXTURES, post, readFault, startSoapService } from "../../test/helpers.js";
import { SoapFault } from "../envelope/fault.js";
import { SchemaCompileError } from "../xsd/schema.js";
import { loadContract } from "./contract.js";

/**
 * The transports a SOAP binding may name for HTTP (WSDL 1.1 §3.3, wsdl11soap12 §3.3): WSDL 1.1's
 * `http://schemas.xmlsoap.org/soap/http` and the SOAP 1.2 HTTP binding's own name (SOAP 1.2
 * Part 2 §7), which `hello-soap12.wsdl` gives as Apache CXF's SOAP 1.2 sample does.
 */
const HELLO = join(FIXTURES, "hello-soap12.wsdl");
const helloText = readFileSync(HELLO, "utf8");
const SOAP12_HTTP = "http://www.w3.org/2003/05/soap/bindings/HTTP/";
const T = "urn:example:hello-soap12:types";

const thrown = (step: () => unknown): SchemaCompileError => {
  try {
    step();
  } catch (err) {
    return err as SchemaCompileError;
  }
  throw new Error("did not throw");
};

describe("transport of the SOAP 1.2 HTTP binding", () => {
  it(`transport="${SOAP12_HTTP}" → the SOAP 1.2 binding is served`, () => {
    const contract = loadContract(HELLO);
    expect(contract.versions).toEqual(["1.2"]);
    expect(contract.operations.map((o) => o.name)).toEqual(["sayHello", "greet", "ping"]);
  });

  it("a call and a declared fault through a listening server", async () => {
    const server = await startSoapService(
      {
        wsdl: HELLO,
        handlers: {
          sayHello: () => ({ reply: "Bonjour" }),
          greet: ({ who }: { who: string }) => ({ reply: `Hello ${who}` }),
          ping: () => {
            throw new SoapFault({
              code: "Receiver",
              reason: "PingMe fault",
              detail: { pingFault: { minor: 1, major: 2 } },
            });
          },
        },
      },
      "/HelloService",
    );
    try {
      const ok = await post(
        server.endpoint,
        envelope(`<x:greet xmlns:x="${T}"><x:who>Ada</x:who></x:greet>`),
      );
      expect(ok.status).toBe(200);
      expect(ok.text).toMatch(/<([\w-]+:)?reply>Hello Ada<\/([\w-]+:)?reply>/);
      const fault = await post(server.endpoint, envelope(`<x:ping xmlns:x="${T}"/>`));
      expect(fault.status).toBe(500);
      const view = readFault(fault.text);
      expect(view.reason).toBe("PingMe fault");
      expect(view.detail?.localName).toBe("pingFault");
      const served = await (await fetch(`${server.endpoint}?wsdl`)).text();
      expect(served).toContain(`transport="${SOAP12_HTTP}"`);
      expect(served).toContain(`<wsoap12:address location="${server.endpoint}"/>`);
    } finally {
      await server.close();
    }
  });

  it("the URI with white space around it (an xs:anyURI, whose white space collapses) → served", () => {
    const text = helloText.replace(`transport="${SOAP12_HTTP}"`, `transport=" ${SOAP12_HTTP}\n"`);
    expect(loadContract(text).versions).toEqual(["1.2"]);
  });

  it("the same URI on a SOAP 1.1 binding → served as SOAP 1.1 over HTTP", () => {
    const text = helloText.replace(
      'xmlns:wsoap12="http://schemas.xmlsoap.org/wsdl/soap12/"',
      'xmlns:wsoap12="http://schemas.xmlsoap.org/wsdl/soap/"',
    );
    expect(loadContract(text).versions).toEqual(["1.1"]);
  });
});

describe("a binding over another transport is refused, named with its transport", () => {
  const JMS = "http://www.w3.org/2010/soapjms/";
  it.each([
    [
      "SOAP/JMS (SOAP 1.2 binding)",
      helloText.replace(`transport="${SOAP12_HTTP}"`, `transport="${JMS}"`),
      `wsdl:binding "HelloSoap12Binding" (transport "${JMS}")`,
    ],
    [
      "SOAP/JMS (SOAP 1.1 binding)",
      helloText
        .replace(
          'xmlns:wsoap12="http://schemas.xmlsoap.org/wsdl/soap12/"',
          'xmlns:wsoap12="http://schemas.xmlsoap.org/wsdl/soap/"',
        )
        .replace(`transport="${SOAP12_HTTP}"`, `transport="${JMS}"`),
      `wsdl:binding "HelloSoap12Binding" (transport "${JMS}")`,
    ],
    [
      "no transport",
      helloText.replace(` transport="${SOAP12_HTTP}"`, ""),
      'wsdl:binding "HelloSoap12Binding" (soap12:binding without transport)',
    ],
  ])("%s → SchemaCompileError naming the binding and the transport", (_name, text, named) => {
    const err = thrown(() => loadContract(text));
    expect(err).toBeInstanceOf(SchemaCompileError);
    expect(err.message).toBe(
      `WSDL: the WSDL's SOAP ports are bound to another transport than HTTP: ${named}; this node implements SOAP over HTTP ("http://schemas.xmlsoap.org/soap/http" or "${SOAP12_HTTP}")`,
    );
  });

  it("a JMS port beside an HTTP one → the HTTP one is served", () => {
    const jms = `<wsdl:binding name="HelloJmsBinding" type="tns:Hello"><wsoap12:binding style="document" transport="${JMS}"/>${helloText.slice(
      helloText.indexOf('<wsdl:operation name="sayHello">', helloText.indexOf("<wsdl:binding")),
      helloText.indexOf("</wsdl:binding>"),
    )}</wsdl:binding>`;
    const text = helloText
      .replace("<wsdl:service", `${jms}<wsdl:service`)
      .replace(
        "<wsdl:port name",
        '<wsdl:port name="HelloJmsPort" binding="tns:HelloJmsBinding"><wsoap12:address location="jms:queue:hello"/></wsdl:port><wsdl:port name',
      );
    expect(loadContract(text).operations.map((o) => o.name)).toEqual(["sayHello", "greet", "ping"]);
  });
});
