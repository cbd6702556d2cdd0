import { errorPlugin } from "@svc/errors/fastify";
import { requestState } from "@svc/kernel";
import { listen, whenListening } from "@svc/test-utils";
import express from "express";
import Fastify from "fastify";
import { describe, expect, it, onTestFinished } from "vitest";
import { rateLimit } from "../src/express.js";
import { rateLimit as fastifyRateLimit, rateLimitHook } from "../src/fastify.js";
import { rateLimitGate } from "../src/index.js";

const quiet = { warn() {} };

/** What the handler after a limit-5 limiter sees of its decision, on the app's first request. */
async function expressSeen(requestPropertyName?: string | false): Promise<unknown> {
  const app = express();
  app.use(
    rateLimit({
      limit: 5,
      logger: quiet,
      ...(requestPropertyName === undefined ? {} : { requestPropertyName }),
    }),
  );
  app.get("/", (req, res) => {
    res.json({
      written: "rateLimit" in req,
      property: req.rateLimit?.remaining ?? null,
      state: requestState(req).rateLimit?.remaining ?? null,
    });
  });
  const { url, close } = await listen(app);
  onTestFinished(close);
  return (await fetch(url)).json();
}

async function fastifySeen(requestPropertyName?: string | false): Promise<unknown> {
  const app = Fastify();
  await app.register(errorPlugin, { logger: { error() {} } });
  await app.register(fastifyRateLimit, {
    limit: 5,
    logger: quiet,
    ...(requestPropertyName === undefined ? {} : { requestPropertyName }),
  });
  app.get("/", async (request) => ({
    written: "rateLimit" in request,
    declared: app.hasRequestDecorator("rateLimit"),
    property: (request as { rateLimit?: { remaining: number } | null }).rateLimit?.remaining ?? null,
    state: requestState(request).rateLimit?.remaining ?? null,
  }));
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { url, close } = await whenListening(app.server);
  onTestFinished(async () => {
    await close();
    await app.close();
  });
  return (await fetch(url)).json();
}

describe("req.rateLimit on Express: requestPropertyName", () => {
  it("by default → req.rateLimit not written; requestState(req).rateLimit.remaining 4", async () => {
    expect(await expressSeen()).toEqual({ written: false, property: null, state: 4 });
  });
  it('requestPropertyName: "rateLimit" → req.rateLimit.remaining 4, as requestState(req).rateLimit', async () => {
    expect(await expressSeen("rateLimit")).toEqual({ written: true, property: 4, state: 4 });
  });
  it("requestPropertyName: false → not written either", async () => {
    expect(await expressSeen(false)).toEqual({ written: false, property: null, state: 4 });
  });
});

describe("request.rateLimit on Fastify: requestPropertyName", () => {
  it("by default → request.rateLimit neither declared nor written; requestState(request).rateLimit.remaining 4", async () => {
    expect(await fastifySeen()).toEqual({ written: false, declared: false, property: null, state: 4 });
  });
  it('requestPropertyName: "rateLimit" → request.rateLimit declared, remaining 4, as requestState(request).rateLimit', async () => {
    expect(await fastifySeen("rateLimit")).toEqual({ written: true, declared: true, property: 4, state: 4 });
  });
});

describe("the limiter's core leaves the framework's request alone", () => {
  it('a gate with requestPropertyName: "rateLimit", driven without an adapter → the request object gains no property; requestState(request).rateLimit.remaining 4', async () => {
    const gate = rateLimitGate({ limit: 5, logger: quiet, requestPropertyName: "rateLimit" });
    const request = {};
    const view = { method: "GET", url: "/", headers: {}, socket: { remoteAddress: "192.0.2.1" } };
    await gate(view, request);
    expect(Object.getOwnPropertyNames(request)).toEqual([]);
    expect(requestState(request).rateLimit?.remaining).toBe(4);
  });

  it('rateLimitHook({ requestPropertyName: "quota" }) on one Fastify route → request.quota.remaining 4, as requestState(request).rateLimit', async () => {
    const app = Fastify();
    await app.register(errorPlugin, { logger: { error() {} } });
    app.get(
      "/",
      { onRequest: rateLimitHook({ limit: 5, logger: quiet, requestPropertyName: "quota" }) },
      async (request) => ({
        property: (request as { quota?: { remaining: number } }).quota?.remaining ?? null,
        state: requestState(request).rateLimit?.remaining ?? null,
      }),
    );
    await app.listen({ port: 0, host: "127.0.0.1" });
    const { url, close } = await whenListening(app.server);
    onTestFinished(async () => {
      await close();
      await app.close();
    });
    expect(await (await fetch(url)).json()).toEqual({ property: 4, state: 4 });
  });
});
