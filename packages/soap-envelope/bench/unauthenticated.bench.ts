import { join } from "node:path";
import { bench, describe } from "vitest";
import { createSoapService, SoapAuthenticationError, type XmlElement } from "../src/index.js";

/**
 * What a 1 MiB message from a sender without credentials costs the event loop: credentials are
 * decided when the Header ends, so its Body (here 60-deep nesting, 94,500 elements, within every
 * default limit) is refused unparsed. The same message with credentials is parsed whole (and
 * refused by the schema), which is what every such message cost before.
 */
const WSDL = join(import.meta.dirname, "../src/__fixtures__/customer.wsdl");
const TNS = "http://svc.example.com/ws/customer/v1";
const ENV = "http://www.w3.org/2003/05/soap-envelope";

const service = createSoapService({
  wsdl: WSDL,
  handlers: {
    getCustomer: async () => ({}),
    createCustomer: async () => ({ customerId: 0n }),
    logEvent: async () => {},
    sendNotification: async () => {},
  },
  authenticate: async (blocks: readonly XmlElement[]) => {
    if (!blocks.some((b) => b.localName === "Authentication")) throw new SoapAuthenticationError();
    return {};
  },
});

const unit = `${"<c:a>".repeat(60)}${"</c:a>".repeat(60)}`;
const deep = `<c:GetCustomerRequest xmlns:c="${TNS}">${unit.repeat(1575)}</c:GetCustomerRequest>`;
const message = (header: string) =>
  Buffer.from(`<env:Envelope xmlns:env="${ENV}">${header}<env:Body>${deep}</env:Body></env:Envelope>`);
const anonymous = message("");
const signedIn = message(
  `<env:Header><c:Authentication xmlns:c="${TNS}"><c:Username>ada</c:Username></c:Authentication></env:Header>`,
);

async function call(body: Buffer, expected: string): Promise<void> {
  const res = await service.handle({
    method: "POST",
    contentType: "application/soap+xml; charset=utf-8",
    contentLength: String(body.length),
    body,
  });
  if (res.status !== 400 || !res.body.includes(expected)) throw new Error(`${res.status} ${res.body}`);
}

describe("a 1 MiB envelope with a 60-deep Body (no sockets)", () => {
  bench("without credentials: refused when the Header ends", () => call(anonymous, "FailedAuthentication"), {
    time: 2000,
    warmupTime: 300,
  });
  bench("with credentials: parsed whole, refused by the schema", () => call(signedIn, "Invalid request"), {
    time: 2000,
    warmupTime: 300,
  });
});

// The same 1 MiB of 60-deep nesting in a header block nobody processes (no credentials): its
// content is read past to its end tag, not parsed, before the credentials fault.
const headerBlock = (inner: string) =>
  Buffer.from(
    `<env:Envelope xmlns:env="${ENV}"><env:Header><h:b xmlns:h="urn:x">${inner}</h:b></env:Header><env:Body><c:GetCustomerRequest xmlns:c="${TNS}"><c:customerId>1</c:customerId></c:GetCustomerRequest></env:Body></env:Envelope>`,
  );
const deepHeader = headerBlock(`${"<h:a>".repeat(60)}${"</h:a>".repeat(60)}`.repeat(1575));
const wideHeader = headerBlock("<h:a>xxx</h:a>".repeat(74_500));

/** `body` in pieces of 64 KiB, as a socket delivers it. */
async function* pieces(body: Buffer): AsyncIterable<Uint8Array> {
  for (let at = 0; at < body.length; at += 65_536) yield body.subarray(at, at + 65_536);
}

async function callStreamed(body: Buffer): Promise<void> {
  const res = await service.handle({
    method: "POST",
    contentType: "application/soap+xml; charset=utf-8",
    contentLength: String(body.length),
    body: pieces(body),
  });
  if (res.status !== 400 || !res.body.includes("FailedAuthentication"))
    throw new Error(`${res.status} ${res.body}`);
}

describe("a 1 MiB envelope without credentials, its one header block nobody processes (no sockets)", () => {
  bench("60-deep nesting, in 64 KiB pieces", () => callStreamed(deepHeader), { time: 2000, warmupTime: 300 });
  bench("74,500 sibling elements, in 64 KiB pieces", () => callStreamed(wideHeader), {
    time: 2000,
    warmupTime: 300,
  });
  bench("60-deep nesting, in one piece", () => call(deepHeader, "FailedAuthentication"), {
    time: 2000,
    warmupTime: 300,
  });
});
