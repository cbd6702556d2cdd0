// The packages as their READMEs compose them, on real servers of each framework, with the real
// OpenTelemetry SDK: what a team sees in its metrics and on its server spans for a 429.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { context, SpanKind } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { errorHandler } from "@svc/errors/express";
import { onError } from "@svc/errors/fetch";
import { errorResponder } from "@svc/errors/node";
import { rateLimit as expressRateLimit } from "@svc/ratelimit/express";
import { rateLimit as fetchRateLimit } from "@svc/ratelimit/fetch";
import { rateLimit as nodeRateLimit } from "@svc/ratelimit/node";
import express from "express";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instrumentSvc, type SvcInstrumentation } from "../src/index.js";

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const reader = new TestReader();
const meterProvider = new MeterProvider({ readers: [reader] });
const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
const tracer = tracerProvider.getTracer("test-http");
let instrumentation: SvcInstrumentation;

/** An HTTP instrumentation's part: each request in an active server span named after its framework. */
function traced(name: string, handler: (req: IncomingMessage, res: ServerResponse) => void) {
  return (req: IncomingMessage, res: ServerResponse) =>
    tracer.startActiveSpan(name, { kind: SpanKind.SERVER }, (span) => {
      res.once("close", () => span.end());
      handler(req, res);
    });
}

const LIMIT = { limit: 1, windowMs: 60_000 };

const frameworks: Record<string, () => (req: IncomingMessage, res: ServerResponse) => void> = {
  "Express 5": () => {
    const app = express();
    app.disable("x-powered-by");
    app.use(expressRateLimit(LIMIT));
    app.get("/x", (_req, res) => {
      res.json({ ok: true });
    });
    app.use(errorHandler());
    return app;
  },
  "node:http": () => {
    const limit = nodeRateLimit(LIMIT);
    const sendError = errorResponder();
    return (req, res) => {
      limit(req, res).then(
        () => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}'),
        (err: unknown) => sendError(err, req, res),
      );
    };
  },
  Hono: () => {
    const app = new Hono();
    app.use(fetchRateLimit(LIMIT));
    app.get("/x", (c) => c.json({ ok: true }));
    app.onError(onError());
    return getRequestListener(app.fetch);
  },
};

const servers: Server[] = [];
beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  instrumentation = instrumentSvc({ meterProvider, tracerProvider });
});
afterAll(async () => {
  instrumentation.disable();
  for (const server of servers) server.close();
  context.disable();
  await meterProvider.shutdown();
});

async function rejected(): Promise<number> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics
    .flatMap((s) => s.metrics)
    .find((m) => m.descriptor.name === "svc.rate_limiting.requests");
  return (metric?.dataPoints ?? [])
    .filter((p) => p.attributes["svc.rate_limiting.result"] === "rejected")
    .reduce((sum, p) => sum + (p.value as number), 0);
}

describe.each(Object.keys(frameworks))("@svc/otel over @svc/ratelimit on %s", (name) => {
  it("the second request → 429 on the wire, one rejected point, the server span carries the decision and a limited event", async () => {
    const server = createServer(
      traced(name, (frameworks[name] as () => (req: IncomingMessage, res: ServerResponse) => void)()),
    );
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
    const before = await rejected();
    spans.reset();
    expect((await fetch(url)).status).toBe(200);
    const limited = await fetch(url);
    expect(limited.status).toBe(429);
    await limited.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await rejected()).toBe(before + 1);
    const serverSpans = spans.getFinishedSpans().filter((s) => s.name === name);
    expect(serverSpans.map((s) => s.attributes["svc.rate_limiting.result"])).toEqual([
      "acquired",
      "rejected",
    ]);
    expect(serverSpans[1]?.events.map((e) => e.name)).toContain("svc.ratelimit.limited");
    expect(serverSpans[1]?.attributes["http.response.status_code"]).toBe(429);
  });
});
