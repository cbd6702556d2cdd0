import { request } from "node:http";
import { join } from "node:path";
import { HttpError } from "@svc/errors";
import { errorHandler } from "@svc/errors/express";
import { listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  customerHandlers,
  ENV,
  envelope,
  FIXTURES,
  getCustomer,
  post,
  readFault,
  received,
  soapErrors,
  startCustomerService,
  TNS,
} from "../../test/helpers.js";
import { soapFaults } from "../binding/fault-renderer.js";
import { soapEndpoint } from "../express.js";
import { parseXmlString, resolveLimits } from "../xml/reader.js";
import { SOAP11_NS, WSSE_NS } from "./fault.js";

/**
 * The SOAP 1.1 behaviours (W3C Note "Simple Object Access Protocol (SOAP) 1.1", 2000; WSDL 1.1 §3),
 * through a listening server: the customer contract with a SOAP 1.1 binding only, and with both.
 */
const CUSTOMER11_WSDL = join(FIXTURES, "customer11.wsdl");
const CUSTOMER_BOTH_WSDL = join(FIXTURES, "customer-both.wsdl");
const XML = "text/xml; charset=utf-8";
const SOAP12 = "application/soap+xml; charset=utf-8";
const ENC = "http://schemas.xmlsoap.org/soap/encoding/";
const OTHER_ACTOR = "http://example.com/gateway";

/** A SOAP 1.1 envelope (prefix SOAP-ENV) around `body`, with an optional Header. */
function envelope11(body: string, header?: string, envelopeAttributes = "", after = ""): string {
  return `<?xml version="1.0" encoding="utf-8"?><SOAP-ENV:Envelope xmlns:SOAP-ENV="${SOAP11_NS}"${envelopeAttributes}>${header === undefined ? "" : `<SOAP-ENV:Header>${header}</SOAP-ENV:Header>`}<SOAP-ENV:Body>${body}</SOAP-ENV:Body>${after}</SOAP-ENV:Envelope>`;
}

const ok = getCustomer("42");
const block = (attributes: string) => `<x:Trace xmlns:x="urn:x"${attributes}>t</x:Trace>`;
const mu = (value: string) => block(` SOAP-ENV:mustUnderstand="${value}"`);

let only11: Awaited<ReturnType<typeof startCustomerService>>;
let both: Awaited<ReturnType<typeof startCustomerService>>;
beforeAll(async () => {
  only11 = await startCustomerService({ wsdl: CUSTOMER11_WSDL });
  both = await startCustomerService({ wsdl: CUSTOMER_BOTH_WSDL });
});
afterAll(async () => {
  await only11.close();
  await both.close();
});

interface Row {
  name: string;
  body: string;
  contentType?: string;
  soapAction?: string;
  status: number;
  /** `{ns}local` of the faultcode; undefined for a 200 / 202. */
  faultcode?: string;
  /** For a fault: whether a `detail` element is present (SOAP 1.1 §4.4: body faults only). */
  detail?: boolean;
  faultstring?: RegExp;
}

const CLIENT = `{${SOAP11_NS}}Client`;
const SERVER = `{${SOAP11_NS}}Server`;

