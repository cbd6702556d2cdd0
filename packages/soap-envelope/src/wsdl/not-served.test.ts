import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as soap from "soap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { customerHandlers, FIXTURES, startSoapService } from "../../test/helpers.js";
import { createSoapService } from "../binding/service.js";
import { loadContract } from "./contract.js";

/**
 * Notification and solicit-response operations (WSDL 1.1 §2.4.3, §2.4.4): the endpoint would
 * send their first message unasked, which HTTP request-response cannot carry (WSDL 1.1 §2.4 binds
 * only one-way and request-response). The contract loads; they are listed as not served.
 */
const both = readFileSync(join(FIXTURES, "customer-both.wsdl"), "utf8");
// logEvent becomes a notification, sendNotification a solicit-response (output, then input).
const text = both
  .replace('<wsdl:input message="tns:LogEventRequest"/>', '<wsdl:output message="tns:LogEventRequest"/>')
  .replace(
    '<wsdl:input message="tns:SendNotificationRequest"/>',
    '<wsdl:output message="tns:SendNotificationRequest"/><wsdl:input message="tns:LogEventRequest"/>',
  );
const { logEvent: _l, sendNotification: _s, ...served } = customerHandlers() as Record<string, unknown>;

describe("notification and solicit-response operations", () => {
  it("the contract loads; they are not served, each with why", () => {
    const c = loadContract(text, { baseDir: FIXTURES });
    expect(c.operations.map((o) => o.name)).toEqual(["getCustomer", "createCustomer"]);
    expect(c.notServed).toEqual([
      {
        operation: "logEvent",
        reason: "a notification operation (WSDL 1.1 §2.4.3): the endpoint would send the message unasked",
      },
      {
        operation: "sendNotification",
        reason: "a solicit-response operation (WSDL 1.1 §2.4.4): the endpoint would send the first message",
      },
    ]);
    expect(c.bindings["1.1"]?.map((o) => o.name)).toEqual(["getCustomer", "createCustomer"]);
  });

  it.each([
    ["no handler for them → the service is built", served, undefined],
    [
      "a handler for one → an error saying it is not served",
      { ...served, logEvent: () => {} },
      /handler "logEvent" is for a notification operation \(WSDL 1\.1 §2\.4\.3\): the endpoint would send the message unasked, which this node does not serve/,
    ],
  ])("%s", (_name, handlers, error) => {
    const build = () =>
      createSoapService({ wsdl: text, contract: { baseDir: FIXTURES }, handlers: handlers as never });
    if (error === undefined) expect(build().contract.notServed).toHaveLength(2);
    else expect(build).toThrow(error);
  });

  it("an input, then an output → request-response, served as before", () => {
    const c = loadContract(join(FIXTURES, "customer-both.wsdl"));
    expect(c.notServed).toEqual([]);
    expect(c.operations).toHaveLength(4);
  });
});

describe("the served operations through a listening endpoint", () => {
  let server: Awaited<ReturnType<typeof startSoapService>>;
  let endpoint: string;
  beforeAll(async () => {
    server = await startSoapService({
      wsdl: text,
      contract: { baseDir: FIXTURES },
      handlers: served as never,
    });
    endpoint = server.endpoint;
  });
  afterAll(() => server.close());

  it("node-soap loads the contract with its notification and calls getCustomer (SOAP 1.1)", async () => {
    const client = await soap.createClientAsync(`${endpoint}?wsdl`);
    const [result] = await client.getCustomerAsync({ customerId: "42" });
    expect(result.customer.name).toBe("Ada Lovelace");
  });
});
