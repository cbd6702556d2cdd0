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
  type Mounts,
  type RowRequest,
} from "@svc/test-utils/conformance";
import express from "express";
import Fastify, { type FastifyRequest } from "fastify";
import { Hono } from "hono";
import { expect } from "vitest";
import * as onExpress from "../src/express.js";
import * as onFastify from "../src/fastify.js";
import * as onFetch from "../src/fetch.js";
import { compression, csv, json, type NegotiateDiagnostic, representations, xml } from "../src/index.js";
import * as onNode from "../src/node.js";

// One table over every framework: each refusal and each coded response on the wire, and the one
// message on `svc:negotiate` naming the request the framework handed the application. The
// coding's 406 is decided before routing: on Fastify, in the pipeline's `onRequest` hook on
// `request.raw` (the object the exchange is keyed by), which the message names there.

/** A message's members but its `request`, for each kind of message. */
type WithoutRequest<T> = T extends unknown ? Omit<T, "request"> : never;

const body = { limit: 100, others: "refuse" as const };
const items = Array.from({ length: 60 }, (_, i) => ({ id: i + 1, name: `item ${i + 1}` }));
const pipeline = () =>
  createPipeline({ representations: representations({ offers: [json, xml, csv] }), coding: compression() });
const created = (value: unknown) => reply(value, { status: 201 });

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
      app.use(onExpress.parseBody(body));
      app.get(
        "/items",
        svc.handle(() => items),
      );
      app.post(
        "/items",
        svc.handle((req: onExpress.ParsedBodyRequest) => created(req.body)),
      );
      app.use(fallbackErrors.express);
      return app;
    },
    node() {
      const svc = nodeAdapter(pipeline());
      const readBody = onNode.parseBody(body);
      return (req: IncomingMessage, res: ServerResponse) => {
        seen.push(req);
        const run = async () => {
          const { path } = await svc.prepare(req, res);
          if (path !== "/items") throw HttpError.notFound();
          if (req.method === "GET") return svc.respond(req, res, () => items);
          const value = await readBody(req, res);
          return svc.respond(req, res, () => created(value));
        };
        run().catch((err) => fallbackErrors.node(err, req, res));
      };
    },
    async fastify() {
      const svc = fastifyAdapter(pipeline());
      const app = Fastify();
      // First of the hooks: the pipeline's own may refuse the request.
      app.addHook("onRequest", async (request) => {
        seen.push(request);
      });
      await app.register(onFastify.parseBody, body);
      await app.register(svc.plugin);
      app.get(
        "/items",
        svc.handle(() => items),
      );
      app.post(
        "/items",
        svc.handle((request: FastifyRequest) => created(request.body)),
      );
      app.setErrorHandler(fallbackErrors.fastify);
      return app;
    },
    fetch() {
      const svc = fetchAdapter(pipeline());
      const readBody = onFetch.parseBody(body);
      const app = new Hono();
      app.use(svc.middleware);
      app.get("/items", (c) => svc.respond(c.req.raw, () => items));
      app.post("/items", async (c) => {
        const value = await readBody(c.req.raw);
        return svc.respond(c.req.raw, () => created(value), { body: value });
      });
      app.onError((err, c) => fallbackErrors.fetch(err, c));
      return (request: Request) => {
        seen.push(request);
        return app.fetch(request);
      };
    },
  };
}

type Row = DiagnosticRow<WithoutRequest<NegotiateDiagnostic>>;

const post = (contentType: string, text: string): RowRequest => ({
  method: "POST",
  path: "/items",
  headers: { "Content-Type": contentType },
  body: text,
});

const rows: Row[] = [
  {
    name: "Accept: image/png → 406, not-acceptable with the types offered",
    request: { path: "/items", headers: { Accept: "image/png" } },
    status: 406,
    message: { decision: "not-acceptable", offered: ["application/json", "application/xml", "text/csv"] },
  },
  {
    name: "Accept-Encoding: gzip → 200 gzip, coded gzip",
    request: { path: "/items", headers: { "Accept-Encoding": "gzip" } },
    status: 200,
    message: { decision: "coded", coding: "gzip" },
  },
  {
    name: "Accept-Encoding: identity;q=0 → 406, not-acceptable with the codings offered",
    request: { path: "/items", headers: { "Accept-Encoding": "identity;q=0" } },
    status: 406,
    message: { decision: "not-acceptable", offered: expect.arrayContaining(["gzip", "identity"]) },
    beforeRouting: true,
  },
  {
    name: "POST Content-Type: text/plain → 415, unsupported-media-type",
    request: post("text/plain", "hello"),
    status: 415,
    message: { decision: "unsupported-media-type", contentType: "text/plain" },
  },
  {
    name: "POST JSON over the limit → 413, body-refused too-large",
    request: post("application/json", JSON.stringify("a".repeat(200))),
    status: 413,
    message: { decision: "body-refused", reason: "too-large" },
  },
  {
    name: "POST malformed JSON → 400, body-refused malformed",
    request: post("application/json", "{"),
    status: 400,
    message: { decision: "body-refused", reason: "malformed" },
  },
];

diagnosticsTable("svc:negotiate", mounts, rows);
