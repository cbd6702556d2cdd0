import { Worker } from "node:worker_threads";
import { TraceFlags } from "@opentelemetry/api";
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { TraceExport } from "./config.js";
import { SpanBatch, type WireBatch } from "./span-wire.mjs";

/** What the main thread posts to the worker: a batch (span-wire.mjs), or the end. */
export type ToWorker = ({ type: "export"; id: number } & WireBatch) | { type: "shutdown"; id: number };

/** What the worker answers, once per message: `error` when the batch was not exported. */
export interface FromWorker {
  id: number;
  error?: { message: string; code?: string | number | undefined } | undefined;
}

/** What the worker is started with: the OTLP exporter the configuration names. */
export interface WorkerSettings {
  protocol: TraceExport["protocol"];
  url: string;
}

/**
 * The worker's script. It is plain JavaScript, run as it is written: the server runs from its
 * sources (tests, the bench's TypeScript loader), from tsup's `dist/main.js` and from the bench's
 * bundle in `dist/`, and from each of them `../src/` is this folder.
 */
const WORKER_SCRIPT = new URL("../src/span-export-worker.mjs", import.meta.url);

/** Options of {@link WorkerSpanExporter}. */
export interface WorkerSpanExporterOptions extends WorkerSettings {
  /**
   * The most spans handed to the worker and not yet answered. A batch that would go beyond it is
   * refused (reported as a failed export, with the count of spans dropped so far), as the batch processor
   * drops spans past its queue and the OTLP exporter refuses exports past its concurrency limit.
   */
  maxBacklogSpans: number;
  /** Told once of each batch that was not exported: refused, failed in the worker, or lost with it. */
  onFailure(error: Error, spans: number): void;
  /** The worker's script. @default span-export-worker.mjs beside this file's source */
  script?: URL;
}

/** A batch handed to a worker, until the worker answers for it. */
interface Pending {
  done: (result: ExportResult) => void;
  settled: Promise<void>;
  settle: () => void;
}

/** One worker thread and the batches it has not answered yet. */
interface Lane {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Whether it answered a message: a worker that dies before it ever did cannot start at all. */
  answered: boolean;
  /** Why it stopped, when an exception ended it. */
  error: Error | undefined;
}

/**
 * A `SpanExporter` that hands each batch to a worker thread, where the SDK's own OTLP/HTTP
 * exporter encodes and sends it: the protobuf (or JSON) encoding, the HTTP request and its
 * retries cost the event loop that serves requests nothing but a flat copy of the spans
 * (span-wire.mjs) and its structured clone.
 *
 * A batch's result is the worker's (the batch processor waits for it, as for the SDK exporter's).
 * A worker that dies fails its batches and is started again for the next one, unless it died
 * before answering anything (its script cannot load): then every batch fails with that reason.
 *
 * @see https://opentelemetry.io/docs/specs/otel/trace/sdk/#span-exporter
 */
export class WorkerSpanExporter implements SpanExporter {
  /** Spans refused because the backlog was full, since the exporter started. */
  private refused = 0;
  private lane: Lane | undefined;
  private broken: Error | undefined;
  private backlog = 0;
  private lastId = 0;
  private closed = false;
  private readonly settings: WorkerSettings;
  private readonly script: URL;

  constructor(private readonly options: WorkerSpanExporterOptions) {
    this.settings = { protocol: options.protocol, url: options.url };
    this.script = options.script ?? WORKER_SCRIPT;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const batch = new SpanBatch();
    for (const span of spans) batch.add(span);
    this.send(batch, resultCallback);
  }

