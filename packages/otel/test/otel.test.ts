import { randomUUID } from "node:crypto";
import { channel as nodeChannel } from "node:diagnostics_channel";
import { type Attributes, context, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { type DataPoint, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { tracedCall } from "@svc/kernel/internal";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { instrumentSvc, type SvcInstrumentation } from "../src/index.js";

/** A reader the test collects from when it wants, as a pull exporter (Prometheus) does. */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const reader = new TestReader();
const meterProvider = new MeterProvider({ readers: [reader] });
const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
const tracer = tracerProvider.getTracer("test-server");
const contextManager = new AsyncLocalStorageContextManager().enable();
let instrumentation: SvcInstrumentation;

beforeAll(() => {
  context.setGlobalContextManager(contextManager);
  instrumentation = instrumentSvc({ meterProvider, tracerProvider });
});
afterAll(async () => {
  instrumentation.disable();
  context.disable();
  await meterProvider.shutdown();
  await tracerProvider.shutdown();
});
afterEach(() => spans.reset());

/** The points of the metric `name` collected now, as attributes and value. */
async function points(name: string): Promise<{ attributes: Attributes; value: unknown }[]> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .find((m) => m.descriptor.name === name);
  return (metric?.dataPoints ?? []).map((p: DataPoint<unknown>) => ({
    attributes: p.attributes,
    value: p.value,
  }));
}

/** `message` published on `channel` inside a server span; that span as exported. */
function publishInSpan(channel: string, message: object) {
  const request = { id: randomUUID() };
  tracer.startActiveSpan("GET /employees", { kind: SpanKind.SERVER }, (span) => {
    nodeChannel(channel).publish({ request, ...message });
    span.end();
  });
  const server = spans.getFinishedSpans().find((s) => s.name === "GET /employees");
  if (server === undefined) throw new Error("no server span");
  return server;
}

// One row per package's decision: the message its channel carries (the packages' READMEs, "What
// it tells you"), the counter it lands in, the attributes, and whether the span gets an event.
const DECISIONS = [
  [
    "svc:ratelimit",
    {
      decision: "limited",
      policy: "default",
      keyKind: "principal",
      limit: 10,
      remaining: 0,
      resetAt: 1,
      retryAfterMs: 5,
    },
    "svc.rate_limiting.requests",
    {
      "svc.rate_limiting.result": "rejected",
      "svc.rate_limiting.policy": "default",
      "svc.rate_limiting.key_kind": "principal",
    },
    "svc.ratelimit.limited",
  ],
  [
    "svc:ratelimit",
    {
      decision: "allowed",
      policy: "default",
      keyKind: "address",
      limit: 10,
      remaining: 9,
      resetAt: 1,
      retryAfterMs: 0,
    },
    "svc.rate_limiting.requests",
    {
      "svc.rate_limiting.result": "acquired",
      "svc.rate_limiting.policy": "default",
      "svc.rate_limiting.key_kind": "address",
    },
    undefined,
  ],
  [
    "svc:ratelimit",
    { decision: "cost-exceeds-quota", policy: "default", keyKind: "address", cost: 12, capacity: 10 },
    "svc.rate_limiting.requests",
    {
      "svc.rate_limiting.result": "cost_exceeds_quota",
      "svc.rate_limiting.policy": "default",
      "svc.rate_limiting.key_kind": "address",
    },
    "svc.ratelimit.cost_exceeds_quota",
  ],
  [
    "svc:ratelimit",
    { decision: "store-failed", failMode: "closed", error: new TypeError("down") },
    "svc.rate_limiting.requests",
    {
      "svc.rate_limiting.result": "store_failed",
      "svc.rate_limiting.fail_mode": "closed",
      "error.type": "TypeError",
    },
    "svc.ratelimit.store_failed",
  ],
  [
    "svc:auth",
    { decision: "refused", scheme: "bearer", reason: "expired" },
    "svc.authentication.attempts",
    {
      "svc.authentication.result": "failure",
      "svc.authentication.scheme": "bearer",
      "error.type": "expired",
    },
    "svc.auth.refused",
  ],
  [
    "svc:auth",
    { decision: "authenticated", scheme: "basic", principal: "alice" },
    "svc.authentication.attempts",
    { "svc.authentication.result": "success", "svc.authentication.scheme": "basic" },
    undefined,
  ],
  [
    "svc:idempotency",
    { decision: "replayed", scope: "u:alice" },
    "svc.idempotency.requests",
    { "svc.idempotency.result": "replayed" },
    undefined,
  ],
  [
    "svc:idempotency",
    { decision: "in-progress", scope: "u:alice" },
    "svc.idempotency.requests",
    { "svc.idempotency.result": "in_progress" },
    "svc.idempotency.in_progress",
  ],
  [
    "svc:idempotency",
    { decision: "lease-expired", scope: "u:alice" },
    "svc.idempotency.requests",
    { "svc.idempotency.result": "lease_expired" },
    undefined,
  ],
  [
    "svc:idempotency",
    { decision: "completed", scope: "u:alice", status: 201 },
    "svc.idempotency.requests",
    { "svc.idempotency.result": "completed" },
    undefined,
  ],
  [
    "svc:idempotency",
    { decision: "released", scope: "u:alice", reason: "not-stored", status: 503 },
    "svc.idempotency.requests",
    { "svc.idempotency.result": "released" },
    undefined,
  ],
  [
    "svc:idempotency",
    { decision: "store-recovered", downMs: 1200 },
    "svc.idempotency.requests",
    { "svc.idempotency.result": "store_recovered" },
    undefined,
  ],
  [
    "svc:conditional",
    { decision: "not-modified", field: "If-None-Match" },
    "svc.conditional.responses",
    { "svc.conditional.result": "not_modified", "svc.conditional.field": "If-None-Match" },
    undefined,
  ],
  [
    "svc:negotiate",
    { decision: "not-acceptable", offered: ["application/json"] },
    "svc.negotiation.decisions",
    { "svc.negotiation.result": "not_acceptable" },
    "svc.negotiate.not_acceptable",
  ],
  [
    "svc:negotiate",
    { decision: "coded", coding: "br" },
    "svc.negotiation.decisions",
    { "svc.negotiation.result": "coded", "svc.negotiation.coding": "br" },
    undefined,
  ],
  [
    "svc:versioning",
    { decision: "chosen", version: "1", strategy: "path", deprecated: true, sunset: false },
    "svc.versioning.requests",
    {
      "svc.versioning.result": "chosen",
      "svc.api.version": "1",
      "svc.versioning.strategy": "path",
      "svc.api.version.deprecated": true,
      "svc.api.version.sunset": false,
    },
    undefined,
  ],
  [
    "svc:soap",
    { decision: "fault", operation: "getCustomer", faultCode: "Sender", soapVersion: "1.2" },
    "svc.soap.operations",
    {
      "svc.soap.result": "fault",
      "svc.soap.operation": "getCustomer",
      "svc.soap.version": "1.2",
      "error.type": "Sender",
    },
    "svc.soap.fault",
  ],
  [
    "svc:errors",
    { decision: "record", status: 404, code: "NOT_FOUND", error: new Error("x") },
    "svc.errors.records",
    { "http.response.status_code": 404, "error.type": "NOT_FOUND" },
    undefined,
  ],
] as const;

describe("instrumentSvc with the OpenTelemetry SDK: a decision → a counter point and the active span's attributes", () => {
  it.each(DECISIONS)("%s %o → %s", async (channel, message, metric, attributes, event) => {
    const before = (await points(metric)).find((p) => sameAttributes(p.attributes, attributes))?.value ?? 0;
    const span = publishInSpan(channel, message);
    const after = (await points(metric)).find((p) => sameAttributes(p.attributes, attributes));
    expect(after?.value).toBe((before as number) + 1);
    expect(span.attributes).toMatchObject(attributes);
    expect(span.events.map((e) => e.name)).toEqual(event === undefined ? [] : [event]);
  });

  it("a message outside any span → the counter only", async () => {
    const before = (await points("svc.idempotency.requests")).find(
      (p) => p.attributes["svc.idempotency.result"] === "claimed",
    );
    nodeChannel("svc:idempotency").publish({ request: {}, decision: "claimed", scope: "u:bob" });
    const after = (await points("svc.idempotency.requests")).find(
      (p) => p.attributes["svc.idempotency.result"] === "claimed",
    );
    expect(after?.value).toBe(((before?.value as number | undefined) ?? 0) + 1);
    expect(spans.getFinishedSpans()).toEqual([]);
  });
});

describe("instrumentSvc: the span's error.type is the first refusal's reason", () => {
  /** `messages` published on their channels inside one server span; that span's `error.type`. */
  function errorTypeAfter(...messages: [channel: string, message: object][]) {
    tracer.startActiveSpan("POST /orders", { kind: SpanKind.SERVER }, (span) => {
      for (const [channel, message] of messages) nodeChannel(channel).publish({ request: {}, ...message });
      span.end();
    });
    return spans.getFinishedSpans().find((s) => s.name === "POST /orders")?.attributes["error.type"];
  }
  const storeFailedOpen = [
    "svc:ratelimit",
    { decision: "store-failed", failMode: "open", error: new RangeError("down") },
  ] as [string, object];
  const expired = ["svc:auth", { decision: "refused", scheme: "bearer", reason: "expired" }] as [
    string,
    object,
  ];
  const record = ["svc:errors", { decision: "record", status: 401, code: "invalid_token" }] as [
    string,
    object,
  ];

  it("refused (expired), then the error record (invalid_token) → expired", () => {
    expect(errorTypeAfter(expired, record)).toBe("expired");
  });

  it("a store failure let through (RangeError), then a refusal (expired) → expired; with no refusal after → RangeError", () => {
    expect(errorTypeAfter(storeFailedOpen, expired, record)).toBe("expired");
    spans.reset();
    expect(errorTypeAfter(storeFailedOpen, record)).toBe("RangeError");
  });
});

describe("instrumentSvc: what a client wrote is never an attribute's value", () => {
  it("2,100 versions the API does not have (8,000 digits each) → one point, svc.api.version unsupported; version 2 keeps its own", async () => {
    const channel = nodeChannel("svc:versioning");
    // An older @svc/versioning also said the version as the client wrote it (`requested`).
    for (let i = 0; i < 2100; i++)
      channel.publish({
        request: {},
        decision: "unsupported",
        requested: String(i).padStart(8000, "9"),
        strategy: "path",
      });
    channel.publish({
      request: {},
      decision: "chosen",
      version: "2",
      strategy: "path",
      deprecated: false,
      sunset: false,
    });
    const now = await points("svc.versioning.requests");
    expect(now.filter((p) => p.attributes["otel.metric.overflow"] === true)).toEqual([]);
    expect(now.map((p) => p.attributes["svc.api.version"]).sort()).toEqual(["1", "2", "unsupported"]);
    const unsupported = now.find((p) => p.attributes["svc.api.version"] === "unsupported");
    expect(unsupported).toEqual({
      attributes: {
        "svc.versioning.result": "unsupported",
        "svc.api.version": "unsupported",
        "svc.versioning.strategy": "path",
      },
      value: 2100,
    });
    expect(now.find((p) => p.attributes["svc.api.version"] === "2")?.value).toBe(1);
  });

  it("Authorization: Xyz123 refused → svc.authentication.scheme _OTHER; Bearer → bearer", async () => {
    const channel = nodeChannel("svc:auth");
    for (const scheme of ["xyz123", "a".repeat(8000), "bearer"])
      channel.publish({ request: {}, decision: "refused", scheme, reason: "malformed" });
    const schemes = (await points("svc.authentication.attempts"))
      .filter((p) => p.attributes["error.type"] === "malformed")
      .map((p) => [p.attributes["svc.authentication.scheme"], p.value]);
    expect(schemes).toEqual(
      expect.arrayContaining([
        ["_OTHER", 2],
        ["bearer", 1],
      ]),
    );
    expect(schemes).toHaveLength(2);
  });
});

describe("instrumentSvc: a traced store call → a client span under the request's and its duration", () => {
  it.each([
    [
      "svc:ratelimit:store",
      { store: "redis", operation: "consume", key: "k" },
      "consume redis",
      "db.client.operation.duration",
      { "db.system.name": "redis", "db.operation.name": "consume", "svc.package": "ratelimit" },
    ],
    [
      "svc:idempotency:store",
      { store: "postgres", operation: "claim", key: "k" },
      "claim postgresql",
      "db.client.operation.duration",
      { "db.system.name": "postgresql", "db.operation.name": "claim", "svc.package": "idempotency" },
    ],
    [
      "svc:auth:jwks",
      { uri: "https://issuer.example/jwks.json" },
      "GET",
      "http.client.request.duration",
      { "http.request.method": "GET", "url.full": "https://issuer.example/jwks.json", "svc.package": "auth" },
    ],
  ] as const)("%s → span %s", async (name, callContext, spanName, metric, attributes) => {
    const countOf = async () =>
      (
        (await points(metric)).find((p) => sameAttributes(p.attributes, attributes))?.value as
          | { count: number }
          | undefined
      )?.count ?? 0;
    const before = await countOf();
    const call = tracedCall<object>(name);
    const result = await tracer.startActiveSpan("POST /orders", async (server) => {
      const value = await call.traced({ ...callContext }, async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return 42;
      });
      server.end();
      return value;
    });
    expect(result).toBe(42);
    const finished = spans.getFinishedSpans();
    const client = finished.find((s) => s.name === spanName);
    const server = finished.find((s) => s.name === "POST /orders");
    expect(client?.kind).toBe(SpanKind.CLIENT);
    expect(client?.attributes).toEqual(attributes);
    expect(client?.parentSpanContext?.spanId).toBe(server?.spanContext().spanId);
    expect(await countOf()).toBe(before + 1);
  });

  it("a store call that rejects → the span's status is an error with error.type, the rejection reaches the caller", async () => {
    const call = tracedCall<object>("svc:ratelimit:store");
    await expect(
      call.traced({ store: "redis", operation: "consume", key: "k" }, async () => {
        throw new RangeError("connection lost");
      }),
    ).rejects.toThrow("connection lost");
    const [client] = spans.getFinishedSpans();
    expect(client?.status).toEqual({ code: SpanStatusCode.ERROR, message: "connection lost" });
    expect(client?.attributes["error.type"]).toBe("RangeError");
    const failed = (await points("db.client.operation.duration")).find(
      (p) => p.attributes["error.type"] === "RangeError",
    );
    expect((failed?.value as { count: number } | undefined)?.count).toBe(1);
  });

  it("a store call that throws before it gives a promise → the span ends all the same", async () => {
    const call = tracedCall<object>("svc:idempotency:store");
    expect(() =>
      call.traced({ store: "redis", operation: "complete", key: "k" }, () => {
        throw new SyntaxError("bad script");
      }),
    ).toThrow("bad script");
    const [client] = spans.getFinishedSpans();
    expect(client?.name).toBe("complete redis");
    expect(client?.attributes["error.type"]).toBe("SyntaxError");
  });
});

