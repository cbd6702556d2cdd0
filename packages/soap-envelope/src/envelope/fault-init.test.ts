import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ENV,
  envelope,
  getCustomer,
  post,
  readFault,
  silentLogger,
  startCustomerService,
  TNS,
} from "../../test/helpers.js";
import { parseXmlString, resolveLimits } from "../xml/reader.js";
import { faultToXml, SoapFault, type SoapFaultInit } from "./fault.js";

// A SoapFault's fields end up in the fault envelope: Code/Subcode values are xs:QName
// (SOAP 1.2 Part 1 §5.4.6.1), Reason/Text, Node and Role strings (§5.4.2-§5.4.4), Detail element
// content (§5.4.5). Each is checked when the fault is built, with a coded TypeError naming the
// field, what was given and what is accepted, so a handler's mistake never reaches the wire as an
// invalid QName or a bare "x is not iterable".

const bad = (init: unknown) => () => new SoapFault(init as SoapFaultInit);

function codeOf(build: () => unknown): string | undefined {
  try {
    build();
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return (err as { code?: string }).code;
  }
  return undefined;
}

describe("new SoapFault(init): every field is checked, with a coded TypeError", () => {
  it.each([
    ["init undefined", undefined, "ERR_SVC_SOAP_ENVELOPE_FAULT", /SoapFault must be an object/],
    ["init a string", "Sender", "ERR_SVC_SOAP_ENVELOPE_FAULT", /got "Sender"/],
    [
      "code unknown",
      { code: "Client", reason: "r" },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_CODE",
      /code must be one of/,
    ],
    ["code missing", { reason: "r" }, "ERR_SVC_SOAP_ENVELOPE_FAULT_CODE", /got undefined/],
    ["reason a number", { code: "Sender", reason: 42 }, "ERR_SVC_SOAP_ENVELOPE_FAULT_REASON", /got 42/],
    [
      "reason an empty list",
      { code: "Sender", reason: [] },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_REASON",
      /reason must be/,
    ],
    [
      "reason item without lang",
      { code: "Sender", reason: [{ text: "t" }] },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_REASON",
      /lang, text/,
    ],
    [
      'reason lang "en_US" (not an xs:language)',
      { code: "Sender", reason: [{ lang: "en_US", text: "t" }] },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_REASON",
      /xs:language/,
    ],
    [
      'reason lang "english (UK)"',
      { code: "Sender", reason: [{ lang: "english (UK)", text: "t" }] },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_REASON",
      /xs:language/,
    ],
    [
      "reason lang with a subtag of nine characters",
      { code: "Sender", reason: [{ lang: "en-abcdefghi", text: "t" }] },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_REASON",
      /xs:language/,
    ],
    [
      'reason in "en" twice',
      {
        code: "Sender",
        reason: [
          { lang: "en", text: "first" },
          { lang: "en", text: "second" },
        ],
      },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_REASON",
      /each lang a different/,
    ],
    [
      'reason in "en-GB" and "EN-gb" (language tags compare case-insensitively)',
      {
        code: "Sender",
        reason: [
          { lang: "en-GB", text: "colour" },
          { lang: "EN-gb", text: "color" },
        ],
      },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_REASON",
      /each lang a different/,
    ],
    [
      'reason in "" twice',
      {
        code: "Sender",
        reason: [
          { lang: "", text: "a" },
          { lang: "", text: "b" },
        ],
      },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_REASON",
      /each lang a different/,
    ],
    [
      "subcode with a space",
      { code: "Sender", reason: "r", subcode: "Not Found" },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_SUBCODE",
      /NCName/,
    ],
    [
      "subcode empty",
      { code: "Sender", reason: "r", subcode: "" },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_SUBCODE",
      /subcode/,
    ],
    [
      "subcode starting with a digit",
      { code: "Sender", reason: "r", subcode: "1st" },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_SUBCODE",
      /subcode/,
    ],
    [
      "subcode with markup",
      { code: "Sender", reason: "r", subcode: "a<b" },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_SUBCODE",
      /subcode/,
    ],
    [
      "Clark subcode with a colon",
      { code: "Sender", reason: "r", subcode: "{urn:x}a:b" },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_SUBCODE",
      /subcode/,
    ],
    [
      "QName subcode with a numeric namespace",
      { code: "Sender", reason: "r", subcode: { namespace: 1, localName: "x" } },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_SUBCODE",
      /subcode/,
    ],
    [
      "subcode a number in a list",
      { code: "Sender", reason: "r", subcode: ["Ok", 7] },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_SUBCODE",
      /got 7/,
    ],
    [
      "node a number",
      { code: "Receiver", reason: "r", node: 1 },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_NODE",
      /node must be a string/,
    ],
    [
      "role an object",
      { code: "Receiver", reason: "r", role: {} },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_ROLE",
      /role must be a string/,
    ],
    [
      "detail a string",
      { code: "Sender", reason: "r", detail: "x" },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_DETAIL",
      /detail must be/,
    ],
    [
      "detail a list",
      { code: "Sender", reason: "r", detail: [1] },
      "ERR_SVC_SOAP_ENVELOPE_FAULT_DETAIL",
      /detail must be/,
    ],
  ])("%s → a TypeError with its code", (_name, init, code, message) => {
    expect(codeOf(bad(init))).toBe(code);
    expect(bad(init)).toThrow(message);
  });

  it.each([
    ["a bare name", "CustomerNotFound"],
    ["a Clark name", "{urn:example}Busy"],
    ["a Clark name without namespace", "{}Busy"],
    ["a wsse name", "wsse:FailedAuthentication"],
    ["a non-ASCII name", "Kundeübersicht"],
    ["a QName object", { namespace: "urn:example", localName: "Busy" }],
    ["a list", ["Outer", { namespace: "urn:example", localName: "Inner" }]],
  ])("subcode as %s is accepted and renders as well-formed XML", (_name, subcode) => {
    const fault = new SoapFault({ code: "Sender", reason: "r", subcode } as SoapFaultInit);
    expect(() => parseXmlString(faultToXml(fault, "urn:tns"), resolveLimits())).not.toThrow();
  });

  it.each(["en", "de-CH", "zh-Hant-TW", "x-klingon", "i-default", "EN-gb", ""])(
    'reason lang "%s" (an xs:language, or empty: XML 1.0 §2.12) is accepted',
    (lang) => {
      const fault = new SoapFault({ code: "Sender", reason: [{ lang, text: "t" }] });
      expect(faultToXml(fault)).toContain(`xml:lang="${lang}"`);
    },
  );

  it('reason in "en", "en-GB" and "de" (each language once) → three env:Text in that order', () => {
    const fault = new SoapFault({
      code: "Sender",
      reason: [
        { lang: "en", text: "a" },
        { lang: "en-GB", text: "b" },
        { lang: "de", text: "c" },
      ],
    });
    expect(faultToXml(fault)).toContain(
      '<env:Reason><env:Text xml:lang="en">a</env:Text><env:Text xml:lang="en-GB">b</env:Text><env:Text xml:lang="de">c</env:Text></env:Reason>',
    );
  });

  it("an empty reason string is still a fault (Part 1 §5.4.2 requires an env:Text, not a non-empty one)", () => {
    const fault = new SoapFault({ code: "Receiver", reason: "" });
    expect(fault.reasons).toEqual([{ lang: "en", text: "" }]);
  });

  it("the reason list is copied: changing the caller's array afterwards changes nothing", () => {
    const reason = [{ lang: "en", text: "first" }];
    const fault = new SoapFault({ code: "Sender", reason });
    reason.push({ lang: "de", text: "zweite" });
    expect(fault.reasons).toHaveLength(1);
  });
});

