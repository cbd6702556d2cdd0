import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  customerHandlers,
  ENV,
  envelope,
  FIXTURES,
  getCustomer,
  post,
  readFault,
  startSoapService,
} from "../../test/helpers.js";
import { at, CA, security, startSecuredService, timestamp, WSSE_NS, WSU_NS } from "../../test/wsse.js";
import { createSoapService } from "../binding/service.js";

// WS-Security 1.1 §10 (wsu:Timestamp) and §13 (replay), through a listening server and fetch.

const MIN = 60_000;
const message = (header: string | undefined, id = "42") => envelope(getCustomer(id), header);
const stampedMessage = (created?: string, expires?: string, id = "42") =>
  message(security(timestamp(created, expires)), id);

let svc: Awaited<ReturnType<typeof startSecuredService>>;
beforeAll(async () => {
  // Replay detection off here: the rows reuse messages; it has its own suite below.
  svc = await startSecuredService({ timestamp: { clockSkewMs: 2 * MIN, maxAgeMs: 5 * MIN }, replay: false });
});
afterAll(() => svc.close());

describe("wsu:Timestamp (WS-Security 1.1 §10)", () => {
  const refused: [string, string, string, string][] = [
    [
      "no wsse:Security block",
      message(undefined),
      `{${WSSE_NS}}InvalidSecurity`,
      "a wsu:Timestamp is required",
    ],
    [
      "a wsse:Security block without Timestamp",
      message(security("")),
      `{${WSSE_NS}}InvalidSecurity`,
      "a wsu:Timestamp is required",
    ],
    [
      "Expires 10 min ago (Created 20 min ago)",
      stampedMessage(at(-20 * MIN), at(-10 * MIN)),
      `{${WSU_NS}}MessageExpired`,
      "wsu:Expires has passed",
    ],
    [
      "Created 10 min ago, no Expires (maxAgeMs 5 min + 2 min skew)",
      stampedMessage(at(-10 * MIN)),
      `{${WSU_NS}}MessageExpired`,
      "more than 300000 ms old",
    ],
    [
      "Created 10 min ago, Expires in 1 h: the age still counts",
      stampedMessage(at(-10 * MIN), at(60 * MIN)),
      `{${WSU_NS}}MessageExpired`,
      "more than 300000 ms old",
    ],
    [
      "Created 5 min in the future (skew 2 min)",
      stampedMessage(at(5 * MIN), at(10 * MIN)),
      `{${WSSE_NS}}InvalidSecurity`,
      "wsu:Created is in the future",
    ],
    ["no Created", stampedMessage(undefined, at(MIN)), `{${WSSE_NS}}InvalidSecurity`, "has no wsu:Created"],
    [
      "Expires before Created",
      stampedMessage(at(0), at(-MIN)),
      `{${WSSE_NS}}InvalidSecurity`,
      "wsu:Expires is before wsu:Created",
    ],
    [
      "Created without a time zone",
      stampedMessage(at(0).replace("Z", "")),
      `{${WSSE_NS}}InvalidSecurity`,
      "is not an xsd:dateTime with a time zone",
    ],
    [
      "Created 2026-02-30",
      stampedMessage("2026-02-30T10:00:00Z"),
      `{${WSSE_NS}}InvalidSecurity`,
      "is not an xsd:dateTime",
    ],
    [
      "two Timestamps in the block",
      message(security(timestamp(at(0), at(MIN)) + timestamp(at(0), at(MIN), "TS-2"))),
      `{${WSSE_NS}}InvalidSecurity`,
      "more than one wsu:Timestamp",
    ],
    [
      "Expires before Created in the element order",
      message(
        security(
          `<wsu:Timestamp xmlns:wsu="${WSU_NS}"><wsu:Expires>${at(MIN)}</wsu:Expires><wsu:Created>${at(0)}</wsu:Created></wsu:Timestamp>`,
        ),
      ),
      `{${WSSE_NS}}InvalidSecurity`,
      "out of place",
    ],
    [
      "two wsse:Security blocks for this node",
      message(security(timestamp(at(0), at(MIN))) + security(timestamp(at(0), at(MIN), "TS-2"))),
      `{${WSSE_NS}}InvalidSecurity`,
      "more than one wsse:Security block",
    ],
  ];
  it.each(refused)("%s → 400, the fault's subcode and reason", async (_name, body, subcode, reason) => {
    const before = svc.seen.length;
    const res = await post(svc.endpoint, body);
    expect(res.status).toBe(400);
    const fault = readFault(res.text);
    expect(fault.code).toBe(`{${ENV}}Sender`);
    expect(fault.subcodes).toEqual([subcode]);
    expect(fault.reason).toContain(reason);
    expect(svc.seen.length).toBe(before); // no handler ran
  });

  const accepted: [string, string][] = [
    ["Created now, Expires in 5 min", stampedMessage(at(0), at(5 * MIN))],
    ["Created 1 min in the future (within the 2 min skew)", stampedMessage(at(MIN), at(6 * MIN))],
    ["Expires 1 min ago (within the skew)", stampedMessage(at(-2 * MIN), at(-MIN))],
    [
      "Created with an offset (+02:00)",
      stampedMessage(new Date(Date.now() + 2 * 3_600_000).toISOString().replace("Z", "+02:00")),
    ],
    [
      "a mustUnderstand Security block: understood",
      message(security(timestamp(at(0), at(MIN)), ` xmlns:env="${ENV}" env:mustUnderstand="true"`)),
    ],
    [
      "a Security block for another role is not this node's",
      message(
        security(timestamp(at(0), at(MIN))) +
          security(timestamp(at(-60 * MIN), at(-50 * MIN)), ` xmlns:env="${ENV}" env:role="urn:other"`),
      ),
    ],
  ];
  it.each(accepted)("%s → 200, the handler gets context.security.timestamp", async (_name, body) => {
    const res = await post(svc.endpoint, body);
    expect(res.status).toBe(200);
    const last = svc.seen.at(-1);
    expect(last?.timestamp?.created).toBeInstanceOf(Date);
    expect(last?.signature).toBeUndefined();
  });

  it("SOAP 1.1: an expired message → 500 with faultcode wsu:MessageExpired", async () => {
    const svc11 = await startSoapService({
      wsdl: join(FIXTURES, "customer11.wsdl"),
      handlers: customerHandlers(),
      wsSecurity: { timestamp: {} },
    });
    try {
      const body = `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header>${security(timestamp(at(-20 * MIN), at(-10 * MIN)))}</soap:Header><soap:Body>${getCustomer("42")}</soap:Body></soap:Envelope>`;
      const res = await post(svc11.endpoint, body, "text/xml; charset=utf-8", {
        SOAPAction: '"getCustomer"',
      });
      expect(res.status).toBe(500);
      expect(readFault(res.text).code).toBe(`{${WSU_NS}}MessageExpired`);
    } finally {
      await svc11.close();
    }
  });
});

