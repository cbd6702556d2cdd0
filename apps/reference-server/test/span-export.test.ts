import { once } from "node:events";
import { writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { ExportResultCode, TraceState } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createLogger, startService } from "../src/server.js";
import { WorkerSpanExporter, WorkerSpanProcessor } from "../src/span-export.js";
import { decodeSpans, encodeSpans } from "../src/span-wire.mjs";
import { frameworkEnv } from "./harness.js";

/**
 * Spans leave through a worker thread (span-export.ts): the SDK's OTLP exporter encodes and sends
 * them there. What a collector receives is what it received before; these cases are the worker's
 * own: a shutdown's flush, a collector that refuses or hangs, a worker that dies.
 * @see https://opentelemetry.io/docs/specs/otlp/#otlphttp
 */

/** An OTLP/HTTP receiver for the JSON encoding, answering each export as `mode` says. */
class Receiver {
  readonly traceIds: string[] = [];
  /** Exports it holds without an answer (`mode` "hang"). */
  readonly held: ServerResponse[] = [];
  mode: "accept" | "500" | "hang" = "accept";
  exports = 0;
  url = "";
  private readonly server: Server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    this.exports++;
    if (this.mode === "hang") {
      this.held.push(res);
      return;
    }
    if (this.mode === "500") {
      res.writeHead(500).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      resourceSpans: { scopeSpans: { spans: { traceId: string }[] }[] }[];
    };
    for (const resource of body.resourceSpans)
      for (const scope of resource.scopeSpans)
        for (const span of scope.spans) this.traceIds.push(span.traceId);
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });

  async start(): Promise<void> {
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`;
  }

  /** Answers the exports it holds. */
  release(): void {
    for (const res of this.held.splice(0))
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
  }

  async stop(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    this.server.close();
  }
}

/** A port nothing listens on: bound once, then closed. */
async function closedPort(): Promise<string> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/v1/traces`;
}

const traceparent = (i: number) => `00-${i.toString(16).padStart(32, "0")}-00f067aa0ba902b7-01`;
const traceIdOf = (i: number) => i.toString(16).padStart(32, "0");

