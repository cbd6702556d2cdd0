import { readFileSync } from "node:fs";
import { subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { describe, expect, it } from "vitest";
import { createSoapService, type SoapServiceOptions } from "../src/binding/service.js";
import type { SoapDiagnostic } from "../src/processor/diagnostics.js";
import { parseXmlString, resolveLimits } from "../src/xml/reader.js";
import {
  ANONYMOUS,
  GET_QUOTE,
  GET_QUOTE_RESPONSE,
  getQuote,
  NONE,
  PING,
  PING_RESPONSE,
  ping,
  QNS,
  QUOTES_WSDL,
  quotesHandlers,
  replyHeaders,
  seen,
  TRADE,
  textOf,
  trade,
  UNKNOWN_SYMBOL,
  WSA,
  wcfEnvelope,
  wcfHeaders,
  wsa,
} from "./addressing.js";
import {
  CUSTOMER_WSDL,
  customerHandlers,
  getCustomer,
  post as httpPost,
  readFault,
  silentLogger,
  TNS,
} from "./helpers.js";
import { UPLOAD_TNS, UPLOAD_WSDL, uploadHandlers } from "./mtom.js";
import { CA, signWithNodeSoap, startSecuredService, unsigned, WSSE_NS } from "./wsse.js";

const SOAP12 = "application/soap+xml; charset=utf-8";
const SOAP11 = "text/xml; charset=utf-8";

const quotes = (extra: Partial<SoapServiceOptions> = {}) =>
  createSoapService({ wsdl: QUOTES_WSDL, handlers: quotesHandlers(), logger: silentLogger, ...extra });

const service = quotes();

function post(body: string, contentType = SOAP12, soapAction?: string, svc = service) {
  return svc.handle({ method: "POST", contentType, contentLength: undefined, body, soapAction });
}

/** A request's headers: WCF's for `action`, with `extra` blocks after them. */
const headers = (action: string, extra = "") => wcfHeaders(action) + extra;

/** The fault's `[Details]`: SOAP 1.2's env:Detail child, SOAP 1.1's wsa:FaultDetail header block's. */
function detailOf(text: string) {
  const root = parseXmlString(text, resolveLimits());
  const header = root.children.find((c) => c.localName === "Header");
  const faultDetail = header?.children.find((c) => c.namespace === WSA && c.localName === "FaultDetail");
  const body = root.children.find((c) => c.localName === "Body");
  const detail = body?.children[0]?.children.find((c) => c.localName === "Detail");
  return faultDetail?.children[0] ?? detail?.children[0];
}

/** SOAP 1.1's faultstring. */
const faultString = (text: string) => /<faultstring>([^<]*)<\/faultstring>/.exec(text)?.[1];

const problemHeader = (text: string) => {
  const detail = detailOf(text);
  expect(detail?.namespace).toBe(WSA);
  expect(detail?.localName).toBe("ProblemHeaderQName");
  const [prefix, local] = (detail?.text ?? "").split(":");
  expect(detail?.scope[prefix as string]).toBe(WSA);
  return local;
};

describe("WS-Addressing 1.0: a WCF-style request", () => {
  it("mandatory wsa:Action and wsa:To are understood; the reply relates to the request", async () => {
    const res = await post(wcfEnvelope(headers(GET_QUOTE), getQuote()));
    expect(res.status).toBe(200);
    const reply = replyHeaders(res.body as string);
    expect(reply.headers.Action).toBe(GET_QUOTE_RESPONSE);
    expect(reply.headers.RelatesTo).toBe("urn:uuid:6f1c2d0e-8a51-4d5c-9d7e-000000000001");
    expect(reply.headers.MessageID).toMatch(
      /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    // The anonymous [destination] is implied (SOAP Binding §3.5): no wsa:To.
    expect(reply.names).toEqual(["Action", "MessageID", "RelatesTo"]);
    expect(res.body).toContain("<price>12.50</price>");
    expect(seen.at(-1)).toEqual({
      operation: "getQuote",
      addressing: {
        action: GET_QUOTE,
        messageId: "urn:uuid:6f1c2d0e-8a51-4d5c-9d7e-000000000001",
        to: "http://localhost/ws/quotes",
        replyTo: ANONYMOUS,
        faultTo: undefined,
        from: undefined,
        relatesTo: [],
      },
    });
  });

  it("two replies carry two fresh message ids", async () => {
    const a = replyHeaders((await post(wcfEnvelope(headers(GET_QUOTE), getQuote()))).body as string);
    const b = replyHeaders((await post(wcfEnvelope(headers(GET_QUOTE), getQuote()))).body as string);
    expect(a.headers.MessageID).not.toBe(b.headers.MessageID);
  });

  it("with addressing: false, the mandatory headers get the MustUnderstand fault (as before)", async () => {
    const res = await post(
      wcfEnvelope(headers(GET_QUOTE), getQuote()),
      SOAP12,
      undefined,
      quotes({ addressing: false }),
    );
    expect(res.status).toBe(500);
    const fault = readFault(res.body as string);
    expect(fault.code).toBe("{http://www.w3.org/2003/05/soap-envelope}MustUnderstand");
    expect(fault.notUnderstood).toEqual([`{${WSA}}Action`, `{${WSA}}To`]);
  });

  it("routes by wsa:Action: the default action pattern of ping (Metadata §4.4.4)", async () => {
    const res = await post(wcfEnvelope(headers(PING), ping));
    expect(res.status).toBe(200);
    expect(replyHeaders(res.body as string).headers.Action).toBe(PING_RESPONSE);
  });

  it("a one-way operation: 202, nothing to relate, no MessageID needed", async () => {
    const res = await post(
      wcfEnvelope(
        wsa("Action", TRADE, ` xmlns:s="http://www.w3.org/2003/05/soap-envelope" s:mustUnderstand="true"`),
        trade,
      ),
    );
    expect(res.status).toBe(202);
    expect(res.body).toBe("");
    expect(seen.at(-1)?.operation).toBe("trade");
  });

  it("the declared fault's wsam:Action, the reply relating to the request", async () => {
    const res = await post(wcfEnvelope(headers(GET_QUOTE), getQuote("NONE")));
    expect(res.status).toBe(400);
    const reply = replyHeaders(res.body as string);
    expect(reply.headers.Action).toBe(UNKNOWN_SYMBOL);
    expect(reply.headers.RelatesTo).toBe("urn:uuid:6f1c2d0e-8a51-4d5c-9d7e-000000000001");
    expect(readFault(res.body as string).detail?.localName).toBe("UnknownSymbol");
  });

  it("any other SOAP fault's action is .../addressing/soap/fault", async () => {
    const res = await post(wcfEnvelope(headers(GET_QUOTE), `<q:GetQuote xmlns:q="${QNS}"/>`));
    expect(res.status).toBe(400);
    expect(replyHeaders(res.body as string).headers.Action).toBe(`${WSA}/soap/fault`);
  });

  it("a request without WS-Addressing at the SOAP 1.1 binding, where it is optional: no wsa headers back", async () => {
    const res = await post(
      wcfEnvelope("", getQuote(), "1.1").replace("<s:Header></s:Header>", ""),
      SOAP11,
      `"${GET_QUOTE}"`,
    );
    expect(res.status).toBe(200);
    expect(res.body).not.toContain("Header");
  });

  it("the SOAP 1.1 binding answers in SOAP 1.1 with the reply's headers", async () => {
    const res = await post(wcfEnvelope(headers(GET_QUOTE), getQuote(), "1.1"), SOAP11, `"${GET_QUOTE}"`);
    expect(res.status).toBe(200);
    expect(res.body).toContain("<SOAP-ENV:Header>");
    expect(replyHeaders(res.body as string).headers.Action).toBe(GET_QUOTE_RESPONSE);
  });

  it('an empty SOAPAction ("") agrees with any wsa:Action (SOAP Binding §4.2)', async () => {
    const res = await post(wcfEnvelope(headers(GET_QUOTE), getQuote(), "1.1"), SOAP11, '""');
    expect(res.status).toBe(200);
  });

  it("wsa:ReplyTo none: the handler runs, nothing is sent back (202)", async () => {
    const before = seen.length;
    const blocks =
      wsa("Action", PING) +
      wsa("MessageID", "urn:uuid:1") +
      wsa("ReplyTo", `<wsa:Address>${NONE}</wsa:Address>`);
    const res = await post(wcfEnvelope(blocks, ping));
    expect(res.status).toBe(202);
    expect(res.body).toBe("");
    expect(seen.length).toBe(before + 1);
  });

  it("the reply endpoint's reference parameters come back as header blocks (Core §3.3)", async () => {
    const params = `<wsa:ReferenceParameters><c:Session xmlns:c="urn:client" c:kind="x">s-1</c:Session><c:Route xmlns:c="urn:client"><c:Hop>a</c:Hop></c:Route></wsa:ReferenceParameters>`;
    const blocks =
      wsa("Action", GET_QUOTE) +
      wsa("MessageID", "urn:uuid:2") +
      wsa("ReplyTo", `<wsa:Address>${ANONYMOUS}</wsa:Address>${params}`);
    const res = await post(wcfEnvelope(blocks, getQuote()));
    expect(res.status).toBe(200);
    const reply = replyHeaders(res.body as string);
    expect(reply.parameters.map((p) => [p.namespace, p.localName, p.text, textOf(p, "Hop")])).toEqual([
      ["urn:client", "Session", "s-1", undefined],
      ["urn:client", "Route", "", "a"],
    ]);
    expect(reply.parameters[0]?.attributes["{urn:client}kind"]).toBe("x");
  });

  it("a wsa block for another actor is not this node's: routed by the Body, no wsa reply", async () => {
    const blocks = `<wsa:Action xmlns:wsa="${WSA}" s:actor="urn:gateway">urn:nothing</wsa:Action>`;
    const res = await post(wcfEnvelope(blocks, getQuote(), "1.1"), SOAP11, `"${GET_QUOTE}"`);
    expect(res.status).toBe(200);
    expect(replyHeaders(res.body as string).headers.Action).toBeUndefined();
  });

  it("a mandatory header of the 2004/08 Member Submission: the MustUnderstand fault saying which WS-Addressing this is", async () => {
    const sub = "http://schemas.xmlsoap.org/ws/2004/08/addressing";
    const res = await post(
      wcfEnvelope(`<a:Action s:mustUnderstand="1" xmlns:a="${sub}">${GET_QUOTE}</a:Action>`, getQuote()),
    );
    expect(res.status).toBe(500);
    const fault = readFault(res.body as string);
    expect(fault.code).toBe("{http://www.w3.org/2003/05/soap-envelope}MustUnderstand");
    expect(fault.notUnderstood).toEqual([`{${sub}}Action`]);
    expect(fault.reason).toContain("2004/08 Member Submission; this node reads WS-Addressing 1.0");
  });
});

/** One fault row: the request, the status, the subcodes and the problem header. */
interface FaultRow {
  name: string;
  body: string;
  contentType?: string;
  soapAction?: string;
  subcodes: string[];
  problem?: string;
  reason: RegExp;
}

const rows: FaultRow[] = [
  {
    name: "a wsa:Action no operation takes → wsa:ActionNotSupported",
    body: wcfEnvelope(headers("urn:no-such-action"), getQuote()),
    subcodes: ["ActionNotSupported"],
    reason: /The action "urn:no-such-action" cannot be processed at the receiver/,
  },
  {
    name: "wsa:Action and the action parameter disagree → wsa:ActionMismatch",
    body: wcfEnvelope(headers(GET_QUOTE), getQuote()),
    contentType: `${SOAP12}; action="${PING}"`,
    subcodes: ["InvalidAddressingHeader", "ActionMismatch"],
    problem: "Action",
    reason: /is not the action parameter/,
  },
  {
    name: "wsa:Action and SOAPAction disagree (SOAP 1.1) → wsa:ActionMismatch",
    body: wcfEnvelope(headers(GET_QUOTE), getQuote(), "1.1"),
    contentType: SOAP11,
    soapAction: `"${PING}"`,
    subcodes: ["InvalidAddressingHeader", "ActionMismatch"],
    problem: "Action",
    reason: /is not the SOAPAction field/,
  },
  {
    name: "two wsa:Action headers → wsa:InvalidCardinality",
    body: wcfEnvelope(headers(GET_QUOTE, wsa("Action", GET_QUOTE)), getQuote()),
    subcodes: ["InvalidAddressingHeader", "InvalidCardinality"],
    problem: "Action",
    reason: /wsa:Action appears twice/,
  },
  {
    name: "wsa headers without wsa:Action → wsa:MessageAddressingHeaderRequired",
    body: wcfEnvelope(wsa("MessageID", "urn:uuid:3"), getQuote()),
    subcodes: ["MessageAddressingHeaderRequired"],
    problem: "Action",
    reason: /not present: wsa:Action/,
  },
  {
    name: "no WS-Addressing where the binding requires it (wsam:Addressing) → wsa:MessageAddressingHeaderRequired",
    body: wcfEnvelope("", getQuote()),
    subcodes: ["MessageAddressingHeaderRequired"],
    problem: "Action",
    reason: /the contract requires WS-Addressing/,
  },
  {
    name: "a request-response call without wsa:MessageID → wsa:MessageAddressingHeaderRequired",
    body: wcfEnvelope(wsa("Action", GET_QUOTE), getQuote()),
    subcodes: ["MessageAddressingHeaderRequired"],
    problem: "MessageID",
    reason: /not present: wsa:MessageID/,
  },
  {
    name: "an empty wsa:Action → wsa:InvalidAddressingHeader",
    body: wcfEnvelope(wsa("Action", " "), getQuote()),
    subcodes: ["InvalidAddressingHeader"],
    problem: "Action",
    reason: /wsa:Action is empty/,
  },
  {
    name: "a wsa:MessageID holding elements → wsa:InvalidAddressingHeader",
    body: wcfEnvelope(
      headers(GET_QUOTE, "").replace(/<a:MessageID([^>]*)>[^<]*</, "<a:MessageID$1><x/><"),
      getQuote(),
    ),
    subcodes: ["InvalidAddressingHeader"],
    problem: "MessageID",
    reason: /wsa:MessageID holds elements/,
  },
  {
    name: "a wsa:To that is no absolute IRI → wsa:InvalidAddress",
    body: wcfEnvelope(wcfHeaders(GET_QUOTE, undefined, "ws/quotes"), getQuote()),
    subcodes: ["InvalidAddressingHeader", "InvalidAddress"],
    problem: "To",
    reason: /wsa:To "ws\/quotes" is not an absolute IRI/,
  },
  {
    name: "a non-anonymous wsa:ReplyTo → wsa:OnlyAnonymousAddressSupported",
    body: wcfEnvelope(
      wsa("Action", GET_QUOTE) +
        wsa("MessageID", "urn:uuid:4") +
        wsa("ReplyTo", "<wsa:Address>http://client.example/callback</wsa:Address>"),
      getQuote(),
    ),
    subcodes: ["InvalidAddressingHeader", "OnlyAnonymousAddressSupported"],
    problem: "ReplyTo",
    reason: /wsa:ReplyTo names "http:\/\/client.example\/callback"/,
  },
  {
    name: "a non-anonymous wsa:FaultTo → wsa:OnlyAnonymousAddressSupported",
    body: wcfEnvelope(
      headers(GET_QUOTE, wsa("FaultTo", "<wsa:Address>http://client.example/faults</wsa:Address>")),
      getQuote(),
    ),
    subcodes: ["InvalidAddressingHeader", "OnlyAnonymousAddressSupported"],
    problem: "FaultTo",
    reason: /wsa:FaultTo names/,
  },
  {
    name: "a wsa:ReplyTo without wsa:Address → wsa:MissingAddressInEPR",
    body: wcfEnvelope(
      wsa("Action", GET_QUOTE) + wsa("MessageID", "urn:uuid:5") + wsa("ReplyTo", ""),
      getQuote(),
    ),
    subcodes: ["InvalidAddressingHeader", "MissingAddressInEPR"],
    problem: "ReplyTo",
    reason: /wsa:ReplyTo has no wsa:Address/,
  },
  {
    name: "more than 8 reference parameters → wsa:InvalidEPR",
    body: wcfEnvelope(
      wsa("Action", GET_QUOTE) +
        wsa("MessageID", "urn:uuid:6") +
        wsa(
          "ReplyTo",
          `<wsa:Address>${ANONYMOUS}</wsa:Address><wsa:ReferenceParameters>${'<c:P xmlns:c="urn:c"/>'.repeat(9)}</wsa:ReferenceParameters>`,
        ),
      getQuote(),
    ),
    subcodes: ["InvalidAddressingHeader", "InvalidEPR"],
    problem: "ReplyTo",
    reason: /more than 8 reference parameters/,
  },
  {
    name: "reference parameters of more than 4096 characters → wsa:InvalidEPR",
    body: wcfEnvelope(
      wsa("Action", GET_QUOTE) +
        wsa("MessageID", "urn:uuid:7") +
        wsa(
          "ReplyTo",
          `<wsa:Address>${ANONYMOUS}</wsa:Address><wsa:ReferenceParameters><c:P xmlns:c="urn:c">${"x".repeat(5000)}</c:P></wsa:ReferenceParameters>`,
        ),
      getQuote(),
    ),
    subcodes: ["InvalidAddressingHeader", "InvalidEPR"],
    problem: "ReplyTo",
    reason: /longer than 4096 characters/,
  },
  {
    name: "a wsa:Action of more than 1024 characters → wsa:InvalidAddressingHeader",
    body: wcfEnvelope(headers(`urn:${"a".repeat(1100)}`), getQuote()),
    subcodes: ["InvalidAddressingHeader"],
    problem: "Action",
    reason: /wsa:Action is longer than 1024 characters/,
  },
];

describe.each(rows)("WS-Addressing fault: $name", (row) => {
  it("has its code, subcodes and problem header, in SOAP 1.2 and in SOAP 1.1's binding of them", async () => {
    const soap11 = row.contentType?.startsWith("text/xml") === true;
    const res = await post(row.body, row.contentType ?? SOAP12, row.soapAction);
    const text = res.body as string;
    const fault = readFault(text);
    if (soap11) {
      // SOAP Binding §6.2: the most specific code is the faultcode; [Details] in wsa:FaultDetail.
      expect(res.status).toBe(500);
      expect(fault.code).toBe(`{${WSA}}${row.subcodes.at(-1)}`);
    } else {
      expect(res.status).toBe(400);
      expect(fault.code).toBe("{http://www.w3.org/2003/05/soap-envelope}Sender");
      expect(fault.subcodes).toEqual(row.subcodes.map((s) => `{${WSA}}${s}`));
    }
    expect(soap11 ? faultString(text) : fault.reason).toMatch(row.reason);
    if (row.problem !== undefined) expect(problemHeader(text)).toBe(row.problem);
    // SOAP Binding §6: WS-Addressing's own faults carry its fault action, to a request that used it.
    const used = row.body.includes(WSA);
    expect(replyHeaders(text).headers.Action).toBe(used ? `${WSA}/fault` : undefined);
  });

  it("fails without the feature: with addressing: false no such fault is sent", async () => {
    const res = await post(
      row.body,
      row.contentType ?? SOAP12,
      row.soapAction,
      quotes({ addressing: false }),
    );
    expect(readFault(res.body as string).subcodes.some((s) => s.startsWith(`{${WSA}}`))).toBe(false);
  });
});

describe("WS-Addressing fault details and bounds", () => {
  it("wsa:ActionNotSupported's [Details] is wsa:ProblemAction naming the action; its Reason quotes 64 characters at most", async () => {
    const action = `urn:${"b".repeat(1000)}`;
    const res = await post(wcfEnvelope(headers(action), getQuote()));
    const text = res.body as string;
    const detail = detailOf(text);
    expect(detail?.localName).toBe("ProblemAction");
    expect(textOf(detail, "Action")).toBe(action);
    const reason = readFault(text).reason ?? "";
    expect(reason).not.toContain("b".repeat(61));
    expect(reason.length).toBeLessThan(200);
  });

  it("a fault relates to the request's message id when it could be read", async () => {
    const res = await post(wcfEnvelope(headers("urn:no-such-action"), getQuote()));
    expect(replyHeaders(res.body as string).headers.RelatesTo).toBe(
      "urn:uuid:6f1c2d0e-8a51-4d5c-9d7e-000000000001",
    );
  });

  it("svc:soap names the most specific code, wsa:ActionNotSupported", async () => {
    const events: SoapDiagnostic[] = [];
    const listener = (m: unknown) => void events.push(m as SoapDiagnostic);
    subscribeDiagnostics("svc:soap", listener);
    try {
      await post(wcfEnvelope(headers("urn:no-such-action"), getQuote()));
    } finally {
      unsubscribeDiagnostics("svc:soap", listener);
    }
    expect(events.map((e) => (e.decision === "fault" ? e.faultCode : e.decision))).toEqual([
      "wsa:ActionNotSupported",
    ]);
  });

  it("a contract without addressing metadata routes wsa:Action by its soapAction, as zeep's plugin sends it", async () => {
    const customers = createSoapService({
      wsdl: CUSTOMER_WSDL,
      handlers: customerHandlers(),
      logger: silentLogger,
    });
    const ok = await post(
      wcfEnvelope(headers("getCustomer"), getCustomer("42")),
      SOAP12,
      undefined,
      customers,
    );
    expect(ok.status).toBe(200);
    // Metadata §4.4.4: the output's action is the default pattern's.
    expect(replyHeaders(ok.body as string).headers.Action).toBe(
      `${TNS}/CustomerPortType/getCustomerResponse`,
    );
    const wrong = await post(
      wcfEnvelope(headers("createCustomer"), getCustomer("42")),
      SOAP12,
      undefined,
      customers,
    );
    expect(wrong.status).toBe(400);
    expect(readFault(wrong.body as string).reason).toMatch(/The action "createCustomer" does not take/);
  });

  it("an action two operations share routes by the Body among those two only", async () => {
    const shared = readFileSync(QUOTES_WSDL, "utf8").replace(
      '<wsdl:input message="tns:Ping"/>',
      `<wsdl:input message="tns:Ping" wsam:Action="${GET_QUOTE}"/>`,
    );
    const svc = createSoapService({ wsdl: shared, handlers: quotesHandlers(), logger: silentLogger });
    const toPing = await post(wcfEnvelope(headers(GET_QUOTE), ping), SOAP12, undefined, svc);
    expect(toPing.status).toBe(200);
    expect(replyHeaders(toPing.body as string).headers.Action).toBe(PING_RESPONSE);
    const toTrade = await post(wcfEnvelope(headers(GET_QUOTE), trade), SOAP12, undefined, svc);
    expect(toTrade.status).toBe(400);
    expect(readFault(toTrade.body as string).reason).toMatch(
      /No operation takes \{http:\/\/quotes.example\/ws\/v1\}Trade/,
    );
  });

  it("with wsSecurity, the signature is checked before the addressing headers are", async () => {
    const secured = await startSecuredService({ signature: { trustedCertificates: [CA] } });
    try {
      // No wsa:Action, and no signature: the WS-Security fault, not WS-Addressing's.
      const unsignedMessage = await httpPost(secured.endpoint, unsigned("42", wsa("To", "urn:customers")));
      expect(readFault(unsignedMessage.text).subcodes).toEqual([`{${WSSE_NS}}InvalidSecurity`]);
      // Signed: then WS-Addressing's checks run.
      const signedMessage = await httpPost(
        secured.endpoint,
        signWithNodeSoap(unsigned("42", wsa("To", "urn:customers"))),
      );
      expect(readFault(signedMessage.text).subcodes).toEqual([`{${WSA}}MessageAddressingHeaderRequired`]);
    } finally {
      await secured.close();
    }
  });

  it("an answer sent as an MTOM package carries the reply's headers in its envelope", async () => {
    const uploads = createSoapService({
      wsdl: UPLOAD_WSDL,
      handlers: uploadHandlers() as SoapServiceOptions["handlers"],
      logger: silentLogger,
      mtom: { respond: "always" },
    });
    const download = `<u:DownloadRequest xmlns:u="${UPLOAD_TNS}"><u:name>scan.tiff</u:name><u:size>4096</u:size></u:DownloadRequest>`;
    const res = await post(wcfEnvelope(headers("urn:download"), download), SOAP12, undefined, uploads);
    expect(res.status).toBe(200);
    expect(res.headers["Content-Type"]).toMatch(/^multipart\/related;/);
    const root = new TextDecoder().decode(res.body as Uint8Array);
    expect(root).toContain("<xop:Include");
    expect(root).toMatch(
      /<wsa:RelatesTo [^>]*>urn:uuid:6f1c2d0e-8a51-4d5c-9d7e-000000000001<\/wsa:RelatesTo>/,
    );
    expect(root).toMatch(
      /<wsa:Action [^>]*>http:\/\/svc\.example\.com\/ws\/upload\/v1\/[^<]*\/downloadResponse<\/wsa:Action>/,
    );
  });

  it("addressing must be true or false", () => {
    expect(() => quotes({ addressing: "yes" as never })).toThrow(
      expect.objectContaining({ code: "ERR_SVC_SOAP_ENVELOPE_ADDRESSING" }),
    );
  });
});
