import { readFileSync } from "node:fs";
import { join } from "node:path";
import { listen } from "@svc/test-utils";
import express from "express";
import * as soap from "soap";
import { afterAll, bench, describe } from "vitest";
import { soapEndpoint } from "../src/index.js";

/**
 * getCustomer through our endpoint (SOAP 1.2, request validation and response validation on)
 * against node-soap mounted on the same Express app with the same WSDL, side by side.
 */
const FIXTURES = join(import.meta.dirname, "../src/__fixtures__");
const WSDL = join(FIXTURES, "customer.wsdl");
const TNS = "http://svc.example.com/ws/customer/v1";
const customer = { id: 42n, name: "Ada Lovelace", email: "ada@example.com" };

const app = express();
app.use(
  "/ws/customer",
  soapEndpoint({
    wsdl: WSDL,
    handlers: {
      getCustomer: async () => ({ customer }),
      createCustomer: async () => ({ customerId: 1n }),
      logEvent: async () => {},
      sendNotification: async () => {},
    },
  }),
);
const nodeSoapService = {
  CustomerService: {
    CustomerPort: {
      getCustomer: () => ({ customer: { id: "42", name: "Ada Lovelace", email: "ada@example.com" } }),
      createCustomer: () => ({ customerId: "1" }),
      logEvent: () => ({}),
      sendNotification: () => ({}),
    },
  },
};
// node-soap mounted on the same Express app (it registers an Express route for its path).
await new Promise<void>((resolve, reject) => {
  soap.listen(app, {
    path: "/ws/nodesoap",
    services: nodeSoapService,
    xml: readFileSync(WSDL, "utf8"),
    uri: WSDL,
    forceSoap12Headers: true,
    callback: (err: unknown) => (err ? reject(err) : resolve()),
  });
});
const server = await listen(app);
afterAll(() => server.close());

const body = `<?xml version="1.0" encoding="utf-8"?><env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body><c:GetCustomerRequest xmlns:c="${TNS}"><c:customerId>42</c:customerId></c:GetCustomerRequest></env:Body></env:Envelope>`;
const headers = { "content-type": 'application/soap+xml; charset=utf-8; action="getCustomer"' };

async function call(path: string): Promise<void> {
  const res = await fetch(`${server.url}${path}`, { method: "POST", headers, body });
  const text = await res.text();
  if (res.status !== 200 || !text.includes("Ada Lovelace"))
    throw new Error(`${path}: ${res.status} ${text.slice(0, 300)}`);
}

async function batch(path: string, n: number): Promise<void> {
  await Promise.all(Array.from({ length: n }, () => call(path)));
}

// Warm both servers and the client before any measurement, alternating between them: with only
// each bench's own short warm-up, whichever ran first paid for the JIT of Express, the HTTP
// client and the server (measured: the first one listed came out 2-3x slower, whichever it was).
for (let i = 0; i < 3000; i++) {
  await call("/ws/customer");
  await call("/ws/nodesoap");
}

describe("getCustomer, one request at a time", () => {
  bench("@svc/soap-envelope", () => call("/ws/customer"), { time: 3000, warmupTime: 500 });
  bench("node-soap 1.13", () => call("/ws/nodesoap"), { time: 3000, warmupTime: 500 });
});

describe("getCustomer, 16 concurrent requests per op", () => {
  bench("@svc/soap-envelope", () => batch("/ws/customer", 16), { time: 3000, warmupTime: 500 });
  bench("node-soap 1.13", () => batch("/ws/nodesoap", 16), { time: 3000, warmupTime: 500 });
});
