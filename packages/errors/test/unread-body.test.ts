import { HttpError } from "@svc/kernel";
import type { Mounts } from "@svc/test-utils/conformance";
import { unreadBodyPolicy } from "@svc/test-utils/unread-body";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { errorHandler } from "../src/express.js";
import { errorPlugin } from "../src/fastify.js";
import { onError } from "../src/fetch.js";
import { errorResponder } from "../src/node.js";

const options = { logger: { error() {} }, unreadBody: { maxBytes: 4096, timeoutMs: 300 } };

/** Each route refuses before reading the content, as a limit or a gate in front does. */
const refusal = (path: string | undefined): HttpError | undefined =>
  path === "/large"
    ? HttpError.contentTooLarge()
    : path === "/small"
      ? HttpError.unsupportedMediaType()
      : undefined;

const mounts: Mounts = {
  express() {
    const app = express();
    app.post(["/large", "/small"], (req, _res, next) => next(refusal(req.path)));
    app.get("/after", (_req, res) => {
      res.send("after");
    });
    app.use(errorHandler(options));
    return app;
  },
  node() {
    const sendError = errorResponder(options);
    return (req, res) => {
      const err = refusal(req.url);
      if (err !== undefined) sendError(err, req, res);
      else res.end("after");
    };
  },
  async fastify() {
    const app = Fastify();
    await app.register(errorPlugin, options);
    // In front of Fastify's parser, as a gate is: the content is never read.
    app.addHook("onRequest", async (request) => {
      const err = refusal(request.url);
      if (err !== undefined) throw err;
    });
    app.post("/large", async () => "unreachable");
    app.post("/small", async () => "unreachable");
    app.get("/after", async () => "after");
    return app;
  },
  fetch() {
    const app = new Hono();
    app.post("/:which", (c) => {
      throw refusal(c.req.path) ?? new Error("unreachable");
    });
    app.get("/after", (c) => c.text("after"));
    app.onError(onError(options));
    return app.fetch;
  },
};

unreadBodyPolicy("@svc/errors: content refused unread, on each framework", mounts, {
  large: { path: "/large", fields: { "Content-Type": "application/json" }, status: 413 },
  small: { path: "/small", fields: { "Content-Type": "text/csv" }, status: 415 },
});
