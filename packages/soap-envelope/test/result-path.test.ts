import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SoapResultError } from "../src/binding/service.js";
import { SchemaValidationError } from "../src/xsd/schema.js";
import {
  customerHandlers,
  ENV,
  envelope,
  getCustomer,
  post,
  readFault,
  silentLogger,
  startCustomerService,
} from "./helpers.js";

/**
 * A handler whose result does not match the output element: the client gets a SOAP 1.2 Receiver
 * fault without internals; the log gets a SoapResultError naming the field.
 */
const results: Record<string, unknown> = {
  "1": { customer: { id: 1n, name: "Ada", email: 5 } },
  "2": { customer: { id: 2n, name: "Ada" } },
  "3": { customer: { id: "three", name: "Ada", email: "ada@example.com" } },
  "4": { customer: { id: 4n, name: "Ada", email: "ada@example.com", phone: "+44" } },
  "501": { customer: { id: 501n, name: "Ada", email: "broken" } },
};

let svc: Awaited<ReturnType<typeof startCustomerService>>;
beforeAll(async () => {
  svc = await startCustomerService({
    handlers: {
      ...customerHandlers(),
      getCustomer: async ({ customerId }: { customerId: bigint }) => results[String(customerId)],
    },
  });
});
afterAll(() => svc.close());

describe("a handler result that does not match the schema", () => {
  it.each([
    ["email: 5", "1", "GetCustomerResponse.customer.email", "expected xs:string, got the number 5"],
    ["email missing", "2", "GetCustomerResponse.customer.email", "is required"],
    ["id: 'three'", "3", "GetCustomerResponse.customer.id", '"three" is not a valid xs:long'],
    ["an extra phone", "4", "GetCustomerResponse.customer", '"phone" is not in the schema'],
    ["email against its pattern", "501", "GetCustomerResponse.customer.email", "does not match the pattern"],
  ])("%s → 500 env:Receiver, the log names %s", async (_name, id, path, problem) => {
    silentLogger.errors.length = 0;
    const res = await post(svc.endpoint, envelope(getCustomer(id)), undefined, {
      "x-correlation-id": `result-${id}`,
    });
    expect(res.status).toBe(500);
    const fault = readFault(res.text);
    expect(fault.code).toBe(`{${ENV}}Receiver`);
    expect(fault.reason).toBe("The service could not process the request");
    expect(fault.detail).toBeUndefined();
    // Nothing of the result or the schema reaches the client.
    expect(res.text).not.toContain("customer");
    expect(res.text).not.toContain("xs:");

    expect(silentLogger.errors).toHaveLength(1);
    const logged = silentLogger.errors[0] as { err: unknown; operation: string; correlationId: string };
    expect(logged.operation).toBe("getCustomer");
    expect(logged.correlationId).toBe(`result-${id}`);
    expect(logged.err).toBeInstanceOf(SoapResultError);
    const err = logged.err as SoapResultError;
    expect(err.path).toBe(path);
    expect(err.message).toContain(`The result of getCustomer does not match the schema: ${path}: `);
    expect(err.message).toContain(problem);
    expect(err.cause).toBeInstanceOf(SchemaValidationError);
  });
});
