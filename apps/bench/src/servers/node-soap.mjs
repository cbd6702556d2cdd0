// The SOAP peer: node-soap serving getCustomer from the reference server's own WSDL (SOAP 1.2
// binding) on an Express 5 app, the Bearer token checked by jose as the peer stack does, the
// customers in memory. With BENCH_HTTP=node: `soap.listen` on a bare `http.createServer`, no
// Bearer check, as soap-envelope-bare.mjs with BENCH_HTTP=node (issue 22 §2); with
// BENCH_WSSE=signature besides, only requests signed by the bench's partner certificate.
import "./tick-shape.mjs";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import express from "express";
import soap from "soap";
import { benchPort, benchVerificationKey, CUSTOMERS, exitOnSigterm, requireBearer } from "../fixtures.mjs";

const wsdlPath = fileURLToPath(new URL("../../../reference-server/contracts/customer.wsdl", import.meta.url));
const app = process.env.BENCH_HTTP === "node" ? undefined : express();
// BENCH_AUTH=none: no Bearer check, to compare the SOAP stacks alone (the ES256 verification
// per request costs more CPU than either of them).
if (app && process.env.BENCH_AUTH !== "none") {
  const key = await benchVerificationKey();
  app.post(
    "/ws/customer",
    requireBearer(key, (res) => {
      res.status(401).type("application/soap+xml").end();
    }),
  );
}

const service = {
  CustomerService: {
    CustomerPort: {
      getCustomer(args) {
        const customer = CUSTOMERS.get(Number(args.customerId));
        if (!customer) {
          throw {
            Fault: {
              Code: { Value: "soap:Sender" },
              Reason: { Text: "customer not found" },
              statusCode: 500,
            },
          };
        }
        return { customer };
      },
      createCustomer: () => ({ customerId: 0 }),
      logEvent: () => ({}),
      sendNotification: () => ({}),
    },
  },
};

// node-soap answers its own path and hands every other request to the listener it wraps.
const notFound = (req, res) => {
  req.resume();
  res.writeHead(404).end();
};
const server = (app ?? createServer(notFound)).listen(benchPort(), "127.0.0.1", async () => {
  soap.listen(app ?? server, {
    path: "/ws/customer",
    services: service,
    xml: readFileSync(wsdlPath, "utf8"),
    uri: wsdlPath,
    forceSoap12Headers: true,
  });
  // BENCH_WSSE=signature (bare node:http only): node-soap's listener behind the signature checks
  // a team writes around xml-crypto (./verify-signed.mjs), since node-soap checks none.
  if (process.env.BENCH_WSSE === "signature") {
    if (app) throw new Error("BENCH_WSSE=signature needs BENCH_HTTP=node");
    const { verifyingListener } = await import("./verify-signed.mjs");
    const [listener] = server.listeners("request");
    server.removeAllListeners("request");
    server.on("request", verifyingListener("/ws/customer", listener));
  }
});
server.on("error", (error) => {
  console.error(error);
  process.exit(1);
});
exitOnSigterm();
