import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { compression } from "@svc/negotiate";
import { createSoapEndpoint, type SoapEndpointOptions } from "@svc/soap-envelope";
import type { Listening } from "@svc/test-utils";
import { type RowResponse, send, serve } from "@svc/test-utils/conformance";
import * as soap from "soap";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  customerHandlers,
  ENV,
  envelope,
  FIXTURES,
  getCustomer,
  SOAP,
  silentLogger,
} from "../../test/helpers.js";
import { faultMounts, PATH, SERVED_ON } from "../../test/mounts.js";
import { runZeep, stopZeep, zeepAvailable } from "../../test/zeep.js";

// RFC 9110 §8.4 and §12.5.3: the endpoint's documents and answers are content-coded by the
// pipeline's coding step when one is given; a coded document is another representation (§8.8.3).
const hasZeep = zeepAvailable("content-coding.test.ts");
afterAll(() => stopZeep());

/** Operations the endpoint ran, by name: a refusal before processing runs none. */
const ran: string[] = [];

const options = (threshold: number) => (): SoapEndpointOptions => {
  const handlers = customerHandlers() as Record<string, (payload: never) => unknown>;
  const counted = Object.fromEntries(
    Object.entries(handlers).map(([name, handler]) => [
      name,
      (payload: never) => {
        ran.push(name);
        return handler(payload);
      },
    ]),
  );
  return {
    wsdl: join(FIXTURES, "customer-both.wsdl"),
    handlers: counted as SoapEndpointOptions["handlers"],
    logger: silentLogger,
    limits: { maxBytes: 8192 },
    coding: compression({ threshold }),
  };
};

/** The codings `svc:negotiate` reports bodies coded in, until `stop()`. */
function codings(): { coded: string[]; stop: () => void } {
  const coded: string[] = [];
  const listener = (message: unknown) => {
    const { decision, coding } = message as { decision: string; coding?: string };
    if (decision === "coded" && coding !== undefined) coded.push(coding);
  };
  subscribe("svc:negotiate", listener);
  return { coded, stop: () => unsubscribe("svc:negotiate", listener) };
}

const vary = (response: RowResponse) => (response.headers.vary ?? "").split(/\s*,\s*/);

