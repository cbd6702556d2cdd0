import { connect } from "node:net";
import { join } from "node:path";
import type { SoapEndpointOptions } from "@svc/soap-envelope";
import type { Listening } from "@svc/test-utils";
import { serve } from "@svc/test-utils/conformance";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { customerHandlers, envelope, FIXTURES, getCustomer, SOAP, silentLogger } from "../../test/helpers.js";
import { faultMounts, PATH, SERVED_ON } from "../../test/mounts.js";

// RFC 9110 §15.5.16, §12.5.3 and §13.2.1: a message refused on its fields is answered without its
// body being read, on every framework. A client whose body never comes whole (node-soap's
// forceGzip declares the identity length and sends fewer, gzip-coded, bytes) gets the refusal at
// once, not the 408 after `bodyTimeoutMs`.

const options = (): SoapEndpointOptions => ({
  wsdl: join(FIXTURES, "customer-both.wsdl"),
  handlers: customerHandlers(),
  logger: silentLogger,
  limits: { maxBytes: 8192 },
  bodyTimeoutMs: 20_000,
});

/** The status line of the answer to a request whose body stops after `sent` of `declared` bytes. */
function shortBody(url: string, fields: Record<string, string>, declared: number, sent: string) {
  const { hostname, port } = new URL(url);
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("no answer within 3 s"));
    }, 3000);
    let received = "";
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
      const end = received.indexOf("\r\n");
      if (end !== -1) {
        clearTimeout(timer);
        socket.destroy();
        resolve(received.slice(0, end));
      }
    });
    socket.on("error", reject);
    const lines = Object.entries({
      Host: `${hostname}:${port}`,
      ...fields,
      "Content-Length": String(declared),
    })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("");
    socket.write(`POST ${PATH} HTTP/1.1\r\n${lines}\r\n${sent}`);
  });
}

describe.each(SERVED_ON)("fields refused before the body is read, on %s", (framework) => {
  let server: Listening;
  beforeAll(async () => {
    server = await serve(framework, faultMounts(PATH, options));
  });
  afterAll(() => server.close());

  const message = envelope(getCustomer("42"));

  it.each([
    ["Content-Encoding: gzip → 415", { "Content-Type": SOAP, "Content-Encoding": "gzip" }, "415"],
    [
      "a charset this endpoint does not read → 415",
      { "Content-Type": "application/soap+xml; charset=iso-8859-1" },
      "415",
    ],
    ['If-Match: "x" → 412', { "Content-Type": SOAP, "If-Match": '"x"' }, "412"],
  ])("%s, with 40 of the 4,000 bytes it declares sent", async (_, fields, status) => {
    const line = await shortBody(server.url, fields, 4000, message.slice(0, 40));
    expect(line).toBe(
      `HTTP/1.1 ${status} ${status === "415" ? "Unsupported Media Type" : "Precondition Failed"}`,
    );
  });
});