describe("instrumentSvc: options and disable()", () => {
  it("packages limits what it listens to; disable() stops it", async () => {
    const reader2 = new TestReader();
    const provider = new MeterProvider({ readers: [reader2] });
    const only = instrumentSvc({ meterProvider: provider, tracerProvider, packages: ["auth"] });
    nodeChannel("svc:auth").publish({ decision: "anonymous" });
    nodeChannel("svc:ratelimit").publish({ decision: "limited", policy: "p" });
    only.disable();
    nodeChannel("svc:auth").publish({ decision: "anonymous" });
    const names = (await reader2.collect()).resourceMetrics.scopeMetrics
      .flatMap((s) => s.metrics)
      .filter((m) => m.dataPoints.length > 0)
      .map((m) => [m.descriptor.name, m.dataPoints.map((p) => p.value)]);
    expect(names).toEqual([["svc.authentication.attempts", [1]]]);
    await provider.shutdown();
  });

  it.each([
    [
      { packages: ["ratelimits"] },
      "ERR_SVC_OTEL_PACKAGES",
      "instrumentSvc: packages must be a list of ratelimit, auth",
    ],
    [{ packages: "auth" }, "ERR_SVC_OTEL_PACKAGES", "instrumentSvc: packages must be"],
    [
      { meterprovider: {} },
      "ERR_SVC_OTEL_UNKNOWN_OPTION",
      'unknown option "meterprovider" (did you mean "meterProvider"?)',
    ],
    [
      { meterProvider: {} },
      "ERR_SVC_OTEL_METER_PROVIDER",
      "instrumentSvc: meterProvider must be a MeterProvider",
    ],
    [
      { tracerProvider: () => {} },
      "ERR_SVC_OTEL_TRACER_PROVIDER",
      "instrumentSvc: tracerProvider must be a TracerProvider",
    ],
    [null, "ERR_SVC_OTEL_OPTIONS", "instrumentSvc: options must be an object"],
  ])("%o → refused, %s", (options, code, message) => {
    expect(() => instrumentSvc(options as never)).toThrow(
      expect.objectContaining({ code, message: expect.stringContaining(message) }),
    );
  });
});

function sameAttributes(a: Attributes, b: Attributes): boolean {
  const keys = Object.keys(b);
  return Object.keys(a).length === keys.length && keys.every((k) => a[k] === b[k]);
}
