import { join } from "node:path";
import { Readable } from "node:stream";
import { bench, describe } from "vitest";
import { createSoapService } from "../src/index.js";

/**
 * The SOAP work of one getCustomer exchange, without sockets: `service.handle()` on a prebuilt
 * request (parse, envelope checks, routing, schema decode, handler, schema encode, envelope),
 * with the body as one buffer and as a stream that delivers it in one chunk, as a socket does.
 */
const WSDL = join(import.meta.dirname, "../src/__fixtures__/customer.wsdl");
const TNS = "http://svc.example.com/ws/customer/v1";
const customers = new Map([[1, { id: 1, name: "Acme Corporation", email: "orders@acme.example" }]]);

const service = createSoapService({
  wsdl: WSDL,
  handlers: {
    getCustomer: async (payload: { customerId: bigint }) => {
      const customer = customers.get(Number(payload.customerId));
      if (!customer) throw new Error("customer not found");
      return { customer: { ...customer, id: BigInt(customer.id) } };
    },
    createCustomer: async () => ({ customerId: 0n }),
    logEvent: async () => {},
    sendNotification: async () => {},
  },
});

const body = Buffer.from(
  '<?xml version="1.0" encoding="UTF-8"?>' +
    `<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope" xmlns:c="${TNS}">` +
    "<soap:Body><c:GetCustomerRequest><c:customerId>1</c:customerId></c:GetCustomerRequest>" +
    "</soap:Body></soap:Envelope>",
);
const contentType = 'application/soap+xml; charset=utf-8; action="getCustomer"';
const contentLength = String(body.length);

async function call(source: Buffer | Readable): Promise<void> {
  const res = await service.handle({
    method: "POST",
    contentType,
    contentLength,
    body: source,
    correlationId: "b",
  });
  if (res.status !== 200 || !res.body.includes("Acme Corporation"))
    throw new Error(`${res.status} ${res.body}`);
}

function stream(): Readable {
  const r = new Readable({ read() {} });
  r.push(body);
  r.push(null);
  return r;
}

// Warm up before measuring, so neither case pays for the JIT of the other.
for (let i = 0; i < 5000; i++) await call(body);

describe("getCustomer through service.handle() (no sockets)", () => {
  bench("body as one buffer", () => call(body), { time: 2000, warmupTime: 300 });
  bench("body as a one-chunk stream", () => call(stream()), { time: 2000, warmupTime: 300 });
});
