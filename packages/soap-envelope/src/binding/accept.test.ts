import { join } from "node:path";
import type { SoapEndpointOptions } from "@svc/soap-envelope";
import type { Listening } from "@svc/test-utils";
import { send, serve } from "@svc/test-utils/conformance";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  customerHandlers,
  ENV11,
  envelope,
  FIXTURES,
  getCustomer,
  SOAP,
  SOAP11,
  silentLogger,
} from "../../test/helpers.js";
import { faultMounts, PATH, SERVED_ON } from "../../test/mounts.js";
import { refuseUnacceptable } from "./accept.js";

// RFC 9110 §15.5.7: a POSTed message whose answer no media type `Accept` takes can carry is
// refused with the 406 before it is read, as the kernel's pipeline refuses any such write, so
// the operation never runs for an answer the client would refuse.

describe("refuseUnacceptable", () => {
  const soap12 = ["application/soap+xml"];
  it.each([
    ["application/soap+xml", soap12],
    ["*/*", soap12],
    ["application/*", soap12],
    // node-soap's own Accept
    ["text/html,application/xhtml+xml,application/xml,text/xml;q=0.9,*/*;q=0.8", soap12],
    // only invalid members: as if no Accept were sent (RFC 9110 §12.5.1)
    ["nonsense", soap12],
    ["text/xml", ["text/xml"]],
    ["multipart/related", ["application/soap+xml", "multipart/related"]],
  ])("Accept: %s → taken", (accept, types) => {
    expect(() => refuseUnacceptable(accept, types)).not.toThrow();
  });
  it.each([
    ["application/json", soap12],
    ["application/soap+xml;q=0, */*", soap12],
    ["*/*;q=0", soap12],
    ["application/soap+xml", ["text/xml"]],
  ])("Accept: %s → 406", (accept, types) => {
    expect(() => refuseUnacceptable(accept, types)).toThrow(
      expect.objectContaining({ status: 406, code: "not_acceptable" }),
    );
  });
});

/** Operations the endpoint ran, by name: a refusal before processing runs none. */
const ran: string[] = [];

const options = (): SoapEndpointOptions => {
  const handlers = customerHandlers() as Record<string, (payload: never) => unknown>;
  return {
    wsdl: join(FIXTURES, "customer-both.wsdl"),
    handlers: Object.fromEntries(
      Object.entries(handlers).map(([name, handler]) => [
        name,
        (payload: never) => {
          ran.push(name);
          return handler(payload);
        },
      ]),
    ) as SoapEndpointOptions["handlers"],
    logger: silentLogger,
  };
};

describe.each(SERVED_ON)("Accept of a POSTed message, on %s", (framework) => {
  let server: Listening;
  beforeAll(async () => {
    server = await serve(framework, faultMounts(PATH, options));
  });
  afterAll(() => server.close());

  const call = (accept: string, soap11 = false) =>
    send(server.url, {
      method: "POST",
      path: PATH,
      headers: soap11
        ? { "Content-Type": SOAP11, SOAPAction: '"getCustomer"', Accept: accept }
        : { "Content-Type": SOAP, Accept: accept },
      body: envelope(getCustomer("42"), undefined, soap11 ? ENV11 : undefined),
    });

  it("Accept: application/json → 406 env:Sender fault, the operation not run", async () => {
    const before = ran.length;
    const res = await call("application/json");
    expect(res.status).toBe(406);
    expect(res.headers["content-type"]).toMatch(/^application\/soap\+xml/);
    expect(res.text).toContain("Sender");
    expect(ran.length).toBe(before);
  });

  it("text/xml (SOAP 1.1), Accept: application/soap+xml → 406: its answer is text/xml", async () => {
    const before = ran.length;
    const res = await call("application/soap+xml", true);
    expect(res.status).toBe(406);
    expect(ran.length).toBe(before);
  });

  it.each([
    ["application/soap+xml", false],
    ["*/*", false],
    ["text/xml", true],
    ["text/*", true],
  ])("Accept: %s (SOAP 1.1: %s) → 200, the operation run", async (accept, soap11) => {
    const before = ran.length;
    const res = await call(accept, soap11);
    expect(res.status).toBe(200);
    expect(ran.length).toBe(before + 1);
  });
});