/** `process.env` with `values`, for the processor and the worker the test starts; restored after each test. */
let saved: Record<string, string | undefined> = {};
function withEnv(values: Record<string, string>): void {
  for (const [name, value] of Object.entries(values)) {
    if (!(name in saved)) saved[name] = process.env[name];
    process.env[name] = value;
  }
}
beforeEach(() => {
  saved = {};
});
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** The reference server exporting over OTLP/JSON to `url`, its log lines in `lines`. */
async function serviceTo(url: string, lines: Record<string, unknown>[]) {
  return startService(
    loadConfig({
      PORT: "0",
      ...frameworkEnv(),
      DATABASE_URL: "sqlite::memory:",
      RATE_LIMIT_MAX: "100000",
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
    }),
    {
      logger: createLogger(
        { logLevel: "warn" },
        { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
      ),
    },
  );
}

const notExported = (lines: Record<string, unknown>[]) => lines.filter((l) => l.msg === "spans not exported");

describe("spans over OTLP from the span worker", () => {
  it("25 requests just before close() → all 25 spans reach the receiver, none encoded on this thread", async () => {
    // Nothing is exported before close (a 30 s delay, a batch of 512): the shutdown's flush sends them.
    withEnv({ OTEL_BSP_SCHEDULE_DELAY: "30000" });
    const receiver = new Receiver();
    await receiver.start();
    const lines: Record<string, unknown>[] = [];
    const service = await serviceTo(receiver.url, lines);
    try {
      for (let i = 1; i <= 25; i++) {
        const r = await fetch(`${service.url}/v1/employees`, { headers: { traceparent: traceparent(i) } });
        expect(r.status).toBe(401);
        await r.arrayBuffer();
      }
      expect(receiver.traceIds).toEqual([]);
    } finally {
      await service.close();
      await receiver.stop();
    }
    const expected = Array.from({ length: 25 }, (_, i) => traceIdOf(i + 1));
    expect([...receiver.traceIds].sort()).toEqual(expected);
    expect(notExported(lines)).toEqual([]);
    // The OTLP encoders ran in the worker: this thread never loaded them.
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    expect(loaded.filter((path) => /otlp-transformer|exporter-trace-otlp/.test(path))).toEqual([]);
  });

  it.each([
    ["answers 500", "500"],
    ["is a closed port", "closed"],
  ] as const)(
    "a receiver that %s → the server keeps answering, one warning per batch, close() resolves",
    async (_, kind) => {
      // One span a batch, sent at once; a refused connection is retried within 300 ms, then given up.
      withEnv({
        OTEL_BSP_SCHEDULE_DELAY: "10",
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "1",
        OTEL_EXPORTER_OTLP_TIMEOUT: "300",
      });
      const receiver = new Receiver();
      receiver.mode = "500";
      await receiver.start();
      const url = kind === "500" ? receiver.url : await closedPort();
      const lines: Record<string, unknown>[] = [];
      const service = await serviceTo(url, lines);
      try {
        for (let i = 1; i <= 4; i++) {
          const r = await fetch(`${service.url}/v1/employees`, { headers: { traceparent: traceparent(i) } });
          expect(r.status).toBe(401);
          await r.arrayBuffer();
          // Each span's export is over (failed) before the next request.
          await expect.poll(() => notExported(lines).length, { timeout: 5000 }).toBe(i);
        }
        // One more, left for the shutdown's flush: it fails too, and close() still resolves.
        await (
          await fetch(`${service.url}/v1/employees`, { headers: { traceparent: traceparent(5) } })
        ).text();
      } finally {
        await service.close();
        await receiver.stop();
      }
      const warnings = notExported(lines);
      expect(warnings.map((l) => l.spans)).toEqual([1, 1, 1, 1, 1]);
      expect(warnings.every((l) => l.level === 40 && l.url === url)).toBe(true);
      // The worker's error retold without a stack of this thread: formatting one costs the event loop.
      expect(warnings.map((l) => (l.err as { stack: string }).stack.includes("\n    at "))).not.toContain(
        true,
      );
      if (kind === "500") expect(receiver.exports).toBe(5);
      else expect(JSON.stringify(warnings[0]?.err)).toContain("ECONNREFUSED");
    },
  );

  it("a receiver that hangs, 8 batches, room for 3 → 3 wait in the worker, 5 dropped and counted", async () => {
    // The processor gives up waiting after 100 ms and sends the next batch; the exporter waits on
    // (60 s): only the backlog's bound (queue 2 + batch 1 = 3 spans) stops batches piling up.
    withEnv({
      OTEL_BSP_SCHEDULE_DELAY: "10",
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "1",
      OTEL_BSP_MAX_QUEUE_SIZE: "2",
      OTEL_BSP_EXPORT_TIMEOUT: "100",
      OTEL_EXPORTER_OTLP_TIMEOUT: "60000",
    });
    const receiver = new Receiver();
    receiver.mode = "hang";
    await receiver.start();
    const lines: Record<string, unknown>[] = [];
    const service = await serviceTo(receiver.url, lines);
    try {
      for (let i = 1; i <= 8; i++) {
        const r = await fetch(`${service.url}/v1/employees`, { headers: { traceparent: traceparent(i) } });
        expect(r.status).toBe(401);
        await r.arrayBuffer();
        // Each span is a batch of its own, held by the receiver or dropped before the next request.
        await expect.poll(() => receiver.held.length + notExported(lines).length, { timeout: 5000 }).toBe(i);
      }
      await expect.poll(() => notExported(lines).length, { timeout: 5000 }).toBe(5);
      expect(receiver.held.length).toBe(3);
      const dropped = notExported(lines).map((l) => (l.err as { message: string }).message);
      expect(
        dropped.every((m) => /^1 spans dropped: 3 wait for the collector already, at most 3 may/.test(m)),
      ).toBe(true);
      expect(dropped.at(-1)).toContain("(5 dropped since start)");
    } finally {
      // The collector answers at last: the three held batches are exported, the shutdown waits for them.
      receiver.release();
      await service.close();
      await receiver.stop();
    }
    expect(notExported(lines).length).toBe(5);
    expect(receiver.exports).toBe(3);
  });
});

/** Finished spans of a real SDK tracer, as a batch processor hands them to its exporter. */
function finishedSpans(count: number): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer("span-export.test");
  for (let i = 0; i < count; i++) tracer.startSpan(`span ${i}`, { attributes: { i } }).end();
  return memory.getFinishedSpans();
}

function exportOnce(exporter: WorkerSpanExporter, spans: ReadableSpan[]) {
  return new Promise<{ code: ExportResultCode; error?: Error }>((resolve) => exporter.export(spans, resolve));
}