const rows: Row[] = [
  // SOAP 1.1 §6.1.1: text/xml with the SOAPAction field; the response text/xml, 200 (§6.2).
  { name: 'SOAPAction: "getCustomer" → 200', body: envelope11(ok), soapAction: '"getCustomer"', status: 200 },
  { name: "no SOAPAction → 200, the body element routes", body: envelope11(ok), status: 200 },
  { name: 'SOAPAction: "" (intent is the URI) → 200', body: envelope11(ok), soapAction: '""', status: 200 },
  {
    name: "SOAPAction: getCustomer (unquoted) → 200",
    body: envelope11(ok),
    soapAction: "getCustomer",
    status: 200,
  },
  {
    name: 'SOAPAction: "http://svc.example.com/other" (no operation names it) → 200, the body element routes',
    body: envelope11(ok),
    soapAction: '"http://svc.example.com/other"',
    status: 200,
  },
  {
    name: 'SOAPAction: "createCustomer" with a GetCustomerRequest body → 500 Client',
    body: envelope11(ok),
    soapAction: '"createCustomer"',
    status: 500,
    faultcode: CLIENT,
    detail: true,
    faultstring: /The action "createCustomer" does not take/,
  },
  {
    name: "text/xml without charset → 200 (RFC 7303 §3.2: the XML declaration says)",
    body: envelope11(ok),
    contentType: "text/xml",
    status: 200,
  },
  // §4.4: faultcode, faultstring, detail for the Body's faults; §6.2 every fault a 500.
  {
    name: "getCustomer of an unknown id → 500 Client with the declared fault in detail",
    body: envelope11(getCustomer("1")),
    status: 500,
    faultcode: CLIENT,
    detail: true,
    faultstring: /Customer 1 does not exist/,
  },
  {
    name: "a body the schema refuses (customerId x) → 500 Client, detail present",
    body: envelope11(getCustomer("x")),
    status: 500,
    faultcode: CLIENT,
    detail: true,
  },
  {
    name: "a handler that throws → 500 Server, nothing of the error sent",
    body: envelope11(getCustomer("500")),
    status: 500,
    faultcode: SERVER,
    detail: true,
    faultstring: /^The service could not process the request$/,
  },
  {
    name: "a body element no operation takes → 500 Client",
    body: envelope11(`<c:Nope xmlns:c="${TNS}"/>`),
    status: 500,
    faultcode: CLIENT,
    detail: true,
  },
  // §4.2.3 mustUnderstand "1" / "0"; §4.2.2 actor.
  {
    name: 'unknown header entry with mustUnderstand="1" → 500 MustUnderstand, no detail',
    body: envelope11(ok, mu("1")),
    status: 500,
    faultcode: `{${SOAP11_NS}}MustUnderstand`,
    detail: false,
    faultstring: /\{urn:x\}Trace/,
  },
  { name: 'unknown header entry with mustUnderstand="0" → 200', body: envelope11(ok, mu("0")), status: 200 },
  {
    name: 'mustUnderstand="true" (SOAP 1.2\'s spelling, not a SOAP 1.1 value) → 500 Client',
    body: envelope11(ok, mu("true")),
    status: 500,
    faultcode: CLIENT,
    detail: false,
    faultstring: /is not "1" or "0"/,
  },
  {
    name: 'mustUnderstand="1" for the next actor (http://schemas.xmlsoap.org/soap/actor/next) → MustUnderstand',
    body: envelope11(
      ok,
      block(' SOAP-ENV:mustUnderstand="1" SOAP-ENV:actor="http://schemas.xmlsoap.org/soap/actor/next"'),
    ),
    status: 500,
    faultcode: `{${SOAP11_NS}}MustUnderstand`,
  },
  {
    name: 'mustUnderstand="1" for another actor → 200: not this node\'s to process',
    body: envelope11(ok, block(` SOAP-ENV:mustUnderstand="1" SOAP-ENV:actor="${OTHER_ACTOR}"`)),
    status: 200,
  },
  {
    name: "a header entry that is not namespace qualified → 500 Client",
    body: envelope11(ok, "<Plain>x</Plain>"),
    status: 500,
    faultcode: CLIENT,
  },
  // §4.1: the envelope's structure.
  {
    name: "a namespace-qualified element after the Body → 200 (§4.1 allows it)",
    body: envelope11(ok, undefined, "", '<x:Trailer xmlns:x="urn:x"/>'),
    status: 200,
  },
  {
    name: "an unqualified element after the Body → 500 Client",
    body: envelope11(ok, undefined, "", "<Trailer/>"),
    status: 500,
    faultcode: CLIENT,
  },
  {
    name: "an unqualified attribute on the Envelope → 500 Client",
    body: envelope11(ok, undefined, ' version="1"'),
    status: 500,
    faultcode: CLIENT,
  },
  {
    name: "no Body → 500 Client",
    body: `<SOAP-ENV:Envelope xmlns:SOAP-ENV="${SOAP11_NS}"><SOAP-ENV:Header/></SOAP-ENV:Envelope>`,
    status: 500,
    faultcode: CLIENT,
  },
  {
    name: "encodingStyle of SOAP encoding on the Envelope (§4.1.1, scoped to the body) → 500 Client",
    body: envelope11(ok, undefined, ` SOAP-ENV:encodingStyle="${ENC}"`),
    status: 500,
    faultcode: CLIENT,
    faultstring: /Encoding style/,
  },
  {
    name: 'encodingStyle="" (no claims) on the body entry → 200',
    body: envelope11(
      ok.replace("<c:GetCustomerRequest ", '<c:GetCustomerRequest SOAP-ENV:encodingStyle="" '),
    ),
    status: 200,
  },
  { name: "not well-formed XML → 500 Client", body: "<SOAP-ENV:Envelope", status: 500, faultcode: CLIENT },
  // The bounds of SOAP 1.2 hold: the same parser, the same limits.
  {
    name: "a DOCTYPE (an entity that would expand) → 500 Client, no DTD read",
    body: `<!DOCTYPE x [<!ENTITY e "${"a".repeat(10)}">]>${envelope11(getCustomer("42"))}`,
    status: 500,
    faultcode: CLIENT,
    faultstring: /document type declaration/i,
  },
  {
    name: "elements nested past limits.maxDepth (64) → 500 Client",
    body: envelope11(`${'<x:a xmlns:x="urn:x">'.repeat(80)}${"</x:a>".repeat(80)}`),
    status: 500,
    faultcode: CLIENT,
    faultstring: /depth|deep|nest/i,
  },
  // VersionMismatch in the other direction (SOAP 1.1 §4.4.1; SOAP 1.2 Part 1 Appendix A).
  {
    name: "a SOAP 1.2 envelope as application/soap+xml → 500 SOAP 1.1 VersionMismatch",
    body: envelope(ok),
    contentType: SOAP12,
    status: 500,
    faultcode: `{${SOAP11_NS}}VersionMismatch`,
  },
  {
    name: "a SOAP 1.2 envelope as text/xml → 500 SOAP 1.1 VersionMismatch",
    body: envelope(ok),
    status: 500,
    faultcode: `{${SOAP11_NS}}VersionMismatch`,
  },
  {
    name: "an Envelope of no SOAP namespace as text/xml → 500 SOAP 1.1 VersionMismatch",
    body: envelope(ok, undefined, "urn:not-soap"),
    status: 500,
    faultcode: `{${SOAP11_NS}}VersionMismatch`,
  },
];

