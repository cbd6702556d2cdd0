import type { IncomingMessage, ServerResponse } from "node:http";
import { createPipeline, HttpError, reply, subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { fastifyAdapter } from "@svc/kernel/fastify";
import { fetchAdapter } from "@svc/kernel/fetch";
import { nodeAdapter } from "@svc/kernel/node";
import {
  FRAMEWORKS,
  fallbackErrors,
  type Mounts,
  type RowRequest,
  send,
  serve,
} from "@svc/test-utils/conformance";
import express from "express";
import Fastify, { type FastifyRequest } from "fastify";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

interface DiagnosticRow {
  name: string;
  request: RowRequest;
  status: number;
  message: WithoutRequest<NegotiateDiagnostic>;
  /** Decided before routing: on Fastify, the message names `request.raw`. */
  beforeRouting?: boolean;
}

const post = (contentType: string, text: string): RowRequest => ({
  method: "POST",
  path: "/items",
  headers: { "Content-Type": contentType },
  body: text,
});

const rows: DiagnosticRow[] = [
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

for (const framework of FRAMEWORKS) {
  describe(`svc:negotiate on ${framework}`, () => {
    const seen: object[] = [];
    let server: Awaited<ReturnType<typeof serve>>;
    beforeAll(async () => {
      server = await serve(framework, mounts(seen));
    });
    afterAll(async () => {
      await server.close();
    });
    for (const row of rows) {
      it(row.name, async () => {
        const heard: NegotiateDiagnostic[] = [];
        const listener = (message: unknown) => heard.push(message as NegotiateDiagnostic);
        seen.length = 0;
        subscribeDiagnostics("svc:negotiate", listener);
        try {
          expect((await send(server.url, row.request)).status).toBe(row.status);
        } finally {
          unsubscribeDiagnostics("svc:negotiate", listener);
        }
        expect(heard).toEqual([{ request: expect.anything(), ...row.message }]);
        expect(seen).toHaveLength(1);
        const own = seen[0] as { raw?: object };
        const expected = framework === "fastify" && row.beforeRouting ? own.raw : own;
        expect(heard[0]?.request).toBe(expected);
      });
    }
  });
}
