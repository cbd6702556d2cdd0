import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { byPathVersioner } from "@svc/test-utils";
import {
  conformance,
  errorStatus,
  fallbackErrors,
  fastifyPipelineApp,
  honoPipelineApp,
  type Mounts,
  type Row,
} from "@svc/test-utils/conformance";
import express, { type Request } from "express";
import Fastify, { type FastifyRequest } from "fastify";
import { Hono } from "hono";
import { expect } from "vitest";
import { expressAdapter, expressGate } from "../src/express.js";
import { fastifyAdapter, fastifyGate, fastifyTrustProxy, fastifyView } from "../src/fastify.js";
import { fetchAdapter, fetchGate, fetchView, honoConnection } from "../src/fetch.js";
import {
  type ApiVersion,
  type Coder,
  compileTrust,
  createPipeline,
  type ForwardedHeaders,
  type Gate,
  HttpError,
  type Idempotency,
  type Passage,
  type RequestView,
  repeatsField,
  reply,
  requestFacts,
  type TrustHop,
  type TrustOption,
} from "../src/index.js";
import { nodeAdapter, nodeGate } from "../src/node.js";

/** A gate of every kind: a passage (a field and a Vary), an answer, a refusal. */
const gate: Gate = (view) => {
  if (view.headers["x-answer"] !== undefined) {
    return {
      answer: {
        status: 200,
        fields: { "content-type": "text/plain" },
        vary: [],
        body: Buffer.from("answered"),
      },
    };
  }
  if (view.headers["x-refuse"] !== undefined) throw HttpError.tooManyRequests(30, "slow down");
  return { fields: { "X-Gate": "passed" }, vary: ["X-Answer"] } satisfies Passage;
};

const employees = new Map([[7, { id: 7, name: "Ada" }]]);

/** The routes, once, framework-free: what each framework's route hands its handler. */
const routes = {
  employee: (id: string, version: ApiVersion | undefined) => {
    const employee = employees.get(Number(id));
    if (employee === undefined) throw HttpError.notFound(`employee ${id} does not exist`);
    return { ...employee, version };
  },
  create: () => reply({ id: 8 }, { status: 201, headers: { Location: "/employees/8" } }),
  keyed: () => reply({ id: 9 }, { status: 201 }),
  empty: () => undefined,
  stream: () => reply.bytes(Readable.from([Buffer.from("a"), Buffer.from("bc")]), "text/plain"),
  linked: () => reply({ ok: true }, { headers: { Link: "</next>; rel=next" } }),
};

/**
 * Steps that refuse a repeated singleton field, as `@svc/negotiate` refuses two `Content-Type`
 * lines before the handler and `@svc/idempotency` two `Idempotency-Key` lines as it begins: what
 * they read is the request's field lines as received, which each adapter must hand over.
 */
const singletons: Coder = {
  preflight(request) {
    if (repeatsField(request.view.rawHeaders, "content-type"))
      throw HttpError.badRequest("two Content-Type lines", { code: "repeated_content_type" });
  },
  choose: () => "identity",
  encode: (_coding, body) => body,
};
const keyed: Idempotency = {
  async begin(request) {
    if (repeatsField(request.view.rawHeaders, "idempotency-key"))
      throw HttpError.badRequest("two Idempotency-Key lines", { code: "repeated_key" });
    return undefined;
  },
};

function pipeline() {
  return createPipeline({ versioning: byPathVersioner, coding: singletons });
}

