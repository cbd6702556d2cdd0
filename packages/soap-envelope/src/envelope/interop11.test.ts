import { join } from "node:path";
import * as soap from "soap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES, received, startCustomerService, TNS } from "../../test/helpers.js";
import { SERVED_ON } from "../../test/mounts.js";
import { runZeep, stopZeep, zeepAvailable } from "../../test/zeep.js";
import { WSSE_NS } from "./fault.js";

/**
 * SOAP 1.1 clients as teams run them, with their defaults: node-soap's `createClientAsync(url)` and
 * zeep's `Client(url)`, each loading the served WSDL of a contract with a SOAP 1.1 binding only.
 */
const CUSTOMER11_WSDL = join(FIXTURES, "customer11.wsdl");

interface SoapClientError {
  response?: { status: number };
  root?: { Envelope?: { Body?: { Fault?: { faultcode?: string; faultstring?: string } } } };
}

const hasZeep = zeepAvailable("interop11.test.ts");
afterAll(() => stopZeep());

describe.each(SERVED_ON)("SOAP 1.1 clients, %s", (framework) => {
  let svc: Awaited<ReturnType<typeof startCustomerService>>;
  beforeAll(async () => {
    svc = await startCustomerService(
      {
        wsdl: CUSTOMER11_WSDL,
        // A WS-Security UsernameToken, when one is sent, is checked; without one the call goes on.
        authenticate: async (blocks) => {
          const token = blocks
            .find((b) => b.namespace === WSSE_NS && b.localName === "Security")
            ?.children.find((c) => c.localName === "UsernameToken");
          if (token === undefined) return undefined;
          const user = token.children.find((c) => c.localName === "Username")?.text;
          const password = token.children.find((c) => c.localName === "Password")?.text;
          if (user !== "ada" || password !== "s3cret")
            throw Object.assign(new Error("no"), { code: "FailedAuthentication" });
          return { user };
        },
      },
      framework,
    );
  });
  afterAll(() => svc.close());

  describe("interop with the soap npm client, its defaults (SOAP 1.1)", () => {
    let client: soap.Client;
    beforeAll(async () => {
      client = await soap.createClientAsync(`${svc.endpoint}?wsdl`);
    });

    it("getCustomer → the customer, sent as text/xml with the binding's SOAPAction", async () => {
      const [result] = await client.getCustomerAsync({ customerId: "42" });
      expect(result.customer.name).toBe("Ada Lovelace");
      expect(client.lastRequestHeaders?.["Content-Type"]).toContain("text/xml");
      expect(client.lastRequestHeaders?.SOAPAction).toBe('"getCustomer"');
      expect(client.lastResponse).toContain(`xmlns="${TNS}"`);
    });

    it("createCustomer then getCustomer → the id exact to 64 bits on the wire", async () => {
      await client.createCustomerAsync({
        customer: { id: "9223372036854775807", name: "Max", email: "max@example.com" },
      });
      // node-soap itself turns xs:long into a JS number; the wire carries every digit.
      expect(client.lastResponse).toContain("<customerId>9223372036854775807</customerId>");
      await client.getCustomerAsync({ customerId: "9223372036854775807" });
      expect(client.lastResponse).toContain("<id>9223372036854775807</id>");
    });

    it("logEvent (one-way) → the handler receives the event", async () => {
      const before = received.length;
      await client.logEventAsync({ event: { type: "audit", severity: "WARN", message: "hello" } });
      expect(received[before]).toEqual({ event: { type: "audit", severity: "WARN", message: "hello" } });
    });

    it("getCustomer of an unknown id → 500 with faultcode Client", async () => {
      const err = (await client
        .getCustomerAsync({ customerId: "1" })
        .catch((e: unknown) => e)) as SoapClientError;
      expect(err.response?.status).toBe(500);
      expect(err.root?.Envelope?.Body?.Fault?.faultcode).toBe("SOAP-ENV:Client");
      expect(err.root?.Envelope?.Body?.Fault?.faultstring).toBe("Customer 1 does not exist");
    });

    it("WS-Security UsernameToken (mustUnderstand) reaches authenticate; a wrong password → wsse:FailedAuthentication", async () => {
      const c = await soap.createClientAsync(`${svc.endpoint}?wsdl`);
      c.setSecurity(
        new soap.WSSecurity("ada", "s3cret", { passwordType: "PasswordText", mustUnderstand: true }),
      );
      const [ok] = await c.getCustomerAsync({ customerId: "42" });
      expect(ok.customer.name).toBe("Ada Lovelace");
      expect(c.lastRequest).toMatch(/mustUnderstand="1"/);
      c.setSecurity(new soap.WSSecurity("ada", "wrong", { passwordType: "PasswordText" }));
      const err = (await c
        .getCustomerAsync({ customerId: "42" })
        .catch((e: unknown) => e)) as SoapClientError;
      expect(err.response?.status).toBe(500);
      expect(err.root?.Envelope?.Body?.Fault?.faultcode).toMatch(/:FailedAuthentication$/);
    });
  });

  describe("the soap npm client's defaults against a contract with both bindings", () => {
    it("getCustomer → 200: node-soap sends SOAP 1.1 unless told forceSoap12Headers, and the 1.1 port serves it", async () => {
      const both = await startCustomerService({ wsdl: join(FIXTURES, "customer-both.wsdl") }, framework);
      try {
        const client = await soap.createClientAsync(`${both.endpoint}?wsdl`);
        const [result] = await client.getCustomerAsync({ customerId: "42" });
        expect(result.customer.name).toBe("Ada Lovelace");
        expect(client.lastRequestHeaders?.["Content-Type"]).toContain("text/xml");
      } finally {
        await both.close();
      }
    });
  });

  describe.skipIf(!hasZeep)("interop with zeep, its defaults (SOAP 1.1)", () => {
    it("getCustomer → the customer, customerId a Python int", async () => {
      const out = await runZeep(
        svc.endpoint,
        `
client = zeep.Client(url)
r = serialize_object(client.service.getCustomer(customerId=42))
return {"name": r["name"], "id": r["id"]}
`,
      );
      expect(out).toEqual({ name: "Ada Lovelace", id: 42 });
    }, 60_000);

    it("createCustomer (64-bit id) and logEvent (one-way)", async () => {
      const before = received.length;
      const out = await runZeep(
        svc.endpoint,
        `
client = zeep.Client(url)
created = client.service.createCustomer(customer={"id": 9223372036854775806, "name": "Zed", "email": "zed@example.com"})
client.service.logEvent(event={"type": "audit", "severity": "INFO", "message": "from zeep"})
return {"created": str(created)}
`,
      );
      expect(out).toEqual({ created: "9223372036854775806" });
      expect(received.slice(before)).toContainEqual({
        event: { type: "audit", severity: "INFO", message: "from zeep" },
      });
    }, 60_000);

    it("getCustomer of an unknown id → zeep.exceptions.Fault with code Client and the detail", async () => {
      const out = await runZeep(
        svc.endpoint,
        `
client = zeep.Client(url)
try:
    client.service.getCustomer(customerId=1)
    return {"fault": None}
except zeep.exceptions.Fault as f:
    return {"code": f.code, "message": f.message, "detail": f.detail is not None}
`,
      );
      expect(out).toEqual({ code: "SOAP-ENV:Client", message: "Customer 1 does not exist", detail: true });
    }, 60_000);

    it("WS-Security UsernameToken → reaches authenticate; a wrong password → Fault wsse:FailedAuthentication", async () => {
      const out = await runZeep(
        svc.endpoint,
        `
ok = zeep.Client(url, wsse=UsernameToken("ada", "s3cret")).service.getCustomer(customerId=42)
try:
    zeep.Client(url, wsse=UsernameToken("ada", "wrong")).service.getCustomer(customerId=42)
    code = None
except zeep.exceptions.Fault as f:
    code = f.code
return {"name": ok["name"], "refused": code}
`,
      );
      expect(out.name).toBe("Ada Lovelace");
      expect(String(out.refused)).toMatch(/FailedAuthentication$/);
    }, 60_000);
  });
});
