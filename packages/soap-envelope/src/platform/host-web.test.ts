import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import {
  CUSTOMER_WSDL,
  customerHandlers,
  envelope,
  FIXTURES,
  getCustomer,
  SOAP,
  silentLogger,
} from "../../test/helpers.js";
import { soapEndpoint } from "../fetch.js";

// The build for workerd, workers and browsers (dist/index.web.js, package.json `exports`
// conditions `workerd`, `worker`, `browser`) is these modules with host-web.ts for host.ts
// (tsup.config.ts); here the same swap, so the Fetch entry runs as it does there.
vi.mock("./host.js", () => import("./host-web.js"));

const customerWsdl = readFileSync(CUSTOMER_WSDL, "utf8");
const customerXsd = readFileSync(join(FIXTURES, "customer.xsd"), "utf8");
const documents = { "customer.wsdl": customerWsdl, "customer.xsd": customerXsd };
const partner = readFileSync(join(FIXTURES, "wsse/partner.pem"), "utf8");
const WSSE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd";
const WSU = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd";

describe("the Fetch entry where there is no Node.js (host-web.ts)", () => {
  it("wsSecurity.signature → ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_SIGNATURE at construction, naming what is missing and the Node entries", () => {
    const make = () =>
      soapEndpoint({
        wsdl: "customer.wsdl",
        handlers: customerHandlers(),
        contract: { documents },
        wsSecurity: { signature: { trustedCertificates: [partner] } },
      });
    expect(make).toThrow(TypeError);
    expect(make).toThrow(
      expect.objectContaining({
        code: "ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_SIGNATURE",
        message: expect.stringMatching(
          /wsSecurity\.signature needs X\.509 signature verification \(node:crypto's X509Certificate and xml-crypto's exclusive C14N\).*@svc\/soap-envelope\/node/,
        ),
      }),
    );
  });

  it("wsSecurity with timestamp and replay only → constructed; a Timestamp checked, a replay refused", async () => {
    const soap = soapEndpoint({
      wsdl: "customer.wsdl",
      handlers: customerHandlers(),
      logger: silentLogger,
      contract: { documents },
      wsSecurity: { timestamp: {} },
    });
    const post = (header?: string) =>
      soap(
        new Request("http://soap.example/ws", {
          method: "POST",
          headers: { "content-type": SOAP },
          body: envelope(getCustomer("42"), header),
        }),
      );
    const missing = await post();
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain("a wsu:Timestamp is required");
    const created = new Date();
    const expires = new Date(created.getTime() + 60_000);
    const security = `<wsse:Security xmlns:wsse="${WSSE}" xmlns:wsu="${WSU}"><wsu:Timestamp><wsu:Created>${created.toISOString()}</wsu:Created><wsu:Expires>${expires.toISOString()}</wsu:Expires></wsu:Timestamp></wsse:Security>`;
    const fresh = await post(security);
    expect(fresh.status).toBe(200);
    expect(await fresh.text()).toContain("Ada Lovelace");
    const replayed = await post(security);
    expect(replayed.status).toBe(400);
    expect(await replayed.text()).toContain("InvalidSecurity");
  });

  it("wsdl naming a file → ERR_SVC_SOAP_ENVELOPE_WSDL at construction, naming contract.documents", () => {
    expect(() => soapEndpoint({ wsdl: CUSTOMER_WSDL, handlers: customerHandlers() })).toThrow(
      expect.objectContaining({
        code: "ERR_SVC_SOAP_ENVELOPE_WSDL",
        message: expect.stringContaining("reads no file: give the contract's documents in memory"),
      }),
    );
  });

  it("contract.documents → served: ?wsdl, and a message answered", async () => {
    const soap = soapEndpoint({
      wsdl: "customer.wsdl",
      handlers: customerHandlers(),
      contract: { documents },
    });
    const wsdl = await soap(new Request("http://soap.example/ws?wsdl"));
    expect(wsdl.status).toBe(200);
    expect(await wsdl.text()).toContain('schemaLocation="http://soap.example/ws?xsd=customer.xsd"');
    const answer = await soap(
      new Request("http://soap.example/ws", {
        method: "POST",
        headers: { "content-type": SOAP },
        body: envelope(getCustomer("42")),
      }),
    );
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain("Ada Lovelace");
  });
});
