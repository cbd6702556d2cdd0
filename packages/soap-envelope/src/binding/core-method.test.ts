// service.handle() takes the request's method: a transport that hands it every request (rather
// than only POSTs, as the README's example does) must not get a GET, PUT or DELETE carrying an
// envelope processed as a POSTed message. SOAP 1.2 Part 2 §7.4: the request-response exchange
// this node serves is a POST; RFC 9110 §9.2.1: GET is safe, so it must not invoke an operation,
// and §15.5.6: a method the resource does not support gets 405 with Allow.

import { createServer, request } from "node:http";
import { type Listening, listenOn } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CUSTOMER_WSDL,
  customerHandlers,
  ENV,
  envelope,
  readFault,
  received,
  SOAP,
  silentLogger,
  TNS,
} from "../../test/helpers.js";
import { createSoapService } from "./service.js";

const service = createSoapService({
  wsdl: CUSTOMER_WSDL,
  handlers: customerHandlers(),
  logger: silentLogger,
});
// Every request goes to the core, whatever its method.
const server = createServer(async (req, res) => {
  const answer = await service.handle({
    method: req.method ?? "",
    contentType: req.headers["content-type"],
    contentLength: req.headers["content-length"],
    body: req,
    http: req,
  });
  if (answer.unreadBody) req.resume();
  res.writeHead(answer.status, answer.headers).end(answer.body);
});

let listening: Listening;
beforeAll(async () => {
  listening = await listenOn(server);
});
afterAll(() => listening.close());

/** One request with a body through node:http (fetch sends no body with GET). */
function send(method: string, body: string) {
  return new Promise<{ status: number; allow: string | undefined; text: string }>((resolve, reject) => {
    const req = request(
      listening.url,
      { method, headers: { "content-type": SOAP, "content-length": Buffer.byteLength(body) } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const event = envelope(
  `<c:LogEventRequest xmlns:c="${TNS}"><c:event><c:type>audit</c:type><c:severity>WARN</c:severity><c:message>by method</c:message></c:event></c:LogEventRequest>`,
);

describe("service.handle() with a method other than POST", () => {
  it.each(["GET", "PUT", "DELETE", "PATCH", "OPTIONS"])(
    "%s with a one-way logEvent envelope → 405 Allow: POST, env:Sender, the handler never runs",
    async (method) => {
      const before = received.length;
      const res = await send(method, event);
      expect(res.status).toBe(405);
      expect(res.allow).toBe("POST");
      const fault = readFault(res.text);
      expect(fault.code).toBe(`{${ENV}}Sender`);
      expect(fault.reason).toContain(method);
      expect(received.length).toBe(before);
    },
  );

  it("POST with the same envelope → 202, the handler runs", async () => {
    const before = received.length;
    const res = await send("POST", event);
    expect(res.status).toBe(202);
    expect(received.length).toBe(before + 1);
  });
});