describe("SOAP 1.1 (W3C Note): a contract with a soap:binding only", () => {
  it.each(rows)("$name", async (row) => {
    const headers: Record<string, string> =
      row.soapAction === undefined ? {} : { SOAPAction: row.soapAction };
    const res = await post(only11.endpoint, row.body, row.contentType ?? XML, headers);
    expect(res.status).toBe(row.status);
    expect(res.headers.get("content-type")).toBe(XML);
    const root = parseXmlString(res.text, resolveLimits());
    expect(root.namespace).toBe(SOAP11_NS);
    if (row.status === 200) {
      expect(res.text).toContain("<name>Ada Lovelace</name>");
      return;
    }
    const fault = readFault(res.text);
    expect(fault.code).toBe(row.faultcode);
    const faultElement = root.children.find((c) => c.localName === "Body")?.children[0];
    const names = faultElement?.children.map((c) => c.localName) ?? [];
    // §4.4: faultcode and faultstring, unqualified, in order; detail only for the Body's faults.
    expect(names.slice(0, 2)).toEqual(["faultcode", "faultstring"]);
    for (const c of faultElement?.children ?? []) expect(c.namespace).toBe("");
    if (row.detail !== undefined) expect(names.includes("detail")).toBe(row.detail);
    if (row.faultstring) expect(faultElement?.children[1]?.text).toMatch(row.faultstring);
  });

  it("the declared fault's detail is the schema's element (CustomerNotFound with customerId)", async () => {
    const res = await post(only11.endpoint, envelope11(getCustomer("1")), XML, {
      SOAPAction: '"getCustomer"',
    });
    expect(res.text).toMatch(
      /<detail><CustomerNotFound xmlns="http:\/\/svc\.example\.com\/ws\/customer\/v1"><customerId>1<\/customerId><\/CustomerNotFound><\/detail>/,
    );
  });

  it("VersionMismatch for a SOAP 1.2 envelope names SOAP 1.1 in its env:Upgrade block (Part 1 §5.4.7)", async () => {
    const res = await post(only11.endpoint, envelope(ok), SOAP12);
    expect(readFault(res.text).upgrade).toEqual([`{${SOAP11_NS}}Envelope`]);
    expect(res.text).toContain("this node supports SOAP 1.1 only");
  });

  it("logEvent (one-way) → 202 with no body", async () => {
    const before = received.length;
    const res = await post(
      only11.endpoint,
      envelope11(
        `<c:LogEventRequest xmlns:c="${TNS}"><c:event><c:type>audit</c:type><c:severity>INFO</c:severity><c:message>m</c:message></c:event></c:LogEventRequest>`,
      ),
      XML,
      { SOAPAction: '"logEvent"' },
    );
    expect(res.status).toBe(202);
    expect(res.text).toBe("");
    expect(received.length).toBe(before + 1);
  });

  it("a SOAP 1.1 envelope as application/soap+xml → 415 (SOAP 1.1 §6.1.1: text/xml), Accept-Post: text/xml", async () => {
    const res = await post(only11.endpoint, envelope11(ok), SOAP12);
    expect(res.status).toBe(415);
    expect(res.headers.get("accept-post")).toBe("text/xml");
    expect(readFault(res.text).code).toBe(CLIENT);
  });

  it("Content-Type: application/json → 415 with Accept-Post: text/xml, a SOAP 1.1 fault", async () => {
    const res = await post(only11.endpoint, "{}", "application/json");
    expect(res.status).toBe(415);
    expect(res.headers.get("accept-post")).toBe("text/xml");
    expect(res.headers.get("content-type")).toBe(XML);
  });

  it("text/xml; charset=iso-8859-1 → 415", async () => {
    expect((await post(only11.endpoint, envelope11(ok), "text/xml; charset=iso-8859-1")).status).toBe(415);
  });

  it("GET → 405 with Allow: POST, a SOAP 1.1 fault keeping its status (no SOAP processing)", async () => {
    const res = await fetch(only11.endpoint, { headers: { "content-type": XML } });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(readFault(await res.text()).code).toBe(CLIENT);
  });

  it("two SOAPAction field lines → 500 Client: which one routes would be up to each reader", async () => {
    const res = await postRaw(only11.endpoint, envelope11(ok), [
      ["Host", new URL(only11.endpoint).host],
      ["Content-Type", XML],
      ["SOAPAction", '"getCustomer"'],
      ["SOAPAction", '"createCustomer"'],
    ]);
    expect(res.status).toBe(500);
    expect(readFault(res.text).code).toBe(CLIENT);
    expect(res.text).toContain("SOAPAction is given more than once");
  });

  it("a body past limits.maxBytes (Content-Length) → 413, read no further", async () => {
    const res = await post(only11.endpoint, envelope11(ok).padEnd(1024 * 1024 + 10, " "), XML);
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toBe(XML);
  });

  it("WS-Security UsernameToken in a SOAP 1.1 Header reaches authenticate; refused → 500 wsse:FailedAuthentication", async () => {
    const secured = await startCustomerService({
      wsdl: CUSTOMER11_WSDL,
      authenticate: async (blocks, context) => {
        expect(context.soapVersion).toBe("1.1");
        const token = blocks
          .find((b) => b.namespace === WSSE_NS && b.localName === "Security")
          ?.children.find((c) => c.localName === "UsernameToken");
        const user = token?.children.find((c) => c.localName === "Username")?.text;
        const password = token?.children.find((c) => c.localName === "Password")?.text;
        if (user !== "ada" || password !== "s3cret")
          throw Object.assign(new Error("no"), { code: "FailedAuthentication" });
        return { user };
      },
    });
    const security = (password: string) =>
      `<wsse:Security xmlns:wsse="${WSSE_NS}" SOAP-ENV:mustUnderstand="1"><wsse:UsernameToken><wsse:Username>ada</wsse:Username><wsse:Password>${password}</wsse:Password></wsse:UsernameToken></wsse:Security>`;
    try {
      const good = await post(secured.endpoint, envelope11(ok, security("s3cret")), XML);
      expect(good.status).toBe(200);
      const bad = await post(secured.endpoint, envelope11(ok, security("wrong")), XML);
      expect(bad.status).toBe(500);
      expect(readFault(bad.text).code).toBe(`{${WSSE_NS}}FailedAuthentication`);
    } finally {
      await secured.close();
    }
  });
});

