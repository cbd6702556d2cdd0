import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError } from "@svc/errors";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CUSTOMER_WSDL,
  customerHandlers,
  envelope,
  FIXTURES,
  getCustomer,
  post,
  SOAP,
  silentLogger,
  TNS,
} from "../../test/helpers.js";
import { soapEndpoint } from "../express.js";

const credentials = `<a:Authentication xmlns:a="urn:a">x</a:Authentication>`;
const logEvent = envelope(
  `<LogEventRequest xmlns="${TNS}"><event><type>login</type><severity>INFO</severity><message>m</message></event></LogEventRequest>`,
  credentials,
);

/** The customer endpoint; a message without header blocks is refused with fields in lower case. */
const customerEndpoint = () =>
  soapEndpoint({
    wsdl: CUSTOMER_WSDL,
    handlers: customerHandlers(),
    logger: silentLogger,
    authenticate: async (blocks) => {
      if (blocks.length > 0) return "someone";
      throw HttpError.serviceUnavailable(3, "down", {
        headers: { "cache-control": "max-age=5", "content-type": "text/plain" },
      });
    },
  });

describe("response header fields on bare node:http (RFC 9110 §8.6, RFC 9111 §5.2.2.5)", () => {
  let server: Listening;
  beforeAll(async () => {
    const endpoint = customerEndpoint();
    server = await listen((req: IncomingMessage, res: ServerResponse) =>
      endpoint(req, res, () => res.writeHead(404).end()),
    );
  });
  afterAll(() => server.close());

  it("200 → Content-Type, Cache-Control: no-store and the body's Content-Length", async () => {
    const res = await post(server.url, envelope(getCustomer("42"), credentials));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(SOAP);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(res.text)));
    expect(res.headers.get("transfer-encoding")).toBeNull();
  });
  it("one-way 202 → Content-Length: 0, not a chunked empty body", async () => {
    const res = await post(server.url, logEvent, `${SOAP}; action=logEvent`);
    expect(res.status).toBe(202);
    expect(res.text).toBe("");
    expect(res.headers.get("content-length")).toBe("0");
    expect(res.headers.get("transfer-encoding")).toBeNull();
    expect(res.headers.get("cache-control")).toBe("no-store");
  });
  it("a fault → its status, Content-Type and Content-Length", async () => {
    const res = await post(server.url, envelope(getCustomer("7"), credentials));
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe(SOAP);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(res.text)));
  });
  it("an error's fields in lower case → one Cache-Control: no-store, one Content-Type", async () => {
    const res = await post(server.url, envelope(getCustomer("42")));
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("3");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-type")).toBe(SOAP);
  });
});

describe("response header fields under Express, with middleware in front", () => {
  let server: Listening;
  beforeAll(async () => {
    const app = express();
    app.use(
      "/ws/customer",
      (_req: unknown, res: ServerResponse, next: () => void) => {
        // What helmet or cors set, and a Cache-Control the endpoint must override.
        res.setHeader("Access-Control-Allow-Origin", "*");
        res.setHeader("X-Content-Type-Options", "nosniff");
        res.setHeader("cache-control", "public, max-age=60");
        next();
      },
      customerEndpoint(),
    );
    server = await listen(app);
  });
  afterAll(() => server.close());

  it("200 → the middleware's fields stay, Cache-Control is no-store", async () => {
    const res = await post(`${server.url}/ws/customer`, envelope(getCustomer("42"), credentials));
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-type")).toBe(SOAP);
    expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(res.text)));
  });
  it("one-way 202 → the middleware's fields stay, Content-Length: 0", async () => {
    const res = await post(`${server.url}/ws/customer`, logEvent, `${SOAP}; action=logEvent`);
    expect(res.status).toBe(202);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-length")).toBe("0");
  });
  it("an error's fields in lower case → one Cache-Control: no-store, one Content-Type", async () => {
    const res = await post(`${server.url}/ws/customer`, envelope(getCustomer("42")));
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("3");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-type")).toBe(SOAP);
  });
});

