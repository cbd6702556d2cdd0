// serverSpans and fetchServerSpans on real servers of each framework the package claims, with the
// real OpenTelemetry SDK: the span a 429 or a 401 lands on, its route, its parent, and no span at
// all without an SDK.
import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { context, ProxyTracerProvider, SpanKind, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { authenticate } from "@svc/auth/express";
import { errorHandler } from "@svc/errors/express";
import { errorPlugin } from "@svc/errors/fastify";
import { onError } from "@svc/errors/fetch";
import { errorResponder } from "@svc/errors/node";
import { recordRouteTemplate } from "@svc/kernel";
import { rateLimit as expressRateLimit } from "@svc/ratelimit/express";
import { rateLimit as fastifyRateLimit } from "@svc/ratelimit/fastify";
import { rateLimit as fetchRateLimit } from "@svc/ratelimit/fetch";
import { rateLimit as nodeRateLimit } from "@svc/ratelimit/node";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { routePath } from "hono/route";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  fetchServerSpans,
  instrumentSvc,
  type ServerSpanOptions,
  type SvcInstrumentation,
  serverSpanOf,
  serverSpans,
} from "../src/index.js";

/** A reader the test collects from when it wants. */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const reader = new TestReader();
const meterProvider = new MeterProvider({ readers: [reader] });
const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
const propagator = new W3CTraceContextPropagator();
let instrumentation: SvcInstrumentation;