describe("spans of a sampler the environment names", () => {
  it("OTEL_TRACES_SAMPLER=parentbased_always_off: a sampled traceparent → its span; no traceparent → none", async () => {
    withEnv({ OTEL_TRACES_SAMPLER: "parentbased_always_off", OTEL_BSP_SCHEDULE_DELAY: "30000" });
    const receiver = new Receiver();
    await receiver.start();
    const lines: Record<string, unknown>[] = [];
    const service = await serviceTo(receiver.url, lines);
    try {
      for (const headers of [{ traceparent: traceparent(7) }, {}]) {
        const r = await fetch(`${service.url}/v1/employees`, { headers });
        expect(r.status).toBe(401);
        await r.arrayBuffer();
      }
    } finally {
      await service.close();
      await receiver.stop();
    }
    expect(receiver.traceIds).toEqual([traceIdOf(7)]);
  });
});

describe("WorkerSpanExporter: a worker that dies", () => {
  it("a worker that exits on its second batch → that batch fails, reported; the third goes to a new worker", async () => {
    const receiver = new Receiver();
    await receiver.start();
    // The real worker, but this thread ends when its second batch arrives.
    const script = join(tmpdir(), `span-export-dies-${process.pid}.mjs`);
    const real = new URL("../src/span-export-worker.mjs", import.meta.url).href;
    await writeFile(
      script,
      `import { parentPort } from "node:worker_threads";
let batches = 0;
const on = parentPort.on.bind(parentPort);
parentPort.on = (event, listener) =>
  on(event, (m) => (m.type === "export" && ++batches === 2 ? process.exit(3) : listener(m)));
await import(${JSON.stringify(real)});
`,
    );
    const failures: [string, number][] = [];
    const exporter = new WorkerSpanExporter({
      protocol: "http/json",
      url: receiver.url,
      maxBacklogSpans: 100,
      onFailure: (error, spans) => failures.push([error.message, spans]),
      script: pathToFileURL(script),
    });
    try {
      const spans = finishedSpans(3);
      const first = await exportOnce(exporter, spans.slice(0, 1));
      expect(first.error).toBeUndefined();
      expect(first.code).toBe(ExportResultCode.SUCCESS);
      const lost = await exportOnce(exporter, spans.slice(1, 2));
      expect(lost.code).toBe(ExportResultCode.FAILED);
      expect(lost.error?.message).toBe("the span export worker exited with code 3");
      expect((await exportOnce(exporter, spans.slice(2, 3))).code).toBe(ExportResultCode.SUCCESS);
    } finally {
      await exporter.shutdown();
      await receiver.stop();
    }
    expect(failures).toEqual([["the span export worker exited with code 3", 1]]);
    expect(receiver.traceIds.length).toBe(2);
  });

  it("a worker script that cannot load → every batch fails with the reason, one report each, no thread left", async () => {
    const failures: [string, number][] = [];
    const exporter = new WorkerSpanExporter({
      protocol: "http/protobuf",
      url: "http://127.0.0.1:9/v1/traces",
      maxBacklogSpans: 100,
      onFailure: (error, spans) => failures.push([error.message, spans]),
      script: pathToFileURL(join(tmpdir(), `no-such-span-worker-${process.pid}.mjs`)),
    });
    const spans = finishedSpans(2);
    const first = await exportOnce(exporter, spans);
    const second = await exportOnce(exporter, spans.slice(0, 1));
    await exporter.shutdown();
    expect(first.code).toBe(ExportResultCode.FAILED);
    expect(second.error?.message).toMatch(/^the span export worker cannot start: Cannot find module/);
    expect(failures.map(([, n]) => n)).toEqual([2, 1]);
  });
});

