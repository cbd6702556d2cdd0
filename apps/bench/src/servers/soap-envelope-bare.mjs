// @svc/soap-envelope on its own, on the same footing as the node-soap server: Express 5, the
// reference server's WSDL, the Bearer token checked by jose, the customers in memory. Runs from
// the package's TypeScript sources through ../ts-loader.mjs.
import { fileURLToPath } from "node:url";
import { soapEndpoint } from "@svc/soap-envelope";
import express from "express";
import { benchPort, benchVerificationKey, CUSTOMERS, exitOnSigterm, requireBearer } from "../fixtures.mjs";

const wsdlPath = fileURLToPath(new URL("../../../reference-server/contracts/customer.wsdl", import.meta.url));
const key = await benchVerificationKey();

const app = express();
// BENCH_AUTH=none: no Bearer check, to compare the SOAP stacks alone (the ES256 verification
// per request costs more CPU than either of them).
if (process.env.BENCH_AUTH !== "none") {
  app.post(
    "/ws/customer",
    requireBearer(key, (res) => {
      res.status(401).type("application/soap+xml").end();
    }),
  );
}
app.use(
  "/ws/customer",
  soapEndpoint({
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
  }),
);
app.listen(benchPort(), "127.0.0.1");
exitOnSigterm();
