import type { IncomingMessage, ServerResponse } from "node:http";
import { context, defaultTextMapGetter, diag, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { getNumberFromEnv, getStringFromEnv, W3CTraceContextPropagator } from "@opentelemetry/core";
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { type DecisionMessage, exchangeIfAny, requestState, routeOf } from "@svc/kernel";
import { instrumentSvc, serverSpanOf, serverSpans } from "@svc/otel";
import type { Logger } from "pino";
import type { TraceExport } from "./config.js";
import { RequestDurations } from "./request-durations.js";
import { WorkerSpanExporter, WorkerSpanProcessor } from "./span-export.js";
import { RecordTracerProvider } from "./tracer.js";

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
  /**
   * The decisions the packages took on `request`, in order, as the access line names them
   * (`ratelimit:limited auth:refused:expired`); `undefined` for none.
   */
  decisionsOf(request: object): string | undefined;
  /** The principal the request was authenticated as, if any. */
  principalOf(request: object): string | undefined;
  /**
   * `handler` with each request's duration recorded and, when spans are exported, served in
   * `@svc/otel`'s server span (`serverSpans`): a child of the request's W3C `traceparent` when it
   * sends a valid one (else the root of a new trace), which the packages' decisions land on. It
   * is the active span only where the packages trace store calls (Redis, PostgreSQL), so that
   * those are its children: entering a context costs every request its propagation through its
   * asynchronous work. Without an exporter no span is built, and the request's trace id (for its
   * log lines) is the caller's, else none: an id no span records names no trace, and the
   * correlation id already names the request.
   */
  traced(
    handler: (req: IncomingMessage, res: ServerResponse) => void,
  ): (req: IncomingMessage, res: ServerResponse) => void;
  /**
   * The trace id of the request's server span (32 hex digits), for its log lines; without spans,
   * the caller's (a valid `traceparent`), else `undefined`.
   */
  traceOf(request: object): string | undefined;
  /**
   * The service's route templates, as its OpenAPI document names them (`/employees/{id}`): a
   * request's `http.route` is the one its path matches (after a `/v<N>` prefix).
   */
  routes(templates: readonly string[]): void;
  /** Stops listening. */
  close(): Promise<void>;
}

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

/**
 * One decision as the access line names it: `<package>:<decision>[:<reason or code>]`, the
 * package being its channel's name after `svc:`.
 */
function decisionWord(channel: string, message: DecisionMessage & Record<string, unknown>): string {
  const pkg = channel.startsWith("svc:") ? channel.slice(4) : channel;
  const detail = message.reason ?? message.faultCode ?? message.code ?? message.version ?? message.coding;
  return typeof detail === "string" || typeof detail === "number"
    ? `${pkg}:${message.decision}:${detail}`
    : `${pkg}:${message.decision}`;
}

/**
 * The decisions the request's exchange kept (every one the packages published while `@svc/otel`
 * listened), as the access line's words: made once, when the line is written.
 */
function decisionWords(request: object): string | undefined {
  const decisions = exchangeIfAny(request)?.decisions;
  if (decisions === undefined || decisions.length === 0) return undefined;
  const count = Math.min(decisions.length, MAX_DECISIONS);
  let words = "";
  for (let i = 0; i < count; i++) {
    const { channel, message } = decisions[i] as (typeof decisions)[number];
    words +=
      (i === 0 ? "" : " ") + decisionWord(channel, message as DecisionMessage & Record<string, unknown>);
  }
  return words;
}

/** Options of {@link createTelemetry}. */
export interface TelemetryOptions {
  /**
   * Whether the packages trace calls to a store (a Redis or PostgreSQL one): their client spans
   * are then children of the request's span, which is made the active one for them.
   * @default false
   */
  storeCalls?: boolean;
}

/** When a request came in (`performance.now()`), kept on it for its duration. */
const STARTED = Symbol("svc.telemetry.started");
type Timed = IncomingMessage & { [STARTED]?: number };

