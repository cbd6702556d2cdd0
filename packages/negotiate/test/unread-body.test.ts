import { errorHandler } from "@svc/errors/express";
import { errorPlugin } from "@svc/errors/fastify";
import { onError } from "@svc/errors/fetch";
import { errorResponder } from "@svc/errors/node";
import type { Mounts } from "@svc/test-utils/conformance";
import { unreadBodyPolicy } from "@svc/test-utils/unread-body";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { parseBody as expressBody } from "../src/express.js";
import { parseBody as fastifyBody } from "../src/fastify.js";
import { parseBody as fetchBody } from "../src/fetch.js";
import { parseBody as nodeBody } from "../src/node.js";

const quiet = { logger: { error() {} } };
/** JSON only, up to 1 KiB; the policy's bounds smaller than the defaults, so they show. */
const options = {
  limit: 1024,
  others: "refuse" as const,
  unreadBody: { maxBytes: 4096, timeoutMs: 300 },
};

const mounts: Mounts = {
  express() {
    const app = express();
    app.post("/echo", expressBody(options), (req, res) => {
      res.json(req.body);
    });
    app.get("/after", (_req, res) => {
      res.send("after");
    });
    app.use(errorHandler(quiet));
    return app;
  },
  node() {
    const read = nodeBody(options);
    const sendError = errorResponder(quiet);
    return (req, res) => {
      if (req.url === "/after") return void res.end("after");
      read(req, res).then(
        (body) => res.end(JSON.stringify(body)),
        (err: unknown) => sendError(err, req, res),
      );
    };
  },
  async fastify() {
    const app = Fastify();
    await app.register(errorPlugin, quiet);
    await app.register(fastifyBody, options);
    app.post("/echo", async (request) => request.body);
    app.get("/after", async () => "after");
    return app;
  },
  fetch() {
    const read = fetchBody(options);
    const app = new Hono();
    app.post("/echo", async (c) => c.json(await read(c.req.raw)));
    app.get("/after", (c) => c.text("after"));
    app.onError(onError(quiet));
    return app.fetch;
  },
};

unreadBodyPolicy("@svc/negotiate: a body refused unread, on each framework", mounts, {
  large: { path: "/echo", fields: { "Content-Type": "application/json" }, status: 413 },
  small: { path: "/echo", fields: { "Content-Type": "text/csv" }, status: 415 },
  // Fastify after 5.0.0 closes the connection itself when a content-type parser refuses a body
  // it left unread; 5.0.0 leaves it to the reply, and so to the policy.
  closedByFramework: process.env.FASTIFY_FLOOR === "1" ? [] : ["fastify"],
});
