import type { IncomingMessage, ServerResponse } from "node:http";
import { type Gate, HttpError, type Passage } from "@svc/kernel";
import { expressGate } from "@svc/kernel/express";
import { fastifyGate } from "@svc/kernel/fastify";
import { fetchGate } from "@svc/kernel/fetch";
import { nodeGate } from "@svc/kernel/node";
import { conformance, type Mounts, type Row } from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { expect } from "vitest";
import { allowedMethods, errorHandler, methodNotAllowed, notFound } from "../src/express.js";
import { errorPlugin, methodNotAllowedError } from "../src/fastify.js";
import { allowedMethods as fetchAllowedMethods, notFoundHandler, onError } from "../src/fetch.js";
import { malformedBody } from "../src/index.js";
import { errorResponder, notFoundError } from "../src/node.js";

const TIME = "2026-01-02T03:04:05.678Z";
/** The same options on every framework: a fixed clock, a quiet logger. */
const options = { now: () => new Date(TIME), logger: { error() {} } };

/** A gate in front of `/gated/...`: lets the request through with its usage fields. */
const gate: Gate = (view) => {
  if (!view.url?.startsWith("/gated/")) return undefined;
  return {
    fields: { "RateLimit-Policy": '"default";q=10;w=60', RateLimit: '"default";r=0;t=30' },
    vary: ["Authorization"],
  } satisfies Passage;
};

/** The routes, once, framework-free: each framework's route calls one. */
const routes = {
  employee: (id: string) => {
    if (id !== "7") throw HttpError.notFound(`Employee ${id} does not exist`);
    return { id: 7, name: "Ada" };
  },
  limited: () => {
    throw HttpError.tooManyRequests(30, "slow down");
  },
  boom: () => {
    throw new Error("password=hunter2 rejected by db-7.internal");
  },
  private: () => {
    throw HttpError.unauthorized("Sign in first", { headers: { "WWW-Authenticate": 'Bearer realm="api"' } });
  },
};
const ALLOWED = ["GET", "HEAD"];
/** `/reports`: GET and HEAD, OPTIONS answered (`allowedMethods` on Express, the router on Fastify). */
const REPORTS_ALLOW = ["GET", "HEAD", "OPTIONS"];
/** The body limit of `POST /small`, set each framework's own way. */
const SMALL = 64;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

const mounts: Mounts = {
  express() {
    const app = express();
    app.disable("x-powered-by");
    app.use(express.json());
    app.use(expressGate(gate));
    app.get("/employees/:id", (req, res) => {
      res.json(routes.employee(req.params.id as string));
    });
    app.route("/employees").get((_req, res) => {
      res.json([]);
    });
    app.all("/employees", methodNotAllowed(ALLOWED));
    app.route("/reports").get((_req, res) => {
      res.json([]);
    });
    app.all("/reports", allowedMethods(ALLOWED));
    app.get(["/limited", "/gated/limited"], routes.limited);
    app.get("/boom", routes.boom);
    app.get("/private", routes.private);
    app.post("/echo", (req, res) => {
      res.json(req.body);
    });
    app.post("/small", express.text({ limit: SMALL }), (_req, res) => {
      res.send("ok");
    });
    app.use(notFound());
    app.use(errorHandler(options));
    return app;
  },
  node() {
    const sendError = errorResponder(options);
    const guard = nodeGate(gate);
    return (req: IncomingMessage, res: ServerResponse) => {
      const run = async () => {
        if (await guard(req, res)) return;
        const path = (req.url ?? "/").split("?")[0] as string;
        const read = req.method === "GET" || req.method === "HEAD";
        const id = /^\/employees\/([^/]+)$/.exec(path)?.[1];
        if (read && id !== undefined) return sendJson(res, routes.employee(id));
        if (path === "/employees") {
          if (!read) throw methodNotAllowedError(req, ALLOWED);
          return sendJson(res, []);
        }
        if (path === "/reports") {
          if (read) return sendJson(res, []);
          if (req.method !== "OPTIONS") throw methodNotAllowedError(req, REPORTS_ALLOW);
          res.writeHead(204, { Allow: REPORTS_ALLOW.join(", ") });
          return res.end();
        }
        if (read && (path === "/limited" || path === "/gated/limited")) return routes.limited();
        if (read && path === "/boom") return routes.boom();
        if (read && path === "/private") return routes.private();
        if (req.method === "POST" && path === "/small") {
          // The application's own limit, checked before reading: the body is left unread.
          if (Number(req.headers["content-length"]) > SMALL) throw HttpError.contentTooLarge();
          return sendJson(res, await readBody(req));
        }
        if (req.method === "POST" && path === "/echo") {
          const text = await readBody(req);
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch (err) {
            throw malformedBody(err);
          }
          return sendJson(res, body);
        }
        throw notFoundError(req);
      };
      run().catch((err) => sendError(err, req, res));
    };
  },
  async fastify() {
    const app = Fastify();
    await app.register(errorPlugin, options);
    app.addHook("onRequest", fastifyGate(gate));
    app.get("/employees/:id", async (request) => routes.employee((request.params as { id: string }).id));
    app.get("/employees", async () => []);
    app.route({
      method: ["DELETE", "POST", "PUT", "PATCH"],
      url: "/employees",
      handler: async (request) => {
        throw methodNotAllowedError(request, ALLOWED);
      },
    });
    // No route for the other methods: the plugin's not-found handler finds GET and HEAD.
    app.get("/reports", async () => []);
    app.get("/limited", routes.limited);
    app.get("/gated/limited", routes.limited);
    app.get("/boom", routes.boom);
    app.get("/private", routes.private);
    app.post("/echo", async (request) => request.body);
    app.post("/small", { bodyLimit: SMALL }, async () => "ok");
    return app;
  },
  fetch() {
    const app = new Hono();
    app.use(fetchGate(gate));
    app.get("/employees/:id", (c) => c.json(routes.employee(c.req.param("id"))));
    app.get("/employees", (c) => c.json([]));
    app.all("/employees", (c) => {
      throw methodNotAllowedError({ method: c.req.method, url: c.req.path }, ALLOWED);
    });
    app.get("/reports", (c) => c.json([]));
    app.all("/reports", fetchAllowedMethods(REPORTS_ALLOW));
    app.get("/limited", routes.limited);
    app.get("/gated/limited", routes.limited);
    app.get("/boom", routes.boom);
    app.get("/private", routes.private);
    app.post("/echo", async (c) => c.json(await c.req.json()));
    // Hono's own limit: an HTTPException(413), the body left unread.
    app.post("/small", bodyLimit({ maxSize: SMALL }), (c) => c.text("ok"));
    app.notFound(notFoundHandler(options));
    app.onError(onError(options));
    return app.fetch;
  },
};