describe("wsu:Timestamp optional", () => {
  it("required: false → a message without a Timestamp → 200; an expired one is still refused", async () => {
    const opt = await startSecuredService({ timestamp: { required: false } });
    try {
      expect((await post(opt.endpoint, message(undefined))).status).toBe(200);
      expect(opt.seen.at(-1)?.timestamp).toBeUndefined();
      const expired = await post(opt.endpoint, stampedMessage(at(-20 * MIN), at(-10 * MIN)));
      expect(readFault(expired.text).subcodes).toEqual([`{${WSU_NS}}MessageExpired`]);
    } finally {
      await opt.close();
    }
  });

  it("requireExpires: true → a Timestamp without Expires → wsse:InvalidSecurity", async () => {
    const strict = await startSecuredService({ timestamp: { requireExpires: true } });
    try {
      const res = await post(strict.endpoint, stampedMessage(at(0)));
      expect(readFault(res.text).reason).toContain("has no wsu:Expires");
      expect((await post(strict.endpoint, stampedMessage(at(0), at(MIN)))).status).toBe(200);
    } finally {
      await strict.close();
    }
  });
});

describe("replay window (WS-Security 1.1 §13)", () => {
  it("the same message twice → 200, then 400 wsse:InvalidSecurity; another message → 200", async () => {
    const r = await startSecuredService({ timestamp: {} });
    try {
      const once = stampedMessage(at(0), at(MIN));
      expect((await post(r.endpoint, once)).status).toBe(200);
      const again = await post(r.endpoint, once);
      expect(again.status).toBe(400);
      expect(readFault(again.text).subcodes).toEqual([`{${WSSE_NS}}InvalidSecurity`]);
      expect(readFault(again.text).reason).toContain("already received");
      expect((await post(r.endpoint, stampedMessage(at(1), at(MIN)))).status).toBe(200);
    } finally {
      await r.close();
    }
  });

  it("a refused message is not remembered: once fixed, the same Timestamp passes", async () => {
    const r = await startSecuredService({ timestamp: {} });
    try {
      const bad = message(security(timestamp(at(0), at(MIN)) + timestamp(at(0), at(MIN), "TS-2")));
      expect((await post(r.endpoint, bad)).status).toBe(400);
      expect((await post(r.endpoint, stampedMessage(at(0), at(MIN)))).status).toBe(200);
    } finally {
      await r.close();
    }
  });

  it("replay.maxEntries: 1 → a second live message → 500 Receiver, never a forgotten entry", async () => {
    const r = await startSecuredService({ timestamp: {}, replay: { maxEntries: 1 } });
    try {
      const first = stampedMessage(at(0), at(MIN));
      expect((await post(r.endpoint, first)).status).toBe(200);
      const second = await post(r.endpoint, stampedMessage(at(1), at(MIN)));
      expect(second.status).toBe(500);
      expect(readFault(second.text).code).toBe(`{${ENV}}Receiver`);
      // The first is still remembered: its replay is refused.
      expect(readFault((await post(r.endpoint, first)).text).reason).toContain("already received");
    } finally {
      await r.close();
    }
  });
});

