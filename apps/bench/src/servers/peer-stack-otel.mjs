// The OpenTelemetry setup a team puts in front of the peer stack (peer-stack.mjs), as the
// OpenTelemetry JS documentation gives it for an ES module application: the Node.js SDK with the
// http and Express instrumentations and a Prometheus exporter, preloaded before the application,
//
//   node --experimental-loader=@opentelemetry/instrumentation/hook.mjs \
//        --import ./peer-stack-otel.mjs peer-stack.mjs
//
// The loader hook (import-in-the-middle) lets the instrumentations patch `express` and `node:http`
// as the application imports them; `--import` runs this file, so the instrumentations are
// registered before any of the application's modules is loaded. Spans go where the OpenTelemetry
// environment says (`OTEL_TRACES_EXPORTER`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, ...), each
// exporter behind the SDK's BatchSpanProcessor (`OTEL_BSP_*`); the Prometheus exporter serves
// `GET /metrics` on `OTEL_EXPORTER_PROMETHEUS_HOST`:`OTEL_EXPORTER_PROMETHEUS_PORT` (default 9464).
//
// @see https://github.com/open-telemetry/opentelemetry-js/blob/main/doc/esm-support.md the ESM setup
// @see https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { ExpressInstrumentation } from "@opentelemetry/instrumentation-express";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { NodeSDK } from "@opentelemetry/sdk-node";

const sdk = new NodeSDK({
  serviceName: "peer-stack",
  metricReaders: [new PrometheusExporter()],
  instrumentations: [new HttpInstrumentation(), new ExpressInstrumentation()],
});
sdk.start();