describe("one endpoint, both bindings of one service (a soap and a soap12 port)", () => {
  it("a SOAP 1.2 envelope as application/soap+xml → 200 in SOAP 1.2", async () => {
    const res = await post(both.endpoint, envelope(ok), SOAP12);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(SOAP12);
    expect(parseXmlString(res.text, resolveLimits()).namespace).toBe(ENV);
  });

  it('a SOAP 1.1 envelope as text/xml with SOAPAction: "getCustomer" → 200 in SOAP 1.1', async () => {
    const res = await post(both.endpoint, envelope11(ok), XML, { SOAPAction: '"getCustomer"' });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(XML);
    expect(parseXmlString(res.text, resolveLimits()).namespace).toBe(SOAP11_NS);
  });

  it("a fault follows the request's version: SOAP 1.2 Sender 400, SOAP 1.1 Client 500", async () => {
    const v12 = await post(both.endpoint, envelope(getCustomer("1")), SOAP12);
    expect(v12.status).toBe(400);
    expect(readFault(v12.text).code).toBe(`{${ENV}}Sender`);
    const v11 = await post(both.endpoint, envelope11(getCustomer("1")), XML);
    expect(v11.status).toBe(500);
    expect(readFault(v11.text).code).toBe(CLIENT);
  });

  it("an Envelope of no SOAP namespace as application/soap+xml → SOAP 1.2 VersionMismatch, Upgrade naming 1.2 then 1.1", async () => {
    const res = await post(both.endpoint, envelope(ok, undefined, "urn:not-soap"), SOAP12);
    expect(res.status).toBe(500);
    const fault = readFault(res.text);
    expect(fault.code).toBe(`{${ENV}}VersionMismatch`);
    expect(fault.upgrade).toEqual([`{${ENV}}Envelope`, `{${SOAP11_NS}}Envelope`]);
  });

  it("a SOAP 1.2 envelope as text/xml → SOAP 1.1 VersionMismatch, Upgrade naming both", async () => {
    const res = await post(both.endpoint, envelope(ok), XML);
    expect(res.status).toBe(500);
    const fault = readFault(res.text);
    expect(fault.code).toBe(`{${SOAP11_NS}}VersionMismatch`);
    expect(fault.upgrade).toEqual([`{${ENV}}Envelope`, `{${SOAP11_NS}}Envelope`]);
  });

  it("Content-Type: application/json → 415 with Accept-Post naming both media types", async () => {
    const res = await post(both.endpoint, "{}", "application/json");
    expect(res.status).toBe(415);
    expect(res.headers.get("accept-post")).toBe("application/soap+xml, text/xml");
  });

  it("the served WSDL is the contract's, both port addresses pointing at the endpoint", async () => {
    const text = await (await fetch(`${both.endpoint}?wsdl`)).text();
    expect(text).toContain(`<soap12:address location="${both.endpoint}"/>`);
    expect(text).toContain(`<soap:address location="${both.endpoint}"/>`);
  });
});

