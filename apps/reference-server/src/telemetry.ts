import type { IncomingMessage, ServerResponse } from "node:http";
import {
  context,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import {
  type DecisionMessage,
  exchangeIfAny,
  subscribeDiagnostics,
  unsubscribeDiagnostics,
} from "@svc/kernel";
import { instrumentSvc, PACKAGES } from "@svc/otel";

/** The most decisions one request's access line names: a request cannot grow it without bound. */
const MAX_DECISIONS = 16;

/**
 * What the service tells its operator beyond its log lines: every decision of the packages as
 * OpenTelemetry metrics (`@svc/otel`), served in the Prometheus text format on `GET /metrics` of
 * the metrics' own listener (`METRICS_PORT`), and the decisions each request met, for its access line.
 */
export interface Telemetry {
  /** The metrics now, in the Prometheus text exposition format 0.0.4. */
  metricsText(): Promise<string>;
  /** The decisions the packages took on `request` (`ratelimit:limited`, `auth:refused:expired`), in order. */
  decisionsOf(request: object): readonly string[] | undefined;
  /** The principal the request was authenticated as, if any. */
  principalOf(request: object): string | undefined;
  /**
   * `handler` with each request in a server span: a child of the request's W3C `traceparent`
   * when it sends a valid one (else the root of a new trace), active while the request is
   * served, so the packages' decisions land on it and their store calls are its children.
   */
  traced(
    handler: (req: IncomingMessage, res: ServerResponse) => void,
  ): (req: IncomingMessage, res: ServerResponse) => void;
  /** The trace id of the request's server span (32 hex digits), for its log lines. */
  traceOf(request: object): string | undefined;
  /**
   * The service's route templates, as its OpenAPI document names them (`/employees/{id}`): a
   * request's `http.route` is the one its path matches (after a `/v<N>` prefix).
   */
  routes(templates: readonly string[]): void;
  /** Stops listening. */
  close(): Promise<void>;
}

/** The object a request's decisions are kept by: the `node:http` request under Fastify's. */
function carrier(request: object): object {
  const raw = (request as { raw?: unknown }).raw;
  return typeof raw === "object" && raw !== null ? raw : request;
}

/** The semantic conventions' buckets for HTTP durations, in seconds. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** The methods the semantic conventions name; any other is `_OTHER` (a metric's series stay few). */
const KNOWN_METHODS = new Set([
  "CONNECT",
  "DELETE",
  "GET",
  "HEAD",
  "OPTIONS",
  "PATCH",
  "POST",
  "PUT",
  "TRACE",
  "QUERY",
]);

/** An OpenAPI path template (`/employees/{id}`) as a pattern over a request's path. */
function templatePattern(template: string): RegExp {
  const parts = template.split(/\{[^}/]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join("[^/]+")}$`);
}

/** One decision as the access line names it: `<package>:<decision>[:<reason or code>]`. */
function decisionWord(pkg: string, message: DecisionMessage & Record<string, unknown>): string {
  const detail = message.reason ?? message.faultCode ?? message.code ?? message.version ?? message.coding;
  return typeof detail === "string" || typeof detail === "number"
    ? `${pkg}:${message.decision}:${detail}`
    : `${pkg}:${message.decision}`;
}

/**
 * Starts the service's telemetry: a meter provider read by a Prometheus exporter that serves no
 * port of its own (the metrics' listener serialises it, metrics-listener.ts), a server span per request that
 * continues the caller's trace, `@svc/otel` over every package's channel, and a listener that
 * keeps each request's decisions for its access line.
 *
 * @example const telemetry = createTelemetry(); const text = await telemetry.metricsText();
 * @see https://prometheus.io/docs/instrumenting/exposition_formats/
 * @see https://www.w3.org/TR/trace-context/#traceparent-header the caller's trace, continued
 */
export function createTelemetry(): Telemetry {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({
    readers: [exporter],
    resource: resourceFromAttributes({ "service.name": "svc-reference-server" }),
  });
  // A request's context follows its asynchronous work; the first service of a process sets it.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const tracerProvider = new BasicTracerProvider();
  const tracer = tracerProvider.getTracer("@svc/reference-server");
  const propagator = new W3CTraceContextPropagator();
  const spans = new WeakMap<object, Span>();
  const instrumentation = instrumentSvc({ meterProvider, tracerProvider });
  // @see https://opentelemetry.io/docs/specs/semconv/http/http-metrics/#metric-httpserverrequestduration
  const requests = meterProvider
    .getMeter("@svc/reference-server")
    .createHistogram("http.server.request.duration", {
      description: "Duration of HTTP server requests",
      unit: "s",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
  let templates: readonly [string, RegExp][] = [];
  const routeOf = (url: string | undefined): string | undefined => {
    const path = (url ?? "").split("?")[0]?.replace(/^\/v[0-9]+(?=\/)/, "") ?? "";
    return templates.find(([, pattern]) => pattern.test(path))?.[0];
  };
  const serializer = new PrometheusSerializer();
  const decisions = new WeakMap<object, string[]>();
  const listeners = PACKAGES.map((pkg) => {
    const listener = (raw: unknown) => {
      const message = raw as DecisionMessage & Record<string, unknown>;
      if (message?.request === undefined || typeof message.request !== "object") return;
      const key = carrier(message.request);
      let list = decisions.get(key);
      if (list === undefined) {
        list = [];
        decisions.set(key, list);
      }
      if (list.length < MAX_DECISIONS) list.push(decisionWord(pkg, message));
    };
    subscribeDiagnostics(`svc:${pkg}`, listener);
    return [`svc:${pkg}`, listener] as const;
  });
  return {
    async metricsText() {
      const { resourceMetrics } = await exporter.collect();
      return serializer.serialize(resourceMetrics);
    },
    decisionsOf: (request) => decisions.get(carrier(request)),
    principalOf: (request) => exchangeIfAny(request)?.authentication?.principal?.id,
    traced(handler) {
      return (req, res) => {
        // W3C Trace Context §3.2: a traceparent that does not parse is ignored, a new trace starts.
        const parent = propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
        const span = tracer.startSpan(
          req.method ?? "HTTP",
          { kind: SpanKind.SERVER, attributes: { "http.request.method": req.method ?? "_OTHER" } },
          parent,
        );
        spans.set(req, span);
        const started = performance.now();
        res.once("close", () => {
          const method = KNOWN_METHODS.has(req.method ?? "") ? (req.method as string) : "_OTHER";
          const route = routeOf(req.url);
          const attributes: Record<string, string | number> = {
            "http.request.method": method,
            "http.response.status_code": res.statusCode,
          };
          if (route !== undefined) attributes["http.route"] = route;
          if (res.statusCode >= 500) attributes["error.type"] = String(res.statusCode);
          requests.record((performance.now() - started) / 1000, attributes);
          span.setAttributes(attributes);
          if (route !== undefined) span.updateName(`${method} ${route}`);
          if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        });
        context.with(trace.setSpan(parent, span), handler, undefined, req, res);
      };
    },
    traceOf: (request) => spans.get(carrier(request))?.spanContext().traceId,
    routes(given) {
      // A path matches only templates of its depth; among those, literal segments before parameters
      // (`/orders/search` before `/orders/{id}`).
      const params = (template: string) => template.split("{").length;
      templates = [...given]
        .sort((a, b) => params(a) - params(b))
        .map((template) => [template, templatePattern(template)]);
    },
    async close() {
      instrumentation.disable();
      for (const [name, listener] of listeners) unsubscribeDiagnostics(name, listener);
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
    },
  };
}
