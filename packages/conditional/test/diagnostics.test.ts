import type { IncomingMessage, ServerResponse } from "node:http";
import { createPipeline, HttpError, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { fastifyAdapter } from "@svc/kernel/fastify";
import { fetchAdapter } from "@svc/kernel/fetch";
import { nodeAdapter } from "@svc/kernel/node";
import {
  type DiagnosticRow,
  diagnosticsTable,
  fallbackErrors,
  fastifyPipelineApp,
  honoPipelineApp,
  type Mounts,
  type RowRequest,
} from "@svc/test-utils/conformance";
import express from "express";
import { preconditions as expressPreconditions } from "../src/express.js";
import { preconditions as fastifyPreconditions } from "../src/fastify.js";
import { preconditions as fetchPreconditions } from "../src/fetch.js";
import { type ConditionalDiagnostic, representationTag, validators } from "../src/index.js";
import { preconditions as nodePreconditions } from "../src/node.js";

// One table over every framework: each decision on the wire, and the one message on
// `svc:conditional` naming the framework's own request (Express's `req`, Fastify's `request`,
// the Fetch `Request`, the `node:http` request).

const employee = { id: 7 };
const modified = new Date("2026-01-02T03:04:05Z");
const json = JSON.stringify(employee);
const strong = representationTag("application/json", undefined, json);
const PLAIN_TAG = '"p1"';

const read = () => reply(employee, { lastModified: modified });
const write = async (check: (current: { data: unknown; lastModified: Date }) => Promise<void>) => {
  await check({ data: employee, lastModified: modified });
  return employee;
};
const current = () => ({ etag: PLAIN_TAG, lastModified: modified });
const pipeline = () => createPipeline({ validators: validators({ required: true }) });

/** The servers, each recording the framework's request of every request it gets in `seen`. */
function mounts(seen: object[]): Mounts {
  return {
    express() {
      const svc = expressAdapter(pipeline());
      const app = express();
      app.use((req, _res, next) => {
        seen.push(req);
        next();
      });
      app.use(svc.prepare);
      app.get("/employees/7", svc.handle(read));
      app.put(
        "/employees/7",
        svc.handle((req: express.Request) => write((now) => svc.preconditions(req, now))),
      );
      const guard = expressPreconditions({ current, required: true });
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
      const guard = nodePreconditions({ current, required: true });
      return (req: IncomingMessage, res: ServerResponse) => {
        seen.push(req);
        const run = async () => {
          const { path } = await svc.prepare(req, res);
          if (path === "/employees/7" && req.method === "GET") return svc.respond(req, res, read);
          if (path === "/employees/7" && req.method === "PUT")
            return svc.respond(req, res, () => write((now) => svc.preconditions(req, now)));
          if (path === "/plain/7") {
            if (await guard(req, res)) return;
            res.statusCode = req.method === "PUT" ? 204 : 200;
            if (req.method !== "PUT") res.setHeader("ETag", PLAIN_TAG);
            res.end(req.method === "PUT" ? undefined : "plain");
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
      app.addHook("onRequest", async (request) => {
        seen.push(request);
      });
      app.get("/employees/7", svc.handle(read));
      app.put(
        "/employees/7",
        svc.handle((request) => write((now) => svc.preconditions(request, now))),
      );
      const guard = fastifyPreconditions({ current, required: true });
      app.get("/plain/7", { onRequest: guard }, (_request, reply) =>
        reply.header("ETag", PLAIN_TAG).type("text/plain").send("plain"),
      );
      app.put("/plain/7", { onRequest: guard }, (_request, reply) => reply.code(204).send());
      return app;
    },
    fetch() {
      const svc = fetchAdapter(pipeline());
      const app = honoPipelineApp(svc);
      app.use(async (c, next) => {
        seen.push(c.req.raw);
        await next();
      });
      app.get("/employees/7", (c) => svc.respond(c.req.raw, read));
      app.put("/employees/7", (c) =>
        svc.respond(c.req.raw, () => write((now) => svc.preconditions(c.req.raw, now))),
      );
      const guard = fetchPreconditions({ current, required: true });
      app.get("/plain/7", guard, (c) => c.text("plain", 200, { ETag: PLAIN_TAG }));
      app.put("/plain/7", guard, (c) => c.body(null, 204));
      return app.fetch;
    },
  };
}

type Row = DiagnosticRow<Omit<ConditionalDiagnostic, "request">>;

const put = (path: string, headers: Record<string, string>): RowRequest => ({
  method: "PUT",
  path,
  headers: { ...headers, "Content-Type": "application/json" },
  body: json,
});

const rows: Row[] = [
  {
    name: "If-None-Match: the current ETag → 304, not-modified by If-None-Match",
    request: { path: "/employees/7", headers: { "If-None-Match": strong } },
    status: 304,
    message: { decision: "not-modified", field: "If-None-Match" },
  },
  {
    name: "If-Modified-Since: Last-Modified → 304, not-modified by If-Modified-Since",
    request: { path: "/employees/7", headers: { "If-Modified-Since": modified.toUTCString() } },
    status: 304,
    message: { decision: "not-modified", field: "If-Modified-Since" },
  },
  {
    name: "If-None-Match: another tag → 200, no message",
    request: { path: "/employees/7", headers: { "If-None-Match": '"other"' } },
    status: 200,
    message: undefined,
  },
  {
    name: "PUT If-Match: a stale tag → 412, precondition-failed by If-Match",
    request: put("/employees/7", { "If-Match": '"stale"' }),
    status: 412,
    message: { decision: "precondition-failed", field: "If-Match" },
  },
  {
    name: "PUT If-Unmodified-Since: before Last-Modified → 412, precondition-failed by If-Unmodified-Since",
    request: put("/employees/7", { "If-Unmodified-Since": new Date(0).toUTCString() }),
    status: 412,
    message: { decision: "precondition-failed", field: "If-Unmodified-Since" },
  },
  {
    name: "PUT without a precondition → 428, precondition-required",
    request: put("/employees/7", {}),
    status: 428,
    message: { decision: "precondition-required", field: undefined },
  },
  {
    name: "preconditions(): If-None-Match: the current ETag → 304, not-modified",
    request: { path: "/plain/7", headers: { "If-None-Match": PLAIN_TAG } },
    status: 304,
    message: { decision: "not-modified", field: "If-None-Match" },
  },
  {
    name: "preconditions(): PUT If-Match: a stale tag → 412, precondition-failed",
    request: put("/plain/7", { "If-Match": '"p0"' }),
    status: 412,
    message: { decision: "precondition-failed", field: "If-Match" },
  },
  {
    name: "preconditions(): PUT without a precondition → 428, precondition-required",
    request: put("/plain/7", {}),
    status: 428,
    message: { decision: "precondition-required", field: undefined },
  },
];

diagnosticsTable("svc:conditional", mounts, rows);