describe("wsSecurity options refused at construction", () => {
  const base = { wsdl: "src/__fixtures__/customer.wsdl", handlers: {} };
  const rows: [string, unknown, string][] = [
    ["not an object", "yes", "ERR_SVC_SOAP_ENVELOPE_WS_SECURITY"],
    ["a misspelt key (timestamps)", { timestamps: {} }, "ERR_SVC_SOAP_ENVELOPE_WS_SECURITY"],
    [
      "timestamp.clockSkew (misspelt)",
      { timestamp: { clockSkew: 1 } },
      "ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_TIMESTAMP",
    ],
    [
      "timestamp.clockSkewMs: -1",
      { timestamp: { clockSkewMs: -1 } },
      "ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_TIMESTAMP_CLOCK_SKEW_MS",
    ],
    [
      "timestamp.maxAgeMs: 0",
      { timestamp: { maxAgeMs: 0 } },
      "ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_TIMESTAMP_MAX_AGE_MS",
    ],
    [
      "timestamp.required: 'yes'",
      { timestamp: { required: "yes" } },
      "ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_TIMESTAMP_REQUIRED",
    ],
    [
      "replay without timestamp",
      { timestamp: false, replay: { maxEntries: 5 } },
      "ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_REPLAY",
    ],
    [
      "replay.maxEntries: 0",
      { replay: { maxEntries: 0 } },
      "ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_REPLAY_MAX_ENTRIES",
    ],
    [
      "signature without trustedCertificates",
      { signature: {} },
      "ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_SIGNATURE_TRUSTED_CERTIFICATES",
    ],
    [
      "signature.trustedCertificates: ['not a certificate']",
      { signature: { trustedCertificates: ["x"] } },
      "ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_SIGNATURE_TRUSTED_CERTIFICATES",
    ],
    [
      "signature.signedParts: ['Header']",
      { signature: { trustedCertificates: [CA], signedParts: ["Header"] } },
      "ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_SIGNATURE_SIGNED_PARTS",
    ],
    [
      "signature.maxReferences: 0",
      { signature: { trustedCertificates: [CA], maxReferences: 0 } },
      "ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_SIGNATURE_MAX_REFERENCES",
    ],
    [
      "signature.algorithm (unknown key)",
      { signature: { trustedCertificates: [CA], algorithm: "rsa" } },
      "ERR_SVC_SOAP_ENVELOPE_WS_SECURITY_SIGNATURE",
    ],
  ];
  it.each(rows)("%s → TypeError %s", (_name, wsSecurity, code) => {
    let thrown: unknown;
    try {
      createSoapService({ ...base, wsSecurity: wsSecurity as never });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as { code?: string }).code).toBe(code);
  });
});
