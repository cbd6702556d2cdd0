import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { onError } from "@svc/errors/fetch";
import { type Gate, HttpError } from "@svc/kernel";
import { expressGate } from "@svc/kernel/express";
import { fastifyGate } from "@svc/kernel/fastify";
import { fetchGate, honoConnection } from "@svc/kernel/fetch";
import { nodeGate } from "@svc/kernel/node";
import { rateLimit as expressRateLimit } from "@svc/ratelimit/express";
import { rateLimit as fastifyRateLimit } from "@svc/ratelimit/fastify";
import { rateLimit as fetchRateLimit } from "@svc/ratelimit/fetch";
import { rateLimit as nodeRateLimit } from "@svc/ratelimit/node";
import { soapEndpoint as expressEndpoint, soapErrorHandler } from "@svc/soap-envelope/express";
import { soap } from "@svc/soap-envelope/fastify";
import { soapEndpoint as fetchEndpoint } from "@svc/soap-envelope/fetch";
import { soapEndpoint as nodeEndpoint } from "@svc/soap-envelope/node";
import { listenOn } from "@svc/test-utils";
import { conformance, fallbackErrors, type Mounts, type Row, send } from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { customerHandlers, envelope, FIXTURES, getCustomer, silentLogger } from "./helpers.js";
import { PATH } from "./mounts.js";

const SOAP12 = "application/soap+xml; charset=utf-8";
const SOAP11 = "text/xml; charset=utf-8";
const ENV11 = "http://schemas.xmlsoap.org/soap/envelope/";

const options = () => ({
  wsdl: join(FIXTURES, "customer-both.wsdl"),
  handlers: customerHandlers(),
  logger: silentLogger,
  limits: { maxBytes: 8192 },
});