const servers: { close(): unknown }[] = [];
beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  instrumentation = instrumentSvc({ meterProvider, tracerProvider });
});
afterEach(() => spans.reset());
afterAll(async () => {
  instrumentation.disable();
  for (const server of servers) server.close();
  context.disable();
  await meterProvider.shutdown();
  await tracerProvider.shutdown();
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const LIMIT = { limit: 1, windowMs: 60_000 };
const quiet = { logger: { error() {}, info() {} } };

/**
 * Each framework as its README section shows it: an app with the rate limit on `/items/:id`,
 * served through the span helper with `options`; its origin. `route` is the template the span
 * names, where the framework (or a recorded template) has one.
 */
interface Mounted {
  origin: string;
  /**
   * The active span the handler saw, and the one `serverSpanOf` found for the framework's request,
   * on the last request that reached it.
   */
  seen: { span?: unknown; own?: unknown };
}

/**
 * `route`: the template the span names, where there is one. `ownRequest: false`: the packages see
 * a request other than the one the wrapper was handed (Hono's `Request`, made by
 * `getRequestListener` from the `IncomingMessage`), so only the active span tells them apart.
 */
const frameworks: Record<
  string,
  { route?: string; ownRequest?: false; mount(options: ServerSpanOptions): Promise<Mounted> }
> = {
  Express: {
    route: "/items/:id",
    async mount(options) {
      const seen: Mounted["seen"] = {};
      const app = express();
      app.disable("x-powered-by");
      app.get("/items/:id", expressRateLimit(LIMIT), (req, res) => {
        seen.span = trace.getActiveSpan();
        seen.own = serverSpanOf(req);
        res.json({ ok: true });
      });
      app.use(errorHandler(quiet));
      return { origin: await listen(createServer(serverSpans(app, options))), seen };
    },
  },
  "Fastify 5": {
    route: "/items/:id",
    async mount(options) {
      const seen: Mounted["seen"] = {};
      const app = Fastify({ serverFactory: (handler) => createServer(serverSpans(handler, options)) });
      app.addHook("onRequest", async (request) => {
        if (request.routeOptions.url !== undefined) recordRouteTemplate(request, request.routeOptions.url);
      });
      await app.register(errorPlugin, quiet);
      await app.register(fastifyRateLimit, LIMIT);
      app.get("/items/:id", async (request) => {
        seen.span = trace.getActiveSpan();
        seen.own = serverSpanOf(request);
        return { ok: true };
      });
      await app.listen({ port: 0, host: "127.0.0.1" });
      servers.push(app);
      return { origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, seen };
    },
  },
  "node:http": {
    route: "/items/:id",
    async mount(options) {
      const seen: Mounted["seen"] = {};
      const limit = nodeRateLimit(LIMIT);
      const sendError = errorResponder(quiet);
      const listener = serverSpans((req, res) => {
        recordRouteTemplate(req, "/items/:id");
        limit(req, res).then(
          () => {
            seen.span = trace.getActiveSpan();
            seen.own = serverSpanOf(req);
            res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
          },
          (err: unknown) => sendError(err, req, res),
        );
      }, options);
      return { origin: await listen(createServer(listener)), seen };
    },
  },
  "Hono (node-server, serverSpans)": {
    ownRequest: false,
    async mount(options) {
      const seen: Mounted["seen"] = {};
      const app = new Hono();
      app.use(fetchRateLimit(LIMIT));
      app.get("/items/:id", (c) => {
        seen.span = trace.getActiveSpan();
        seen.own = serverSpanOf(c.req);
        return c.json({ ok: true });
      });
      app.onError(onError(quiet));
      return {
        origin: await listen(createServer(serverSpans(getRequestListener(app.fetch), options))),
        seen,
      };
    },
  },
  "Hono (node-server, fetchServerSpans)": {
    route: "/items/:id",
    async mount(options) {
      const seen: Mounted["seen"] = {};
      const app = new Hono();
      app.use((c, next) => {
        recordRouteTemplate(c.req.raw, routePath(c, -1));
        return next();
      });
      app.use(fetchRateLimit(LIMIT));
      app.get("/items/:id", (c) => {
        seen.span = trace.getActiveSpan();
        seen.own = serverSpanOf(c.req);
        return c.json({ ok: true });
      });
      app.onError(onError(quiet));
      const listener = getRequestListener(fetchServerSpans(app.fetch, options));
      return { origin: await listen(createServer(listener)), seen };
    },
  },
};

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const PARENT_ID = "b7ad6b7169203331";

/** The server spans exported so far, once `count` of them have ended. */
async function serverSpansExported(count: number): Promise<ReadableSpan[]> {
  for (let i = 0; i < 50; i++) {
    const found = spans.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER);
    if (found.length >= count) return found;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return spans.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER);
}

describe.each(Object.keys(frameworks))("%s", (name) => {
  const framework = frameworks[name] as (typeof frameworks)[string];

  it("a 429 → its SERVER span, child of the traceparent, carries the decision, its event, the route and the status", async () => {
    const { origin } = await framework.mount({ tracerProvider, propagator });
    const traceparent = `00-${TRACE_ID}-${PARENT_ID}-01`;
    expect((await fetch(`${origin}/items/7`, { headers: { traceparent } })).status).toBe(200);
    const limited = await fetch(`${origin}/items/7?token=secret`, { headers: { traceparent } });
    expect(limited.status).toBe(429);
    await limited.arrayBuffer();
    const [allowed, refused] = await serverSpansExported(2);
    const name = framework.route === undefined ? "GET" : `GET ${framework.route}`;
    expect(refused?.name).toBe(name);
    expect(refused?.spanContext().traceId).toBe(TRACE_ID);
    expect(refused?.parentSpanContext?.spanId).toBe(PARENT_ID);
    expect(refused?.attributes).toMatchObject({
      "http.request.method": "GET",
      "url.scheme": "http",
      "http.response.status_code": 429,
      "svc.rate_limiting.result": "rejected",
    });
    expect(refused?.attributes["http.route"]).toBe(framework.route);
    expect(refused?.events.map((e) => e.name)).toContain("svc.ratelimit.limited");
    expect(allowed?.attributes).toMatchObject({
      "svc.rate_limiting.result": "acquired",
      "http.response.status_code": 200,
    });
  });

  it("without a traceparent the span starts a trace; with the no-op provider no span is built", async () => {
    const { origin } = await framework.mount({ tracerProvider, propagator });
    expect((await fetch(`${origin}/items/1`)).status).toBe(200);
    const [root] = await serverSpansExported(1);
    expect(root?.parentSpanContext).toBeUndefined();
    expect(root?.spanContext().traceId).not.toBe(TRACE_ID);

    // No SDK registered: the global provider is the API's no-op one, as is a bare proxy.
    for (const options of [{}, { tracerProvider: new ProxyTracerProvider() }]) {
      const served = await framework.mount(options);
      const response = await fetch(`${served.origin}/items/1`, {
        headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
      });
      expect(response.status).toBe(200);
      expect(served.seen.span).toBeUndefined();
    }
  });
});

describe.each(Object.keys(frameworks).filter((name) => frameworks[name]?.ownRequest !== false))(
  "%s, activate: false",
  (name) => {
    const framework = frameworks[name] as (typeof frameworks)[string];

    it("a 429 → no active span in the handler, yet the decisions and the event land on the span serverSpanOf finds", async () => {
      const { origin, seen } = await framework.mount({ tracerProvider, propagator, activate: false });
      const traceparent = `00-${TRACE_ID}-${PARENT_ID}-01`;
      expect((await fetch(`${origin}/items/3`, { headers: { traceparent } })).status).toBe(200);
      const limited = await fetch(`${origin}/items/3`, { headers: { traceparent } });
      expect(limited.status).toBe(429);
      await limited.arrayBuffer();
      const [allowed, refused] = await serverSpansExported(2);
      expect(seen.span).toBeUndefined();
      expect((seen.own as ReadableSpan | undefined)?.spanContext().spanId).toBe(
        allowed?.spanContext().spanId,
      );
      expect(allowed?.attributes).toMatchObject({
        "svc.rate_limiting.result": "acquired",
        "http.response.status_code": 200,
      });
      expect(refused?.spanContext().traceId).toBe(TRACE_ID);
      expect(refused?.parentSpanContext?.spanId).toBe(PARENT_ID);
      expect(refused?.attributes).toMatchObject({
        "svc.rate_limiting.result": "rejected",
        "http.response.status_code": 429,
      });
      expect(refused?.events.map((e) => e.name)).toContain("svc.ratelimit.limited");
    });
  },
);

describe("node:http: bounded names and attributes", () => {
  it("no template → the method alone names the span; an unknown method is _OTHER, named HTTP; a 503 has error.type", async () => {
    const origin = await listen(
      createServer(
        serverSpans(
          (req, res) => {
            res.writeHead(req.url === "/down" ? 503 : 204).end();
          },
          { tracerProvider, propagator },
        ),
      ),
    );
    await fetch(`${origin}/orders/42`);
    await fetch(`${origin}/orders/42`, { method: "PURGE" });
    await fetch(`${origin}/down`);
    const [get, purge, down] = await serverSpansExported(3);
    expect(get?.name).toBe("GET");
    expect(get?.attributes["http.route"]).toBeUndefined();
    expect(purge?.name).toBe("HTTP");
    expect(purge?.attributes["http.request.method"]).toBe("_OTHER");
    expect(down?.attributes).toMatchObject({ "http.response.status_code": 503, "error.type": "503" });
    expect(down?.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(get?.status.code).toBe(0);
  });

  it("route: a request no router recorded a template for is named by the application's own set; the router's template comes first", async () => {
    const origin = await listen(
      createServer(
        serverSpans(
          (req, res) => {
            if (req.url === "/routed/7") recordRouteTemplate(req, "/routed/:id");
            res.writeHead(req.url === "/unrouted/7" ? 401 : 200).end();
          },
          {
            tracerProvider,
            propagator,
            route: (request) =>
              (request as IncomingMessage).url?.startsWith("/unrouted/") ? "/unrouted/{id}" : undefined,
          },
        ),
      ),
    );
    await fetch(`${origin}/unrouted/7`);
    await fetch(`${origin}/routed/7`);
    await fetch(`${origin}/elsewhere`);
    const [unrouted, routed, elsewhere] = await serverSpansExported(3);
    expect(unrouted?.name).toBe("GET /unrouted/{id}");
    expect(unrouted?.attributes["http.route"]).toBe("/unrouted/{id}");
    expect(routed?.attributes["http.route"]).toBe("/routed/:id");
    expect(elsewhere?.name).toBe("GET");
    expect(elsewhere?.attributes["http.route"]).toBeUndefined();
  });

  it("the no-op provider of another copy of the API (CommonJS beside ESM), behind its proxy, builds no span either", async () => {
    // Another copy's classes: the same names, other identities.
    class NoopTracerProvider {
      getTracer() {
        return tracerProvider.getTracer("not to be used");
      }
    }
    const otherProxy = {
      getTracer: () => tracerProvider.getTracer("not to be used"),
      getDelegate: () => new NoopTracerProvider(),
    };
    let seen: unknown;
    const origin = await listen(
      createServer(
        serverSpans(
          (_req, res) => {
            seen = trace.getActiveSpan();
            res.end();
          },
          { tracerProvider: otherProxy },
        ),
      ),
    );
    expect((await fetch(origin)).status).toBe(200);
    expect(seen).toBeUndefined();
    expect(spans.getFinishedSpans()).toEqual([]);
  });

  it("a traceparent that is not valid is not a parent", async () => {
    const origin = await listen(
      createServer(serverSpans((_req, res) => res.end(), { tracerProvider, propagator })),
    );
    await fetch(origin, { headers: { traceparent: `00-${"0".repeat(32)}-${PARENT_ID}-01` } });
    const [span] = await serverSpansExported(1);
    expect(span?.parentSpanContext).toBeUndefined();
  });

  it("refuses what is not a listener, a Fetch handler, a tracer provider, a propagator or a boolean activate", () => {
    expect(() => serverSpans(undefined as never)).toThrow(
      expect.objectContaining({ code: "ERR_SVC_OTEL_LISTENER" }),
    );
    expect(() => fetchServerSpans({ fetch: () => new Response() } as never)).toThrow(
      expect.objectContaining({ code: "ERR_SVC_OTEL_HANDLER" }),
    );
    expect(() => serverSpans(() => {}, { tracerProvider: {} as never })).toThrow(
      expect.objectContaining({ code: "ERR_SVC_OTEL_TRACER_PROVIDER" }),
    );
    expect(() => fetchServerSpans(() => new Response(), { propagator: {} as never })).toThrow(
      expect.objectContaining({ code: "ERR_SVC_OTEL_PROPAGATOR" }),
    );
    expect(() => serverSpans(() => {}, { route: "/orders/{id}" } as never)).toThrow(
      expect.objectContaining({ code: "ERR_SVC_OTEL_ROUTE" }),
    );
    expect(() => fetchServerSpans(() => new Response(), { activate: "false" } as never)).toThrow(
      expect.objectContaining({ code: "ERR_SVC_OTEL_ACTIVATE" }),
    );
    expect(() => serverSpans(() => {}, { tracer: tracerProvider } as never)).toThrow(
      expect.objectContaining({ code: "ERR_SVC_OTEL_UNKNOWN_OPTION" }),
    );
  });
});

/** An HS256 JWT of `claims`, signed with `secret` (RFC 7515 §A.1). */
function jwt(claims: object, secret: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const input = `${part({ alg: "HS256", typ: "JWT" })}.${part(claims)}`;
  return `${input}.${createHmac("sha256", secret).update(input).digest("base64url")}`;
}

describe("a refusal keeps its reason on the span", () => {
  it("Bearer with an expired token → 401, the span's error.type is expired (the later error record's is not), the auth event carries it", async () => {
    const secret = "an HS256 secret of 32 bytes, ok!";
    const app = express();
    app.disable("x-powered-by");
    app.use(authenticate({ realm: "api", bearer: { secret, algorithms: ["HS256"] } }));
    app.get("/me", (_req, res) => {
      res.json({});
    });
    app.use(errorHandler(quiet));
    const origin = await listen(createServer(serverSpans(app, { tracerProvider, propagator })));
    const now = Math.floor(Date.now() / 1000);
    const token = jwt({ sub: "ada", iat: now - 7200, exp: now - 3600 }, secret);
    const response = await fetch(`${origin}/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(401);
    await response.arrayBuffer();
    const [span] = await serverSpansExported(1);
    expect(span?.attributes).toMatchObject({
      "svc.authentication.result": "failure",
      "error.type": "expired",
      "http.response.status_code": 401,
    });
    const refused = span?.events.find((e) => e.name === "svc.auth.refused");
    expect(refused?.attributes?.["error.type"]).toBe("expired");
    // The error record that follows keeps its own code in its point.
    const { resourceMetrics } = await reader.collect();
    const records = resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .find((m) => m.descriptor.name === "svc.errors.records");
    expect(records?.dataPoints.map((p) => p.attributes)).toContainEqual({
      "http.response.status_code": 401,
      "error.type": "invalid_token",
    });
  });
});
