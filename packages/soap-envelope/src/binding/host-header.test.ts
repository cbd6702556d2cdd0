// RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
// request message that lacks a Host header field and to any request message that contains more
// than one Host header field line or a Host header field with an invalid field value." SOAP 1.2
// Part 2 §7.5.2.2 leaves such HTTP-level refusals to HTTP: a Sender fault with the 400. fetch
// cannot send these Host values, so each request is written on a socket.

import { createServer } from "node:http";
import { connect } from "node:net";
import { HttpError } from "@svc/errors";
import { type Listening, listenOn } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CUSTOMER_WSDL,
  customerHandlers,
  ENV,
  envelope,
  getCustomer,
  readFault,
  received,
  silentLogger,
  startCustomerService,
  TNS,
} from "../../test/helpers.js";
import { createSoapService } from "./service.js";

interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/** One request written as `head` (request line and fields, no blank line) plus `body`, on a socket. */
function rawExchange(base: string, head: string, body = ""): Promise<RawAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      const length = body === "" ? "" : `Content-Length: ${Buffer.byteLength(body)}\r\n`;
      socket.write(`${head}\r\n${length}Connection: close\r\n\r\n${body}`);
    });
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const end = text.indexOf("\r\n\r\n");
      const head = text.slice(0, end);
      let body = end === -1 ? "" : text.slice(end + 4);
      if (/^transfer-encoding: chunked$/im.test(head)) body = unchunked(body);
      resolve({ status: Number(text.slice(9, 12)), head, body });
    });
    socket.on("error", reject);
  });
}

/** RFC 9112 §7.1: the chunks' data, in order (the test's bodies are ASCII: lengths are characters). */
function unchunked(text: string): string {
  let out = "";
  let at = 0;
  for (;;) {
    const eol = text.indexOf("\r\n", at);
    const size = Number.parseInt(text.slice(at, eol), 16);
    if (!(size > 0)) return out;
    out += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

const SOAP_TYPE = "Content-Type: application/soap+xml; charset=utf-8";
const event = (message: string) =>
  `<c:LogEventRequest xmlns:c="${TNS}"><c:event><c:type>audit</c:type><c:severity>WARN</c:severity><c:message>${message}</c:message></c:event></c:LogEventRequest>`;

// The core on plain node:http, as the README shows it: `http: req` hands it the request.
const service = createSoapService({
  wsdl: CUSTOMER_WSDL,
  handlers: customerHandlers(),
  logger: silentLogger,
});
const core = createServer(async (req, res) => {
  const answer =
    req.method === "POST"
      ? await service.handle({
          method: req.method,
          contentType: req.headers["content-type"],
          contentLength: req.headers["content-length"],
          body: req,
          http: req,
        })
      : service.errorResponse(HttpError.methodNotAllowed(["POST"], `${req.method} is not allowed`));
  if (answer.unreadBody) req.resume();
  res.writeHead(answer.status, answer.headers).end(answer.body);
});

let coreListening: Listening;
let express: Awaited<ReturnType<typeof startCustomerService>>;
beforeAll(async () => {
  coreListening = await listenOn(core);
  express = await startCustomerService();
});
afterAll(async () => {
  await coreListening.close();
  await express.close();
});

const servers = [
  ["createSoapService().handle on node:http", () => `${coreListening.url}/`],
  ["soapEndpoint on Express", () => express.endpoint],
] as const;

const INVALID: readonly (readonly [string, string])[] = [
  ['Host: x"y', 'Host: x"y'],
  ["Host: a b", "Host: a b"],
  ["Host: evil@shop.example", "Host: evil@shop.example"],
  ["Host: shop.example/x", "Host: shop.example/x"],
  ["Host: a.example + Host: b.example (two lines)", "Host: a.example\r\nHost: b.example"],
  [
    "Host: shop.example + host: shop.example (two lines, same value)",
    "Host: shop.example\r\nhost: shop.example",
  ],
  ["Host: (empty) on HTTP/1.1", "Host:"],
];

describe.each(servers)("an invalid Host on a SOAP POST, %s", (_, url) => {
  it.each(INVALID)("%s → 400 env:Sender, the handler never runs", async (_, hostLines) => {
    const { pathname } = new URL(url());
    const before = received.length;
    const res = await rawExchange(
      url(),
      `POST ${pathname} HTTP/1.1\r\n${hostLines}\r\n${SOAP_TYPE}`,
      envelope(event("host")),
    );
    expect(res.status).toBe(400);
    expect(res.head.toLowerCase()).toContain("content-type: application/soap+xml; charset=utf-8");
    const fault = readFault(res.body);
    expect(fault.code).toBe(`{${ENV}}Sender`);
    expect(fault.reason).toContain("Host");
    expect(received.length).toBe(before);
  });

  it.each([
    ["Host: shop.example:8080 → 200", "POST {path} HTTP/1.1\r\nHost: shop.example:8080"],
    ["Host: [2001:db8::1]:3000 → 200", "POST {path} HTTP/1.1\r\nHost: [2001:db8::1]:3000"],
    ["Host: 127.0.0.1 → 200", "POST {path} HTTP/1.1\r\nHost: 127.0.0.1"],
    ["HTTP/1.0 without Host → 200 (RFC 9112 §3.2 asks it of HTTP/1.1)", "POST {path} HTTP/1.0"],
  ])("%s", async (_, head) => {
    const { pathname } = new URL(url());
    const res = await rawExchange(
      url(),
      `${head.replace("{path}", pathname)}\r\n${SOAP_TYPE}`,
      envelope(getCustomer("42")),
    );
    expect(res.status).toBe(200);
    expect(res.body).toContain("Ada Lovelace");
  });
});

describe("an empty Host on ?wsdl (Express)", () => {
  it("GET ?wsdl, Host: (empty) on HTTP/1.1 → 400, no document written for an empty authority", async () => {
    const res = await rawExchange(express.endpoint, "GET /ws/customer?wsdl HTTP/1.1\r\nHost:");
    expect(res.status).toBe(400);
    expect(readFault(res.body).code).toBe(`{${ENV}}Sender`);
  });
  it("GET ?wsdl, HTTP/1.0 without Host → 200, address http://localhost/ws/customer", async () => {
    const res = await rawExchange(express.endpoint, "GET /ws/customer?wsdl HTTP/1.0");
    expect(res.status).toBe(200);
    expect(res.body).toContain('location="http://localhost/ws/customer"');
  });
});
