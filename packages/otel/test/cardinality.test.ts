// The README's promise, "each attribute takes its values from a bounded set", against messages
// whose every member is a new string: what a package that published a client's spelling would send.
import { randomUUID } from "node:crypto";
import { channel as nodeChannel } from "node:diagnostics_channel";
import type { AttributeValue } from "@opentelemetry/api";
import { type DataPoint, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instrumentSvc, type SvcInstrumentation } from "../src/index.js";

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const reader = new TestReader();
const meterProvider = new MeterProvider({ readers: [reader] });
let instrumentation: SvcInstrumentation;

beforeAll(() => {
  instrumentation = instrumentSvc({ meterProvider });
});
afterAll(async () => {
  instrumentation.disable();
  await meterProvider.shutdown();
});

/** The most values an attribute the application names keeps, and `_OTHER`. */
const NAMED = 32 + 1;

/**
 * Each counter, the channel it counts, the decisions its package publishes, and the attributes
 * whose values the README lists (any other value of those is `_OTHER`).
 */
const COUNTERS = [
  [
    "svc.rate_limiting.requests",
    "svc:ratelimit",
    ["allowed", "limited", "cost-exceeds-quota", "store-failed", "store-recovered"],
    {
      "svc.rate_limiting.result": [
        "acquired",
        "rejected",
        "cost_exceeds_quota",
        "store_failed",
        "store_recovered",
      ],
      "svc.rate_limiting.key_kind": ["principal", "address", "custom"],
      "svc.rate_limiting.fail_mode": ["open", "closed", "insurance"],
    },
  ],
  [
    "svc.authentication.attempts",
    "svc:auth",
    ["authenticated", "anonymous", "refused", "jwks-refreshed", "jwks-failed"],
    { "svc.authentication.result": ["success", "failure", "none", "jwks_refreshed", "jwks_failed"] },
  ],
  [
    "svc.idempotency.requests",
    "svc:idempotency",
    ["claimed", "replayed", "in-progress", "mismatch", "completed", "released", "store-failed"],
    {
      "svc.idempotency.result": [
        "claimed",
        "replayed",
        "in_progress",
        "mismatch",
        "lease_expired",
        "completed",
        "released",
        "store_failed",
        "store_recovered",
      ],
    },
  ],
  [
    "svc.conditional.responses",
    "svc:conditional",
    ["not-modified", "precondition-failed", "precondition-required"],
    {
      "svc.conditional.result": ["not_modified", "precondition_failed", "precondition_required"],
      "svc.conditional.field": ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since"],
    },
  ],
  [
    "svc.negotiation.decisions",
    "svc:negotiate",
    ["not-acceptable", "unsupported-media-type", "coded", "body-refused", "cross-origin-refused"],
    {
      "svc.negotiation.result": [
        "not_acceptable",
        "unsupported_media_type",
        "coded",
        "body_refused",
        "cross_origin_refused",
      ],
    },
  ],
  [
    "svc.versioning.requests",
    "svc:versioning",
    ["chosen", "unsupported", "malformed", "conflicting"],
    {
      "svc.versioning.result": ["chosen", "unsupported", "malformed", "conflicting"],
      "svc.versioning.strategy": ["path", "query", "header", "custom", "media-type", "default"],
      "svc.api.version.deprecated": [true, false],
      "svc.api.version.sunset": [true, false],
    },
  ],
  [
    "svc.soap.operations",
    "svc:soap",
    ["operation", "fault"],
    {
      "svc.soap.result": ["ok", "fault"],
      "svc.soap.version": ["1.1", "1.2"],
      "svc.soap.one_way": [true, false],
    },
  ],
  ["svc.errors.records", "svc:errors", ["record"], {}],
] as const;

/** A message of `decision` whose every member any mapping reads is a string nobody listed. */
function madeUp(decision: string): Record<string, unknown> {
  const word = () => randomUUID();
  const error = new Error("x");
  error.name = word();
  return {
    request: {},
    decision: Math.random() < 0.8 ? decision : word(),
    policy: word(),
    keyKind: word(),
    failMode: word(),
    error,
    scheme: word(),
    reason: word(),
    version: word(),
    requested: word(),
    strategy: word(),
    deprecated: word(),
    sunset: word(),
    field: word(),
    coding: word(),
    operation: word(),
    soapVersion: word(),
    oneWay: word(),
    faultCode: word(),
    status: Math.floor(Math.random() * 1e6),
    code: word(),
  };
}