  /** Hands `batch` to the worker; `resultCallback` has the worker's answer, or why it was not sent. */
  send(batch: SpanBatch, resultCallback: (result: ExportResult) => void): void {
    const count = batch.count;
    let error: Error | undefined;
    if (this.closed) error = stackless("the span exporter is shut down");
    else if (this.broken !== undefined) error = this.broken;
    else if (this.backlog + count > this.options.maxBacklogSpans) {
      this.refused += count;
      error = stackless(
        `${count} spans dropped: ${this.backlog} wait for the collector already, ` +
          `at most ${this.options.maxBacklogSpans} may (${this.refused} dropped since start)`,
      );
    }
    if (error !== undefined) {
      this.options.onFailure(error, count);
      resultCallback({ code: ExportResultCode.FAILED, error });
      return;
    }
    let lane = this.lane;
    if (lane === undefined) {
      try {
        lane = this.start();
      } catch (cause) {
        // No thread at all (resource limits, a script URL refused): say so for this batch and the next.
        this.broken = new Error(`the span export worker cannot start: ${String(cause)}`, { cause });
        this.options.onFailure(this.broken, count);
        resultCallback({ code: ExportResultCode.FAILED, error: this.broken });
        return;
      }
    }
    const id = ++this.lastId;
    this.backlog += count;
    this.wait(lane, id, (result) => {
      this.backlog -= count;
      if (result.error !== undefined) this.options.onFailure(result.error, count);
      resultCallback(result);
    });
    try {
      lane.worker.postMessage({ type: "export", id, ...batch.message() } satisfies ToWorker);
    } catch (error) {
      // A value the structured clone refuses: the batch cannot be sent, the worker goes on.
      const pending = lane.pending.get(id);
      if (pending !== undefined)
        this.answer(lane, id, pending, error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Waits until the worker has answered for every batch handed to it so far. */
  async forceFlush(): Promise<void> {
    const lane = this.lane;
    if (lane === undefined || lane.pending.size === 0) return;
    await Promise.all([...lane.pending.values()].map((pending) => pending.settled));
  }

  /** Waits for the batches in flight, lets the worker's exporter shut down, then ends the thread. */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.forceFlush();
    const lane = this.lane;
    if (lane === undefined) return;
    const id = ++this.lastId;
    const answered = new Promise<void>((resolve) => this.wait(lane, id, () => resolve()));
    lane.worker.postMessage({ type: "shutdown", id } satisfies ToWorker);
    await answered;
    await lane.worker.terminate();
  }

  private start(): Lane {
    const worker = new Worker(this.script, {
      workerData: this.settings,
      // Plain JavaScript needs none of the server's flags (its TypeScript loader among them).
      execArgv: [],
    });
    const lane: Lane = { worker, pending: new Map(), answered: false, error: undefined };
    this.lane = lane;
    // The thread keeps the process alive only while a batch waits for it (see wait).
    worker.unref();
    worker.on("message", (answer: FromWorker) => {
      lane.answered = true;
      const pending = lane.pending.get(answer.id);
      if (pending === undefined) return;
      this.answer(lane, answer.id, pending, answer.error === undefined ? undefined : errorOf(answer.error));
    });
    worker.on("error", (error) => {
      lane.error = error;
    });
    worker.on("exit", (code) => {
      if (this.lane === lane) this.lane = undefined;
      const error = lane.error ?? stackless(`the span export worker exited with code ${code}`);
      if (!lane.answered && lane.error !== undefined && !this.closed)
        this.broken = new Error(`the span export worker cannot start: ${lane.error.message}`, {
          cause: lane.error,
        });
      for (const [id, pending] of lane.pending) this.answer(lane, id, pending, error);
    });
    return lane;
  }

  /** Records a message the worker will answer for; the thread is kept alive meanwhile. */
  private wait(lane: Lane, id: number, done: (result: ExportResult) => void): void {
    let settle = () => {};
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    if (lane.pending.size === 0) lane.worker.ref();
    lane.pending.set(id, { done, settled, settle });
  }

  private answer(lane: Lane, id: number, pending: Pending, error: Error | undefined): void {
    lane.pending.delete(id);
    if (lane.pending.size === 0) lane.worker.unref();
    pending.done(
      error === undefined ? { code: ExportResultCode.SUCCESS } : { code: ExportResultCode.FAILED, error },
    );
    pending.settle();
  }
}

/**
 * An error without a stack: the stack of an export's failure would only point at this file, and
 * formatting one (through the source maps `--enable-source-maps` loads) costs the event loop
 * more than a batch of spans. The batch processor's error handler reads it, logger or not.
 */
function stackless(message: string, code?: string | number): Error {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  const error = new Error(message) as Error & { code?: string | number };
  Error.stackTraceLimit = limit;
  if (code !== undefined) error.code = code;
  return error;
}

/** The worker's account of a failure, as an error of this thread. */
const errorOf = (given: NonNullable<FromWorker["error"]>): Error => stackless(given.message, given.code);

/** Options of {@link WorkerSpanProcessor}: the batch processor's, as the environment sets them. */
export interface WorkerSpanProcessorOptions {
  /** The spans a batch holds: a full one is handed to the worker at once (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`). */
  maxExportBatchSize: number;
  /** How long a batch that is not full waits for more spans, in milliseconds (`OTEL_BSP_SCHEDULE_DELAY`). */
  scheduledDelayMillis: number;
}

/**
 * The batch processor of a {@link WorkerSpanExporter}: each span is written into the batch as it
 * ends (span-wire.mjs), and a batch goes to the worker when full or when the delay has passed
 * since its first span. The SDK's `BatchSpanProcessor` would hold the spans themselves until
 * then, long enough for the collector of young objects to copy them, and enter a context for
 * each export. Spans beyond what the worker may hold are dropped and reported by the exporter
 * (`maxBacklogSpans`, the queue's size and a batch's); a batch's export is timed by the worker's
 * OTLP exporter (`OTEL_EXPORTER_OTLP_TIMEOUT`), which sends the batches as they come.
 *
 * @see https://opentelemetry.io/docs/specs/otel/trace/sdk/#batching-processor
 */
export class WorkerSpanProcessor implements SpanProcessor {
  private batch: SpanBatch | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  constructor(
    private readonly exporter: WorkerSpanExporter,
    private readonly options: WorkerSpanProcessorOptions,
  ) {}

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if (this.closed || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    this.batch ??= new SpanBatch();
    this.batch.add(span);
    if (this.batch.count >= this.options.maxExportBatchSize) this.send();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.send(), this.options.scheduledDelayMillis);
      // A batch that waits does not keep the process alive; shutdown() sends it.
      this.timer.unref();
    }
  }

  /** Sends the batch being filled, then waits until the worker has answered for every batch. */
  async forceFlush(): Promise<void> {
    this.send();
    await this.exporter.forceFlush();
  }

  /** Sends the batch being filled, then shuts the exporter down (after the batches in flight). */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    this.send();
    this.closed = true;
    await this.exporter.shutdown();
  }

  private send(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.batch;
    this.batch = undefined;
    // A batch that fails is reported by the exporter (onFailure), once.
    if (batch !== undefined) this.exporter.send(batch, () => {});
  }
}