describe("a handler that builds an invalid SoapFault, through a listening endpoint", () => {
  let svc: Awaited<ReturnType<typeof startCustomerService>>;
  beforeAll(async () => {
    svc = await startCustomerService({
      handlers: {
        getCustomer: async () => {
          throw new SoapFault({ code: "Sender", subcode: "Not Found", reason: "missing" });
        },
        createCustomer: async () => ({ customerId: 1n }),
        logEvent: async () => {
          throw new SoapFault({
            code: "Sender",
            reason: [
              { lang: "en", text: "refused" },
              { lang: "EN", text: "declined" },
            ],
          });
        },
        sendNotification: async () => {
          throw new SoapFault({ code: "Sender", reason: [{ lang: "en_US", text: "refused" }] });
        },
      },
    });
  });
  afterAll(() => svc.close());

  it("→ 500 Receiver fault, well-formed, with the handler's mistake logged and not sent", async () => {
    const before = silentLogger.errors.length;
    const res = await post(svc.endpoint, envelope(getCustomer("42")));
    expect(res.status).toBe(500);
    const fault = readFault(res.text);
    expect(fault.code).toBe(`{${ENV}}Receiver`);
    expect(res.text).not.toContain("Not Found");
    expect(silentLogger.errors.length).toBe(before + 1);
    const logged = silentLogger.errors.at(-1) as { err?: { code?: string } };
    expect(logged.err?.code).toBe("ERR_SVC_SOAP_ENVELOPE_FAULT_SUBCODE");
  });

  it('reason lang "en_US" → 500 Receiver, logged, not a fault whose xml:lang is no xs:language', async () => {
    const before = silentLogger.errors.length;
    const res = await post(
      svc.endpoint,
      envelope(
        `<c:SendNotificationRequest xmlns:c="${TNS}"><c:message>hi</c:message></c:SendNotificationRequest>`,
      ),
    );
    expect(res.status).toBe(500);
    expect(readFault(res.text).code).toBe(`{${ENV}}Receiver`);
    expect(res.text).not.toContain("en_US");
    const logged = silentLogger.errors.at(before) as { err?: { code?: string } };
    expect(logged.err?.code).toBe("ERR_SVC_SOAP_ENVELOPE_FAULT_REASON");
  });

  it('reason in "en" and "EN" → 500 Receiver, logged, not a Reason with two texts for one language', async () => {
    const before = silentLogger.errors.length;
    const res = await post(
      svc.endpoint,
      envelope(
        `<c:LogEventRequest xmlns:c="${TNS}"><c:event><c:type>audit</c:type><c:severity>WARN</c:severity><c:message>m</c:message></c:event></c:LogEventRequest>`,
      ),
    );
    expect(res.status).toBe(500);
    expect(readFault(res.text).code).toBe(`{${ENV}}Receiver`);
    expect(res.text).not.toContain("declined");
    const logged = silentLogger.errors.at(before) as { err?: { code?: string } };
    expect(logged.err?.code).toBe("ERR_SVC_SOAP_ENVELOPE_FAULT_REASON");
  });
});