const mounts: Mounts = {
  express() {
    const svc = expressAdapter(pipeline());
    const app = express();
    app.disable("x-powered-by");
    app.use(svc.prepare);
    app.use(expressGate(gate));
    app.get(
      "/employees/:id",
      svc.handle((req: Request, ctx) => routes.employee(req.params.id as string, ctx.version)),
    );
    app.post("/employees", svc.handle(routes.create));
    app.post("/keyed", svc.handle(routes.keyed, { idempotency: keyed }));
    app.get("/empty", svc.handle(routes.empty));
    app.get("/stream", svc.handle(routes.stream));
    app.get("/linked", svc.handle(routes.linked));
    app.use(fallbackErrors.express);
    return app;
  },
  node() {
    const svc = nodeAdapter(pipeline());
    const guard = nodeGate(gate);
    return (req: IncomingMessage, res: ServerResponse) => {
      const run = async () => {
        const { path } = await svc.prepare(req, res);
        if (await guard(req, res)) return;
        const id = /^\/employees\/([^/]+)$/.exec(path)?.[1];
        const read = req.method === "GET" || req.method === "HEAD";
        if (read && id !== undefined) {
          return svc.respond(req, res, (ctx) => routes.employee(id, ctx.version));
        }
        if (req.method === "POST" && path === "/keyed") {
          return svc.respond(req, res, routes.keyed, { idempotency: keyed });
        }
        const route =
          req.method === "POST" && path === "/employees"
            ? routes.create
            : read
              ? { "/empty": routes.empty, "/stream": routes.stream, "/linked": routes.linked }[path]
              : undefined;
        if (route === undefined) throw HttpError.notFound();
        return svc.respond(req, res, route);
      };
      run().catch((err) => fallbackErrors.node(err, req, res));
    };
  },
  fastify() {
    const svc = fastifyAdapter(pipeline());
    const app = fastifyPipelineApp(svc);
    app.addHook("onRequest", fastifyGate(gate));
    app.get(
      "/employees/:id",
      svc.handle((request: FastifyRequest, ctx) =>
        routes.employee((request.params as { id: string }).id, ctx.version),
      ),
    );
    app.post("/employees", svc.handle(routes.create));
    app.post("/keyed", svc.handle(routes.keyed, { idempotency: keyed }));
    app.get("/empty", svc.handle(routes.empty));
    app.get("/stream", svc.handle(routes.stream));
    app.get("/linked", svc.handle(routes.linked));
    return app;
  },
  fetch() {
    const svc = fetchAdapter(pipeline());
    const app = honoPipelineApp(svc);
    app.use(fetchGate(gate));
    app.get("/employees/:id", (c) =>
      svc.respond(c.req.raw, (ctx) => routes.employee(c.req.param("id"), ctx.version)),
    );
    app.post("/employees", (c) => svc.respond(c.req.raw, routes.create));
    app.post("/keyed", (c) => svc.respond(c.req.raw, routes.keyed, { route: { idempotency: keyed } }));
    app.get("/empty", (c) => svc.respond(c.req.raw, routes.empty));
    app.get("/stream", (c) => svc.respond(c.req.raw, routes.stream));
    app.get("/linked", (c) => svc.respond(c.req.raw, routes.linked));
    return app.fetch;
  },
};