/**
 * The exporters `traces` names, each behind a batch processor. OTLP is sent from a worker thread
 * (span-export.ts): the SDK's encoding of a span costs the event loop more than the request it
 * describes, and each span is written into its batch as it ends. Each batch that is not exported
 * is reported once, on `logger` (else on the OpenTelemetry API's diagnostic logger, as the SDK
 * reports).
 */
function spanProcessors(traces: TraceExport, logger: Pick<Logger, "warn"> | undefined): SpanProcessor[] {
  const onFailure = (error: Error, spans: number) => {
    if (logger === undefined) diag.warn(`${spans} spans not exported: ${error.message}`);
    else logger.warn({ err: error, spans, url: traces.url }, "spans not exported");
  };
  const { queue, batch } = batchSizes();
  return traces.exporters.map((name) =>
    name === "console"
      ? new BatchSpanProcessor(new ConsoleSpanExporter())
      : new WorkerSpanProcessor(
          new WorkerSpanExporter({
            protocol: traces.protocol,
            url: traces.url,
            maxBacklogSpans: queue + batch,
            onFailure,
          }),
          {
            maxExportBatchSize: batch,
            scheduledDelayMillis: getNumberFromEnv("OTEL_BSP_SCHEDULE_DELAY") ?? 5000,
          },
        ),
  );
}

/**
 * The batch processor's queue and batch sizes, with the specification's defaults. The worker may
 * hold a queue's and one batch more (`maxBacklogSpans`), so that a shutdown's flush of a full
 * queue, while a batch is still in flight, drops nothing. In bytes, what that many spans hold:
 * the span limits (tracer.ts: `OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT`, `OTEL_SPAN_EVENT_COUNT_LIMIT`,
 * `OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`) bound each one.
 * @see https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/#batch-span-processor
 */