describe("WorkerSpanProcessor: each span written into its batch as it ends", () => {
  it("batches of 2, a 30 s delay: 2 spans go at once, the third at the flush; an unsampled one never", async () => {
    const receiver = new Receiver();
    await receiver.start();
    const failures: number[] = [];
    const processor = new WorkerSpanProcessor(
      new WorkerSpanExporter({
        protocol: "http/json",
        url: receiver.url,
        maxBacklogSpans: 100,
        onFailure: (_, spans) => failures.push(spans),
      }),
      { maxExportBatchSize: 2, scheduledDelayMillis: 30_000 },
    );
    const provider = new BasicTracerProvider({ spanProcessors: [processor] });
    const tracer = provider.getTracer("span-export.test");
    const parent = (i: number, traceFlags: number) =>
      trace.setSpanContext(context.active(), {
        traceId: traceIdOf(i),
        spanId: "00f067aa0ba902b7",
        traceFlags,
      });
    try {
      tracer.startSpan("first", {}, parent(1, 1)).end();
      tracer.startSpan("not sampled", {}, parent(2, 0)).end();
      tracer.startSpan("second", {}, parent(3, 1)).end();
      await expect.poll(() => receiver.traceIds.length, { timeout: 5000 }).toBe(2);
      tracer.startSpan("third", {}, parent(4, 1)).end();
      await provider.forceFlush();
      expect(receiver.traceIds).toEqual([traceIdOf(1), traceIdOf(3), traceIdOf(4)]);
    } finally {
      await provider.shutdown();
      await receiver.stop();
    }
    expect(receiver.exports).toBe(2);
    expect(failures).toEqual([]);
  });
});

/** What an OTLP encoder reads of a span, as plain values. */
function readable(span: ReadableSpan) {
  const contextOf = (c: ReturnType<ReadableSpan["spanContext"]> | undefined) =>
    c === undefined ? undefined : { ...c, traceState: c.traceState?.serialize() };
  return {
    name: span.name,
    kind: span.kind,
    context: contextOf(span.spanContext()),
    parent: contextOf(span.parentSpanContext),
    startTime: span.startTime,
    endTime: span.endTime,
    duration: span.duration,
    status: span.status,
    attributes: { ...span.attributes },
    events: span.events.map((e) => ({ ...e, attributes: { ...e.attributes } })),
    links: span.links.map((l) => ({ ...l, context: contextOf(l.context), attributes: { ...l.attributes } })),
    resource: { attributes: span.resource.attributes, schemaUrl: span.resource.schemaUrl },
    scope: span.instrumentationScope,
    dropped: [span.droppedAttributesCount, span.droppedEventsCount, span.droppedLinksCount],
  };
}

describe("span-wire: a batch as it crosses to the worker", () => {
  it("a remote parent with a trace state, events, links, an array attribute, two scopes → the same spans", () => {
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(memory)],
      spanLimits: { attributeCountLimit: 3 },
    });
    const parent = trace.setSpanContext(context.active(), {
      traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
      spanId: "00f067aa0ba902b7",
      traceFlags: 1,
      isRemote: true,
      traceState: new TraceState("vendor=a,other=b"),
    });
    const server = provider
      .getTracer("@svc/otel", "1.2.3")
      .startSpan(
        "GET /employees/{id}",
        { kind: SpanKind.SERVER, attributes: { "http.request.method": "GET", tags: ["a", "b"], n: 2.5 } },
        parent,
      );
    server.setAttribute("over.the.limit", true);
    server.addEvent("svc.auth.refused", { "error.type": "expired", "svc.count": 3 });
    server.addLink({
      context: { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 0 },
      attributes: { why: "retry" },
    });
    server.setStatus({ code: SpanStatusCode.ERROR, message: "boom" });
    server.end();
    provider.getTracer("store").startSpan("GET", {}, trace.setSpan(context.active(), server)).end();
    const spans = memory.getFinishedSpans();
    const decoded = decodeSpans(structuredClone(encodeSpans(spans)));
    expect(decoded.map(readable)).toEqual(spans.map(readable));
    expect(spans[0]?.droppedAttributesCount).toBe(1);
    // One resource object for the batch, as the encoders group spans by it.
    expect(decoded[0]?.resource).toBe(decoded[1]?.resource);
    expect(decoded[0]?.instrumentationScope).not.toBe(decoded[1]?.instrumentationScope);
  });

  it("100 spans with the same attribute keys, one with other keys → two lists of keys in the batch, each key once", () => {
    const spans = finishedSpans(100);
    const memory = new InMemorySpanExporter();
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] })
      .getTracer("other")
      .startSpan("other", { attributes: { j: 1, k: "v" } })
      .end();
    const batch = encodeSpans([...spans, ...memory.getFinishedSpans()]);
    expect(batch.keyLists).toEqual([["i"], ["j", "k"]]);
    expect(batch.values.filter((value) => value === "i")).toEqual([]);
    expect(decodeSpans(structuredClone(batch)).map((span) => span.attributes)).toEqual([
      ...spans.map((span) => span.attributes),
      { j: 1, k: "v" },
    ]);
  });
});