const rows: Row[] = [
  {
    name: "data is 200 JSON with its length",
    request: { path: "/employees/7" },
    status: 200,
    headers: {
      "content-type": "application/json",
      "content-length": "33",
      "api-supported-versions": "1, 2",
      "x-gate": "passed",
      vary: "X-Answer",
    },
    body: { id: 7, name: "Ada", version: 1 },
  },
  {
    name: "HEAD has the GET's fields and no content",
    request: { method: "HEAD", path: "/employees/7" },
    status: 200,
    headers: { "content-type": "application/json", "content-length": "33" },
    body: "",
  },
  {
    name: "a /v2 prefix is stripped before routing and decides the version",
    request: { path: "/v2/employees/7" },
    status: 200,
    body: { id: 7, name: "Ada", version: 2 },
  },
  {
    // RFC 9112 §3.2.2: an origin server MUST accept the absolute-form, and routes by its path.
    name: "GET http://api.example/employees/7 (absolute-form) → routed by its path",
    request: { path: "http://api.example/employees/7" },
    status: 200,
    body: { id: 7, name: "Ada", version: 1 },
  },
  {
    name: "a version the API lacks is refused with the version's fields",
    request: { path: "/v3/employees/7" },
    status: 404,
    headers: { "api-supported-versions": "1, 2" },
    body: errorStatus(404),
  },
  {
    name: "a handler's HttpError reaches the error handler",
    request: { path: "/employees/1" },
    status: 404,
    headers: { "x-gate": "passed" },
    body: errorStatus(404),
  },
  {
    name: "a reply's status and fields",
    request: {
      method: "POST",
      path: "/employees",
      headers: { "content-type": "application/json" },
      body: "{}",
    },
    status: 201,
    headers: { location: "/employees/8" },
    body: { id: 8 },
  },
  {
    name: "no result is a 204 without representation fields",
    request: { path: "/empty" },
    status: 204,
    headers: { "content-type": null, "content-length": null },
    body: "",
  },
  {
    name: "a stream is sent whole, without a length",
    request: { path: "/stream" },
    status: 200,
    headers: { "content-type": "text/plain", "content-length": null },
    body: "abc",
  },
  {
    name: "two Content-Type lines → 400 from a step before the handler",
    request: {
      method: "POST",
      path: "/employees",
      headers: [
        ["Content-Type", "application/json"],
        ["Content-Type", "application/json"],
      ],
      body: "{}",
    },
    status: 400,
    body: errorStatus(400),
  },
  {
    name: "two Idempotency-Key lines → 400 from a route's step",
    request: {
      method: "POST",
      path: "/keyed",
      headers: [
        ["Content-Type", "application/json"],
        ["Idempotency-Key", '"a"'],
        ["Idempotency-Key", '"b"'],
      ],
      body: "{}",
    },
    status: 400,
    body: errorStatus(400),
  },
  {
    name: "one Idempotency-Key line → the route",
    request: {
      method: "POST",
      path: "/keyed",
      headers: [
        ["Content-Type", "application/json"],
        ["Idempotency-Key", '"a"'],
      ],
      body: "{}",
    },
    status: 201,
    body: { id: 9 },
  },
  {
    name: "a reply's Link",
    request: { path: "/linked" },
    status: 200,
    headers: { link: "</next>; rel=next" },
  },
  {
    name: "a gate's answer replaces the route",
    request: { path: "/employees/7", headers: { "X-Answer": "1" } },
    status: 200,
    headers: { "content-type": "text/plain", "x-gate": null },
    body: "answered",
  },
  {
    name: "a gate's refusal is the error handler's, with its headers",
    request: { path: "/employees/7", headers: { "X-Refuse": "1" } },
    status: 429,
    headers: { "retry-after": "30" },
    body: (r) => expect(JSON.parse(r.text)).toEqual({ status: 429, message: "slow down" }),
  },
];

conformance("@svc/kernel pipeline and gates", mounts, rows);

/**
 * A gate that reports the request's facts (`requestFacts` of its view) in the response's fields:
 * behind the trust `trust` names, or with none given, the framework's own setting.
 */
function factsGate(trust?: TrustHop, family?: ForwardedHeaders): Gate {
  return (view: RequestView) => {
    const facts = requestFacts(view, trust, family);
    return { fields: { "X-Origin": facts.origin, "X-Client": facts.client }, vary: [...facts.vary] };
  };
}

/**
 * The same trust set the way each framework sets it: Express's `trust proxy` setting, Fastify's
 * `trustProxy` server option, and the option itself where the framework has none (node:http, Fetch).
 * `peerTrusted`: whether `setting` trusts the harness's peer (the loopback address). `family`: the
 * forwarded fields read.
 */
function trustMounts(setting: string, peerTrusted: boolean, family?: ForwardedHeaders): Mounts {
  const hello = {
    status: 200,
    fields: { "content-type": "text/plain" },
    vary: [],
    body: Buffer.from("hello"),
  };
  return {
    express() {
      const app = express();
      app.set("trust proxy", setting);
      app.use(expressGate(factsGate(undefined, family)));
      app.get("/", (_req, res) => {
        res.type("text/plain").send("hello");
      });
      app.use(fallbackErrors.express);
      return app;
    },
    node() {
      const guard = nodeGate(factsGate(compileTrust(setting), family));
      return (req: IncomingMessage, res: ServerResponse) => {
        guard(req, res)
          .then(() => {
            res.setHeader("Content-Type", "text/plain");
            res.end("hello");
          })
          .catch((err) => fallbackErrors.node(err, req, res));
      };
    },
    fastify() {
      const app = Fastify({ trustProxy: setting });
      app.addHook("onRequest", fastifyGate(factsGate(undefined, family)));
      app.get("/", async (request, replyTo) => {
        // The route's own reading agrees with Fastify's (which reads no RFC 7239 Forwarded). Before
        // Fastify 5.8.3, request.protocol took X-Forwarded-Proto from any peer once trustProxy was
        // set, so on the floor the scheme is compared only where the peer is trusted.
        if (family !== "forwarded") {
          const facts = requestFacts(fastifyView(request));
          if (peerTrusted || process.env.FASTIFY_FLOOR !== "1") expect(facts.scheme).toBe(request.protocol);
          expect(facts.client).toBe(request.ip);
        }
        return replyTo.type("text/plain").send("hello");
      });
      app.setErrorHandler(fallbackErrors.fastify);
      return app;
    },
    fetch() {
      const app = new Hono();
      app.use(fetchGate(factsGate(compileTrust(setting), family)));
      app.get("/", () => new Response(hello.body, { headers: hello.fields }));
      app.onError((err, c) => fallbackErrors.fetch(err, c));
      return app.fetch;
    },
  };
}

