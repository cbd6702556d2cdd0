import { fallbackErrors, type Mounts } from "@svc/test-utils/conformance";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { rateLimit as expressRateLimit } from "../src/express.js";
import { rateLimit as fastifyRateLimit } from "../src/fastify.js";
import { rateLimit as fetchRateLimit } from "../src/fetch.js";
import type { RateLimitOptions } from "../src/index.js";
import { rateLimit as nodeRateLimit } from "../src/node.js";

/**
 * One server per framework whose `GET /` is the rate limit (built by `options()`, a fresh limiter
 * per server) in front of a route answering "ok", refusals rendered by the framework's error
 * handling. `options` takes no `prefix` (Fastify's register option): give each server its store.
 */
export function limitedMounts(options: () => Omit<RateLimitOptions, "prefix" | "limiter">): Mounts {
  return {
    express() {
      const app = express();
      app.use(expressRateLimit(options()));
      app.get("/", (_req, res) => {
        res.end("ok");
      });
      app.use(fallbackErrors.express);
      return app;
    },
    node() {
      const limit = nodeRateLimit(options() as never);
      return (req, res) => {
        limit(req, res)
          .then(() => res.end("ok"))
          .catch((err) => fallbackErrors.node(err, req, res));
      };
    },
    fastify() {
      const app = Fastify();
      app.register(fastifyRateLimit, options() as never);
      app.get("/", async () => "ok");
      app.setErrorHandler(fallbackErrors.fastify);
      return app;
    },
    fetch() {
      const app = new Hono();
      app.use(fetchRateLimit({ ...(options() as object), trustProxy: "loopback" } as never));
      app.get("/", (c) => c.text("ok"));
      app.onError(fallbackErrors.fetch);
      return app.fetch;
    },
  };
}