function batchSizes(): { queue: number; batch: number } {
  const queue = getNumberFromEnv("OTEL_BSP_MAX_QUEUE_SIZE") ?? 2048;
  const batch = Math.min(getNumberFromEnv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE") ?? 512, queue);
  return { queue, batch };
}

/**
 * Starts the service's telemetry: a meter provider read by a Prometheus exporter that serves no
 * port of its own (the metrics' listener serialises it, metrics-listener.ts), a server span per request that
 * continues the caller's trace, and `@svc/otel` over every package's channel; the decisions it
 * hears stay in each request's exchange, for its access line. A batch of spans that is not
 * exported is reported on `logger`.
 *
 * @example const telemetry = createTelemetry(); const text = await telemetry.metricsText();
 * @see https://prometheus.io/docs/instrumenting/exposition_formats/
 * @see https://www.w3.org/TR/trace-context/#traceparent-header the caller's trace, continued
 */
export function createTelemetry(
  traces?: TraceExport,
  logger?: Pick<Logger, "warn">,
  { storeCalls = false }: TelemetryOptions = {},
): Telemetry {
  const resource = resourceFromAttributes({ "service.name": "svc-reference-server" });
  const durations = new RequestDurations(resource, "@svc/reference-server");
  const exporter = new PrometheusExporter({ preventServerStart: true, metricProducers: [durations] });
  const meterProvider = new MeterProvider({ readers: [exporter], resource });
  // The request's span is a context that follows its asynchronous work only where store calls
  // need it as their parent: the context manager's hooks, once a context is entered anywhere
  // (the batch processor enters one per batch), run for every promise of the process. The first
  // service of a process sets it.
  const activate = storeCalls && traces !== undefined;
  if (activate) context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // The batch processors read OTEL_BSP_* (delay, queue and batch sizes) from the environment, the
  // tracer the span limits (OTEL_SPAN_*_LIMIT, OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT). With the default
  // sampler its spans are records written into a batch as they end (tracer.ts); another sampler
  // (OTEL_TRACES_SAMPLER) is the SDK's, with its spans.
  // @see https://opentelemetry.io/docs/specs/otel/trace/sdk/#batching-processor
  // @see https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/#general-sdk-configuration
  const sampler = getStringFromEnv("OTEL_TRACES_SAMPLER") ?? "parentbased_always_on";
  const tracerProvider =
    traces === undefined
      ? undefined
      : sampler === "parentbased_always_on"
        ? new RecordTracerProvider({ resource, spanProcessors: spanProcessors(traces, logger) })
        : new BasicTracerProvider({ resource, spanProcessors: spanProcessors(traces, logger) });
  const propagator = new W3CTraceContextPropagator();
  const traceIds = new WeakMap<object, string>();
  const instrumentation = instrumentSvc(
    tracerProvider === undefined ? { meterProvider } : { meterProvider, tracerProvider },
  );
  let templates: readonly [string, RegExp][] = [];
  // The document's templates (`/employees/{id}`) by the router's spelling (`/employees/:id`).
  const named = new Map<string, string | undefined>();
  // The route the router matched (its template as the kernel recorded it), in the document's
  // spelling; else the document's template the path (the version prefix removed) matches.
  const templateOf = (req: IncomingMessage): string | undefined => {
    const route = routeOf(req);
    if (route.template !== undefined) {
      const known = named.get(route.template);
      if (known !== undefined) return known;
    }
    return templates.find(([, pattern]) => pattern.test(route.path))?.[0];
  };
  const serializer = new PrometheusSerializer();
  return {
    async metricsText() {
      const { resourceMetrics } = await exporter.collect();
      return serializer.serialize(resourceMetrics);
    },
    decisionsOf: decisionWords,
    principalOf: (request) => requestState(request).principal?.id,
    traced(handler) {
      if (tracerProvider === undefined)
        return (req, res) => {
          (req as Timed)[STARTED] = performance.now();
          res.on("close", recorded);
          // W3C Trace Context §3.2: a traceparent that does not parse is ignored.
          if (req.headers.traceparent !== undefined) {
            const id = trace.getSpanContext(
              propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter),
            )?.traceId;
            if (id !== undefined) traceIds.set(req, id);
          }
          handler(req, res);
        };
      // @svc/otel's server span: its trace id is the access line's (traceOf).
      const spanned = serverSpans(handler, {
        tracerProvider,
        propagator,
        // A request refused before routing is named by the document's template its path matches.
        route: (req) => templateOf(req as IncomingMessage),
        activate,
      });
      return (req, res) => {
        (req as Timed)[STARTED] = performance.now();
        res.on("close", recorded);
        spanned(req, res);
      };
    },
    traceOf: (request) =>
      serverSpanOf(request)?.spanContext().traceId ??
      traceIds.get((request as { raw?: object }).raw ?? request),
    routes(given) {
      // A path matches only templates of its depth; among those, literal segments before parameters
      // (`/orders/search` before `/orders/{id}`).
      const params = (template: string) => template.split("{").length;
      templates = [...given]
        .sort((a, b) => params(a) - params(b))
        .map((template) => [template, templatePattern(template)]);
      named.clear();
      for (const template of given) named.set(template.replace(/\{([^}/]+)\}/g, ":$1"), template);
    },
    async close() {
      instrumentation.disable();
      await meterProvider.shutdown();
      // The processors' flush rejects when a batch fails; the exporter has reported each one.
      await tracerProvider?.shutdown().catch(() => {});
    },
  };

  /** Records the request's duration when its response closes. */
  function recorded(this: ServerResponse): void {
    const req = this.req as Timed;
    const method = KNOWN_METHODS.has(req.method ?? "") ? (req.method as string) : "_OTHER";
    durations.record(
      (performance.now() - (req[STARTED] ?? 0)) / 1000,
      method,
      this.statusCode,
      templateOf(req),
    );
  }
}