const forwardedRows = (trusted: boolean): Row[] => [
  {
    name: `X-Forwarded-Proto: https, X-Forwarded-For from ${trusted ? "a trusted" : "an untrusted"} peer`,
    request: {
      path: "/",
      headers: [
        ["Host", "api.example.com"],
        ["X-Forwarded-Proto", "https"],
        ["X-Forwarded-For", "203.0.113.9"],
      ],
    },
    status: 200,
    headers: {
      "x-origin": trusted ? "https://api.example.com" : "http://api.example.com",
      "x-client": trusted ? "203.0.113.9" : "127.0.0.1",
    },
    body: "hello",
  },
  {
    name: `Forwarded: proto=https;host=… from ${trusted ? "a trusted" : "an untrusted"} peer → not read (X-Forwarded-* is)`,
    request: {
      path: "/",
      headers: [
        ["Host", "internal.example"],
        ["Forwarded", "for=203.0.113.9;proto=https;host=api.example.com"],
      ],
    },
    status: 200,
    headers: { "x-origin": "http://internal.example", "x-client": "127.0.0.1" },
    body: "hello",
  },
  {
    name: `X-Forwarded-Host: api.example.com, X-Forwarded-Proto: https, a client's Forwarded: host=evil.example;proto=http from ${trusted ? "a trusted" : "an untrusted"} peer`,
    request: {
      path: "/",
      headers: [
        ["Host", "internal.example"],
        ["Forwarded", "host=evil.example;proto=http"],
        ["X-Forwarded-Host", "api.example.com"],
        ["X-Forwarded-Proto", "https"],
      ],
    },
    status: 200,
    headers: {
      "x-origin": trusted ? "https://api.example.com" : "http://internal.example",
      vary: trusted ? "X-Forwarded-Proto, X-Forwarded-Host, X-Forwarded-For" : null,
    },
    body: "hello",
  },
  {
    name: `X-Forwarded-Host from ${trusted ? "a trusted" : "an untrusted"} peer`,
    request: {
      path: "/",
      headers: [
        ["Host", "internal.example:8080"],
        ["X-Forwarded-Host", "api.example.com"],
      ],
    },
    status: 200,
    headers: {
      "x-origin": trusted ? "http://api.example.com" : "http://internal.example:8080",
      vary: trusted ? /X-Forwarded-Host/ : null,
    },
  },
];

// The harness connects from the loopback address: trusted by "loopback", not by "10.0.0.0/8".
conformance(
  "@svc/kernel request facts behind the framework's trust (loopback)",
  trustMounts("loopback", true),
  forwardedRows(true),
);
conformance(
  "@svc/kernel request facts behind the framework's trust (10.0.0.0/8)",
  trustMounts("10.0.0.0/8", false),
  forwardedRows(false),
);

