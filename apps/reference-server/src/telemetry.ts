import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
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
 * OpenTelemetry metrics (`@svc/otel`), served in the Prometheus text format on `GET /metrics`,
 * and the decisions each request met, for its access line.
 */
export interface Telemetry {
  /** The metrics now, in the Prometheus text exposition format 0.0.4. */
  metricsText(): Promise<string>;
  /** The decisions the packages took on `request` (`ratelimit:limited`, `auth:refused:expired`), in order. */
  decisionsOf(request: object): readonly string[] | undefined;
  /** The principal the request was authenticated as, if any. */
  principalOf(request: object): string | undefined;
  /** Stops listening. */
  close(): Promise<void>;
}

/** The object a request's decisions are kept by: the `node:http` request under Fastify's. */
function carrier(request: object): object {
  const raw = (request as { raw?: unknown }).raw;
  return typeof raw === "object" && raw !== null ? raw : request;
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
 * port of its own (the service's `/metrics` route serialises it), `@svc/otel` over every
 * package's channel, and a listener that keeps each request's decisions for its access line.
 *
 * @example const telemetry = createTelemetry(); const text = await telemetry.metricsText();
 * @see https://prometheus.io/docs/instrumenting/exposition_formats/
 */
export function createTelemetry(): Telemetry {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter] });
  const instrumentation = instrumentSvc({ meterProvider });
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
    async close() {
      instrumentation.disable();
      for (const [name, listener] of listeners) unsubscribeDiagnostics(name, listener);
      await meterProvider.shutdown();
    },
  };
}
