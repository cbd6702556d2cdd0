import { readFileSync } from "node:fs";
import * as soap from "soap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SoapServiceOptions } from "../src/binding/service.js";
import { type Contract, loadContract } from "../src/wsdl/contract.js";
import {
  ANONYMOUS,
  GET_QUOTE,
  GET_QUOTE_RESPONSE,
  getQuote,
  PING,
  QUOTES_WSDL,
  quotesHandlers,
  replyHeaders,
  UNKNOWN_SYMBOL,
  WSA,
  wcfEnvelope,
  wcfHeaders,
} from "./addressing.js";
import { CORPUS, contractOptions } from "./corpus-files.js";
import { decoded, elementValue } from "./corpus-values.js";
import { customerHandlers, FIXTURES, post, readFault, startSoapService } from "./helpers.js";
import { SERVED_ON } from "./mounts.js";
import { runZeep, stopZeep, zeepAvailable } from "./zeep.js";

const SOAP12 = "application/soap+xml; charset=utf-8";
const SOAP11 = "text/xml; charset=utf-8";
const ENV12 = "http://www.w3.org/2003/05/soap-envelope";

const hasZeep = zeepAvailable("addressing-interop.test.ts");
afterAll(() => stopZeep());

/** The endpoint of the quotes contract on `framework`, or the customer one. */
const startQuotes = (framework: (typeof SERVED_ON)[number], extra: Partial<SoapServiceOptions> = {}) =>
  startSoapService({ wsdl: QUOTES_WSDL, handlers: quotesHandlers(), ...extra }, "/ws/quotes", framework);