function sendJson(res: ServerResponse, data: unknown): void {
  const body = JSON.stringify(data);
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(body);
}

const JSON_RECORD = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
  vary: "Accept",
};

const LIMITED = {
  timestamp: TIME,
  status: 429,
  error: "Too Many Requests",
  message: "slow down",
  path: "/limited",
};

const rows: Row[] = [
  {
    name: "a body over the route's limit → 413 record",
    request: {
      method: "POST",
      path: "/small",
      headers: { "Content-Type": "text/plain" },
      body: "x".repeat(SMALL * 4),
    },
    status: 413,
    // Whether the connection stays is the refused-body policy's (test/unread-body.test.ts): a
    // remainder this small is discarded, except where Fastify's own bodyLimit closes it first.
    headers: { "cache-control": "no-store" },
    body: (r) => expect(JSON.parse(r.text)).toMatchObject({ status: 413, path: "/small" }),
  },
  {
    name: "an unknown route → 404 record",
    request: { path: "/nowhere?page=2" },
    status: 404,
    headers: JSON_RECORD,
    body: {
      timestamp: TIME,
      status: 404,
      error: "Not Found",
      message: "No resource matches GET /nowhere",
      path: "/nowhere",
    },
  },
  {
    name: "DELETE on a GET resource → 405 with Allow",
    request: { method: "DELETE", path: "/employees" },
    status: 405,
    headers: { ...JSON_RECORD, allow: "GET, HEAD" },
    body: {
      timestamp: TIME,
      status: 405,
      error: "Method Not Allowed",
      message: "Method DELETE is not allowed on /employees",
      path: "/employees",
    },
  },
  {
    name: "PUT on a resource that answers GET, HEAD, OPTIONS → 405 with Allow: GET, HEAD, OPTIONS",
    request: { method: "PUT", path: "/reports" },
    status: 405,
    headers: { ...JSON_RECORD, allow: "GET, HEAD, OPTIONS" },
    body: {
      timestamp: TIME,
      status: 405,
      error: "Method Not Allowed",
      message: "Method PUT is not allowed on /reports",
      path: "/reports",
    },
  },
  {
    // RFC 9110 §15.5.6: the resource has no QUERY; the QUERY method's own Content-Type rule
    // (RFC 10008 §2) is for a resource that processes it.
    name: "QUERY without Content-Type on that resource → 405 with Allow: GET, HEAD, OPTIONS",
    request: { method: "QUERY", path: "/reports" },
    status: 405,
    headers: { ...JSON_RECORD, allow: "GET, HEAD, OPTIONS" },
    body: {
      timestamp: TIME,
      status: 405,
      error: "Method Not Allowed",
      message: "Method QUERY is not allowed on /reports",
      path: "/reports",
    },
  },
  {
    name: "QUERY without Content-Type on an unknown route → 404 record",
    request: { method: "QUERY", path: "/nowhere" },
    status: 404,
    headers: JSON_RECORD,
    body: {
      timestamp: TIME,
      status: 404,
      error: "Not Found",
      message: "No resource matches QUERY /nowhere",
      path: "/nowhere",
    },
  },
  {
    name: "OPTIONS on that resource → 204 with the same Allow, no content",
    request: { method: "OPTIONS", path: "/reports" },
    status: 204,
    headers: { allow: "GET, HEAD, OPTIONS" },
    body: "",
  },
  {
    name: "a thrown HttpError's own fields → Retry-After",
    request: { path: "/limited" },
    status: 429,
    headers: { ...JSON_RECORD, "retry-after": "30" },
    body: LIMITED,
  },
  {
    name: "a thrown plain Error → 500 that reveals nothing",
    request: { path: "/boom" },
    status: 500,
    headers: JSON_RECORD,
    body: (r) => {
      expect(r.text).not.toMatch(/hunter2|db-7|Error:/);
      expect(JSON.parse(r.text)).toEqual({
        timestamp: TIME,
        status: 500,
        error: "Internal Server Error",
        message: "An unexpected error occurred",
        path: "/boom",
      });
    },
  },
  {
    name: "Accept: application/problem+json → problem details",
    request: { path: "/employees/8", headers: { Accept: "application/problem+json" } },
    status: 404,
    headers: { "content-type": "application/problem+json; charset=utf-8", vary: "Accept" },
    body: {
      type: "about:blank",
      title: "Not Found",
      status: 404,
      detail: "Employee 8 does not exist",
      instance: "/employees/8",
      timestamp: TIME,
    },
  },
  {
    name: "Accept: application/xml → the XML record",
    request: { path: "/limited", headers: { Accept: "application/xml" } },
    status: 429,
    headers: { "content-type": "application/xml; charset=utf-8", "retry-after": "30" },
    body: (r) => {
      expect(r.text).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"\?>/);
      expect(r.text).toContain("<status>429</status>");
      expect(r.text).toContain("<message>slow down</message>");
      expect(r.text).toContain("<path>/limited</path>");
    },
  },
  {
    name: "HEAD of an error → its fields, its length, no content",
    request: { method: "HEAD", path: "/limited" },
    status: 429,
    headers: {
      ...JSON_RECORD,
      "retry-after": "30",
      "content-length": String(JSON.stringify(LIMITED).length),
    },
    body: "",
  },
  {
    name: "401 with its WWW-Authenticate challenge",
    request: { path: "/private" },
    status: 401,
    headers: { ...JSON_RECORD, "www-authenticate": 'Bearer realm="api"' },
    body: (r) => expect(JSON.parse(r.text)).toMatchObject({ status: 401, message: "Sign in first" }),
  },
  {
    name: "an invalid JSON request body → 400 record",
    request: {
      method: "POST",
      path: "/echo",
      headers: { "Content-Type": "application/json" },
      body: '{"name": "Ada",',
    },
    status: 400,
    headers: JSON_RECORD,
    body: {
      timestamp: TIME,
      status: 400,
      error: "Bad Request",
      message: "The request body is malformed",
      path: "/echo",
    },
  },
  {
    name: "Accept: application/problem+json on an invalid JSON body → its problem code",
    request: {
      method: "POST",
      path: "/echo",
      headers: { "Content-Type": "application/json", Accept: "application/problem+json" },
      body: "{",
    },
    status: 400,
    body: (r) => expect(JSON.parse(r.text)).toMatchObject({ status: 400, code: "entity.parse.failed" }),
  },
  {
    name: "a gate's passage fields stay on the route's error response",
    request: { path: "/gated/limited" },
    status: 429,
    headers: {
      ...JSON_RECORD,
      "retry-after": "30",
      "ratelimit-policy": '"default";q=10;w=60',
      ratelimit: '"default";r=0;t=30',
      vary: /^(Authorization, Accept|Accept, Authorization)$/,
    },
    body: (r) => expect(JSON.parse(r.text)).toMatchObject({ status: 429, path: "/gated/limited" }),
  },
];

conformance("@svc/errors", mounts, rows);
