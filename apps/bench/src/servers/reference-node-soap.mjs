// node-soap mounted on the reference server itself: the same http server that serves its
// Express app, the same WSDL (SOAP 1.2), customers read from the same SQLite database through
// the app's Kysely, and the app's Bearer token verified with jose against the app's JWKS.
// node-soap intercepts its path before the app, so it skips the app's middleware (helmet,
// logging, rate limit): an advantage the comparison gives to node-soap.
import "./tick-shape.mjs";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createLocalJWKSet, jwtVerify } from "jose";
import soap from "soap";
import { loadConfig } from "../../../reference-server/src/config.ts";
import { startService } from "../../../reference-server/src/server.ts";
import { exitOnSigterm } from "../fixtures.mjs";

const wsdlPath = fileURLToPath(new URL("../../../reference-server/contracts/customer.wsdl", import.meta.url));
const service = await startService(loadConfig(process.env));

const jwks = await fetch(`${service.url}/.well-known/jwks.json`);
const keys = jwks.ok ? createLocalJWKSet(await jwks.json()) : undefined;
if (!keys)
  console.warn(`no JWKS at ${service.url}/.well-known/jwks.json (${jwks.status}): tokens are not checked`);

const senderFault = (text) => ({
  Fault: { Code: { Value: "soap:Sender" }, Reason: { Text: text }, statusCode: 400 },
});

const services = {
  CustomerService: {
    CustomerPort: {
      async getCustomer(args, _callback, _headers, req) {
        if (keys) {
          const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
          if (!match) throw senderFault("authentication required");
          await jwtVerify(match[1], keys).catch(() => {
            throw senderFault("invalid token");
          });
        }
        const customer = await service.db.kysely
          .selectFrom("customers")
          .select(["id", "name", "email"])
          .where("id", "=", Number(args.customerId))
          .executeTakeFirst();
        if (!customer) throw senderFault("customer not found");
        return { customer };
      },
      createCustomer: () => ({ customerId: 0 }),
      logEvent: () => ({}),
      sendNotification: () => ({}),
    },
  },
};

soap.listen(service.server, {
  path: "/ws/node-soap/customer",
  services,
  xml: readFileSync(wsdlPath, "utf8"),
  uri: wsdlPath,
  forceSoap12Headers: true,
});
exitOnSigterm();
