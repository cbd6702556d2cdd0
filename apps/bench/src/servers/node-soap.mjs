// The SOAP peer: node-soap serving getCustomer from the reference server's own WSDL (SOAP 1.2
// binding) on an Express 5 app, with the Bearer token checked by jose like the peer stack does.
// Customers come from memory, not a database: that favours node-soap.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import express from "express";
import { jwtVerify } from "jose";
import soap from "soap";
import { benchPort, benchVerificationKey, exitOnSigterm, JWT_AUDIENCE, JWT_ISSUER } from "../fixtures.mjs";

const wsdlPath = fileURLToPath(new URL("../../../reference-server/contracts/customer.wsdl", import.meta.url));
const key = await benchVerificationKey();

const customers = new Map([
  ["1", { id: 1, name: "Acme Corporation", email: "orders@acme.example" }],
  ["2", { id: 2, name: "Globex", email: "buying@globex.example" }],
]);

const app = express();
app.use("/ws/customer", async (req, res, next) => {
  if (req.method === "GET") return next();
  const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
  try {
    if (!match) throw new Error("no bearer token");
    await jwtVerify(match[1], key, { issuer: JWT_ISSUER, audience: JWT_AUDIENCE, algorithms: ["ES256"] });
    next();
  } catch {
    res.status(401).type("application/soap+xml").end();
  }
});

const service = {
  CustomerService: {
    CustomerPort: {
      getCustomer(args) {
        const customer = customers.get(String(args.customerId));
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
    },
  },
};

const server = app.listen(benchPort(), "127.0.0.1", () => {
  soap.listen(app, {
    path: "/ws/customer",
    services: service,
    xml: readFileSync(wsdlPath, "utf8"),
    uri: wsdlPath,
    forceSoap12Headers: true,
  });
});
server.on("error", (error) => {
  console.error(error);
  process.exit(1);
});
exitOnSigterm();
