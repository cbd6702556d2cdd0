import type { IncomingMessage, ServerResponse } from "node:http";
import { gunzipSync } from "node:zlib";
import { createPipeline, HttpError, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { fastifyAdapter } from "@svc/kernel/fastify";
import { fetchAdapter } from "@svc/kernel/fetch";
import { nodeAdapter } from "@svc/kernel/node";
import { compression, csv, json, representations, xml } from "@svc/negotiate";
import * as onExpress from "@svc/negotiate/express";
import * as onFastify from "@svc/negotiate/fastify";
import * as onFetch from "@svc/negotiate/fetch";
import * as onNode from "@svc/negotiate/node";
import { conformance, errorStatus, fallbackErrors, type Mounts, type Row } from "@svc/test-utils/conformance";
import express from "express";
import Fastify, { type FastifyRequest } from "fastify";
import { Hono } from "hono";
import { expect } from "vitest";

const APP = "https://app.example";
const cors = { origins: [APP], exposedHeaders: ["ETag"], maxAge: 600 };
const body = { limit: 100, others: "refuse" as const };

/** Large enough for compression()'s default threshold. */
const items = Array.from({ length: 60 }, (_, i) => ({ id: i + 1, name: `item ${i + 1}` }));

function pipeline() {
  return createPipeline({
    representations: representations({ offers: [json, xml, csv] }),
    coding: compression(),
  });
}

const created = (value: unknown) => reply(value, { status: 201 });

const mounts: Mounts = {
  express() {
    const svc = expressAdapter(pipeline());
    const app = express();
    app.disable("x-powered-by");
    app.use(onExpress.crossOrigin(cors));
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
    const crossOrigin = onNode.crossOrigin(cors);
    const readBody = onNode.parseBody(body);
    return (req: IncomingMessage, res: ServerResponse) => {
      const run = async () => {
        if (await crossOrigin(req, res)) return;
        const { path } = await svc.prepare(req, res);
        if (path !== "/items") throw HttpError.notFound();
        if (req.method === "GET" || req.method === "HEAD") return svc.respond(req, res, () => items);
        if (req.method !== "POST") throw HttpError.methodNotAllowed(["GET", "HEAD", "POST"]);
        const value = await readBody(req, res);
        return svc.respond(req, res, () => created(value));
      };
      run().catch((err) => fallbackErrors.node(err, req, res));
    };
  },
  async fastify() {
    const svc = fastifyAdapter(pipeline());
    const app = Fastify();
    await app.register(onFastify.crossOrigin, cors);
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
    app.use(onFetch.crossOrigin(cors));
    app.use(svc.middleware);
    app.get("/items", (c) => svc.respond(c.req.raw, () => items));
    app.post("/items", async (c) => {
      const value = await readBody(c.req.raw);
      return svc.respond(c.req.raw, () => created(value), { body: value });
    });
    app.notFound(() => {
      throw HttpError.notFound();
    });
    app.onError((err, c) => fallbackErrors.fetch(err, c));
    return app.fetch;
  },
};

const rows: Row[] = [
  {
    name: "Accept: application/json → JSON, Vary: Origin, Accept, Accept-Encoding",
    request: { path: "/items", headers: { accept: "application/json" } },
    status: 200,
    headers: {
      "content-type": "application/json; charset=utf-8",
      vary: "Origin, Accept, Accept-Encoding",
      "content-encoding": null,
      "access-control-allow-origin": null,
    },
    body: items,
  },
  {
    name: "Accept: application/xml → XML",
    request: { path: "/items", headers: { accept: "application/xml" } },
    status: 200,
    headers: { "content-type": /^application\/xml\b/ },
    body: (r) => expect(r.text).toMatch(/<name>item 60<\/name>/),
  },
  {
    name: "Accept: text/csv → CSV",
    request: { path: "/items", headers: { accept: "text/csv" } },
    status: 200,
    headers: { "content-type": /^text\/csv\b/ },
    body: (r) => expect(r.text.split(/\r?\n/)[1]).toBe("1,item 1"),
  },
  {
    name: "Accept: image/png → 406",
    request: { path: "/items", headers: { accept: "image/png" } },
    status: 406,
    body: errorStatus(406),
  },
  {
    name: "Accept: application/json;q=0, text/csv → CSV (q=0 is not acceptable)",
    request: { path: "/items", headers: { accept: "application/json;q=0, text/csv" } },
    status: 200,
    headers: { "content-type": /^text\/csv\b/ },
  },
  {
    name: "Accept-Encoding: gzip → gzip bytes, Vary: Accept, Accept-Encoding",
    request: { path: "/items", headers: { accept: "application/json", "accept-encoding": "gzip" } },
    status: 200,
    headers: { "content-encoding": "gzip", vary: "Origin, Accept, Accept-Encoding" },
    body: (r) => expect(JSON.parse(gunzipSync(r.body).toString("utf8"))).toEqual(items),
  },
  {
    name: "Accept-Encoding: gzip;q=0 → identity",
    request: { path: "/items", headers: { "accept-encoding": "gzip;q=0" } },
    status: 200,
    headers: { "content-encoding": null },
    body: items,
  },
  {
    name: "POST application/json → parsed, 201",
    request: {
      method: "POST",
      path: "/items",
      headers: { "content-type": "application/json" },
      body: '{"name":"new"}',
    },
    status: 201,
    body: { name: "new" },
  },
  {
    name: "POST application/xml → parsed, 201",
    request: {
      method: "POST",
      path: "/items",
      headers: { "content-type": "application/xml", accept: "application/json" },
      body: "<item><name>new</name></item>",
    },
    status: 201,
    body: { item: { name: "new" } },
  },
  {
    name: "POST text/plain → 415 with Accept-Post",
    request: { method: "POST", path: "/items", headers: { "content-type": "text/plain" }, body: "hello" },
    status: 415,
    headers: { "accept-post": "application/json, application/xml" },
    body: errorStatus(415),
  },
  {
    name: "POST without Content-Type → 415",
    request: { method: "POST", path: "/items", body: '{"name":"new"}' },
    status: 415,
    body: errorStatus(415),
  },
  {
    // Whether the connection stays is the refused-body policy's (test/unread-body.test.ts), and a
    // Fastify after 5.0.0 closes it itself on a parser's refusal.
    name: "POST of 101 bytes over a limit of 100 → 413",
    request: {
      method: "POST",
      path: "/items",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "x".repeat(91) }),
    },
    status: 413,
    body: errorStatus(413),
  },
  {
    name: "POST invalid JSON → 400",
    request: {
      method: "POST",
      path: "/items",
      headers: { "content-type": "application/json" },
      body: '{"name":',
    },
    status: 400,
    body: (r) =>
      expect(JSON.parse(r.text)).toEqual({ status: 400, message: "Malformed JSON body: not valid JSON" }),
  },
  {
    name: "CORS preflight from an allowed origin → 204 with its fields",
    request: {
      method: "OPTIONS",
      path: "/items",
      headers: {
        origin: APP,
        "access-control-request-method": "PUT",
        "access-control-request-headers": "if-match",
      },
    },
    status: 204,
    headers: {
      "access-control-allow-origin": APP,
      "access-control-allow-methods": "GET,HEAD,PUT,PATCH,POST,DELETE",
      "access-control-allow-headers": "if-match",
      "access-control-max-age": "600",
      "access-control-expose-headers": "ETag,WWW-Authenticate,DPoP-Nonce",
      vary: "Origin, Access-Control-Request-Headers",
    },
    body: "",
  },
  {
    name: "CORS actual request from an allowed origin → Access-Control-Allow-Origin, Vary: Origin",
    request: { path: "/items", headers: { origin: APP } },
    status: 200,
    headers: {
      "access-control-allow-origin": APP,
      "access-control-expose-headers": "ETag,WWW-Authenticate,DPoP-Nonce",
      vary: "Origin, Accept, Accept-Encoding",
    },
  },
  {
    name: "CORS refusal's 415 carries the CORS fields too",
    request: {
      method: "POST",
      path: "/items",
      headers: { origin: APP, "content-type": "text/plain" },
      body: "hello",
    },
    status: 415,
    headers: { "access-control-allow-origin": APP, vary: /\bOrigin\b/ },
  },
  {
    name: "another origin → no CORS field, Vary: Origin",
    request: { path: "/items", headers: { origin: "https://evil.example" } },
    status: 200,
    headers: { "access-control-allow-origin": null, vary: "Origin, Accept, Accept-Encoding" },
  },
];

conformance("negotiate", mounts, rows);