describe("what breaks outside the SOAP processing goes to next()", () => {
  let server: Listening;
  const passed: unknown[] = [];
  const contexts: object[] = [];
  beforeAll(async () => {
    const handlers = customerHandlers() as Record<string, (payload: never, context: object) => unknown>;
    const getCustomer = handlers.getCustomer;
    const app = express();
    app.use(
      "/ws/customer",
      soapEndpoint({
        wsdl: CUSTOMER_WSDL,
        handlers: {
          ...handlers,
          getCustomer: (payload: never, context: object) => {
            contexts.push(context);
            return getCustomer?.(payload, context);
          },
        },
        // A logger that breaks: the Receiver fault of a failed handler cannot be logged.
        logger: {
          error() {
            throw new Error("log sink down");
          },
        },
      }),
      (err: unknown, _req: unknown, res: ServerResponse, _next: unknown) => {
        passed.push(err);
        res.writeHead(502).end();
      },
    );
    server = await listen(app);
  });
  afterAll(() => server.close());

  it("a handler that fails with a logger that throws → the logger's error reaches next(err)", async () => {
    const res = await post(`${server.url}/ws/customer`, envelope(getCustomer("500")));
    expect(res.status).toBe(502);
    expect((passed[0] as Error).message).toBe("log sink down");
  });
  it("the handler's context: the request's fields and no principal without authenticate", async () => {
    const res = await post(
      `${server.url}/ws/customer`,
      envelope(getCustomer("42")),
      `${SOAP}; action=getCustomer`,
      {
        "x-correlation-id": "corr-1",
      },
    );
    expect(res.status).toBe(200);
    const context = contexts[contexts.length - 1] as Record<string, unknown>;
    expect(Object.keys(context).sort()).toEqual(
      [
        "action",
        "addressing",
        "correlationId",
        "headers",
        "http",
        "logger",
        "operation",
        "principal",
        "security",
        "soapVersion",
      ].sort(),
    );
    expect(context).toMatchObject({
      operation: "getCustomer",
      action: "getCustomer",
      soapVersion: "1.2",
      headers: [],
      correlationId: "corr-1",
      principal: undefined,
    });
  });
});

describe("a Date result after the year 9999 (XML Schema 1.0 Part 2 §3.2.7.1, §3.2.9.1)", () => {
  // Date#toISOString writes the expanded years of ECMA-262 §21.4.1.32 (`+010000-01-01T...`), which
  // no xs:dateTime or xs:date lexical takes: a valid instant such as the largest Date, a common
  // "never" sentinel, failed the result check and the client got a 500.
  let server: Listening;
  const NS = "urn:example:orders";
  beforeAll(async () => {
    const app = express();
    app.use(
      "/orders",
      soapEndpoint({
        wsdl: `${FIXTURES}/orders.wsdl`,
        logger: silentLogger,
        handlers: {
          getOrder: () => ({
            order: {
              id: 1n,
              status: "OPEN",
              placed: new Date(Date.UTC(10000, 0, 2)),
              shippedAt: new Date(8.64e15),
              note: null,
              line: [{ sku: "ABC-1", quantity: 1, price: { $value: "1", currency: "EUR" } }],
              email: "a@b.c",
            },
          }),
          ping: () => {},
        } as never,
      }),
    );
    server = await listen(app);
  });
  afterAll(() => server.close());

  it("placed = 10000-01-02, shippedAt = the largest Date → 200 with XML Schema lexicals", async () => {
    const res = await post(
      `${server.url}/orders`,
      envelope(`<o:GetOrder xmlns:o="${NS}"><o:id>1</o:id></o:GetOrder>`),
    );
    expect(res.status).toBe(200);
    expect(res.text).toContain("<placed>10000-01-02</placed>");
    expect(res.text).toContain("<shippedAt>275760-09-13T00:00:00.000Z</shippedAt>");
  });
});