describe("instrumentSvc: each attribute takes its values from a bounded set", () => {
  it.each(COUNTERS)(
    "%s: 3,000 messages of new strings → each attribute at most its listed values or 33, then _OTHER",
    async (metric, channel, decisions, lists) => {
      for (let i = 0; i < 3000; i++)
        nodeChannel(channel).publish(madeUp(decisions[i % decisions.length] as string));
      const { resourceMetrics } = await reader.collect();
      const found = resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .find((m) => m.descriptor.name === metric);
      const byAttribute = new Map<string, Set<AttributeValue>>();
      for (const point of (found?.dataPoints ?? []) as DataPoint<number>[])
        for (const [name, value] of Object.entries(point.attributes)) {
          if (name === "otel.metric.overflow" || value === undefined) continue;
          const values = byAttribute.get(name) ?? new Set<AttributeValue>();
          byAttribute.set(name, values);
          values.add(value);
        }
      expect(byAttribute.size).toBeGreaterThan(0);
      for (const [name, values] of byAttribute) {
        const list = (lists as Record<string, readonly AttributeValue[]>)[name];
        if (list === undefined) expect(values.size, name).toBeLessThanOrEqual(NAMED);
        else
          expect(
            [...values].filter((v) => !list.includes(v) && v !== "_OTHER"),
            name,
          ).toEqual([]);
      }
    },
  );
});

describe("instrumentSvc: past 1,999 points, whatever the sets multiply to", () => {
  it("33 versions × 7 strategies × 3 deprecated × 3 sunset → 1,999 points and one overflow point counting the rest", async () => {
    const ownReader = new TestReader();
    const own = new MeterProvider({ readers: [ownReader] });
    const versioning = instrumentSvc({ meterProvider: own, packages: ["versioning"] });
    try {
      let published = 0;
      // The made-up strategy, deprecated and sunset count as `_OTHER`: 63 points for each version.
      for (let version = 0; version < 33; version++)
        for (const strategy of ["path", "query", "header", "custom", "media-type", "default", "made-up"])
          for (const deprecated of [true, false, "made-up"])
            for (const sunset of [true, false, "made-up"]) {
              nodeChannel("svc:versioning").publish({
                request: {},
                decision: "chosen",
                version: String(version),
                strategy,
                deprecated,
                sunset,
              });
              published++;
            }
      const { resourceMetrics } = await ownReader.collect();
      const points = (resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .find((m) => m.descriptor.name === "svc.versioning.requests")?.dataPoints ??
        []) as DataPoint<number>[];
      expect(points).toHaveLength(2000);
      const overflow = points.filter((p) => p.attributes["otel.metric.overflow"] === true);
      expect(overflow.map((p) => p.value)).toEqual([published - 1999]);
    } finally {
      versioning.disable();
      await own.shutdown();
    }
  });
});

describe("instrumentSvc: a member that is no string, number or boolean", () => {
  it("a policy given as an object or an array → svc.rate_limiting.policy _OTHER, never the value", async () => {
    const ownReader = new TestReader();
    const own = new MeterProvider({ readers: [ownReader] });
    const ratelimit = instrumentSvc({ meterProvider: own, packages: ["ratelimit"] });
    try {
      for (const policy of [{ name: "gold" }, ["gold", "silver"]])
        nodeChannel("svc:ratelimit").publish({
          request: {},
          decision: "allowed",
          policy,
          keyKind: "principal",
          limit: 10,
          remaining: 9,
          resetAt: 1,
          retryAfterMs: 0,
        });
      const { resourceMetrics } = await ownReader.collect();
      const points = (resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .find((m) => m.descriptor.name === "svc.rate_limiting.requests")?.dataPoints ??
        []) as DataPoint<number>[];
      expect(points.map((p) => [p.attributes["svc.rate_limiting.policy"], p.value])).toEqual([["_OTHER", 2]]);
    } finally {
      ratelimit.disable();
      await own.shutdown();
    }
  });
});
