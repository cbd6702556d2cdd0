// @svc/soap-envelope on its own, on the same footing as the node-soap server: Express 5, the
// reference server's WSDL, the Bearer token checked by jose, the customers in memory. With
// BENCH_HTTP=node: the same endpoint on a bare `http.createServer`, no Bearer check, as
// node-soap.mjs with BENCH_HTTP=node (issue 22 §2). Runs from the package's TypeScript sources
// through ../ts-loader.mjs.
import "./tick-shape.mjs";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { soapEndpoint } from "@svc/soap-envelope/express";
import express from "express";
import {
  benchPort,
  benchVerificationKey,
  CUSTOMERS,
  exitOnSigterm,
  requireBearer,
  WSSE_FIXTURES,
  WSSE_MAX_AGE_MS,
} from "../fixtures.mjs";

const wsdlPath = fileURLToPath(new URL("../../../reference-server/contracts/customer.wsdl", import.meta.url));
const endpoint = soapEndpoint({
  wsdl: wsdlPath,
  handlers: {
    getCustomer: async (payload) => {
      const customer = CUSTOMERS.get(Number(payload.customerId));
      if (!customer) throw new Error("customer not found");
      return { customer: { ...customer, id: BigInt(customer.id) } };
    },
    createCustomer: async () => ({ customerId: 0n }),
    logEvent: async () => {},
    sendNotification: async () => {},
  },
  // BENCH_WSSE=signature: only requests signed by the bench's partner certificate (Body and
  // Timestamp), the replay cache off as node-soap's checks have none (the bench sends one
  // signed message again and again).
  ...(process.env.BENCH_WSSE === "signature" && {
    wsSecurity: {
      timestamp: { maxAgeMs: WSSE_MAX_AGE_MS },
      replay: false,
      signature: { trustedCertificates: [readFileSync(join(WSSE_FIXTURES, "ca.pem"), "utf8")] },
    },
  }),
});

if (process.env.BENCH_HTTP === "node") {
  const mount = "/ws/customer";
  createServer((req, res) => {
    const url = req.url;
    if (!url.startsWith(mount) || (url.length > mount.length && url[mount.length] !== "?")) {
      req.resume();
      res.writeHead(404).end();
      return;
    }
    // What Express's app.use(mount, ...) does: the endpoint sees the path below its mount
    // point, and `originalUrl` (the WSDL's address) the full one.
    req.originalUrl = url;
    req.url = url.slice(mount.length) || "/";
    endpoint(req, res, (error) => {
      if (!res.headersSent) res.writeHead(error ? 500 : 404);
      res.end();
    });
  }).listen(benchPort(), "127.0.0.1");
} else {
  const app = express();
  // BENCH_AUTH=none: no Bearer check, to compare the SOAP stacks alone (the ES256 verification
  // per request costs more CPU than either of them).
  if (process.env.BENCH_AUTH !== "none") {
    const key = await benchVerificationKey();
    app.post(
      "/ws/customer",
      requireBearer(key, (res) => {
        res.status(401).type("application/soap+xml").end();
      }),
    );
  }
  app.use("/ws/customer", endpoint);
  app.listen(benchPort(), "127.0.0.1");
}
exitOnSigterm();
