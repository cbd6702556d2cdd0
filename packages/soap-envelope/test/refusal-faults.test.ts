import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { errorHandler } from "@svc/errors/express";
import { errorPlugin } from "@svc/errors/fastify";
import { notFoundHandler, onError } from "@svc/errors/fetch";
import { errorResponder } from "@svc/errors/node";
import { type Gate, HttpError } from "@svc/kernel";
import { expressGate } from "@svc/kernel/express";
import { fastifyGate } from "@svc/kernel/fastify";
import { fetchGate, honoConnection } from "@svc/kernel/fetch";
import { nodeGate } from "@svc/kernel/node";
import { rateLimit as expressRateLimit } from "@svc/ratelimit/express";
import { rateLimit as fastifyRateLimit } from "@svc/ratelimit/fastify";
import { rateLimit as fetchRateLimit } from "@svc/ratelimit/fetch";
import { rateLimit as nodeRateLimit } from "@svc/ratelimit/node";
import { soapFaults } from "@svc/soap-envelope";
import { soapEndpoint as expressEndpoint } from "@svc/soap-envelope/express";
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

/**
 * The endpoint behind a rate limit and an authentication, with no SOAP error path of its own: the
 * application's one error handler of `@svc/errors` renders the errors of the endpoint's path as
 * faults (`soapFaults`) and every other path's as the record.
 */
const faults = () => ({ logger: silentLogger, renderers: [soapFaults({ path: PATH })] });
/** What a route of another path fails with. */
const elsewhere = () => HttpError.conflict("It exists already");
const pipelineMounts: Mounts = {
  express() {
    const app = express();
    app.disable("x-powered-by");
    app.use(PATH, expressRateLimit(limits()), expressGate(authenticate), expressEndpoint(options()));
    app.post("/elsewhere", () => {
      throw elsewhere();
    });
    app.use((_req, _res, next) => next(HttpError.notFound()));
    app.use(errorHandler(faults()));
    return app;
  },
  node() {
    const limit = nodeRateLimit(limits());
    const auth = nodeGate(authenticate);
    const endpoint = nodeEndpoint({ ...options(), path: PATH });
    const sendError = errorResponder(faults());
    return (req: IncomingMessage, res: ServerResponse) => {
      const run = async () => {
        if (req.url === "/elsewhere") throw elsewhere();
        if (!(req.url ?? "/").startsWith(PATH)) throw HttpError.notFound();
        await limit(req, res);
        if (await auth(req, res)) return;
        if (!(await endpoint(req, res))) throw HttpError.notFound();
      };
      run().catch((err: unknown) => sendError(err, req, res));
    };
  },
  fastify() {
    const app = Fastify();
    app.register(errorPlugin, faults());
    app.register(fastifyRateLimit, limits());
    app.addHook("onRequest", fastifyGate(authenticate));
    app.register(soap, { ...options(), prefix: PATH });
    app.post("/elsewhere", async () => {
      throw elsewhere();
    });
    return app;
  },
  fetch() {
    const endpoint = fetchEndpoint(options());
    const app = new Hono();
    app.use(fetchRateLimit(limits()));
    app.use(fetchGate(authenticate));
    app.all(PATH, (c) => endpoint(c.req.raw, honoConnection(c)));
    app.post("/elsewhere", () => {
      throw elsewhere();
    });
    app.notFound(notFoundHandler(faults()));
    app.onError(onError(faults()));
    return app.fetch;
  },
};

conformance(
  "@svc/soap-envelope faults rendered by the error handler of @svc/errors (soapFaults)",
  pipelineMounts,
  [
    ...rows,
    {
      name: "SOAP 1.1 POST with a bearer token refused → 401 text/xml Client fault, Vary: Content-Type",
      request: post(
        "bad-token11",
        { "Content-Type": SOAP11, SOAPAction: '"getCustomer"', Authorization: "Bearer stolen" },
        envelope(getCustomer("42"), undefined, ENV11),
      ),
      status: 401,
      headers: { "content-type": SOAP11, "www-authenticate": /^Bearer /, vary: /\bContent-Type\b/i },
      body: contains(/<faultcode>[\w:-]*Client<\/faultcode>/, /The access token is not valid/),
    },
    {
      name: "a POST below the endpoint's path → 404 the JSON record, no fault",
      request: { ...post("below"), path: `${PATH}/employees` },
      status: 404,
      headers: { "content-type": /^application\/json/ },
      body: (r) => {
        expect(r.text).not.toContain("Envelope");
        expect(JSON.parse(r.text)).toMatchObject({ status: 404 });
      },
    },
    {
      name: "a route of another path that fails → 409 the JSON record, no fault",
      request: {
        method: "POST",
        path: "/elsewhere",
        headers: { "X-Client": "elsewhere", "Content-Type": "application/json" },
        body: "{}",
      },
      status: 409,
      headers: { "content-type": /^application\/json/ },
      body: (r) => {
        expect(r.text).not.toContain("Envelope");
        expect(JSON.parse(r.text)).toMatchObject({ status: 409, message: "It exists already" });
      },
    },
  ],
);