describe("soapFaults: what middleware in front refuses, in the request's SOAP version", () => {
  it("a 429 from a limiter → a SOAP 1.1 fault to a text/xml request, a SOAP 1.2 one otherwise, Retry-After kept", async () => {
    const app = express();
    app.use(
      "/ws",
      (_req: unknown, _res: unknown, next: (err: unknown) => void) =>
        next(new HttpError(429, "Too many requests", { headers: { "Retry-After": "5" } })),
      soapEndpoint({ wsdl: CUSTOMER_BOTH_WSDL, handlers: customerHandlers() }),
    );
    app.use(soapErrors("/ws"));
    const server = await listen(app);
    try {
      const v11 = await post(`${server.url}/ws`, envelope11(ok), XML);
      expect(v11.status).toBe(429);
      expect(v11.headers.get("content-type")).toBe(XML);
      expect(v11.headers.get("retry-after")).toBe("5");
      expect(readFault(v11.text).code).toBe(CLIENT);
      const v12 = await post(`${server.url}/ws`, envelope(ok), SOAP12);
      expect(v12.status).toBe(429);
      expect(v12.headers.get("content-type")).toBe(SOAP12);
      expect(readFault(v12.text).code).toBe(`{${ENV}}Sender`);
    } finally {
      await server.close();
    }
  });
});

