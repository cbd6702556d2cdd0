import {
  context,
  type HrTime,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { suppressTracing, TraceState } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { decodeSpans, encodeSpans } from "../src/span-wire.mjs";
import { RecordTracerProvider, type SpanLimits, spanLimitsFromEnv } from "../src/tracer.js";

/**
 * The reference server's tracer (tracer.ts) behaves as the SDK's `BasicTracerProvider` with its
 * defaults: the same spans reach the processors, with the same limits, sampling and parents.
 * @see https://opentelemetry.io/docs/specs/otel/trace/sdk/
 */

const resource = resourceFromAttributes({ "service.name": "tracer.test" });
const DEFAULTS: SpanLimits = {
  attributeCount: 128,
  attributeValueLength: Number.POSITIVE_INFINITY,
  eventCount: 128,
  linkCount: 128,
  attributePerEventCount: 128,
  attributePerLinkCount: 128,
};

/** A tracer of the provider under test, and the spans its processor received. */
function recorded(limits: Partial<SpanLimits> = {}): { tracer: Tracer; ended: ReadableSpan[] } {
  const ended: ReadableSpan[] = [];
  const processor = {
    onEnd: (span: ReadableSpan) => void ended.push(span),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const provider = new RecordTracerProvider({
    resource,
    spanProcessors: [processor],
    limits: { ...DEFAULTS, ...limits },
  });
  return { tracer: provider.getTracer("@svc/otel", "1.0.0"), ended };
}

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";
const parentOf = (traceFlags: number, traceId = TRACE_ID) =>
  trace.setSpanContext(context.active(), {
    traceId,
    spanId: PARENT_ID,
    traceFlags,
    isRemote: true,
    traceState: new TraceState("vendor=a"),
  });

describe("RecordTracer: sampling and parents, as ParentBased(AlwaysOn)", () => {
  it.each([
    ["a sampled remote parent", "child", true, parentOf(TraceFlags.SAMPLED), {}],
    ["an unsampled parent", "child", false, parentOf(TraceFlags.NONE), {}],
    ["no parent", "root", true, context.active(), {}],
    [
      "a parent of an all-zero trace id (invalid)",
      "root",
      true,
      parentOf(TraceFlags.SAMPLED, "0".repeat(32)),
      {},
    ],
    ["a sampled parent, root: true", "root", true, parentOf(TraceFlags.SAMPLED), { root: true }],
  ] as const)("%s → a %s span, recording: %s", (_, kind, recording, parent, options) => {
    const { tracer, ended } = recorded();
    const span = tracer.startSpan("GET", options, parent);
    const { traceId, spanId, traceFlags, traceState } = span.spanContext();
    expect(span.isRecording()).toBe(recording);
    expect(spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(spanId).not.toBe(PARENT_ID);
    expect(traceFlags).toBe(recording ? TraceFlags.SAMPLED : TraceFlags.NONE);
    if (kind === "child") {
      expect(traceId).toBe(TRACE_ID);
      expect(traceState?.serialize()).toBe("vendor=a");
    } else {
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(traceId).not.toBe(TRACE_ID);
      expect(traceState).toBeUndefined();
    }
    span.end();
    expect(ended.map((s) => s.parentSpanContext?.spanId)).toEqual(
      recording ? [kind === "child" ? PARENT_ID : undefined] : [],
    );
  });

  it("tracing suppressed in the context → a non-recording span of the invalid context, never ended into a batch", () => {
    const { tracer, ended } = recorded();
    const span = tracer.startSpan("GET", {}, suppressTracing(context.active()));
    span.end();
    expect(span.isRecording()).toBe(false);
    expect(trace.isSpanContextValid(span.spanContext())).toBe(false);
    expect(ended).toEqual([]);
  });

  it("1,000 spans → 1,000 distinct span ids and trace ids", () => {
    const { tracer } = recorded();
    const spans = Array.from({ length: 1000 }, () => tracer.startSpan("x").spanContext());
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(1000);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1000);
  });
});

describe("RecordSpan: the span limits", () => {
  it.each<[string, Partial<SpanLimits>, (span: Span) => void, (span: ReadableSpan) => unknown, unknown]>([
    [
      "3 attributes, a count limit of 2",
      { attributeCount: 2 },
      (s) => s.setAttributes({ a: 1, b: 2, c: 3 }),
      (s) => [s.attributes, s.droppedAttributesCount],
      [{ a: 1, b: 2 }, 1],
    ],
    [
      "a count limit of 2 reached, then a kept key set again",
      { attributeCount: 2 },
      (s) => s.setAttributes({ a: 1, b: 2 }).setAttribute("a", 3),
      (s) => [s.attributes, s.droppedAttributesCount],
      [{ a: 3, b: 2 }, 0],
    ],
    [
      "a string and a string array over a value length limit of 3",
      { attributeValueLength: 3 },
      (s) => s.setAttributes({ s: "abcdef", list: ["abcdef", "x"], n: 123456 }),
      (s) => s.attributes,
      { s: "abc", list: ["abc", "x"], n: 123456 },
    ],
    [
      "an empty key, an undefined value, an object value",
      {},
      (s) => s.setAttributes({ "": 1, u: undefined, o: { x: 1 } as never, ok: true }),
      (s) => [s.attributes, s.droppedAttributesCount],
      [{ ok: true }, 0],
    ],
    [
      "3 events, an event count limit of 2 → the oldest dropped",
      { eventCount: 2 },
      (s) => s.addEvent("e1").addEvent("e2").addEvent("e3"),
      (s) => [s.events.map((e) => e.name), s.droppedEventsCount],
      [["e2", "e3"], 1],
    ],
    [
      "an event of 3 attributes, 2 a event, a value length of 2",
      { attributePerEventCount: 2, attributeValueLength: 2 },
      (s) => s.addEvent("e", { a: "xyz", b: 2, c: 3 }),
      (s) => [s.events[0]?.attributes, s.events[0]?.droppedAttributesCount],
      [{ a: "xy", b: 2 }, 1],
    ],
    [
      "2 links, a link count limit of 1 → the oldest dropped",
      { linkCount: 1, attributePerLinkCount: 1 },
      (s) =>
        s.addLinks([
          { context: { traceId: TRACE_ID, spanId: "1".repeat(16), traceFlags: 1 } },
          {
            context: { traceId: TRACE_ID, spanId: "2".repeat(16), traceFlags: 1 },
            attributes: { a: 1, b: 2 },
          },
        ]),
      (s) => [
        s.links.map((l) => [l.context.spanId, l.attributes, l.droppedAttributesCount]),
        s.droppedLinksCount,
      ],
      [[["2".repeat(16), { a: 1 }, 1]], 1],
    ],
  ])("%s", (_, limits, write, read, expected) => {
    const { tracer, ended } = recorded(limits);
    const span = tracer.startSpan("GET");
    write(span);
    span.end();
    expect(ended.map(read)).toEqual([expected]);
  });
});

describe("RecordSpan: status, name, exceptions and the end", () => {
  it.each<[string, (span: Span) => void, (span: ReadableSpan) => unknown, unknown]>([
    [
      "Error with a message, then Unset",
      (s) =>
        s
          .setStatus({ code: SpanStatusCode.ERROR, message: "boom" })
          .setStatus({ code: SpanStatusCode.UNSET }),
      (s) => s.status,
      { code: SpanStatusCode.ERROR, message: "boom" },
    ],
    [
      "Ok with a message, then Error",
      (s) =>
        s.setStatus({ code: SpanStatusCode.OK, message: "fine" }).setStatus({ code: SpanStatusCode.ERROR }),
      (s) => s.status,
      { code: SpanStatusCode.OK },
    ],
    ["updateName", (s) => s.updateName("GET /employees/{id}"), (s) => s.name, "GET /employees/{id}"],
    [
      "recordException of an error with a code",
      (s) => s.recordException(Object.assign(new TypeError("bad"), { code: "ERR_X", stack: "at x" })),
      (s) => s.events.map((e) => [e.name, e.attributes]),
      [
        [
          "exception",
          { "exception.type": "ERR_X", "exception.message": "bad", "exception.stacktrace": "at x" },
        ],
      ],
    ],
    [
      "recordException of a string",
      (s) => s.recordException("it broke"),
      (s) => s.events.map((e) => [e.name, e.attributes]),
      [["exception", { "exception.message": "it broke" }]],
    ],
  ])("%s", (_, write, read, expected) => {
    const { tracer, ended } = recorded();
    const span = tracer.startSpan("GET");
    write(span);
    span.end();
    expect(ended.map(read)).toEqual([expected]);
  });

  it("end() twice, then writes → handed over once, as it was at the first end, no longer recording", () => {
    const { tracer, ended } = recorded();
    const span = tracer.startSpan("GET", { attributes: { a: 1 } });
    expect(span.isRecording()).toBe(true);
    span.end();
    const endTime = ended[0]?.endTime;
    span.end();
    span
      .setAttribute("b", 2)
      .addEvent("late")
      .updateName("renamed")
      .setStatus({ code: SpanStatusCode.ERROR });
    expect(span.isRecording()).toBe(false);
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({
      name: "GET",
      attributes: { a: 1 },
      events: [],
      status: { code: 0 },
      endTime,
    });
  });

  it("an end time before the start → the span ends at its start", () => {
    const { tracer, ended } = recorded();
    tracer.startSpan("GET", { startTime: [2_000_000_000, 5] }).end([1_000_000_000, 0]);
    expect(ended.map((s) => [s.startTime, s.endTime, s.duration])).toEqual([
      [
        [2_000_000_000, 5],
        [2_000_000_000, 5],
        [0, 0],
      ],
    ]);
  });

  it("a span of 20 ms → its start within the wall clock's now, its duration 20 ms or more", async () => {
    const { tracer, ended } = recorded();
    const before = Date.now();
    const span = tracer.startSpan("GET");
    await new Promise((resolve) => setTimeout(resolve, 20));
    span.end();
    const millis = ([seconds, nanos]: HrTime) => seconds * 1000 + nanos / 1e6;
    expect(ended.map((s) => millis(s.startTime))[0]).toBeGreaterThanOrEqual(before);
    expect(ended.map((s) => millis(s.duration))[0]).toBeGreaterThanOrEqual(19.5);
  });
});

describe("RecordTracerProvider beside the SDK's BasicTracerProvider", () => {
  /** What an exporter reads of a span but its ids and times. */
  const readable = (span: ReadableSpan) => ({
    name: span.name,
    kind: span.kind,
    parent:
      span.parentSpanContext?.spanId === PARENT_ID ? "remote" : (span.parentSpanContext?.isRemote ?? "none"),
    flags: span.spanContext().traceFlags,
    status: span.status,
    attributes: span.attributes,
    events: span.events.map((e) => [e.name, e.attributes, e.droppedAttributesCount]),
    links: span.links,
    dropped: [span.droppedAttributesCount, span.droppedEventsCount, span.droppedLinksCount],
    resource: span.resource.attributes,
    scope: { name: span.instrumentationScope.name, version: span.instrumentationScope.version },
  });
  const scenario = (tracer: Tracer) => {
    const server = tracer.startSpan(
      "GET",
      { kind: SpanKind.SERVER, attributes: { "http.request.method": "GET", "url.scheme": "http" } },
      parentOf(TraceFlags.SAMPLED),
    );
    server.setAttributes({ "svc.auth.decision": "refused", "error.type": "expired", long: "x".repeat(10) });
    server.addEvent("svc.auth.refused", { "error.type": "expired" });
    server.recordException(new RangeError("out"));
    server.updateName("GET /employees");
    server.setStatus({ code: SpanStatusCode.ERROR });
    const client = tracer.startSpan(
      "consume redis",
      { kind: SpanKind.CLIENT },
      trace.setSpan(context.active(), server),
    );
    client.end();
    server.end();
  };

  afterEach(() => {
    delete process.env.OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT;
    delete process.env.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT;
  });

  it("a server span with decisions, an exception and a child, limits from the environment → what the SDK records", () => {
    process.env.OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT = "4";
    process.env.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT = "6";
    const memory = new InMemorySpanExporter();
    scenario(
      new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(memory)] }).getTracer(
        "@svc/otel",
        "1.0.0",
      ),
    );
    const ended: ReadableSpan[] = [];
    const processor = {
      onEnd: (s: ReadableSpan) => void ended.push(s),
      forceFlush: async () => {},
      shutdown: async () => {},
    };
    scenario(
      new RecordTracerProvider({ resource, spanProcessors: [processor] }).getTracer("@svc/otel", "1.0.0"),
    );
    const sdk = memory.getFinishedSpans().map(readable);
    expect(sdk[1]?.dropped).toEqual([1, 0, 0]);
    expect(ended.map(readable)).toEqual(sdk);
    // Through the wire to the worker, as it is exported.
    expect(decodeSpans(structuredClone(encodeSpans(ended))).map(readable)).toEqual(sdk);
    expect(ended[0]?.parentSpanContext?.spanId).toBe(ended[1]?.spanContext().spanId);
  });

  it("the environment's limits, else 128 each and no length limit", () => {
    expect(spanLimitsFromEnv()).toEqual(DEFAULTS);
    process.env.OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT = "4";
    process.env.OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT = "6";
    expect(spanLimitsFromEnv()).toMatchObject({ attributeCount: 4, attributeValueLength: 6 });
  });
});
