import type { IncomingMessage, ServerResponse } from "node:http";
import { createPipeline, HttpError, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { fastifyAdapter } from "@svc/kernel/fastify";
import { fetchAdapter } from "@svc/kernel/fetch";
import { nodeAdapter } from "@svc/kernel/node";
import { compression } from "@svc/negotiate";
import {
  conformance,
  errorStatus,
  fallbackErrors,
  fastifyPipelineApp,
  honoPipelineApp,
  type Mounts,
  type Row,
} from "@svc/test-utils/conformance";
import express from "express";
import { preconditions as expressPreconditions } from "../src/express.js";
import { preconditions as fastifyPreconditions } from "../src/fastify.js";
import { preconditions as fetchPreconditions } from "../src/fetch.js";
import { representationTag, validators } from "../src/index.js";
import { preconditions as nodePreconditions } from "../src/node.js";

// validators() through the kernel's pipeline adapter of each framework, and the pipeline-less
// preconditions() of each entry on a plain route.

const employee = { id: 7, name: "Ada", department: "R&D" };
const modified = new Date("2026-01-02T03:04:05Z");
const json = JSON.stringify(employee);
const strong = representationTag("application/json", undefined, json);
const PLAIN_TAG = '"p1"';

/** The routes, once, framework-free. */
const routes = {
  read: () => reply(employee, { lastModified: modified }),
  write: async (check: (current: { data: unknown; lastModified: Date }) => Promise<void>) => {
    await check({ data: employee, lastModified: modified });
    return employee;
  },
};
const current = () => ({ etag: PLAIN_TAG, lastModified: modified });

const pipeline = () => createPipeline({ validators: validators(), coding: compression({ threshold: 0 }) });

const mounts: Mounts = {
  express() {
    const svc = expressAdapter(pipeline());
    const app = express();
    app.use(svc.prepare);
    app.get("/employees/7", svc.handle(routes.read));
    app.put(
      "/employees/7",
      svc.handle((req: express.Request) => routes.write((now) => svc.preconditions(req, now))),
    );
    const guard = expressPreconditions({ current });
    app.get("/plain/7", guard, (_req, res) => {
      res.setHeader("ETag", PLAIN_TAG);
      res.type("text/plain").send("plain");
    });
    app.put("/plain/7", guard, (_req, res) => {
      res.status(204).end();
    });
    app.use(fallbackErrors.express);
    return app;
  },
  node() {
    const svc = nodeAdapter(pipeline());
    const guard = nodePreconditions({ current });
    return (req: IncomingMessage, res: ServerResponse) => {
      const run = async () => {
        const { path } = await svc.prepare(req, res);
        if (path === "/employees/7" && (req.method === "GET" || req.method === "HEAD"))
          return svc.respond(req, res, routes.read);
        if (path === "/employees/7" && req.method === "PUT")
          return svc.respond(req, res, () => routes.write((now) => svc.preconditions(req, now)));
        if (path === "/plain/7") {
          if (await guard(req, res)) return;
          if (req.method === "PUT") {
            res.statusCode = 204;
            res.end();
            return;
          }
          res.setHeader("ETag", PLAIN_TAG);
          res.setHeader("Content-Type", "text/plain");
          res.end("plain");
          return;
        }
        throw HttpError.notFound();
      };
      run().catch((err) => fallbackErrors.node(err, req, res));
    };
  },
  fastify() {
    const svc = fastifyAdapter(pipeline());
    const app = fastifyPipelineApp(svc);
    app.get("/employees/7", svc.handle(routes.read));
    app.put(
      "/employees/7",
      svc.handle((request) => routes.write((now) => svc.preconditions(request, now))),
    );
    const guard = fastifyPreconditions({ current });
    app.get("/plain/7", { onRequest: guard }, (_request, reply) =>
      reply.header("ETag", PLAIN_TAG).type("text/plain").send("plain"),
    );
    app.put("/plain/7", { onRequest: guard }, (_request, reply) => reply.code(204).send());
    return app;
  },
  fetch() {
    const svc = fetchAdapter(pipeline());
    const app = honoPipelineApp(svc);
    app.get("/employees/7", (c) => svc.respond(c.req.raw, routes.read));
    app.put("/employees/7", (c) =>
      svc.respond(c.req.raw, () => routes.write((now) => svc.preconditions(c.req.raw, now))),
    );
    const guard = fetchPreconditions({ current });
    app.get("/plain/7", guard, (c) => c.text("plain", 200, { ETag: PLAIN_TAG }));
    app.put("/plain/7", guard, (c) => c.body(null, 204));
    return app.fetch;
  },
};

const rows: Row[] = [
  {
    name: "GET → 200 with the strong tag of its bytes and Last-Modified",
    request: { path: "/employees/7" },
    status: 200,
    headers: { etag: strong, "last-modified": modified.toUTCString(), "content-type": "application/json" },
    body: employee,
  },
  {
    name: "HEAD → the GET's validators, no content",
    request: { method: "HEAD", path: "/employees/7" },
    status: 200,
    headers: { etag: strong, "last-modified": modified.toUTCString() },
    body: "",
  },
  {
    name: "If-None-Match: the current tag → 304, ETag kept, no content",
    request: { path: "/employees/7", headers: { "If-None-Match": strong } },
    status: 304,
    headers: { etag: strong, "content-type": null, "content-length": null },
    body: "",
  },
  {
    name: "If-None-Match: another tag → 200",
    request: { path: "/employees/7", headers: { "If-None-Match": '"other"' } },
    status: 200,
    headers: { etag: strong },
    body: employee,
  },
  {
    name: "If-Modified-Since: Last-Modified → 304",
    request: { path: "/employees/7", headers: { "If-Modified-Since": modified.toUTCString() } },
    status: 304,
    headers: { etag: strong },
    body: "",
  },
  {
    name: "If-Modified-Since: a second before Last-Modified → 200",
    request: {
      path: "/employees/7",
      headers: { "If-Modified-Since": new Date(modified.getTime() - 1000).toUTCString() },
    },
    status: 200,
    body: employee,
  },
  {
    // RFC 9110 §8.6: a 304's Content-Length, if any, is the 200's length, never 0.
    name: "HEAD with If-None-Match: the current tag → 304, no Content-Length",
    request: { method: "HEAD", path: "/employees/7", headers: { "If-None-Match": strong } },
    status: 304,
    headers: { etag: strong, "content-length": null },
    body: "",
  },
  {
    name: "Accept-Encoding: gzip → coded, its tag weak (RFC 9110 §8.8.3)",
    request: { path: "/employees/7", headers: { "Accept-Encoding": "gzip" } },
    status: 200,
    headers: { etag: `W/${strong}`, "content-encoding": "gzip", vary: /Accept-Encoding/ },
  },
  {
    name: "Accept-Encoding: gzip, If-None-Match: the weak tag → 304 with the weak tag",
    request: {
      path: "/employees/7",
      headers: { "Accept-Encoding": "gzip", "If-None-Match": `W/${strong}` },
    },
    status: 304,
    headers: { etag: `W/${strong}` },
    body: "",
  },
  {
    name: "PUT If-Match: the current tag → 200",
    request: {
      method: "PUT",
      path: "/employees/7",
      headers: { "If-Match": strong, "Content-Type": "application/json" },
      body: json,
    },
    status: 200,
    body: employee,
  },
  {
    name: "PUT If-Match: another tag → 412",
    request: {
      method: "PUT",
      path: "/employees/7",
      headers: { "If-Match": '"stale"', "Content-Type": "application/json" },
      body: json,
    },
    status: 412,
    body: errorStatus(412),
  },
  {
    name: "PUT If-Unmodified-Since: before Last-Modified → 412",
    request: {
      method: "PUT",
      path: "/employees/7",
      headers: { "If-Unmodified-Since": new Date(0).toUTCString(), "Content-Type": "application/json" },
      body: json,
    },
    status: 412,
    body: errorStatus(412),
  },
  {
    name: "preconditions(): GET If-None-Match: the current tag → 304 with it",
    request: { path: "/plain/7", headers: { "If-None-Match": PLAIN_TAG } },
    status: 304,
    headers: { etag: PLAIN_TAG, "last-modified": modified.toUTCString(), "content-type": null },
    body: "",
  },
  {
    name: "preconditions(): GET without a condition → the handler",
    request: { path: "/plain/7" },
    status: 200,
    headers: { etag: PLAIN_TAG },
    body: "plain",
  },
  {
    name: "preconditions(): PUT If-Match: another tag → 412",
    request: {
      method: "PUT",
      path: "/plain/7",
      headers: { "If-Match": '"p0"', "Content-Type": "application/json" },
      body: json,
    },
    status: 412,
    body: errorStatus(412),
  },
  {
    name: "preconditions(): PUT If-Match: the current tag → the handler",
    request: {
      method: "PUT",
      path: "/plain/7",
      headers: { "If-Match": PLAIN_TAG, "Content-Type": "application/json" },
      body: json,
    },
    status: 204,
    body: "",
  },
];

conformance("@svc/conditional", mounts, rows);