/** A field of whichever framework's request: `node:http`'s (Express, Fastify) or a Fetch `Request`'s. */
function field(req: object, name: string): string | undefined {
  const headers = (req as { headers: Headers | Record<string, string | string[] | undefined> }).headers;
  const value = headers instanceof Headers ? headers.get(name) : headers[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** One request per client (`X-Client`) and window: the second is refused with a 429. */
const limits = () => ({
  limit: 1,
  windowMs: 60_000,
  key: (req: object) => field(req, "x-client"),
  logger: { warn() {} },
});

/**
 * An authentication in front: a bearer token other than `good` is refused with a 401 and its
 * challenge; `X-Boom` makes it fail as a bug would.
 */
const authenticate: Gate<unknown> = (view) => {
  if (view.headers["x-boom"] !== undefined) throw new Error("token store password=hunter2 unreachable");
  const given = view.headers.authorization;
  if (given === undefined || given === "Bearer good") return undefined;
  throw HttpError.unauthorized("The access token is not valid", {
    headers: { "WWW-Authenticate": 'Bearer realm="ws", error="invalid_token"' },
  });
};

/** The endpoint behind a rate limit and an authentication, its refusals answered as SOAP faults. */
const mounts: Mounts = {
  express() {
    const app = express();
    app.disable("x-powered-by");
    app.use(PATH, expressRateLimit(limits()), expressGate(authenticate), expressEndpoint(options()));
    app.use(PATH, soapErrorHandler({ logger: silentLogger }));
    app.use(fallbackErrors.express);
    return app;
  },
  node() {
    const limit = nodeRateLimit(limits());
    const auth = nodeGate(authenticate);
    const endpoint = nodeEndpoint({ ...options(), path: PATH });
    return (req: IncomingMessage, res: ServerResponse) => {
      const run = async () => {
        if (!(req.url ?? "/").startsWith(PATH)) throw HttpError.notFound();
        await limit(req, res);
        if (await auth(req, res)) return;
        if (!(await endpoint(req, res))) throw HttpError.notFound();
      };
      run().catch((err: unknown) => endpoint.fault(err, req, res));
    };
  },
  fastify() {
    const app = Fastify();
    app.register(fastifyRateLimit, limits());
    app.addHook("onRequest", fastifyGate(authenticate));
    app.register(soap, { ...options(), prefix: PATH, faults: true });
    app.setErrorHandler(fallbackErrors.fastify);
    return app;
  },
  fetch() {
    const endpoint = fetchEndpoint(options());
    const app = new Hono();
    app.use(PATH, endpoint.faults);
    app.use(fetchRateLimit(limits()));
    app.use(fetchGate(authenticate));
    app.all(PATH, (c) => endpoint(c.req.raw, honoConnection(c)));
    app.onError((err, c) => fallbackErrors.fetch(err, c));
    return app.fetch;
  },
};

const post = (client: string, headers: Record<string, string> = {}, body = envelope(getCustomer("42"))) => ({
  method: "POST",
  path: PATH,
  headers: { "Content-Type": SOAP12, "X-Client": client, ...headers },
  body,
});

/** The text of the response contains `pattern`. */
const contains =
  (...patterns: RegExp[]) =>
  (r: { text: string }) => {
    for (const pattern of patterns) expect(r.text).toMatch(pattern);
  };

const rows: Row[] = [
  {
    name: "POST within the rate limit → 200, the response envelope with the RateLimit fields",
    request: post("within"),
    status: 200,
    headers: { "content-type": SOAP12, ratelimit: /^"default";r=0;t=\d+$/ },
    body: contains(/Ada Lovelace/),
  },
  {
    name: "POST over the rate limit → 429 env:Sender fault, Retry-After and the RateLimit fields kept",
    before: [post("over")],
    request: post("over"),
    status: 429,
    headers: {
      "content-type": SOAP12,
      "cache-control": "no-store",
      "retry-after": /^[1-9]\d*$/,
      ratelimit: /^"default";r=0;t=\d+$/,
      "content-length": /^\d+$/,
    },
    body: contains(/<env:Fault>[\s\S]*<env:Value>env:Sender<\/env:Value>/, /Too many requests/),
  },
  {
    name: "SOAP 1.1 POST over the rate limit → 429 text/xml Client fault, Retry-After kept",
    before: [post("over11")],
    request: post(
      "over11",
      { "Content-Type": SOAP11, SOAPAction: '"getCustomer"' },
      envelope(getCustomer("42"), undefined, ENV11),
    ),
    status: 429,
    headers: { "content-type": SOAP11, "retry-after": /^[1-9]\d*$/, "cache-control": "no-store" },
    body: contains(/<faultcode>[\w:-]*Client<\/faultcode>/, /schemas\.xmlsoap\.org\/soap\/envelope/),
  },
  {
    name: "POST with a bearer token refused → 401 env:Sender fault, WWW-Authenticate kept",
    request: post("bad-token", { Authorization: "Bearer stolen" }),
    status: 401,
    headers: {
      "content-type": SOAP12,
      "www-authenticate": 'Bearer realm="ws", error="invalid_token"',
      "cache-control": "no-store",
    },
    body: contains(/env:Sender/, /The access token is not valid/),
  },
  {
    name: "POST whose authentication fails with an Error → 500 env:Receiver fault, the error not shown",
    request: post("boom", { "X-Boom": "1" }),
    status: 500,
    headers: { "content-type": SOAP12 },
    body: (r) => {
      expect(r.text).toMatch(/<env:Value>env:Receiver<\/env:Value>/);
      expect(r.text).not.toContain("hunter2");
    },
  },
  {
    name: "GET ?xsd= of no schema of the contract → 404 env:Sender fault",
    request: { path: `${PATH}?xsd=other.xsd`, headers: { "X-Client": "xsd" } },
    status: 404,
    headers: { "content-type": SOAP12 },
    body: contains(/env:Sender/),
  },
  {
    name: "HEAD over the rate limit → 429 with the fault's fields, no content",
    before: [post("head")],
    request: { method: "HEAD", path: PATH, headers: { "X-Client": "head" } },
    status: 429,
    headers: { "content-type": SOAP12, "retry-after": /^[1-9]\d*$/ },
    body: "",
  },
];

conformance("@svc/soap-envelope refusals in front of the endpoint", mounts, rows);

describe("@svc/soap-envelope/fastify: the faults option", () => {
  it('faults: "yes" → TypeError ERR_SVC_SOAP_ENVELOPE_FAULTS at register', async () => {
    const app = Fastify();
    app.register(soap, { ...options(), prefix: PATH, faults: "yes" as never });
    try {
      await expect(app.ready()).rejects.toMatchObject({
        name: "TypeError",
        code: "ERR_SVC_SOAP_ENVELOPE_FAULTS",
      });
    } finally {
      await app.close();
    }
  });
  it("faults left out → a refusal in front goes to the application's error handler (the JSON record)", async () => {
    const app = Fastify();
    app.addHook("onRequest", fastifyGate(authenticate));
    app.register(soap, { ...options(), prefix: PATH });
    app.setErrorHandler(fallbackErrors.fastify);
    try {
      const res = await app.inject({
        method: "POST",
        url: PATH,
        headers: { "content-type": SOAP12, authorization: "Bearer stolen" },
        payload: envelope(getCustomer("42")),
      });
      expect(res.statusCode).toBe(401);
      expect(res.headers["content-type"]).toMatch(/^application\/json/);
    } finally {
      await app.close();
    }
  });
});

describe("@svc/soap-envelope/node: fault() once the response has started", () => {
  it("a response already begun → the connection cut, no second response written", async () => {
    const endpoint = nodeEndpoint({ ...options(), path: PATH });
    let after: { destroyed: boolean; status: number } | undefined;
    const server = createServer((req, res) => {
      res.writeHead(200, { "content-type": SOAP12 });
      res.write("<partial");
      endpoint.fault(new Error("the handler failed mid-response"), req, res);
      after = { destroyed: res.destroyed, status: res.statusCode };
    });
    const listening = await listenOn(server);
    try {
      await send(listening.url, post("started")).catch(() => undefined);
      expect(after).toEqual({ destroyed: true, status: 200 });
    } finally {
      await listening.close();
    }
  });
});

// A 5xx is recorded once: Hono runs `app.onError` (its own default logs too) at the step that
// threw and leaves the error on the context, where `soap.faults` finds it and replaces the
// response with the fault. The failure must not be logged a second time on the way.
describe("@svc/soap-envelope/fetch: soap.faults after Hono's onError", () => {
  it("an Error in front → one 500 fault, logged once through the shared logger", async () => {
    const errors: unknown[] = [];
    const logger = { ...silentLogger, error: (...args: unknown[]) => void errors.push(args) };
    const endpoint = fetchEndpoint({ ...options(), logger });
    const app = new Hono();
    app.use(PATH, endpoint.faults);
    app.use(fetchGate(authenticate));
    app.all(PATH, (c) => endpoint(c.req.raw, honoConnection(c)));
    app.onError(onError({ logger }));
    const res = await app.request(PATH, {
      method: "POST",
      headers: { "Content-Type": SOAP12, "X-Boom": "1" },
      body: envelope(getCustomer("42")),
    });
    expect(res.status).toBe(500);
    expect(await res.text()).toMatch(/env:Receiver/);
    expect(errors).toHaveLength(1);
  });

  it("a non-Error thrown in front, which Hono passes on → one 500 fault, logged by the fault", async () => {
    const errors: unknown[] = [];
    const logger = { ...silentLogger, error: (...args: unknown[]) => void errors.push(args) };
    const endpoint = fetchEndpoint({ ...options(), logger });
    const app = new Hono();
    app.use(PATH, endpoint.faults);
    app.use(() => {
      throw "a string, not an Error";
    });
    app.all(PATH, (c) => endpoint(c.req.raw, honoConnection(c)));
    app.onError(onError({ logger }));
    const res = await app.request(PATH, { method: "POST", headers: { "Content-Type": SOAP12 }, body: "" });
    expect(res.status).toBe(500);
    expect(await res.text()).toMatch(/env:Receiver/);
    expect(errors).toHaveLength(1);
  });
});