describe.each(SERVED_ON)("content coding of the endpoint's responses, on %s", (framework) => {
  let server: Listening;
  let small: Listening;
  beforeAll(async () => {
    server = await serve(framework, faultMounts(PATH, options(0)));
    small = await serve(framework, faultMounts(PATH, options(1_000_000)));
  });
  afterAll(async () => {
    await server.close();
    await small.close();
  });

  it("GET ?wsdl: identity without Accept-Encoding; gzip-coded with a weak tag for `gzip`; If-None-Match with it → 304", async () => {
    const plain = await send(server.url, { path: `${PATH}?wsdl` });
    expect(plain.status).toBe(200);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.headers.etag).toMatch(/^"/);
    expect(plain.headers["content-length"]).toBe(String(plain.body.byteLength));
    expect(vary(plain)).toContain("Accept-Encoding");
    expect(plain.text).toContain(`location="${server.url}${PATH}"`);

    const coded = await send(server.url, { path: `${PATH}?wsdl`, headers: { "Accept-Encoding": "gzip" } });
    expect(coded.status).toBe(200);
    expect(coded.headers["content-encoding"]).toBe("gzip");
    expect(coded.headers["content-type"]).toBe("application/wsdl+xml; charset=utf-8");
    expect(coded.headers.etag).toBe(`W/${plain.headers.etag}`);
    expect(coded.headers["cache-control"]).toBe("no-cache");
    expect(coded.headers["content-length"]).toBe(String(coded.body.byteLength));
    expect(coded.body.byteLength).toBeLessThan(plain.body.byteLength);
    expect(vary(coded)).toContain("Accept-Encoding");
    expect(gunzipSync(coded.body).toString()).toBe(plain.text);

    const revalidated = await send(server.url, {
      path: `${PATH}?wsdl`,
      headers: { "Accept-Encoding": "gzip", "If-None-Match": coded.headers.etag as string },
    });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.etag).toBe(coded.headers.etag);
    expect(vary(revalidated)).toContain("Accept-Encoding");
    expect(revalidated.body.byteLength).toBe(0);

    // If-Match compares strongly (RFC 9110 §13.1.1): a coded document's weak tag never matches.
    const failed = await send(server.url, {
      path: `${PATH}?wsdl`,
      headers: { "Accept-Encoding": "gzip", "If-Match": coded.headers.etag as string },
    });
    expect(failed.status).toBe(412);
    expect(failed.headers.etag).toBe(coded.headers.etag);
    expect(vary(failed)).toContain("Accept-Encoding");
  });

  it("HEAD ?wsdl with `gzip`: the coded GET's fields, no content", async () => {
    const head = await send(server.url, {
      method: "HEAD",
      path: `${PATH}?wsdl`,
      headers: { "Accept-Encoding": "gzip" },
    });
    expect(head.status).toBe(200);
    expect(head.headers["content-encoding"]).toBe("gzip");
    expect(head.headers.etag).toMatch(/^W\/"/);
    expect(head.body.byteLength).toBe(0);
  });

  it("POST getCustomer with `gzip` → the envelope gzip-coded, not stored; below the threshold → identity, still Vary", async () => {
    const request = {
      method: "POST",
      path: PATH,
      headers: { "Content-Type": SOAP, "Accept-Encoding": "gzip" },
      body: envelope(getCustomer("42")),
    };
    const coded = await send(server.url, request);
    expect(coded.status).toBe(200);
    expect(coded.headers["content-encoding"]).toBe("gzip");
    expect(coded.headers["cache-control"]).toBe("no-store");
    expect(coded.headers["content-length"]).toBe(String(coded.body.byteLength));
    expect(vary(coded)).toContain("Accept-Encoding");
    const text = gunzipSync(coded.body).toString();
    expect(text).toContain(ENV);
    expect(text).toContain("Ada Lovelace");

    const plain = await send(small.url, request);
    expect(plain.status).toBe(200);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(vary(plain)).toContain("Accept-Encoding");
    expect(plain.text).toBe(text);
  });

  it("POST refusing every coding, identity included → the 406 as a fault, the operation not run", async () => {
    const before = ran.length;
    const refused = await send(server.url, {
      method: "POST",
      path: PATH,
      headers: { "Content-Type": SOAP, "Accept-Encoding": "*;q=0" },
      body: envelope(getCustomer("42")),
    });
    expect(refused.status).toBe(406);
    expect(refused.headers["content-type"]).toMatch(/^application\/soap\+xml/);
    expect(refused.headers["content-encoding"]).toBeUndefined();
    expect(refused.text).toContain("Fault");
    expect(ran.length).toBe(before);
  });

  it("node-soap: identity by default (it sends Accept-Encoding: none); its forceGzip request, a coded body under the identity Content-Length, gets the 415 fault at once", async () => {
    const { coded, stop } = codings();
    try {
      const client = await soap.createClientAsync(`${server.url}${PATH}?wsdl`, { forceSoap12Headers: true });
      const [result] = await client.getCustomerAsync({ customerId: "42" });
      expect(result.customer.name).toBe("Ada Lovelace");
      expect(coded).toEqual([]);
      // Its Content-Length counts the identity bytes, more than it sends: a server that read the
      // body before deciding on its fields would wait for bytes that never come.
      const refused = await client
        .getCustomerAsync({ customerId: "42" }, { forceGzip: true, timeout: 5000 })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(String(refused)).toContain('Content-Encoding "gzip" is not supported');
      expect(client.lastResponseHeaders?.["accept-encoding"]).toBe("identity");
    } finally {
      stop();
    }
  });

  it.skipIf(!hasZeep)(
    "zeep (requests asks for gzip) loads the coded WSDL and its schema, and calls through a coded answer",
    async () => {
      const { coded, stop } = codings();
      const out = await runZeep(
        `${server.url}${PATH}`,
        `
client = zeep.Client(url)
r = serialize_object(client.service.getCustomer(customerId=42))
return {"name": r["name"]}
`,
      ).finally(stop);
      expect(out).toEqual({ name: "Ada Lovelace" });
      // The WSDL, the schema it imports and the answer.
      expect(coded).toEqual(["gzip", "gzip", "gzip"]);
    },
    60_000,
  );
});

describe("the coding option", () => {
  it.each([
    ["an object without the step's methods", {}],
    ["a function", () => "gzip"],
    ["null", null],
  ])("%s → refused at construction, naming coding", (_, coding) => {
    expect(() =>
      createSoapEndpoint({
        wsdl: join(FIXTURES, "customer-both.wsdl"),
        handlers: customerHandlers(),
        coding: coding as never,
      }),
    ).toThrow(
      expect.objectContaining({
        code: "ERR_SVC_SOAP_ENVELOPE_CODING",
        message: expect.stringContaining("compression()"),
      }),
    );
  });
});
