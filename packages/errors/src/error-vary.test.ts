import type { IncomingMessage, ServerResponse } from "node:http";
import { type Gate, HttpError } from "@svc/kernel";
import { expressGate } from "@svc/kernel/express";
import { fastifyGate } from "@svc/kernel/fastify";
import { fetchGate } from "@svc/kernel/fetch";
import { nodeGate } from "@svc/kernel/node";
import { conformance, type Mounts } from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { errorHandler } from "./express.js";
import { errorPlugin } from "./fastify.js";
import { onError } from "./fetch.js";
import { errorResponder } from "./node.js";

// RFC 9110 §12.5.5: Vary names the request fields that selected the response. A gate in front
// (CORS, a version) read `Origin`; an error that carries a `Vary` of its own (a 406 for
// `Accept-Encoding`, a refusal whose fields follow `X-Forwarded-Host`) read more. The error
// response varies by both, on every framework: the error's names are added, never replacing.

/** A gate that read `Origin` for every request. */
const byOrigin: Gate<unknown> = () => ({ vary: ["Origin"] });

/** What the route fails with: an error whose own fields name `Vary`. */
const failure = () =>
  HttpError.notAcceptable("No coding of the response is acceptable", {
    headers: { Vary: "Accept-Encoding, X-Forwarded-Host" },
  });

const options = { logger: { error() {}, info() {} } };

const mounts: Mounts = {
  express() {
    const app = express();
    app.use(expressGate(byOrigin));
    app.get("/x", () => {
      throw failure();
    });
    app.use(errorHandler(options));
    return app;
  },
  node() {
    const gate = nodeGate(byOrigin);
    const sendError = errorResponder(options);
    return (req: IncomingMessage, res: ServerResponse) => {
      const run = async () => {
        if (await gate(req, res)) return;
        throw failure();
      };
      run().catch((err: unknown) => sendError(err, req, res));
    };
  },
  fastify() {
    const app = Fastify();
    app.register(errorPlugin, options);
    app.addHook("onRequest", fastifyGate(byOrigin));
    app.get("/x", async () => {
      throw failure();
    });
    return app;
  },
  fetch() {
    const app = new Hono();
    app.use(fetchGate(byOrigin));
    app.get("/x", () => {
      throw failure();
    });
    app.onError(onError(options));
    return app.fetch;
  },
};

conformance("an error's own Vary, behind a gate's", mounts, [
  {
    name: "GET → 406, Vary: the gate's name, the error's, then the format's Accept",
    request: { path: "/x", headers: { Origin: "https://a.example" } },
    status: 406,
    headers: { vary: "Origin, Accept-Encoding, X-Forwarded-Host, Accept" },
  },
  {
    name: "HEAD → the same Vary, no content",
    request: { method: "HEAD", path: "/x" },
    status: 406,
    headers: { vary: "Origin, Accept-Encoding, X-Forwarded-Host, Accept" },
    body: "",
  },
]);
