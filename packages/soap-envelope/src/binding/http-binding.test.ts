import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import { representationTag } from "@svc/conditional";
import { HttpError } from "@svc/errors";
import { listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  CUSTOMER_WSDL,
  customerHandlers,
  ENV,
  envelope,
  getCustomer,
  post,
  readFault,
  received,
  SOAP,
  silentLogger,
  soapErrors,
  startCustomerService,
  TNS,
} from "../../test/helpers.js";
import { ROLE_NONE } from "../envelope/envelope.js";
import { WSSE_NS } from "../envelope/fault.js";
import { soapEndpoint } from "../express.js";
import { soapEndpoint as nodeEndpoint } from "../node.js";
import { SoapAuthenticationError } from "../wsse/credentials.js";
import type { XmlElement } from "../xml/reader.js";

let svc: Awaited<ReturnType<typeof startCustomerService>>;
beforeAll(async () => {
  svc = await startCustomerService({ limits: { maxBytes: 64 * 1024 } });
});
afterAll(() => svc.close());

describe("HTTP binding (Part 2 §7)", () => {
  it("POST application/soap+xml → 200 with application/soap+xml; charset=utf-8", async () => {
    const res = await post(svc.endpoint, envelope(getCustomer("42")));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(SOAP);
    expect(res.text).toBe(
      `<?xml version="1.0" encoding="utf-8"?><env:Envelope xmlns:env="${ENV}"><env:Body><GetCustomerResponse xmlns="${TNS}"><customer><id>42</id><name>Ada Lovelace</name><email>ada@example.com</email></customer></GetCustomerResponse></env:Body></env:Envelope>`,
    );
  });
  it("Content-Type without charset → 200", async () => {
    expect((await post(svc.endpoint, envelope(getCustomer("42")), "application/soap+xml")).status).toBe(200);
  });
  it("Content-Type: text/plain → 415 with a SOAP fault and Accept-Post (RFC 9110 §15.5.16)", async () => {
    const res = await post(svc.endpoint, envelope(getCustomer("42")), "text/plain");
    expect(res.status).toBe(415);
    expect(res.headers.get("content-type")).toBe(SOAP);
    expect(res.headers.get("accept-post")).toBe("application/soap+xml");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(readFault(res.text).code).toBe(`{${ENV}}Sender`);
  });
  it("no Content-Type → 415 with Accept-Post", async () => {
    const res = await fetch(svc.endpoint, { method: "POST", body: new Uint8Array([0x3c]) });
    expect(res.status).toBe(415);
    expect(res.headers.get("accept-post")).toBe("application/soap+xml");
    expect(readFault(await res.text()).code).toBe(`{${ENV}}Sender`);
  });
  it("Content-Encoding: gzip → 415 with Accept-Encoding: identity, a Sender fault", async () => {
    const res = await post(svc.endpoint, envelope(getCustomer("42")), SOAP, { "content-encoding": "gzip" });
    expect(res.status).toBe(415);
    expect(res.headers.get("accept-encoding")).toBe("identity");
    expect(readFault(res.text).code).toBe(`{${ENV}}Sender`);
  });
  it("Content-Encoding: identity → 200", async () => {
    const res = await post(svc.endpoint, envelope(getCustomer("42")), SOAP, {
      "content-encoding": "identity",
    });
    expect(res.status).toBe(200);
  });
  it("Content-Type: application/xml → 415", async () => {
    expect((await post(svc.endpoint, envelope(getCustomer("42")), "application/xml")).status).toBe(415);
  });
  it("text/xml carrying a SOAP 1.2 envelope → 415 with Accept-Post", async () => {
    const res = await post(svc.endpoint, envelope(getCustomer("42")), "text/xml");
    expect(res.status).toBe(415);
    expect(res.headers.get("accept-post")).toBe("application/soap+xml");
  });
  it("Content-Type: application/soap+xml; charset=iso-8859-1 → 415", async () => {
    expect(
      (await post(svc.endpoint, envelope(getCustomer("42")), "application/soap+xml; charset=iso-8859-1"))
        .status,
    ).toBe(415);
  });
  it("Content-Type: garbage → 415", async () => {
    expect((await post(svc.endpoint, envelope(getCustomer("42")), "soap")).status).toBe(415);
  });
  it("GET without ?wsdl → 405 with Allow: POST", async () => {
    const res = await fetch(svc.endpoint);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(readFault(await res.text()).code).toBe(`{${ENV}}Sender`);
  });
  it("PUT → 405 with Allow: POST, a Sender fault", async () => {
    const res = await fetch(svc.endpoint, { method: "PUT", body: "x" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(res.headers.get("content-type")).toBe(SOAP);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(readFault(await res.text()).code).toBe(`{${ENV}}Sender`);
  });
  it("DELETE ?wsdl → 405 with Allow: GET, HEAD, POST (the WSDL URI also answers GET)", async () => {
    const res = await fetch(`${svc.endpoint}?wsdl`, { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD, POST");
    expect(readFault(await res.text()).code).toBe(`{${ENV}}Sender`);
  });
  it("HEAD without ?wsdl → 405 with Allow and no body", async () => {
    const res = await fetch(svc.endpoint, { method: "HEAD" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(await res.text()).toBe("");
  });
  it("a path below the endpoint is not the endpoint → 404 from the app", async () => {
    expect((await post(`${svc.endpoint}/other`, envelope(getCustomer("42")))).status).toBe(404);
  });
  it('action="getCustomer" routes to getCustomer → 200', async () => {
    const res = await post(svc.endpoint, envelope(getCustomer("42")), `${SOAP}; action="getCustomer"`);
    expect(res.status).toBe(200);
  });
  it('action="createCustomer" with a GetCustomerRequest body → Sender', async () => {
    const res = await post(svc.endpoint, envelope(getCustomer("42")), `${SOAP}; action="createCustomer"`);
    expect(res.status).toBe(400);
    expect(readFault(res.text).reason).toContain("does not take");
  });
  it('unknown action="urn:nothing" falls back to the body element → 200', async () => {
    expect(
      (await post(svc.endpoint, envelope(getCustomer("42")), `${SOAP}; action="urn:nothing"`)).status,
    ).toBe(200);
  });
  // RFC 6838 §4.3: "It is an error for a specific parameter to be specified more than once." RFC
  // 3902 §3 lets firewalls filter messages by `action`: one that reads the last of two while this
  // node routed by the first would let a createCustomer through as a getCustomer.
  const create = (id: string) =>
    `<c:CreateCustomerRequest xmlns:c="${TNS}"><c:customer><c:id>${id}</c:id><c:name>Dup</c:name><c:email>d@example.com</c:email></c:customer></c:CreateCustomerRequest>`;
  it.each([
    ['action="createCustomer"; action="getCustomer"', "action", "771"],
    ['action="getCustomer"; ACTION="createCustomer"', "action", undefined],
    ['action=createCustomer; action="createCustomer"', "action", "772"],
    ["charset=utf-8; charset=utf-16", "charset", undefined],
    ["charset=utf-8; Charset=UTF-8", "charset", undefined],
  ])("Content-Type: application/soap+xml; %s → 415 env:Sender, no handler runs", async (params, name, id) => {
    const body = id === undefined ? getCustomer("42") : create(id);
    const res = await post(svc.endpoint, envelope(body), `application/soap+xml; ${params}`);
    expect(res.status).toBe(415);
    expect(res.headers.get("accept-post")).toBe("application/soap+xml");
    const fault = readFault(res.text);
    expect(fault.code).toBe(`{${ENV}}Sender`);
    expect(fault.reason).toContain(`the ${name} parameter more than once`);
    if (id !== undefined) {
      // createCustomer never ran: the customer the message carried does not exist.
      const after = await post(svc.endpoint, envelope(getCustomer(id)));
      expect(readFault(after.text).subcodes).toEqual([`{${TNS}}CustomerNotFound`]);
    }
  });
  it('action="createCustomer"; charset=utf-8 (each parameter once), a CreateCustomerRequest → 200', async () => {
    const res = await post(
      svc.endpoint,
      envelope(create("773")),
      'application/soap+xml; action="createCustomer"; charset=utf-8',
    );
    expect(res.status).toBe(200);
  });
  it("one-way logEvent → 202 with an empty body, handler called", async () => {
    const before = received.length;
    const res = await post(
      svc.endpoint,
      envelope(
        `<LogEventRequest xmlns="${TNS}"><event><type>login</type><severity>INFO</severity><message>m</message><customerId>9007199254740993</customerId></event></LogEventRequest>`,
      ),
      `${SOAP}; action=logEvent`,
    );
    expect(res.status).toBe(202);
    expect(res.text).toBe("");
    expect(received[before]).toEqual({
      event: { type: "login", severity: "INFO", message: "m", customerId: 9007199254740993n },
    });
  });
  it("one-way sendNotification with an empty message → 400 (minLength 1)", async () => {
    const res = await post(
      svc.endpoint,
      envelope(`<SendNotificationRequest xmlns="${TNS}"><message></message></SendNotificationRequest>`),
    );
    expect(res.status).toBe(400);
  });
  it("Content-Length above the limit → 413 fault before the body is read", async () => {
    const big = envelope(getCustomer("42")).replace(
      "<env:Body>",
      `<env:Body><!--${"x".repeat(70 * 1024)}-->`,
    );
    const res = await post(svc.endpoint, big);
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toBe(SOAP);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(readFault(res.text).code).toBe(`{${ENV}}Sender`);
    expect(readFault(res.text).reason).toBe("The message is larger than 65536 bytes");
  });
  it("text/xml (SOAP 1.1) with Content-Length above the limit → 413 before the body is read, not 415", async () => {
    const big = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><!--${"x".repeat(70 * 1024)}--></s:Body></s:Envelope>`;
    const res = await post(svc.endpoint, big, "text/xml; charset=utf-8");
    expect(res.status).toBe(413);
    expect(readFault(res.text).reason).toBe("The message is larger than 65536 bytes");
  });
  it("text/xml (SOAP 1.1) chunked past the limit → 413, not 415", async () => {
    const chunk = new TextEncoder().encode(`<!--${"x".repeat(16 * 1024)}-->`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) {
          controller.enqueue(
            new TextEncoder().encode(
              `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>`,
            ),
          );
        }
        if (sent++ > 10) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const res = await fetch(svc.endpoint, {
      method: "POST",
      headers: { "content-type": "text/xml" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
  });
  it("chunked body above the limit → 413", async () => {
    const chunk = new TextEncoder().encode(`<!--${"x".repeat(16 * 1024)}-->`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0)
          controller.enqueue(new TextEncoder().encode(`<env:Envelope xmlns:env="${ENV}"><env:Body>`));
        if (sent++ > 10) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const res = await fetch(svc.endpoint, {
      method: "POST",
      headers: { "content-type": SOAP },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
  });
});

/**
 * Writes `payload` on one connection and reads `count` responses (each framed by its
 * Content-Length), or what came before the server closed the connection.
 */
function exchangeOnOneConnection(
  url: string,
  payload: string,
  count: number,
): Promise<{ status: number; head: string; body: string }[]> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const answers: { status: number; head: string; body: string }[] = [];
    let buffered = Buffer.alloc(0);
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(payload));
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const end = buffered.indexOf("\r\n\r\n");
        if (end === -1) return;
        const head = buffered.subarray(0, end).toString("latin1");
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        answers.push({
          status: Number(head.slice(9, 12)),
          head,
          body: buffered.subarray(end + 4, end + 4 + length).toString("utf8"),
        });
        buffered = buffered.subarray(end + 4 + length);
        if (answers.length === count) {
          socket.destroy();
          resolve(answers);
          return;
        }
      }
    });
    socket.on("close", () => resolve(answers));
    socket.on("error", reject);
  });
}

// RFC 9112 §3.2.2: a server must accept a request-target in absolute-form. Mounted with
// app.use(path, endpoint), the router leaves `http://host?wsdl` in req.url for the mount point.
describe("absolute-form request-targets", () => {
  it("GET http://<host>/ws/customer?wsdl → the WSDL, its address on that host", async () => {
    const { host, pathname } = new URL(svc.endpoint);
    const [answer] = await exchangeOnOneConnection(
      svc.endpoint,
      `GET http://${host}${pathname}?wsdl HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      1,
    );
    expect(answer?.status).toBe(200);
    expect(answer?.body).toContain(`<soap12:address location="http://${host}${pathname}"/>`);
  });

  it("GET http://shop.example/ws/customer?wsdl with another Host → the address on the target's host", async () => {
    const { host, pathname } = new URL(svc.endpoint);
    const [named, empty] = await exchangeOnOneConnection(
      svc.endpoint,
      `GET http://shop.example:8080${pathname}?wsdl HTTP/1.1\r\nHost: ${host}\r\n\r\n` +
        `GET http://${pathname}?wsdl HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      2,
    );
    expect(named?.status).toBe(200);
    expect(named?.body).toContain(`<soap12:address location="http://shop.example:8080${pathname}"/>`);
    expect(named?.body).not.toContain(host);
    expect(empty?.status).toBe(400);
  });

  it("POST http://<host>/ws/customer → the operation's answer; another path → not the endpoint's", async () => {
    const { host, pathname } = new URL(svc.endpoint);
    const body = envelope(getCustomer("42"));
    const request = (path: string) =>
      `POST http://${host}${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: ${SOAP}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const [ours, other] = await exchangeOnOneConnection(
      svc.endpoint,
      request(pathname) + request(`${pathname}/other`),
      2,
    );
    expect(ours?.status).toBe(200);
    expect(ours?.body).toContain("<name>Ada Lovelace</name>");
    expect(other?.status).toBe(404);
  });

  it("on node:http with a path: GET http://<host>/ws/customer/?wsdl → the WSDL; another path → not answered", async () => {
    const endpoint = nodeEndpoint({
      wsdl: CUSTOMER_WSDL,
      handlers: customerHandlers(),
      path: "/ws/customer",
    });
    const server = await listen((req, res) => {
      endpoint(req, res).then((answered) => {
        if (!answered) res.writeHead(404, { "Content-Length": "0" }).end();
      });
    });
    try {
      const { host } = new URL(server.url);
      const get = (path: string) => `GET http://${host}${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
      const [wsdl, other] = await exchangeOnOneConnection(
        server.url,
        get("/ws/customer/?wsdl") + get("/ws/other?wsdl"),
        2,
      );
      expect(wsdl?.status).toBe(200);
      expect(wsdl?.body).toContain(`<soap12:address location="http://${host}/ws/customer"/>`);
      expect(other?.status).toBe(404);
    } finally {
      await server.close();
    }
  });
});

describe("a refused body on a keep-alive connection (RFC 9112 §6.3, §9.3, §9.6)", () => {
  // The rest of a refused body is never parsed as the next request: a small rest (its
  // Content-Length within the refused-body policy's 64 KiB) is read as that body and discarded,
  // the connection kept in step; a larger or chunked one closes the connection after the answer.
  const path = () => new URL(svc.endpoint).pathname;
  const smuggled = () => `GET ${path()}?wsdl HTTP/1.1\r\nHost: smuggled.example\r\n\r\n`;
  const real = () => {
    const good = envelope(getCustomer("42"));
    return `POST ${path()} HTTP/1.1\r\nHost: a\r\nContent-Type: ${SOAP}\r\nContent-Length: ${Buffer.byteLength(good)}\r\n\r\n${good}`;
  };

  it("415 with a request inside its small body, then a real request → 415, 200 on one connection", async () => {
    const inside = smuggled();
    const refused = `POST ${path()} HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: ${inside.length}\r\n\r\n${inside}`;
    const answers = await exchangeOnOneConnection(svc.endpoint, refused + real(), 3);
    expect(answers.map((a) => a.status)).toEqual([415, 200]);
    expect(answers[1]?.body).toContain("<name>Ada Lovelace</name>");
  });

  it("413 by Content-Length (70 KiB, a request inside), then a real request → 413 with Connection: close, nothing more", async () => {
    const padded = smuggled() + "x".repeat(70 * 1024);
    const byLength = `POST ${path()} HTTP/1.1\r\nHost: a\r\nContent-Type: ${SOAP}\r\nContent-Length: ${padded.length}\r\n\r\n${padded}`;
    const answers = await exchangeOnOneConnection(svc.endpoint, byLength + real(), 3);
    expect(answers.map((a) => a.status)).toEqual([413]);
    expect(answers[0]?.head).toMatch(/\r\nconnection: close\r\n/i);
  });

  it("413 chunked (a request inside a chunk), then a real request → 413 with Connection: close, nothing more", async () => {
    const inside = smuggled();
    const xml = `<env:Envelope xmlns:env="${ENV}"><env:Body><!--${"x".repeat(70 * 1024)}-->`;
    const chunked = `POST ${path()} HTTP/1.1\r\nHost: a\r\nContent-Type: ${SOAP}\r\nTransfer-Encoding: chunked\r\n\r\n${xml.length.toString(16)}\r\n${xml}\r\n${inside.length.toString(16)}\r\n${inside}\r\n0\r\n\r\n`;
    const answers = await exchangeOnOneConnection(svc.endpoint, chunked + real(), 3);
    expect(answers.map((a) => a.status)).toEqual([413]);
    expect(answers[0]?.head).toMatch(/\r\nconnection: close\r\n/i);
  });
});

// RFC 9110 §13.1.1: "An origin server that receives an If-Match field MUST evaluate the condition
// as per Section 13.2 prior to performing the method"; §13.1.2 the same of If-None-Match. The
// endpoint exists but has no entity tag: If-Match: * is true, any listed tag false (→ 412,
// §13.2.2 step 1), If-None-Match: * false (→ 412 for a POST, step 3). It has no modification
// date, so If-Unmodified-Since is ignored (§13.1.4). §13.2.1: a request answered 4xx without
// its preconditions (415, 413) keeps that answer.
describe("preconditions on a POSTed message (RFC 9110 §13.1, §13.2)", () => {
  it.each([
    ['If-Match: "x"', { "if-match": '"x"' }],
    ['If-Match: W/"x"', { "if-match": 'W/"x"' }],
    ['If-Match: "a", "b"', { "if-match": '"a", "b"' }],
    ["If-None-Match: *", { "if-none-match": "*" }],
  ])("%s → 412 Sender fault, the message not processed", async (_name, headers) => {
    const before = received.length;
    const res = await post(
      svc.endpoint,
      envelope(
        `<LogEventRequest xmlns="${TNS}"><event><type>login</type><severity>INFO</severity><message>m</message></event></LogEventRequest>`,
      ),
      `${SOAP}; action=logEvent`,
      headers,
    );
    expect(res.status).toBe(412);
    expect(res.headers.get("content-type")).toBe(SOAP);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(readFault(res.text).code).toBe(`{${ENV}}Sender`);
    expect(received.length).toBe(before);
  });
  it.each([
    ["If-Match: *", { "if-match": "*" }],
    ['If-None-Match: "x"', { "if-none-match": '"x"' }],
    [
      "If-Unmodified-Since: Sat, 01 Jan 2000 00:00:00 GMT",
      { "if-unmodified-since": "Sat, 01 Jan 2000 00:00:00 GMT" },
    ],
  ])("%s → 200, processed", async (_name, headers) => {
    const res = await post(svc.endpoint, envelope(getCustomer("42")), SOAP, headers);
    expect(res.status).toBe(200);
    expect(res.text).toContain("Ada Lovelace");
  });
  it('If-Match: "x" with Content-Type: text/plain → 415, not 412 (§13.2.1)', async () => {
    const res = await post(svc.endpoint, envelope(getCustomer("42")), "text/plain", { "if-match": '"x"' });
    expect(res.status).toBe(415);
  });
  it('If-Match: "x" with Content-Length above the limit → 413, not 412 (§13.2.1)', async () => {
    const big = envelope(getCustomer("42")).replace(
      "<env:Body>",
      `<env:Body><!--${"x".repeat(70 * 1024)}-->`,
    );
    const res = await post(svc.endpoint, big, SOAP, { "if-match": '"x"' });
    expect(res.status).toBe(413);
  });
});

describe("faults (Part 1 §5.4, Part 2 §7.5.2.2)", () => {
  it("xs:long 'notanumber' → 400 Sender naming the field, never NaN", async () => {
    const res = await post(svc.endpoint, envelope(getCustomer("notanumber")));
    expect(res.status).toBe(400);
    const fault = readFault(res.text);
    expect(fault.reason).toBe(
      'Invalid request: GetCustomerRequest/customerId: "notanumber" is not a valid xs:long',
    );
  });
  it.each(["maybe", "", "yes", "TRUE"])(
    'xsi:nil="%s" (not an xs:boolean) → 400 Sender naming xsi:nil, not a 200',
    async (value) => {
      // XML Schema Part 1 §3.2.7: xsi:nil is declared with type xs:boolean, and an attribute must
      // be valid against its declaration (§3.2.4, Attribute Locally Valid): "true", "false", "1", "0".
      const xsi = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="${value}"`;
      const res = await post(
        svc.endpoint,
        envelope(getCustomer("42").replace("<c:customerId>", `<c:customerId ${xsi}>`)),
      );
      expect(res.status).toBe(400);
      const fault = readFault(res.text);
      expect(fault.code).toBe(`{${ENV}}Sender`);
      expect(fault.reason).toContain("xsi:nil");
    },
  );
  it.each(["false", "0", " false "])(
    'xsi:nil="%s" on a non-nillable element → 400 Sender, not nillable',
    async (value) => {
      // XML Schema Part 1 §3.3.4, Element Locally Valid (Element) 3.1: "If {nillable} is false,
      // then there must be no attribute information item ... [local name] is nil", whatever its value.
      const xsi = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="${value}"`;
      const res = await post(
        svc.endpoint,
        envelope(getCustomer("42").replace("<c:customerId>", `<c:customerId ${xsi}>`)),
      );
      expect(res.status).toBe(400);
      expect(readFault(res.text).reason).toContain("customerId: is not nillable");
    },
  );
  it.each([
    ["the body child", "<c:GetCustomerRequest"],
    ["a simple-typed element", "<c:customerId"],
  ])("xsi:schemaLocation / xsi:noNamespaceSchemaLocation on %s → 200, hints are ignored", async (_, tag) => {
    // XML Schema Part 1 §3.4.4 Element Locally Valid (Complex Type) 3 and §3.3.4 Element Locally
    // Valid (Type) 3.1.1 except xsi:type, nil, schemaLocation and noNamespaceSchemaLocation from
    // the attributes an element must not carry; the two location hints (§4.3.2) are ignored.
    const xsi = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="${TNS} customer.xsd" xsi:noNamespaceSchemaLocation="x.xsd"`;
    const res = await post(svc.endpoint, envelope(getCustomer("42").replace(tag, `${tag} ${xsi}`)));
    expect(res.status).toBe(200);
    expect(res.text).toContain("<name>Ada Lovelace</name>");
  });
  it.each([
    ["customerId", "xs:long", getCustomer("42")],
    ["customer", "c:Customer", ""],
  ])(
    'xsi:type naming the declared type on %s (xsi:type="%s") → 200, it changes nothing',
    async (_, type, body) => {
      // XML Schema Part 1 §3.3.4 Element Locally Valid (Element) 4: xsi:type must name a type
      // validly derived from the declared one, which the declared type itself is.
      const xsi = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" xsi:type="${type}"`;
      const message =
        body === ""
          ? `<c:CreateCustomerRequest xmlns:c="${TNS}"><c:customer ${xsi}><c:id>77</c:id><c:name>Typed</c:name><c:email>t@example.com</c:email></c:customer></c:CreateCustomerRequest>`
          : body.replace("<c:customerId", `<c:customerId ${xsi}`);
      const res = await post(svc.endpoint, envelope(message));
      expect(res.status).toBe(200);
      expect(res.text).toContain(body === "" ? "<customerId>77</customerId>" : "<name>Ada Lovelace</name>");
    },
  );
  it('xsi:type="xs:int", a type derived from the declared xs:long (Part 1 §3.3.4 clause 4) → 200', async () => {
    const xsi = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" xsi:type="xs:int"`;
    const res = await post(
      svc.endpoint,
      envelope(getCustomer("42").replace("<c:customerId>", `<c:customerId ${xsi}>`)),
    );
    expect(res.status).toBe(200);
  });
  it.each(["c:Other", "xs:integer", "xs:string", "undeclared:long"])(
    'xsi:type="%s", a type not derived from the declared xs:long → 400 Sender naming xsi:type',
    async (type) => {
      const xsi = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" xsi:type="${type}"`;
      const res = await post(
        svc.endpoint,
        envelope(getCustomer("42").replace("<c:customerId>", `<c:customerId ${xsi}>`)),
      );
      expect(res.status).toBe(400);
      expect(readFault(res.text).reason).toContain("xsi:type");
    },
  );
  it("declared business fault → 400 with subcode and the schema-serialized Detail", async () => {
    const res = await post(svc.endpoint, envelope(getCustomer("9223372036854775807")));
    expect(res.status).toBe(400);
    const fault = readFault(res.text);
    expect(fault.subcodes).toEqual([`{${TNS}}CustomerNotFound`]);
    expect(fault.order).toEqual(["Code", "Reason", "Detail"]);
    expect(fault.detail?.namespace).toBe(TNS);
    expect(fault.detail?.children[0]?.text).toBe("9223372036854775807");
  });
  it("handler exception → 500 Receiver without internal detail, logged", async () => {
    const before = silentLogger.errors.length;
    const res = await post(svc.endpoint, envelope(getCustomer("500")), SOAP, {
      "x-correlation-id": "corr-1",
    });
    expect(res.status).toBe(500);
    expect(readFault(res.text).code).toBe(`{${ENV}}Receiver`);
    expect(res.text).not.toContain("hunter2");
    expect(silentLogger.errors.length).toBe(before + 1);
    expect(silentLogger.errors[before]).toMatchObject({ correlationId: "corr-1", operation: "getCustomer" });
  });
  it("handler result that breaks the schema → 500 Receiver, logged", async () => {
    const res = await post(svc.endpoint, envelope(getCustomer("501")));
    expect(res.status).toBe(500);
    expect(res.text).not.toContain("broken");
  });
});

describe("WSDL publication", () => {
  it("GET ?wsdl behind a proxy → address rewritten to the external URL (trust proxy)", async () => {
    const res = await fetch(`${svc.endpoint}?wsdl`, {
      headers: { "x-forwarded-proto": "https", "x-forwarded-host": "api.example.com" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/wsdl+xml; charset=utf-8");
    const text = await res.text();
    expect(text).toContain('<soap12:address location="https://api.example.com/ws/customer"/>');
    expect(text).toContain('schemaLocation="https://api.example.com/ws/customer?xsd=customer.xsd"');
  });
  it("GET ?xsd=customer.xsd → the imported schema", async () => {
    const res = await fetch(`${svc.endpoint}?xsd=customer.xsd`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<xs:complexType name="Customer">');
  });
  it("GET ?xsd=../../package.json → 404", async () => {
    expect((await fetch(`${svc.endpoint}?xsd=../../package.json`)).status).toBe(404);
  });
});

describe("WSDL and XSD revalidation (RFC 9110 §13.1)", () => {
  const wsdlUrl = () => `${svc.endpoint}?wsdl`;
  const xsdUrl = () => `${svc.endpoint}?xsd=customer.xsd`;
  const tagOf = async (url: string) => {
    const res = await fetch(url);
    await res.arrayBuffer();
    return res.headers.get("etag") ?? "";
  };

  it("GET ?wsdl → a strong ETag and Cache-Control: no-cache", async () => {
    const res = await fetch(wsdlUrl());
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]+-[A-Za-z0-9+/]{27}"$/);
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.headers.get("last-modified")).toBeNull();
  });
  it("?wsdl and ?xsd → the tag @svc/conditional's one formula gives the bytes sent, as the type sent", async () => {
    for (const url of [wsdlUrl(), xsdUrl()]) {
      const res = await fetch(url);
      const body = new Uint8Array(await res.arrayBuffer());
      expect(res.headers.get("etag")).toBe(
        representationTag(res.headers.get("content-type") ?? "", undefined, body),
      );
    }
  });
  it("?wsdl and ?xsd=customer.xsd → different tags; the same document twice → the same tag", async () => {
    const wsdl = await tagOf(wsdlUrl());
    expect(await tagOf(wsdlUrl())).toBe(wsdl);
    expect(await tagOf(xsdUrl())).not.toBe(wsdl);
  });
  it("?wsdl through another host → another address in the bytes, another tag", async () => {
    const res = await fetch(wsdlUrl(), { headers: { "x-forwarded-host": "api.example.com" } });
    await res.arrayBuffer();
    expect(res.headers.get("etag")).not.toBe(await tagOf(wsdlUrl()));
  });
  for (const [name, url] of [
    ["?wsdl", wsdlUrl],
    ["?xsd=customer.xsd", xsdUrl],
  ] as const) {
    it(`GET ${name} with If-None-Match: <current tag> → 304 with ETag and Cache-Control, no body`, async () => {
      const etag = await tagOf(url());
      const res = await fetch(url(), { headers: { "if-none-match": etag } });
      expect(res.status).toBe(304);
      expect(res.headers.get("etag")).toBe(etag);
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(res.headers.get("content-type")).toBeNull();
      expect(await res.text()).toBe("");
    });
    it(`GET ${name} with If-None-Match: * → 304`, async () => {
      const res = await fetch(url(), { headers: { "if-none-match": "*" } });
      expect(res.status).toBe(304);
      expect(res.headers.get("etag")).toBe(await tagOf(url()));
    });
    it(`HEAD ${name} with If-None-Match: W/<current tag> (weak comparison) → 304`, async () => {
      const etag = await tagOf(url());
      const res = await fetch(url(), { method: "HEAD", headers: { "if-none-match": `"x", W/${etag}` } });
      expect(res.status).toBe(304);
    });
    it(`GET ${name} with If-None-Match: "stale" → 200 with the document`, async () => {
      const res = await fetch(url(), { headers: { "if-none-match": '"stale"' } });
      expect(res.status).toBe(200);
      expect((await res.text()).length).toBeGreaterThan(100);
    });
    it(`GET ${name} with If-Match: "stale" → 412 with the current ETag`, async () => {
      const etag = await tagOf(url());
      const res = await fetch(url(), { headers: { "if-match": '"stale"' } });
      expect(res.status).toBe(412);
      expect(res.headers.get("etag")).toBe(etag);
      expect(res.headers.get("cache-control")).toBe("no-store");
    });
    it(`GET ${name} with If-Match: <current tag> → 200`, async () => {
      const res = await fetch(url(), { headers: { "if-match": await tagOf(url()) } });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    });
  }
  it("GET ?xsd=nope.xsd with If-None-Match: * → 404 (preconditions only apply to a 2xx, §13.2.1)", async () => {
    expect((await fetch(`${svc.endpoint}?xsd=nope.xsd`, { headers: { "if-none-match": "*" } })).status).toBe(
      404,
    );
  });
});

describe("authenticate hook (SOAP 1.2 Part 1 §2.6 header processing)", () => {
  const security = (user: string, mu = "1") =>
    `<wsse:Security xmlns:wsse="${WSSE_NS}" env:mustUnderstand="${mu}"><wsse:UsernameToken><wsse:Username>${user}</wsse:Username><wsse:Password>secret</wsse:Password></wsse:UsernameToken></wsse:Security>`;
  let auth: Awaited<ReturnType<typeof startCustomerService>>;
  const seen: { blocks: readonly XmlElement[]; principal?: unknown }[] = [];
  const hookCalls: string[] = [];
  beforeAll(async () => {
    const handlers = customerHandlers();
    auth = await startCustomerService({
      handlers: {
        ...handlers,
        getCustomer: async (payload: never, ctx) => {
          seen.push({ blocks: ctx.headers, principal: ctx.principal });
          return (handlers.getCustomer as (p: never, c: typeof ctx) => unknown)(payload, ctx);
        },
      },
      authenticate: async (blocks) => {
        const token = blocks.find((b) => b.localName === "Security")?.children[0];
        const user = token?.children.find((c) => c.localName === "Username")?.text;
        hookCalls.push(user ?? "");
        if (user !== "ada")
          throw Object.assign(new Error("bad credentials"), { code: "FailedAuthentication" });
        return { user };
      },
    });
  });
  afterAll(() => auth.close());

  it("valid wsse:Security with mustUnderstand=1 → 200, principal reaches the handler", async () => {
    const res = await post(auth.endpoint, envelope(getCustomer("42"), security("ada")));
    expect(res.status).toBe(200);
    const last = seen[seen.length - 1];
    expect(last?.principal).toEqual({ user: "ada" });
    expect(last?.blocks[0]).toMatchObject({
      namespace: WSSE_NS,
      localName: "Security",
      attributes: { [`{${ENV}}mustUnderstand`]: "1" },
    });
  });
  it("wrong user → 400 Sender with subcode wsse:FailedAuthentication", async () => {
    const res = await post(auth.endpoint, envelope(getCustomer("42"), security("eve")));
    expect(res.status).toBe(400);
    const fault = readFault(res.text);
    expect(fault.code).toBe(`{${ENV}}Sender`);
    expect(fault.subcodes).toEqual([`{${WSSE_NS}}FailedAuthentication`]);
    expect(res.text).not.toContain("bad credentials");
  });
  it("no header at all → 400 FailedAuthentication", async () => {
    const res = await post(auth.endpoint, envelope(getCustomer("42")));
    expect(readFault(res.text).subcodes).toEqual([`{${WSSE_NS}}FailedAuthentication`]);
  });
  it("bad credentials plus an unknown mandatory block → MustUnderstand first", async () => {
    const res = await post(
      auth.endpoint,
      envelope(getCustomer("42"), `${security("eve")}<x:Y xmlns:x="urn:x" env:mustUnderstand="1"/>`),
    );
    expect(res.status).toBe(500);
    expect(readFault(res.text).notUnderstood).toEqual(["{urn:x}Y"]);
  });
  it("valid credentials plus an unknown mandatory block → MustUnderstand, and the hook never sees the message", async () => {
    // Part 1 §2.6 step 3: the MustUnderstand fault is decided before any header block is
    // processed, and "if such a fault is generated, any further processing MUST NOT be done": a
    // hook that consumes a nonce or counts a login must not run for a message that is refused.
    hookCalls.length = 0;
    const res = await post(
      auth.endpoint,
      envelope(getCustomer("42"), `${security("ada")}<x:Y xmlns:x="urn:x" env:mustUnderstand="true"/>`),
    );
    expect(res.status).toBe(500);
    expect(readFault(res.text).notUnderstood).toEqual(["{urn:x}Y"]);
    expect(hookCalls).toEqual([]);
    // The same message without the block reaches the hook once.
    expect((await post(auth.endpoint, envelope(getCustomer("42"), security("ada")))).status).toBe(200);
    expect(hookCalls).toEqual(["ada"]);
  });
  it("wsse:Security for another role or role none → the hook does not get it (400 FailedAuthentication); ctx.headers still lists it", async () => {
    // Part 1 §2.2: a node processes the header blocks targeted at the roles it plays; a block for
    // role none is never processed, one for another role (a gateway in front, WS-Security 1.1 §6
    // one Security header per actor) is that node's, not this one's.
    const forRole = (role: string) =>
      security("ada").replace("<wsse:Security ", `<wsse:Security env:role="${role}" `);
    for (const role of [ROLE_NONE, "urn:example:gateway"]) {
      hookCalls.length = 0;
      const res = await post(auth.endpoint, envelope(getCustomer("42"), forRole(role)));
      expect(res.status).toBe(400);
      expect(readFault(res.text).subcodes).toEqual([`{${WSSE_NS}}FailedAuthentication`]);
      expect(hookCalls).toEqual([""]);
    }
    // A Security block for the gateway next to this node's own: the hook sees only its own.
    const before = seen.length;
    hookCalls.length = 0;
    const res = await post(
      auth.endpoint,
      envelope(
        getCustomer("42"),
        `${forRole("urn:example:gateway").replace(">ada<", ">gw<")}${security("ada")}`,
      ),
    );
    expect(res.status).toBe(200);
    expect(hookCalls).toEqual(["ada"]);
    expect(seen.length).toBe(before + 1);
    expect(seen[before]?.blocks).toHaveLength(2);
  });
});

describe("authenticate hook: refused credentials vs a broken hook", () => {
  let hooked: Awaited<ReturnType<typeof startCustomerService>>;
  const seenHttp: unknown[] = [];
  const user = (name: string) =>
    `<wsse:Security xmlns:wsse="${WSSE_NS}"><wsse:UsernameToken><wsse:Username>${name}</wsse:Username></wsse:UsernameToken></wsse:Security>`;
  beforeAll(async () => {
    hooked = await startCustomerService({
      authenticate: async (blocks, context) => {
        seenHttp.push(context.http?.headers["x-tenant"]);
        const name = blocks[0]?.children[0]?.children[0]?.text;
        switch (name) {
          case "ada":
            return { user: name };
          case "eve":
            throw new SoapAuthenticationError("unknown user");
          case "old":
            throw new SoapAuthenticationError("token too old", "MessageExpired");
          case "http401":
            throw HttpError.unauthorized("no", { headers: { "WWW-Authenticate": "Basic" } });
          case "exposed":
            // The shape of @svc/auth's SoapAuthError: a §12 code, its namespace, a message safe to send.
            throw Object.assign(new Error("Credentials are required"), {
              code: "InvalidSecurityToken",
              namespace: WSSE_NS,
              expose: true,
            });
          case "coded":
            throw Object.assign(new Error("token 17 revoked at 10:02"), { code: "InvalidSecurityToken" });
          case "busy":
            throw HttpError.serviceUnavailable(7, "user store is restarting");
          case "syscall":
            throw Object.assign(new Error("connect ECONNREFUSED 10.0.0.9:389"), { code: "ECONNREFUSED" });
          default:
            throw new TypeError("Cannot read properties of undefined (reading 'secret')");
        }
      },
    });
  });
  afterAll(() => hooked.close());

  it("the hook sees the HTTP request (context.http)", async () => {
    const res = await post(hooked.endpoint, envelope(getCustomer("42"), user("ada")), SOAP, {
      "x-tenant": "acme",
    });
    expect(res.status).toBe(200);
    expect(seenHttp[seenHttp.length - 1]).toBe("acme");
  });
  it("SoapAuthenticationError → 400 Sender, wsse:FailedAuthentication", async () => {
    const res = await post(hooked.endpoint, envelope(getCustomer("42"), user("eve")));
    expect(res.status).toBe(400);
    const fault = readFault(res.text);
    expect(fault.code).toBe(`{${ENV}}Sender`);
    expect(fault.subcodes).toEqual([`{${WSSE_NS}}FailedAuthentication`]);
    expect(res.text).not.toContain("unknown user");
  });
  it("SoapAuthenticationError MessageExpired → 400 Sender, wsu:MessageExpired", async () => {
    const res = await post(hooked.endpoint, envelope(getCustomer("42"), user("old")));
    expect(res.status).toBe(400);
    expect(readFault(res.text).subcodes).toEqual([
      "{http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd}MessageExpired",
    ]);
  });
  it("an error with a §12 code and expose: true → 400 Sender, wsse:<code>, its message as the Reason", async () => {
    const res = await post(hooked.endpoint, envelope(getCustomer("42"), user("exposed")));
    expect(res.status).toBe(400);
    const fault = readFault(res.text);
    expect(fault.code).toBe(`{${ENV}}Sender`);
    expect(fault.subcodes).toEqual([`{${WSSE_NS}}InvalidSecurityToken`]);
    expect(fault.reason).toBe("Credentials are required");
  });
  it("an error with a §12 code, not exposed → wsse:<code>, the message kept back", async () => {
    const res = await post(hooked.endpoint, envelope(getCustomer("42"), user("coded")));
    expect(res.status).toBe(400);
    const fault = readFault(res.text);
    expect(fault.subcodes).toEqual([`{${WSSE_NS}}InvalidSecurityToken`]);
    expect(fault.reason).toBe("The security token could not be authenticated or authorized");
    expect(res.text).not.toContain("revoked");
  });
  it("HttpError 401 from the hook → 400 Sender, wsse:FailedAuthentication", async () => {
    const res = await post(hooked.endpoint, envelope(getCustomer("42"), user("http401")));
    expect(res.status).toBe(400);
    expect(readFault(res.text).subcodes).toEqual([`{${WSSE_NS}}FailedAuthentication`]);
  });
  it("HttpError 503 from the hook → 503 Receiver with Retry-After, logged, no detail", async () => {
    const before = silentLogger.errors.length;
    const res = await post(hooked.endpoint, envelope(getCustomer("42"), user("busy")));
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("7");
    const fault = readFault(res.text);
    expect(fault.code).toBe(`{${ENV}}Receiver`);
    expect(fault.subcodes).toEqual([]);
    expect(res.text).not.toContain("restarting");
    expect(silentLogger.errors.length).toBe(before + 1);
  });
  it("a system error with a non-WS-Security code → 500 Receiver, not wsse:ECONNREFUSED", async () => {
    const res = await post(hooked.endpoint, envelope(getCustomer("42"), user("syscall")));
    expect(res.status).toBe(500);
    const fault = readFault(res.text);
    expect(fault.code).toBe(`{${ENV}}Receiver`);
    expect(fault.subcodes).toEqual([]);
    expect(res.text).not.toContain("ECONNREFUSED");
  });
  it("a bug in the hook (TypeError) → 500 Receiver, logged with the correlation id", async () => {
    const before = silentLogger.errors.length;
    const res = await post(hooked.endpoint, envelope(getCustomer("42"), user("bug")), SOAP, {
      "x-correlation-id": "corr-auth",
    });
    expect(res.status).toBe(500);
    expect(readFault(res.text).code).toBe(`{${ENV}}Receiver`);
    expect(res.text).not.toContain("secret");
    expect(silentLogger.errors[before]).toMatchObject({ correlationId: "corr-auth" });
  });
});

describe("the application's error handler with soapFaults", () => {
  it("429 from middleware in front of the endpoint → 429 SOAP fault with Retry-After", async () => {
    const app = express();
    app.use(
      "/ws/customer",
      (_req: unknown, _res: unknown, next: (err?: unknown) => void) => next(HttpError.tooManyRequests(30)),
      soapEndpoint({ wsdl: CUSTOMER_WSDL, handlers: customerHandlers() }),
    );
    app.use(soapErrors("/ws/customer"));
    const server = await listen(app);
    try {
      const res = await post(`${server.url}/ws/customer`, envelope(getCustomer("42")));
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("30");
      expect(res.headers.get("content-type")).toBe(SOAP);
      expect(readFault(res.text).code).toBe(`{${ENV}}Sender`);
    } finally {
      await server.close();
    }
  });
});

describe("mounted on a route (app.post / app.all) instead of app.use", () => {
  // A route handler sees the whole path in req.url (Express strips only app.use mount paths), and
  // the route has already matched it: the endpoint answered every such request with next(), a 404.
  it("app.post(path) → 200; app.all(path) serves POST and GET ?wsdl; a sibling path is not the endpoint", async () => {
    const app = express();
    const options = { wsdl: CUSTOMER_WSDL, handlers: customerHandlers(), logger: silentLogger };
    app.post("/ws/posted", soapEndpoint(options));
    app.all("/ws/all", soapEndpoint(options));
    app.use("/ws/mounted", soapEndpoint(options));
    app.use(soapErrors("/ws/all"));
    const server = await listen(app);
    try {
      const call = (path: string) => post(`${server.url}${path}`, envelope(getCustomer("42")));
      expect((await call("/ws/posted")).status).toBe(200);
      const all = await call("/ws/all/");
      expect(all.status).toBe(200);
      expect(all.text).toContain("<name>Ada Lovelace</name>");
      const wsdl = await fetch(`${server.url}/ws/all?wsdl`);
      expect(wsdl.status).toBe(200);
      expect(await wsdl.text()).toContain(`location="${server.url}/ws/all"`);
      expect((await fetch(`${server.url}/ws/all`)).status).toBe(405);
      // Under app.use, a path below the mount point is still not the endpoint.
      expect((await call("/ws/mounted")).status).toBe(200);
      expect((await call("/ws/mounted/other")).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});

describe("a response the transport cannot write", () => {
  // A handler's HttpError carries header fields the endpoint copies onto the response. One that
  // node:http refuses (a CR LF in a value, undefined from JavaScript) made writing the answer
  // throw outside the SOAP processing: the promise of the exchange rejected with no one to
  // catch it (an unhandled rejection, which ends a Node process) and the client waited forever.
  it.each([
    ["a CR LF in a value", "7\r\nX-Injected: 1", 500],
    // The kernel's writer drops a field whose value is undefined, as it does a null one.
    ["undefined", undefined, 503],
  ])("HttpError 503 whose Retry-After is %s → %s Receiver, never a hang", async (_, value, status) => {
    const app = express();
    const handlers = customerHandlers() as Record<string, unknown>;
    app.use(
      "/ws/customer",
      soapEndpoint({
        wsdl: CUSTOMER_WSDL,
        logger: silentLogger,
        handlers: {
          ...handlers,
          getCustomer: () => {
            throw new HttpError(503, "down", { headers: { "Retry-After": value as string } });
          },
        } as never,
      }),
    );
    app.use(soapErrors("/ws/customer", { logger: silentLogger }));
    const server = await listen(app);
    try {
      const res = await post(`${server.url}/ws/customer`, envelope(getCustomer("42")));
      expect(res.status).toBe(status);
      expect(readFault(res.text).code).toBe(`{${ENV}}Receiver`);
      expect(res.headers.get("x-injected")).toBeNull();
      expect(res.headers.get("retry-after")).toBeNull();
    } finally {
      await server.close();
    }
  });
});

describe("configuration errors at construction", () => {
  it("missing handler → TypeError", () => {
    expect(() => soapEndpoint({ wsdl: CUSTOMER_WSDL, handlers: {} })).toThrow(
      /no handler for operations "getCustomer", "createCustomer", "logEvent", "sendNotification"/,
    );
  });
  it("handler for an unknown operation → TypeError", () => {
    expect(() =>
      soapEndpoint({ wsdl: CUSTOMER_WSDL, handlers: { ...customerHandlers(), nope: async () => 1 } }),
    ).toThrow(/"nope" matches no operation/);
  });
});

describe("a contract whose schema has no target namespace (SOAP 1.2 Part 1 §5.3.1)", () => {
  // §5.3.1: Body children "SHOULD" be namespace qualified, and the envelope schema's env:Body
  // takes xs:any namespace="##any": an unqualified payload is allowed, and the contract decides.
  const wsdl = `<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"
      xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/" xmlns:xs="http://www.w3.org/2001/XMLSchema"
      xmlns:tns="urn:greeter" targetNamespace="urn:greeter">
    <wsdl:types>
      <xs:schema>
        <xs:element name="greet"><xs:complexType><xs:sequence>
          <xs:element name="name" type="xs:string"/>
        </xs:sequence></xs:complexType></xs:element>
        <xs:element name="greetResponse"><xs:complexType><xs:sequence>
          <xs:element name="greeting" type="xs:string"/>
        </xs:sequence></xs:complexType></xs:element>
      </xs:schema>
    </wsdl:types>
    <wsdl:message name="greet"><wsdl:part name="parameters" element="greet"/></wsdl:message>
    <wsdl:message name="greetResponse"><wsdl:part name="parameters" element="greetResponse"/></wsdl:message>
    <wsdl:portType name="Greeter">
      <wsdl:operation name="greet"><wsdl:input message="tns:greet"/><wsdl:output message="tns:greetResponse"/></wsdl:operation>
    </wsdl:portType>
    <wsdl:binding name="GreeterSoap12" type="tns:Greeter">
      <soap12:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
      <wsdl:operation name="greet">
        <soap12:operation soapAction="urn:greeter#greet"/>
        <wsdl:input><soap12:body use="literal"/></wsdl:input><wsdl:output><soap12:body use="literal"/></wsdl:output>
      </wsdl:operation>
    </wsdl:binding>
    <wsdl:service name="GreeterService">
      <wsdl:port name="GreeterPort" binding="tns:GreeterSoap12"><soap12:address location="http://localhost/greeter"/></wsdl:port>
    </wsdl:service>
  </wsdl:definitions>`;
  let greeter: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    const app = express();
    app.use(
      "/greeter",
      soapEndpoint({
        wsdl,
        handlers: { greet: ({ name }: { name: string }) => ({ greeting: `Hello, ${name}` }) } as never,
        logger: silentLogger,
      }),
    );
    app.use(soapErrors("/greeter"));
    greeter = await listen(app);
  });
  afterAll(() => greeter.close());

  it("an unqualified greet element → 200 with the unqualified greetResponse", async () => {
    const res = await post(`${greeter.url}/greeter`, envelope("<greet><name>Ada</name></greet>"));
    expect(res.status).toBe(200);
    expect(res.text).toContain("<greeting>Hello, Ada</greeting>");
  });
  it("a greet element in a namespace → 400 Sender, no operation takes it", async () => {
    const res = await post(
      `${greeter.url}/greeter`,
      envelope('<g:greet xmlns:g="urn:greeter"><name>Ada</name></g:greet>'),
    );
    expect(res.status).toBe(400);
    expect(readFault(res.text).reason).toBe("No operation takes {urn:greeter}greet");
  });
  it("an unqualified element the contract does not define → 400 Sender, no operation takes it", async () => {
    const res = await post(`${greeter.url}/greeter`, envelope("<other/>"));
    expect(res.status).toBe(400);
    expect(readFault(res.text).reason).toBe("No operation takes other");
  });
});

describe("operations sharing one soapAction (WSDL 1.1 SOAP 1.2 binding §3.4)", () => {
  // The soapAction of a binding operation need not be unique (WS-I Basic Profile 1.1 R2710 asks
  // only that the wire signatures, the Body elements, differ); node-soap and zeep send it as the
  // `action` parameter (RFC 3902). An action several operations share names none of them: the
  // first operation took it, and a call of the second was refused for not matching the first.
  const wsdl = `<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"
      xmlns:soap12="http://schemas.xmlsoap.org/wsdl/soap12/" xmlns:xs="http://www.w3.org/2001/XMLSchema"
      xmlns:tns="urn:greeter" targetNamespace="urn:greeter">
    <wsdl:types>
      <xs:schema targetNamespace="urn:greeter" elementFormDefault="qualified">
        <xs:element name="greet"><xs:complexType><xs:sequence>
          <xs:element name="name" type="xs:string"/>
        </xs:sequence></xs:complexType></xs:element>
        <xs:element name="part"><xs:complexType><xs:sequence>
          <xs:element name="name" type="xs:string"/>
        </xs:sequence></xs:complexType></xs:element>
        <xs:element name="reply"><xs:complexType><xs:sequence>
          <xs:element name="text" type="xs:string"/>
        </xs:sequence></xs:complexType></xs:element>
      </xs:schema>
    </wsdl:types>
    <wsdl:message name="greet"><wsdl:part name="parameters" element="tns:greet"/></wsdl:message>
    <wsdl:message name="part"><wsdl:part name="parameters" element="tns:part"/></wsdl:message>
    <wsdl:message name="reply"><wsdl:part name="parameters" element="tns:reply"/></wsdl:message>
    <wsdl:portType name="Greeter">
      <wsdl:operation name="greet"><wsdl:input message="tns:greet"/><wsdl:output message="tns:reply"/></wsdl:operation>
      <wsdl:operation name="part"><wsdl:input message="tns:part"/><wsdl:output message="tns:reply"/></wsdl:operation>
    </wsdl:portType>
    <wsdl:binding name="GreeterSoap12" type="tns:Greeter">
      <soap12:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
      <wsdl:operation name="greet">
        <soap12:operation soapAction="urn:greeter"/>
        <wsdl:input><soap12:body use="literal"/></wsdl:input><wsdl:output><soap12:body use="literal"/></wsdl:output>
      </wsdl:operation>
      <wsdl:operation name="part">
        <soap12:operation soapAction="urn:greeter"/>
        <wsdl:input><soap12:body use="literal"/></wsdl:input><wsdl:output><soap12:body use="literal"/></wsdl:output>
      </wsdl:operation>
    </wsdl:binding>
    <wsdl:service name="GreeterService">
      <wsdl:port name="GreeterPort" binding="tns:GreeterSoap12"><soap12:address location="http://localhost/greeter"/></wsdl:port>
    </wsdl:service>
  </wsdl:definitions>`;
  let greeter: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    const app = express();
    app.use(
      "/greeter",
      soapEndpoint({
        wsdl,
        handlers: {
          greet: ({ name }: { name: string }) => ({ text: `Hello, ${name}` }),
          part: ({ name }: { name: string }) => ({ text: `Goodbye, ${name}` }),
        } as never,
        logger: silentLogger,
      }),
    );
    app.use(soapErrors("/greeter"));
    greeter = await listen(app);
  });
  afterAll(() => greeter.close());

  it.each([
    ["greet", "Hello, Ada"],
    ["part", "Goodbye, Ada"],
  ])('action="urn:greeter" with a %s element → 200, the Body element routes', async (op, text) => {
    const res = await post(
      `${greeter.url}/greeter`,
      envelope(`<g:${op} xmlns:g="urn:greeter"><g:name>Ada</g:name></g:${op}>`),
      `${SOAP}; action="urn:greeter"`,
    );
    expect(res.status).toBe(200);
    expect(res.text).toContain(`<text>${text}</text>`);
  });
});

describe("a body parser in front of the endpoint (node-soap's bodyParser.raw setup)", () => {
  // node-soap's Express instructions put `bodyParser.raw({ type: () => true })` in front of it and
  // read `req.body`. Here the stream had already ended when the endpoint started reading it, so
  // nothing arrived: every call waited bodyTimeoutMs and got a 408 blaming the client (RFC 9110
  // §15.5.9), although the whole message had been received.
  const start = async (parser: express.RequestHandler) => {
    const app = express();
    app.use(parser);
    app.use(
      "/ws/customer",
      soapEndpoint({
        wsdl: CUSTOMER_WSDL,
        handlers: customerHandlers(),
        logger: silentLogger,
        bodyTimeoutMs: 1000,
        limits: { maxBytes: 4096 },
      }),
    );
    app.use(soapErrors("/ws/customer", { logger: silentLogger }));
    return listen(app);
  };
  for (const [name, parser] of [
    ["express.raw({ type: () => true }) (a Buffer)", express.raw({ type: () => true })],
    [
      'express.text({ type: "application/soap+xml" }) (a string)',
      express.text({ type: "application/soap+xml" }),
    ],
  ] as const) {
    it(`${name} → 200, the parsed body is the message; over limits.maxBytes → 413`, async () => {
      const server = await start(parser);
      try {
        const res = await post(`${server.url}/ws/customer`, envelope(getCustomer("42")));
        expect(res.status).toBe(200);
        expect(res.text).toContain("Ada Lovelace");
        const big = envelope(getCustomer(`42${" ".repeat(5000)}`));
        expect((await post(`${server.url}/ws/customer`, big)).status).toBe(413);
      } finally {
        await server.close();
      }
    });
  }
  it("express.raw({ type: () => true }) and Content-Encoding: gzip → 200: the parser inflated the body, req.body is the message", async () => {
    // body-parser decodes gzip, deflate (and br) by default (`inflate: true`), leaving the
    // Content-Encoding field in place: the bytes in req.body are no longer coded.
    const server = await start(express.raw({ type: () => true }));
    try {
      const res = await post(`${server.url}/ws/customer`, gzipSync(envelope(getCustomer("42"))), SOAP, {
        "content-encoding": "gzip",
      });
      expect(res.status).toBe(200);
      expect(res.text).toContain("Ada Lovelace");
    } finally {
      await server.close();
    }
  });
  it("the error handler without a logger (the README's setup) → the 500 fault is logged on stderr once, not dropped", async () => {
    // Express's final handler prints a 5xx error; an error handler that answers it instead must
    // record it somewhere: without a logger, @svc/errors logs on stderr (fallbackLogger).
    const app = express();
    app.use(express.urlencoded({ type: () => true, extended: false }));
    app.use("/ws/customer", soapEndpoint({ wsdl: CUSTOMER_WSDL, handlers: customerHandlers() }));
    app.use(soapErrors("/ws/customer"));
    const server = await listen(app);
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    const spy = vi.spyOn(process.stderr, "write").mockImplementation(((
      chunk: string | Uint8Array,
      ...rest: never[]
    ) => {
      const text = String(chunk);
      if (text.includes('"msg":"request failed"')) lines.push(text);
      else return write(chunk, ...rest);
      return true;
    }) as typeof process.stderr.write);
    try {
      const res = await post(`${server.url}/ws/customer`, envelope(getCustomer("42")));
      expect(res.status).toBe(500);
      expect(readFault(res.text).code).toBe(`{${ENV}}Receiver`);
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 50, status: 500 });
    } finally {
      spy.mockRestore();
      await server.close();
    }
  });
  it("a parser that left a parsed object in req.body → 500 Receiver at once, logged, not a 408", async () => {
    const server = await start((req, _res, next) => {
      req.resume();
      req.on("end", () => {
        (req as { body?: unknown }).body = { parsed: true };
        next();
      });
    });
    try {
      const before = silentLogger.errors.length;
      const res = await post(`${server.url}/ws/customer`, envelope(getCustomer("42")));
      expect(res.status).toBe(500);
      expect(readFault(res.text).code).toBe(`{${ENV}}Receiver`);
      expect(silentLogger.errors.length).toBe(before + 1);
    } finally {
      await server.close();
    }
  });
});
