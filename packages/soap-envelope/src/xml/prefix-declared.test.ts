import { readFileSync } from "node:fs";
import { listen } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CUSTOMER_WSDL,
  customerHandlers,
  ENV,
  envelope,
  FIXTURES,
  getCustomer,
  post,
  readFault,
  silentLogger,
  startCustomerService,
} from "../../test/helpers.js";
import { soapEndpoint } from "../express.js";

// Namespaces in XML 1.0 §3: "The prefix xml is by definition bound to the namespace name
// http://www.w3.org/XML/1998/namespace. It MAY, but need not, be declared, and MUST NOT be bound
// to any other namespace name." A message (or a contract) that declares it is namespace-well-
// formed and means what it would mean without the declaration.
const XML_NS = "http://www.w3.org/XML/1998/namespace";
const DECLARED = `xmlns:xml="${XML_NS}"`;

let svc: Awaited<ReturnType<typeof startCustomerService>>;
beforeAll(async () => {
  svc = await startCustomerService();
});
afterAll(() => svc.close());

const withEnvelopeAttribute = (message: string, attribute: string) =>
  message.replace("<env:Envelope ", `<env:Envelope ${attribute} `);

const declaring: [string, string][] = [
  ["env:Envelope", withEnvelopeAttribute(envelope(getCustomer("42")), DECLARED)],
  [
    "env:Envelope, with xml:lang",
    withEnvelopeAttribute(envelope(getCustomer("42")), `${DECLARED} xml:lang="en"`),
  ],
  ["env:Body", envelope(getCustomer("42")).replace("<env:Body>", `<env:Body ${DECLARED}>`)],
  ["a header block", envelope(getCustomer("42"), `<h:trace xmlns:h="urn:h" ${DECLARED}/>`)],
  [
    "the body child",
    envelope(getCustomer("42").replace("<c:GetCustomerRequest ", `<c:GetCustomerRequest ${DECLARED} `)),
  ],
  ["a descendant", envelope(getCustomer("42").replace("<c:customerId>", `<c:customerId ${DECLARED}>`))],
  [
    "a descendant, the message past the fast path (a comment)",
    envelope(getCustomer("42").replace("<c:customerId>", `<!-- c --><c:customerId ${DECLARED}>`)),
  ],
];

describe("xmlns:xml bound to its own namespace is allowed (Namespaces in XML 1.0 §3)", () => {
  it.each(declaring)("declared on %s → 200, answered as without it", async (_, message) => {
    const res = await post(svc.endpoint, message);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toContain("<name>Ada Lovelace</name>");
  });

  it("control: xmlns:xml bound to another namespace → 400 Sender, not well-formed", async () => {
    const res = await post(
      svc.endpoint,
      envelope(getCustomer("42").replace("<c:customerId>", '<c:customerId xmlns:xml="urn:other">')),
    );
    expect(res.status).toBe(400);
    const fault = readFault(res.text);
    expect(fault.code).toBe(`{${ENV}}Sender`);
    expect(fault.reason).toMatch(/^The message is not well-formed XML: .*xml prefix must be bound to/);
  });

  it("a contract whose wsdl:definitions declares it loads and serves", async () => {
    const wsdl = readFileSync(CUSTOMER_WSDL, "utf8").replace(
      "<wsdl:definitions ",
      `<wsdl:definitions ${DECLARED} `,
    );
    const endpoint = soapEndpoint({
      wsdl,
      handlers: customerHandlers(),
      logger: silentLogger,
      contract: { baseDir: FIXTURES },
    });
    const server = await listen((req, res) => endpoint(req, res, () => res.writeHead(404).end()));
    try {
      const res = await post(server.url, envelope(getCustomer("42")));
      expect(res.status, res.text).toBe(200);
      expect(res.text).toContain("<name>Ada Lovelace</name>");
    } finally {
      await server.close();
    }
  });
});
