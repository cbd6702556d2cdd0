import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as soap from "soap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES, post, readFault, startSoapService, TNS } from "../../test/helpers.js";
import { loadContract } from "./contract.js";

/**
 * Two operations that take one Body element, told apart by the action: SOAPAction (SOAP 1.1
 * §6.1.1) or the `action` parameter of application/soap+xml (SOAP 1.2 Part 2 §7.1.4).
 * logEvent and sendNotification both take tns:LogEventRequest here.
 */
const shared = readFileSync(join(FIXTURES, "customer-both.wsdl"), "utf8").replace(
  '<wsdl:part name="parameters" element="tns:SendNotificationRequest"/>',
  '<wsdl:part name="parameters" element="tns:LogEventRequest"/>',
);
const event = `<c:LogEventRequest xmlns:c="${TNS}"><c:event><c:type>audit</c:type><c:severity>WARN</c:severity><c:message>hi</c:message></c:event></c:LogEventRequest>`;
const env11 = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>${event}</s:Body></s:Envelope>`;
const env12 = `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"><s:Body>${event}</s:Body></s:Envelope>`;

const calls: string[] = [];
let server: Awaited<ReturnType<typeof startSoapService>>;
let endpoint: string;
beforeAll(async () => {
  server = await startSoapService({
    wsdl: shared,
    contract: { baseDir: FIXTURES },
    handlers: {
      getCustomer: () => ({}),
      createCustomer: () => ({}),
      logEvent: () => void calls.push("logEvent"),
      sendNotification: () => void calls.push("sendNotification"),
    } as never,
  });
  endpoint = server.endpoint;
});
afterAll(() => server.close());

describe("two operations taking one Body element", () => {
  it("load, each in both bindings", () => {
    const c = loadContract(shared, { baseDir: FIXTURES });
    for (const version of ["1.2", "1.1"] as const) {
      const ops = c.bindings[version]?.filter((o) => o.input === `{${TNS}}LogEventRequest`);
      expect(ops?.map((o) => [o.name, o.soapAction])).toEqual([
        ["logEvent", "logEvent"],
        ["sendNotification", "sendNotification"],
      ]);
    }
  });

  it.each([
    [
      "SOAP 1.1, SOAPAction sendNotification",
      () => post(endpoint, env11, "text/xml", { SOAPAction: '"sendNotification"' }),
      202,
      "sendNotification",
    ],
    [
      "SOAP 1.1, SOAPAction logEvent",
      () => post(endpoint, env11, "text/xml", { SOAPAction: '"logEvent"' }),
      202,
      "logEvent",
    ],
    [
      "SOAP 1.2, action sendNotification",
      () => post(endpoint, env12, 'application/soap+xml; action="sendNotification"'),
      202,
      "sendNotification",
    ],
    [
      "SOAP 1.2, action logEvent",
      () => post(endpoint, env12, 'application/soap+xml; action="logEvent"'),
      202,
      "logEvent",
    ],
  ])("%s → %i, that handler", async (_name, send, status, handler) => {
    const before = calls.length;
    const res = await send();
    expect(res.status, res.text).toBe(status);
    expect(calls.slice(before)).toEqual([handler]);
  });

  it.each([
    [
      "SOAP 1.2 without an action",
      () => post(endpoint, env12, "application/soap+xml"),
      400,
      `Operations logEvent ("logEvent"), sendNotification ("sendNotification") take {${TNS}}LogEventRequest: the action must name one`,
    ],
    [
      "SOAP 1.2 with an action naming neither",
      () => post(endpoint, env12, 'application/soap+xml; action="urn:other"'),
      400,
      `The action "urn:other" names none of the operations that take {${TNS}}LogEventRequest: logEvent ("logEvent"), sendNotification ("sendNotification")`,
    ],
    [
      "SOAP 1.1 with an empty SOAPAction",
      () => post(endpoint, env11, "text/xml", { SOAPAction: '""' }),
      500,
      `The action "" names none of the operations that take {${TNS}}LogEventRequest: logEvent ("logEvent"), sendNotification ("sendNotification")`,
    ],
    [
      "SOAP 1.2 with getCustomer's action",
      () => post(endpoint, env12, 'application/soap+xml; action="getCustomer"'),
      400,
      `The action "getCustomer" does not take {${TNS}}LogEventRequest`,
    ],
  ])("%s → %i, a Sender/Client fault saying so, no handler", async (_name, send, status, reason) => {
    const before = calls.length;
    const res = await send();
    expect(res.status).toBe(status);
    const fault = readFault(res.text);
    expect((fault.reason ?? res.text).replaceAll("&quot;", '"')).toContain(reason);
    expect(fault.code ?? "").toMatch(/Sender|Client/);
    expect(calls.length).toBe(before);
  });

  it("node-soap (SOAP 1.1) sends each operation's SOAPAction: each handler runs", async () => {
    const client = await soap.createClientAsync(`${endpoint}?wsdl`);
    const before = calls.length;
    const message = { event: { type: "audit", severity: "WARN", message: "hi" } };
    await client.sendNotificationAsync(message);
    await client.logEventAsync(message);
    expect(calls.slice(before)).toEqual(["sendNotification", "logEvent"]);
  });

  it("node-soap (SOAP 1.2) sends the action parameter: each handler runs", async () => {
    const client = await soap.createClientAsync(`${endpoint}?wsdl`, { forceSoap12Headers: true });
    const before = calls.length;
    const message = { event: { type: "audit", severity: "WARN", message: "hi" } };
    await client.sendNotificationAsync(message);
    await client.logEventAsync(message);
    expect(calls.slice(before)).toEqual(["sendNotification", "logEvent"]);
  });
});
