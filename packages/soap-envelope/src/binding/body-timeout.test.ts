import { type IncomingHttpHeaders, request } from "node:http";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CUSTOMER_WSDL,
  customerHandlers,
  ENV,
  envelope,
  getCustomer,
  post,
  readFault,
  SOAP,
  silentLogger,
  startCustomerService,
  textOf,
} from "../../test/helpers.js";
import { createSoapService, type SoapContext, type SoapHandler, type SoapServiceOptions } from "./service.js";

/** RFC 9110 §15.5.9: a body that has not arrived within `bodyTimeoutMs` gets 408, never the handler. */

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** Resolves when the server has closed the connection. */
  closed: Promise<void>;
}

/**
 * POSTs `parts` with a pause of `pauseMs` before each but the first; with `stall`, the request
 * never ends after the last part (the client keeps the connection open, sending nothing).
 */
function trickle(url: string, parts: string[], pauseMs: number, stall: boolean, contentType = SOAP) {
  return new Promise<Answer>((resolve, reject) => {
    const total = parts.reduce((n, p) => n + Buffer.byteLength(p), 0);
    const req = request(url, {
      method: "POST",
      headers: { "content-type": contentType, "content-length": String(stall ? total + 1000 : total) },
    });
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      const closed = new Promise<void>((done) => res.socket.once("close", () => done()));
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, closed }));
    });
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    let i = 0;
    const next = () => {
      if (answered) return;
      req.write(parts[i++]);
      if (i < parts.length) setTimeout(next, pauseMs);
      else if (!stall) req.end();
    };
    req.flushHeaders();
    next();
  });
}

const message = envelope(getCustomer("42"));
/** The message in four parts, the last one `</env:Envelope>`. */
const parts = [message.slice(0, 60), message.slice(60, 150), message.slice(150, -15), message.slice(-15)];

let calls = 0;
const countingHandlers = (): SoapServiceOptions["handlers"] => {
  const handlers = customerHandlers();
  const getCustomer = handlers.getCustomer as SoapHandler;
  return {
    ...handlers,
    getCustomer: (payload: never, context: SoapContext) => {
      calls++;
      return getCustomer(payload, context);
    },
  };
};

let short: Awaited<ReturnType<typeof startCustomerService>>;
let long: Awaited<ReturnType<typeof startCustomerService>>;
beforeAll(async () => {
  short = await startCustomerService({ bodyTimeoutMs: 200, handlers: countingHandlers() });
  long = await startCustomerService({ bodyTimeoutMs: 5000, handlers: countingHandlers() });
});
afterAll(async () => {
  await short.close();
  await long.close();
});

describe("bodyTimeoutMs: a body that does not arrive in time", () => {
  it("part of an envelope, then nothing → 408 Sender fault, Connection: close, the socket closed; the handler never runs", async () => {
    calls = 0;
    const res = await trickle(short.endpoint, parts.slice(0, 2), 20, true);
    expect(res.status).toBe(408);
    expect(res.headers.connection).toBe("close");
    expect(res.headers["content-type"]).toBe("application/soap+xml; charset=utf-8");
    const fault = readFault(res.text);
    expect(fault.code).toBe(`{${ENV}}Sender`);
    expect(fault.reason).toContain("did not arrive within 200 ms");
    await res.closed;
    expect(calls).toBe(0);
  });
  it("nothing of the body at all (headers only) → 408", async () => {
    const res = await trickle(short.endpoint, [""], 0, true);
    expect(res.status).toBe(408);
    await res.closed;
  });
  it("a SOAP 1.1 (text/xml) body that stalls → 408 too", async () => {
    const res = await trickle(short.endpoint, parts.slice(0, 2), 20, true, "text/xml; charset=utf-8");
    expect(res.status).toBe(408);
  });
  it("the server keeps answering other requests while one stalls, and after", async () => {
    calls = 0;
    const stalled = trickle(short.endpoint, parts.slice(0, 1), 0, true);
    const during = await post(short.endpoint, message);
    expect(during.status).toBe(200);
    expect((await stalled).status).toBe(408);
    expect((await post(short.endpoint, message)).status).toBe(200);
    expect(calls).toBe(2);
  });
  it("a body sent in parts that ends within the limit is processed normally", async () => {
    calls = 0;
    const res = await trickle(long.endpoint, parts, 100, false);
    expect(res.status).toBe(200);
    expect(res.text).toContain("Ada Lovelace");
    expect(calls).toBe(1);
  });
});

describe("bodyTimeoutMs: service.handle() without HTTP", () => {
  const service = createSoapService({
    wsdl: CUSTOMER_WSDL,
    handlers: countingHandlers(),
    logger: silentLogger,
    bodyTimeoutMs: 100,
  });
  const request = (body: AsyncIterable<string> | PassThrough) => ({
    method: "POST",
    contentType: SOAP,
    contentLength: undefined,
    body,
  });
  it("a Node stream that never ends → 408 with Connection: close, the handler never runs", async () => {
    calls = 0;
    const body = new PassThrough();
    body.write(parts[0]);
    const res = await service.handle(request(body));
    expect(res.status).toBe(408);
    expect(res.headers.Connection).toBe("close");
    expect(res.unreadBody).toBe(true);
    expect(readFault(textOf(res.body)).code).toBe(`{${ENV}}Sender`);
    expect(body.listenerCount("data")).toBe(0);
    expect(calls).toBe(0);
  });
  it("an async iterable that stops yielding → 408, and it is told to stop (return())", async () => {
    let returned = false;
    const body: AsyncIterable<string> = {
      [Symbol.asyncIterator]() {
        let sent = false;
        return {
          next: () => {
            if (sent) return new Promise<IteratorResult<string>>(() => {});
            sent = true;
            return Promise.resolve({ done: false, value: parts[0] as string });
          },
          return: () => {
            returned = true;
            return Promise.resolve({ done: true, value: undefined });
          },
        };
      },
    };
    const res = await service.handle(request(body));
    expect(res.status).toBe(408);
    expect(returned).toBe(true);
  });
  it("an async iterable that ends in time is processed normally", async () => {
    async function* body() {
      for (const part of parts) yield part;
    }
    expect((await service.handle(request(body()))).status).toBe(200);
  });
});