describe.each(SERVED_ON)("WS-Addressing 1.0, %s", (framework) => {
  let quotes: Awaited<ReturnType<typeof startQuotes>>;
  let customers: Awaited<ReturnType<typeof startSoapService>>;
  beforeAll(async () => {
    quotes = await startQuotes(framework);
    customers = await startSoapService(
      { wsdl: `${FIXTURES}/customer-both.wsdl`, handlers: customerHandlers() },
      "/ws/customer",
      framework,
    );
  });
  afterAll(async () => {
    await quotes.close();
    await customers.close();
  });

  describe('WCF-style requests (s: prefixes, mustUnderstand="1" on wsa:Action and wsa:To)', () => {
    it("SOAP 1.2: 200, the reply's wsa:Action and wsa:RelatesTo", async () => {
      const res = await post(
        quotes.endpoint,
        wcfEnvelope(wcfHeaders(GET_QUOTE), getQuote()),
        `${SOAP12}; action="${GET_QUOTE}"`,
      );
      expect(res.status).toBe(200);
      const reply = replyHeaders(res.text);
      expect(reply.headers.Action).toBe(GET_QUOTE_RESPONSE);
      expect(reply.headers.RelatesTo).toBe("urn:uuid:6f1c2d0e-8a51-4d5c-9d7e-000000000001");
    });

    it("SOAP 1.1 (BasicHttpBinding with addressing): 200 text/xml, the reply's headers", async () => {
      const res = await post(quotes.endpoint, wcfEnvelope(wcfHeaders(GET_QUOTE), getQuote(), "1.1"), SOAP11, {
        SOAPAction: `"${GET_QUOTE}"`,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(SOAP11);
      expect(replyHeaders(res.text).headers.RelatesTo).toBe("urn:uuid:6f1c2d0e-8a51-4d5c-9d7e-000000000001");
    });

    it("an action no operation takes: 400 env:Sender / wsa:ActionNotSupported", async () => {
      const res = await post(quotes.endpoint, wcfEnvelope(wcfHeaders("urn:unknown"), getQuote()));
      expect(res.status).toBe(400);
      const fault = readFault(res.text);
      expect([fault.code, ...fault.subcodes]).toEqual([`{${ENV12}}Sender`, `{${WSA}}ActionNotSupported`]);
      expect(replyHeaders(res.text).headers.Action).toBe(`${WSA}/fault`);
    });

    it("SOAP 1.1, SOAPAction against wsa:Action: 500, faultcode wsa:ActionMismatch, wsa:FaultDetail", async () => {
      const res = await post(quotes.endpoint, wcfEnvelope(wcfHeaders(GET_QUOTE), getQuote(), "1.1"), SOAP11, {
        SOAPAction: `"${PING}"`,
      });
      expect(res.status).toBe(500);
      expect(readFault(res.text).code).toBe(`{${WSA}}ActionMismatch`);
      expect(res.text).toMatch(/<wsa:FaultDetail [^>]*><wsa:ProblemHeaderQName [^>]*>wsa:Action<\//);
    });

    it("no WS-Addressing where the SOAP 1.2 binding requires it: wsa:MessageAddressingHeaderRequired", async () => {
      const res = await post(quotes.endpoint, wcfEnvelope("", getQuote()));
      expect(res.status).toBe(400);
      expect(readFault(res.text).subcodes).toEqual([`{${WSA}}MessageAddressingHeaderRequired`]);
    });

    it("fails without the feature: addressing: false answers the MustUnderstand fault", async () => {
      const plain = await startQuotes(framework, { addressing: false });
      try {
        const res = await post(plain.endpoint, wcfEnvelope(wcfHeaders(GET_QUOTE), getQuote()));
        expect(res.status).toBe(500);
        expect(readFault(res.text).code).toBe(`{${ENV12}}MustUnderstand`);
      } finally {
        await plain.close();
      }
    });
  });

  describe("node-soap with the WS-Addressing headers added (addSoapHeader)", () => {
    /** A client of the served WSDL that sends WCF's headers for `action(soapAction)`. */
    async function client(wsdlUrl: string, action: (soapAction: string) => string, soap12: boolean) {
      const c = await soap.createClientAsync(wsdlUrl, soap12 ? { forceSoap12Headers: true } : {});
      const env = soap12 ? "soap" : "soap";
      c.addSoapHeader(
        (_method: unknown, location: string, soapAction: string) =>
          `<wsa:Action xmlns:wsa="${WSA}" ${env}:mustUnderstand="${soap12 ? "true" : "1"}">${action(soapAction)}</wsa:Action>` +
          `<wsa:MessageID xmlns:wsa="${WSA}">urn:uuid:00000000-0000-4000-8000-00000000000a</wsa:MessageID>` +
          `<wsa:ReplyTo xmlns:wsa="${WSA}"><wsa:Address>${ANONYMOUS}</wsa:Address></wsa:ReplyTo>` +
          `<wsa:To xmlns:wsa="${WSA}" ${env}:mustUnderstand="${soap12 ? "true" : "1"}">${location}</wsa:To>`,
      );
      return c;
    }

    it("SOAP 1.2 getQuote: the result, and the reply relates to the client's message id", async () => {
      const c = await client(`${quotes.endpoint}?wsdl`, (a) => a, true);
      const [result] = await c.getQuoteAsync({ symbol: "ACME" });
      // node-soap reads xs:decimal as a number.
      expect(Number(result.price)).toBe(12.5);
      expect(c.lastRequest).toContain("mustUnderstand");
      const reply = replyHeaders(c.lastResponse as string);
      expect(reply.headers.RelatesTo).toBe("urn:uuid:00000000-0000-4000-8000-00000000000a");
      expect(reply.headers.Action).toBe(GET_QUOTE_RESPONSE);
    });

    it("SOAP 1.2, the declared fault: its wsam:Action on the fault message", async () => {
      const c = await client(`${quotes.endpoint}?wsdl`, (a) => a, true);
      const err = (await c.getQuoteAsync({ symbol: "NONE" }).catch((e: unknown) => e)) as { body: string };
      expect(replyHeaders(err.body).headers.Action).toBe(UNKNOWN_SYMBOL);
      expect(readFault(err.body).subcodes).toEqual([`{http://quotes.example/ws/v1}UnknownSymbol`]);
    });

    it("SOAP 1.2, a wsa:Action other than the action parameter node-soap sends: wsa:ActionMismatch", async () => {
      const c = await client(`${quotes.endpoint}?wsdl`, () => PING, true);
      const err = (await c.getQuoteAsync({ symbol: "ACME" }).catch((e: unknown) => e)) as {
        body: string;
        response: { status: number };
      };
      expect(err.response.status).toBe(400);
      expect(readFault(err.body).subcodes).toEqual([
        `{${WSA}}InvalidAddressingHeader`,
        `{${WSA}}ActionMismatch`,
      ]);
    });

    it("SOAP 1.2, an action the contract does not know (setSOAPAction): wsa:ActionNotSupported", async () => {
      const c = await client(`${quotes.endpoint}?wsdl`, (a) => a, true);
      c.setSOAPAction("urn:not-an-operation");
      const err = (await c.getQuoteAsync({ symbol: "ACME" }).catch((e: unknown) => e)) as {
        body: string;
        response: { status: number };
      };
      expect(err.response.status).toBe(400);
      expect(readFault(err.body).subcodes).toEqual([`{${WSA}}ActionNotSupported`]);
    });

    it("SOAP 1.1 (the customer contract, no addressing metadata): routed by its soapAction", async () => {
      const c = await client(`${customers.endpoint}?wsdl`, (a) => a, false);
      const [result] = await c.getCustomerAsync({ customerId: "42" });
      expect(result.customer.name).toBe("Ada Lovelace");
      expect(replyHeaders(c.lastResponse as string).headers.RelatesTo).toBe(
        "urn:uuid:00000000-0000-4000-8000-00000000000a",
      );
    });
  });

  describe.skipIf(!hasZeep)("zeep", () => {
    const history = `
from zeep.plugins import HistoryPlugin
from zeep.wsa import WsAddressingPlugin
W = "{http://www.w3.org/2005/08/addressing}"
def header(envelope, name):
    found = envelope.find(".//" + W + name)
    return None if found is None else found.text
h = HistoryPlugin()`;

    it("reads wsam:Action from the WSDL and sends the headers itself: the reply relates to its message id", async () => {
      const out = await runZeep(
        quotes.endpoint,
        `${history}
client = zeep.Client(url, plugins=[h])
price = client.service.getQuote(symbol="ACME")
sent, got = h.last_sent["envelope"], h.last_received["envelope"]
return {"price": str(price), "sentAction": header(sent, "Action"), "sentId": header(sent, "MessageID"),
        "action": header(got, "Action"), "relatesTo": header(got, "RelatesTo")}`,
      );
      expect(out.price).toBe("12.50");
      expect(out.sentAction).toBe(GET_QUOTE);
      expect(out.sentId).toMatch(/^urn:uuid:/);
      expect(out.relatesTo).toBe(out.sentId);
      expect(out.action).toBe(GET_QUOTE_RESPONSE);
    });

    it("the declared fault reaches zeep as its Fault, on the fault's action", async () => {
      const out = await runZeep(
        quotes.endpoint,
        `${history}
client = zeep.Client(url, plugins=[h])
try:
    client.service.getQuote(symbol="NONE")
    return {"fault": None}
except zeep.exceptions.Fault as f:
    return {"fault": f.message, "subcodes": [str(s) for s in (f.subcodes or [])], "action": header(h.last_received["envelope"], "Action")}`,
      );
      expect(out.fault).toBe("No quote for NONE");
      expect(out.subcodes).toEqual(["{http://quotes.example/ws/v1}UnknownSymbol"]);
      expect(out.action).toBe(UNKNOWN_SYMBOL);
    });

    it("WsAddressingPlugin on a contract without addressing metadata: its soapAction as wsa:Action", async () => {
      const out = await runZeep(
        customers.endpoint,
        `${history}
client = zeep.Client(url, plugins=[WsAddressingPlugin(), h])
result = client.service.getCustomer(customerId=42)
return {"name": result.name if hasattr(result, "name") else result.customer.name,
        "sentAction": header(h.last_sent["envelope"], "Action"), "sentId": header(h.last_sent["envelope"], "MessageID"),
        "relatesTo": header(h.last_received["envelope"], "RelatesTo")}`,
      );
      expect(out.name).toBe("Ada Lovelace");
      expect(out.sentAction).toBe("getCustomer");
      expect(out.relatesTo).toBe(out.sentId);
    });

    it("WsAddressingPlugin where zeep already sends the headers: two wsa:Action, wsa:InvalidCardinality", async () => {
      const out = await runZeep(
        quotes.endpoint,
        `${history}
client = zeep.Client(url, plugins=[WsAddressingPlugin(), h])
try:
    client.service.getQuote(symbol="ACME")
    return {"fault": None}
except zeep.exceptions.Fault as f:
    return {"fault": f.message, "code": str(f.code), "subcodes": [str(s) for s in (f.subcodes or [])]}`,
      );
      expect(out.subcodes).toEqual([`{${WSA}}InvalidAddressingHeader`, `{${WSA}}InvalidCardinality`]);
      expect(out.fault).toMatch(/wsa:Action appears twice/);
    });
  });
});

/**
 * The corpus contracts that declare their actions with `wsaw:Action` (WCF and Axis2 contracts;
 * `grep -rl "UsingAddressing\|wsam:Action\|wsaw:Action" test/corpus`), each that loads called as
 * a WCF client calls it: its input's action with `mustUnderstand="1"`; the reply's action is the
 * output's `wsaw:Action`, read here from the WSDL's text. Six of the seven load
 * (RetrieveFareQuoteDateRange does not: corpus.test.ts says why); of those, wsdl_style_mix's input
 * holds a required `xs:any`, for which the corpus's value generator has no value to send.
 */
const ADDRESSED = [
  "node-soap-samples/IndienenBericht__should_work_with_deeply_nested_XML_messages/soap.wsdl",
  "node-soap-samples/getAppointmentNumber__should_be_able_to_parse_response/soap.wsdl",
  "node-soap-samples/GetItemInformation__should_ignore_default_namespace_from_schema/soap.wsdl",
  "node-soap/redefined-ns.wsdl",
  "node-soap/extended_recursive.wsdl",
];

describe.each(SERVED_ON)("corpus contracts with wsaw:Action, WCF-style requests, %s", (framework) => {
  it.each(ADDRESSED)("%s", async (file) => {
    const path = `${CORPUS}/${file}`;
    const text = readFileSync(path, "utf8");
    const inputAction = /<wsdl:input\b[^>]*\bwsaw:Action="([^"]+)"/.exec(text)?.[1] as string;
    const outputAction = /<wsdl:output\b[^>]*\bwsaw:Action="([^"]+)"/.exec(text)?.[1] as string;
    const contract: Contract = loadContract(path, contractOptions(path));
    const op = contract.operations[0];
    if (op?.output === undefined) throw new Error(`${file}: no request-response operation`);
    const handlers = { [op.name]: () => decoded(elementValue(contract, op.output as string)) };
    const svc = await startSoapService(
      { wsdl: path, contract: contractOptions(path), handlers } as SoapServiceOptions,
      "/ws/corpus",
      framework,
    );
    try {
      const body = contract.schema.encode(op.input, decoded(elementValue(contract, op.input)));
      const soap12 = contract.versions[0] === "1.2";
      const request = wcfEnvelope(
        wcfHeaders(inputAction, "urn:uuid:corpus-1", svc.endpoint),
        body,
        soap12 ? "1.2" : "1.1",
      );
      const res = soap12
        ? await post(svc.endpoint, request, SOAP12)
        : await post(svc.endpoint, request, SOAP11, { SOAPAction: `"${inputAction}"` });
      expect(res.status, res.text).toBe(200);
      const reply = replyHeaders(res.text);
      expect(reply.headers.Action).toBe(outputAction);
      expect(reply.headers.RelatesTo).toBe("urn:uuid:corpus-1");
    } finally {
      await svc.close();
    }
  });
});
