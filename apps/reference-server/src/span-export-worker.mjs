// @ts-check
/**
 * The span exporter's worker thread (span-export.ts): it rebuilds each batch the main thread
 * posts as the SDK's `ReadableSpan`s (span-wire.mjs) and hands it to the SDK's own OTLP/HTTP
 * exporter, for the protocol and URL the configuration names (`TraceExport`); the exporter reads
 * its headers, compression and timeout from the environment, which a worker inherits. Each
 * message gets one answer: whether the batch was sent.
 *
 * Plain JavaScript, so that it runs as written whether the server runs from its sources or from
 * a bundle; its types are checked with the server's.
 * @see https://opentelemetry.io/docs/specs/otlp/#otlphttp
 */
import { parentPort, workerData } from "node:worker_threads";
import { ExportResultCode } from "@opentelemetry/core";
import { OTLPTraceExporter as OtlpJsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as OtlpProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { decodeSpans } from "./span-wire.mjs";

/** @typedef {import("./span-export.js").ToWorker} ToWorker */
/** @typedef {import("./span-export.js").FromWorker} FromWorker */
/** @typedef {import("./span-export.js").WorkerSettings} WorkerSettings */

const port = parentPort;
if (port === null) throw new Error("span-export-worker.mjs runs as a worker thread (span-export.ts)");
const settings = /** @type {WorkerSettings} */ (workerData);
const exporter =
  settings.protocol === "http/json"
    ? new OtlpJsonExporter({ url: settings.url })
    : new OtlpProtobufExporter({ url: settings.url });

/**
 * @param {number} id
 * @param {unknown} [error]
 */
function answer(id, error) {
  /** @type {FromWorker} */
  const message =
    error === undefined
      ? { id }
      : {
          id,
          error: {
            message: error instanceof Error ? error.message : String(error),
            code:
              typeof error === "object" && error !== null && "code" in error
                ? /** @type {string | number | undefined} */ (error.code)
                : undefined,
          },
        };
  port?.postMessage(message);
}

port.on("message", (/** @type {ToWorker} */ message) => {
  if (message.type === "shutdown") {
    exporter.shutdown().then(
      () => answer(message.id),
      (error) => answer(message.id, error),
    );
    return;
  }
  let spans;
  try {
    spans = decodeSpans(message);
  } catch (error) {
    answer(message.id, error);
    return;
  }
  exporter.export(spans, (result) =>
    answer(
      message.id,
      result.code === ExportResultCode.SUCCESS
        ? undefined
        : (result.error ?? new Error("the OTLP exporter failed without a reason")),
    ),
  );
});