describe("soapFaults({ versions }): an endpoint that serves SOAP 1.2 only", () => {
  it("a 401 from auth in front of a 1.2-only endpoint → a SOAP 1.2 fault even to a text/xml request; unset, a 1.1 one", async () => {
    const refuse = (_req: unknown, _res: unknown, next: (err: unknown) => void) =>
      next(new HttpError(401, "Unauthorized", { headers: { "WWW-Authenticate": 'Bearer realm="ws"' } }));
    const app = express();
    app.use("/only12", refuse);
    app.use("/any", refuse);
    // One error handler, one renderer for each endpoint: the first that answers a request renders it.
    app.use(
      errorHandler({
        renderers: [soapFaults({ path: "/only12", versions: ["1.2"] }), soapFaults({ path: "/any" })],
      }),
    );
    const server = await listen(app);
    try {
      const only12 = await post(`${server.url}/only12`, envelope(ok), XML);
      expect(only12.status).toBe(401);
      expect(only12.headers.get("content-type")).toBe(SOAP12);
      expect(readFault(only12.text).code).toBe(`{${ENV}}Sender`);
      const any = await post(`${server.url}/any`, envelope(ok), XML);
      expect(any.headers.get("content-type")).toBe(XML);
      expect(readFault(any.text).code).toBe(CLIENT);
    } finally {
      await server.close();
    }
  });

  it.each([[["1.3"]], [[]], ["1.2"], [{}]])(
    "versions: %j → ERR_SVC_SOAP_ENVELOPE_VERSIONS at construction",
    (versions) => {
      expect(() => soapFaults({ path: "/ws", versions } as never)).toThrow(
        expect.objectContaining({ code: "ERR_SVC_SOAP_ENVELOPE_VERSIONS" }),
      );
    },
  );
});

/** A POST whose header fields go out as given, one line each (`fetch` joins repeated names). */
function postRaw(url: string, body: string, fields: [string, string][]) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(url, { method: "POST", headers: fields.flat() }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.end(body);
  });
}
