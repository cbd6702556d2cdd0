import * as diagnostics_channel from "node:diagnostics_channel";
import { join } from "node:path";
import { subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  customerHandlers,
  ENV11,
  envelope,
  FIXTURES,
  getCustomer,
  invalidGetCustomer as invalid,
  logEvent,
  mustUnderstandBlock as mustUnderstand,
  SOAP11,
  SOAP as SOAP12,
  silentLogger,
  type WithoutRequest,
} from "../../test/helpers.js";
import { createSoapService } from "../binding/service.js";
import { type SoapDiagnostic, soapChannel } from "./diagnostics.js";
import type { SoapRequest } from "./types.js";

// Each decision of a SOAP node on `svc:soap`, through `handle()` with plain values (no server).
// The same through listening servers of every framework: test/diagnostics.test.ts.

const base = {
  wsdl: join(FIXTURES, "customer-both.wsdl"),
  handlers: customerHandlers(),
  logger: silentLogger,
};
const service = createSoapService(base);
const secured = createSoapService({ ...base, wsSecurity: { timestamp: {}, replay: false } });

function message(body: string, contentType = SOAP12, extra: Partial<SoapRequest> = {}): SoapRequest {
  return {
    method: "POST",
    contentType,
    contentLength: String(Buffer.byteLength(body)),
    body,
    httpVersion: "1.1",
    host: ["soap.example"],
    ...extra,
  };
}

const ROWS: readonly [string, typeof service, SoapRequest, WithoutRequest<SoapDiagnostic> | undefined][] = [
  [
    "SOAP 1.2 getCustomer → 200",
    service,
    message(envelope(getCustomer("42"))),
    { decision: "operation", operation: "getCustomer", soapVersion: "1.2", oneWay: false },
  ],
  [
    "SOAP 1.1 getCustomer → 200",
    service,
    message(envelope(getCustomer("42"), undefined, ENV11), SOAP11, { soapAction: '"getCustomer"' }),
    { decision: "operation", operation: "getCustomer", soapVersion: "1.1", oneWay: false },
  ],
  [
    "SOAP 1.2 logEvent (one-way) → 202",
    service,
    message(envelope(logEvent)),
    { decision: "operation", operation: "logEvent", soapVersion: "1.2", oneWay: true },
  ],
  [
    "SOAP 1.2 schema-invalid → 400 Sender",
    service,
    message(envelope(invalid)),
    { decision: "fault", operation: "getCustomer", faultCode: "Sender", soapVersion: "1.2" },
  ],
  [
    "SOAP 1.1 schema-invalid → 500 Client",
    service,
    message(envelope(invalid, undefined, ENV11), SOAP11, { soapAction: '"getCustomer"' }),
    { decision: "fault", operation: "getCustomer", faultCode: "Client", soapVersion: "1.1" },
  ],
  [
    "a mustUnderstand block not understood → MustUnderstand",
    service,
    message(envelope(getCustomer("42"), mustUnderstand)),
    { decision: "fault", operation: "getCustomer", faultCode: "MustUnderstand", soapVersion: "1.2" },
  ],
  [
    "an envelope of no SOAP version → VersionMismatch",
    service,
    message(envelope(getCustomer("42"), undefined, "urn:not-an-envelope")),
    { decision: "fault", operation: undefined, faultCode: "VersionMismatch", soapVersion: "1.2" },
  ],
  [
    "not XML → Sender",
    service,
    message("<a"),
    { decision: "fault", operation: undefined, faultCode: "Sender", soapVersion: "1.2" },
  ],
  [
    "Content-Type: application/json → 415 Sender",
    service,
    message("{}", "application/json"),
    { decision: "fault", operation: undefined, faultCode: "Sender", soapVersion: "1.2" },
  ],
  [
    "WS-Security: no wsse:Security block → wsse:InvalidSecurity",
    secured,
    message(envelope(getCustomer("42"))),
    { decision: "fault", operation: "getCustomer", faultCode: "wsse:InvalidSecurity", soapVersion: "1.2" },
  ],
];

describe("svc:soap", () => {
  const heard: SoapDiagnostic[] = [];
  const listener = (m: unknown) => heard.push(m as SoapDiagnostic);
  afterEach(() => {
    heard.length = 0;
    unsubscribeDiagnostics("svc:soap", listener);
    vi.restoreAllMocks();
  });

  for (const [name, node, request, want] of ROWS) {
    it(`${name}: ${want?.decision ?? "no message"}`, async () => {
      subscribeDiagnostics("svc:soap", listener);
      const native = { framework: "request" };
      await node.handle({ ...request, native });
      expect(heard).toEqual(want === undefined ? [] : [{ request: native, ...want }]);
      expect(heard[0]?.request).toBe(native);
    });
  }

  it("with no subscriber, no message publishes (nor builds) a message", async () => {
    const publish = vi.spyOn(diagnostics_channel.channel(soapChannel.name), "publish");
    expect(soapChannel.hasSubscribers).toBe(false);
    for (const [, node, request] of ROWS) await node.handle({ ...request, native: {} });
    expect(publish).not.toHaveBeenCalled();
    subscribeDiagnostics("svc:soap", listener);
    await service.handle(message(envelope(getCustomer("42"))));
    expect(publish).toHaveBeenCalledTimes(1);
  });
});