/** With `forwardedHeaders: "forwarded"`: RFC 7239 `Forwarded` alone, `X-Forwarded-*` never read. */
const rfc7239Rows: Row[] = [
  {
    name: "Forwarded: for=203.0.113.9;proto=https;host=api.example.com → its origin and client, Vary: Forwarded",
    request: {
      path: "/",
      headers: [
        ["Host", "internal.example"],
        ["Forwarded", "for=203.0.113.9;proto=https;host=api.example.com"],
      ],
    },
    status: 200,
    headers: { "x-origin": "https://api.example.com", "x-client": "203.0.113.9", vary: "Forwarded" },
    body: "hello",
  },
  {
    name: "Forwarded: host=api.example.com;proto=https, a client's X-Forwarded-Host: evil.example, X-Forwarded-Proto: http, X-Forwarded-For",
    request: {
      path: "/",
      headers: [
        ["Host", "internal.example"],
        ["Forwarded", "for=203.0.113.9;host=api.example.com;proto=https"],
        ["X-Forwarded-Host", "evil.example"],
        ["X-Forwarded-Proto", "http"],
        ["X-Forwarded-For", "192.0.2.66"],
      ],
    },
    status: 200,
    headers: { "x-origin": "https://api.example.com", "x-client": "203.0.113.9", vary: "Forwarded" },
    body: "hello",
  },
];

conformance(
  '@svc/kernel request facts behind the framework\'s trust (loopback), forwardedHeaders "forwarded"',
  trustMounts("loopback", true, "forwarded"),
  rfc7239Rows,
);

/**
 * One trust policy, set the way each framework takes it, Express's meaning everywhere: Express's
 * `trust proxy` setting, Fastify's `trustProxy` given `fastifyTrustProxy(setting)`, `compileTrust`
 * on node:http and Fetch. Each reports the client `requestFacts` reads (`X-Client`) and the
 * framework's own (`X-Ip`: Express's `req.ip`, Fastify's `request.ip`).
 */
function clientMounts(setting: TrustOption): Mounts {
  const text = { "content-type": "text/plain" };
  return {
    express() {
      const app = express();
      app.set("trust proxy", setting);
      app.use(expressGate(factsGate()));
      app.get("/", (req, res) => {
        res.set("X-Ip", req.ip).type("text/plain").send("hello");
      });
      app.use(fallbackErrors.express);
      return app;
    },
    node() {
      const guard = nodeGate(factsGate(compileTrust(setting)));
      return (req: IncomingMessage, res: ServerResponse) => {
        guard(req, res)
          .then(() => {
            res.setHeader("X-Ip", requestFacts(req, compileTrust(setting)).client);
            res.setHeader("Content-Type", "text/plain");
            res.end("hello");
          })
          .catch((err) => fallbackErrors.node(err, req, res));
      };
    },
    fastify() {
      const app = Fastify({ trustProxy: fastifyTrustProxy(setting) });
      app.addHook("onRequest", fastifyGate(factsGate()));
      app.get("/", async (request, replyTo) =>
        replyTo.header("X-Ip", request.ip).type("text/plain").send("hello"),
      );
      app.setErrorHandler(fallbackErrors.fastify);
      return app;
    },
    fetch() {
      const app = new Hono();
      const trust = compileTrust(setting);
      app.use(fetchGate(factsGate(trust)));
      app.get("/", (c) => {
        const client = requestFacts(fetchView(c.req.raw, honoConnection(c)), trust).client;
        return new Response("hello", { headers: { ...text, "X-Ip": client } });
      });
      app.onError((err, c) => fallbackErrors.fetch(err, c));
      return app.fetch;
    },
  };
}

// The harness's peer is 127.0.0.1; the proxies it stands for appended 10.0.0.2, then the chain
// before it 203.0.113.9 and 192.0.2.1.
const CHAIN = "192.0.2.1, 203.0.113.9, 10.0.0.2";
for (const [label, setting, client] of [
  ["a hop count, 1", 1, "10.0.0.2"],
  ["a hop count, 2", 2, "203.0.113.9"],
  ['a CIDR list, "127.0.0.0/8, 10.0.0.0/8"', "127.0.0.0/8, 10.0.0.0/8", "203.0.113.9"],
  ["true", true, "192.0.2.1"],
  ["false", false, "127.0.0.1"],
  [
    "a function, (address) => address !== 203.0.113.9",
    (address: string) => address !== "203.0.113.9",
    "203.0.113.9",
  ],
] as const) {
  conformance(`@svc/kernel one client on every framework, trust ${label}`, clientMounts(setting), [
    {
      name: `X-Forwarded-For: ${CHAIN} → client ${client}, the framework's ip too`,
      request: { path: "/", headers: { "X-Forwarded-For": CHAIN } },
      status: 200,
      headers: { "x-client": client, "x-ip": client },
      body: "hello",
    },
  ]);
}