describe("soapFaults: one 5xx logged once, by the error handler", () => {
  it("an Error in front on Express → one 500 Receiver fault, one log line, the svc:errors message names the renderer", async () => {
    const errors: unknown[] = [];
    const logger = { ...silentLogger, error: (...args: unknown[]) => void errors.push(args) };
    const app = express();
    app.use(PATH, expressGate(authenticate), expressEndpoint(options()));
    app.use(
      errorHandler({ logger, renderers: soapFaults({ path: [PATH, "/ws/other"], versions: ["1.2"] }) }),
    );
    const listening = await listenOn(createServer(app));
    try {
      const res = await send(listening.url, post("boom", { "X-Boom": "1", "Content-Type": SOAP11 }));
      expect(res.status).toBe(500);
      // versions 1.2 alone: a text/xml request gets a SOAP 1.2 fault, and nothing varies.
      expect(res.headers["content-type"]).toBe(SOAP12);
      expect(res.headers.vary ?? "").not.toMatch(/content-type/i);
      expect(res.text).toMatch(/env:Receiver/);
      expect(res.text).not.toContain("hunter2");
      expect(errors).toHaveLength(1);
    } finally {
      await listening.close();
    }
  });
});

describe("soapFaults: which requests are the endpoint's", () => {
  const renderer = soapFaults({ path: "/ws/Customer/" });
  it.each([
    ["/ws/Customer", true],
    ["/WS/CUSTOMER?wsdl", true],
    ["/ws/customer/", true],
    ["/ws/customer/sub", false],
    ["/ws/customer/employees", false],
    ["http://shop.example/ws/customer", true],
    ["/ws/customers", false],
    ["/ws", false],
    ["/employees", false],
  ])("%s → %s", (url, faulted) => {
    const rendered = renderer.render(HttpError.conflict(), { method: "POST", url, headers: {} });
    expect(rendered !== undefined).toBe(faulted);
  });
  it("text/xml with versions 1.1 and 1.2 → a SOAP 1.1 Client fault, Vary: Content-Type", () => {
    const rendered = renderer.render(HttpError.conflict("taken"), {
      method: "POST",
      url: "/ws/customer",
      headers: { "content-type": "text/xml; charset=utf-8" },
    });
    expect(rendered).toMatchObject({ contentType: SOAP11, vary: ["Content-Type"] });
    expect(String(rendered?.body)).toMatch(/<faultcode>[\w:-]*Client<\/faultcode>[\s\S]*taken/);
  });
});

describe("soapFaults: its options", () => {
  it.each([
    ["no options", undefined, "ERR_SVC_SOAP_ENVELOPE_PATH"],
    ["a relative path", { path: "ws/customer" }, "ERR_SVC_SOAP_ENVELOPE_PATH"],
    ["an empty list", { path: [] }, "ERR_SVC_SOAP_ENVELOPE_PATH"],
    ["a path with a query", { path: "/ws?wsdl" }, "ERR_SVC_SOAP_ENVELOPE_PATH"],
    ["versions 1.3", { path: PATH, versions: ["1.3"] }, "ERR_SVC_SOAP_ENVELOPE_VERSIONS"],
    ["a misspelt key", { path: PATH, version: ["1.1"] }, "ERR_SVC_SOAP_ENVELOPE_OPTIONS"],
  ])("%s → TypeError %s", (_name, given, code) => {
    expect(() => soapFaults(given as never)).toThrow(expect.objectContaining({ name: "TypeError", code }));
  });
});

describe("@svc/soap-envelope/fastify: no error path of its own", () => {
  it("faults: true (the option 0.1 had) → TypeError ERR_SVC_SOAP_ENVELOPE_OPTIONS at register", async () => {
    const app = Fastify();
    app.register(soap, { ...options(), prefix: PATH, faults: true } as never);
    try {
      await expect(app.ready()).rejects.toMatchObject({
        name: "TypeError",
        code: "ERR_SVC_SOAP_ENVELOPE_OPTIONS",
        message: expect.stringContaining('"faults"'),
      });
    } finally {
      await app.close();
    }
  });
  it("a refusal in front goes to the application's error handler (here the JSON record)", async () => {
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
