import * as soap from "soap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { received, startCustomerService, TNS } from "../../test/helpers.js";
import { SERVED_ON } from "../../test/mounts.js";
import { WSSE_NS } from "./fault.js";

interface SoapClientError {
  response?: { status: number };
  root?: {
    Envelope?: {
      Body?: {
        Fault?: { Code?: { Value?: string; Subcode?: { Value?: unknown } }; Reason?: { Text?: unknown } };
      };
    };
  };
}

/** The `soap` npm package as a real client: it loads the served WSDL and calls every operation. */
describe.each(SERVED_ON)("interop with the soap npm client (SOAP 1.2), %s", (framework) => {
  let svc: Awaited<ReturnType<typeof startCustomerService>>;
  let client: soap.Client;
  beforeAll(async () => {
    svc = await startCustomerService({}, framework);
    client = await soap.createClientAsync(`${svc.endpoint}?wsdl`, { forceSoap12Headers: true });
  });
  afterAll(() => svc.close());

  it("loads the WSDL and its imported XSD from the endpoint", () => {
    const description = client.describe() as Record<string, Record<string, Record<string, unknown>>>;
    expect(Object.keys(description.CustomerService?.CustomerPort ?? {})).toEqual([
      "getCustomer",
      "createCustomer",
      "logEvent",
      "sendNotification",
    ]);
  });

  it("getCustomer → the customer, id exact to 64 bits", async () => {
    await client.createCustomerAsync({
      customer: { id: "9223372036854775807", name: "Max", email: "max@example.com" },
    });
    const [result] = await client.getCustomerAsync({ customerId: "9223372036854775807" });
    // node-soap itself turns xs:long into a JS number; the wire carries every digit.
    expect(client.lastResponse).toContain("<id>9223372036854775807</id>");
    expect(client.lastResponse).toContain(`xmlns="${TNS}"`);
    expect(result.customer.name).toBe("Max");
    expect(client.lastRequestHeaders?.["Content-Type"]).toContain("application/soap+xml");
  });

  it("createCustomer → customerId", async () => {
    const [result] = await client.createCustomerAsync({
      customer: { id: "7", name: "Grace", email: "grace@example.com" },
    });
    expect(String(result.customerId)).toBe("7");
    const [again] = await client.getCustomerAsync({ customerId: "7" });
    expect(again.customer.email).toBe("grace@example.com");
  });

  it("logEvent (one-way) → 202, handler received the event", async () => {
    const before = received.length;
    await client.logEventAsync({ event: { type: "audit", severity: "WARN", message: "hello" } });
    expect(received[before]).toEqual({ event: { type: "audit", severity: "WARN", message: "hello" } });
  });

  it("sendNotification (one-way) → 202", async () => {
    const before = received.length;
    await client.sendNotificationAsync({ message: "ping" });
    expect(received[before]).toEqual({ message: "ping" });
  });

  it("getCustomer of an unknown id → the declared fault reaches the client as a SOAP 1.2 fault", async () => {
    const err = (await client
      .getCustomerAsync({ customerId: "1" })
      .catch((e: unknown) => e)) as SoapClientError;
    expect(err.response?.status).toBe(400);
    expect(err.root?.Envelope?.Body?.Fault?.Code?.Value).toBe("env:Sender");
  });

  it("createCustomer with an invalid email → 400 Sender", async () => {
    const err = (await client
      .createCustomerAsync({ customer: { id: "8", name: "X", email: "not-an-email" } })
      .catch((e: unknown) => e)) as SoapClientError;
    expect(err.response?.status).toBe(400);
  });

  it("WS-Security UsernameToken from the client reaches the authenticate hook", async () => {
    const secured = await startCustomerService(
      {
        authenticate: async (blocks) => {
          const token = blocks
            .find((b) => b.namespace === WSSE_NS && b.localName === "Security")
            ?.children.find((c) => c.localName === "UsernameToken");
          const user = token?.children.find((c) => c.localName === "Username")?.text;
          const password = token?.children.find((c) => c.localName === "Password")?.text;
          if (user !== "ada" || password !== "s3cret")
            throw Object.assign(new Error("no"), { code: "FailedAuthentication" });
          return { user };
        },
      },
      framework,
    );
    try {
      const c = await soap.createClientAsync(`${secured.endpoint}?wsdl`, { forceSoap12Headers: true });
      c.setSecurity(
        new soap.WSSecurity("ada", "s3cret", { passwordType: "PasswordText", mustUnderstand: true }),
      );
      const [ok] = await c.getCustomerAsync({ customerId: "42" });
      expect(ok.customer.name).toBe("Ada Lovelace");
      c.setSecurity(new soap.WSSecurity("ada", "wrong", { passwordType: "PasswordText" }));
      const err = (await c
        .getCustomerAsync({ customerId: "42" })
        .catch((e: unknown) => e)) as SoapClientError;
      expect(err.response?.status).toBe(400);
      expect(JSON.stringify(err.root?.Envelope?.Body?.Fault?.Code?.Subcode)).toContain(
        "FailedAuthentication",
      );
    } finally {
      await secured.close();
    }
  });
});
