import { PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { DataPointType, type HistogramMetricData } from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { RequestDurations } from "../src/request-durations.js";

const resource = resourceFromAttributes({ "service.name": "test" });

async function histogram(durations: RequestDurations): Promise<HistogramMetricData> {
  const { resourceMetrics } = await durations.collect();
  const metric = resourceMetrics.scopeMetrics[0]?.metrics[0];
  if (metric?.dataPointType !== DataPointType.HISTOGRAM) throw new Error("no histogram");
  return metric;
}

describe("RequestDurations: http.server.request.duration without hashing a request's attributes", () => {
  it("counts each duration in the first bucket whose upper bound holds it (bounds inclusive)", async () => {
    const durations = new RequestDurations(resource, "test");
    for (const seconds of [0.001, 0.005, 0.0051, 0.3, 11]) durations.record(seconds, "GET", 200, "/a/{id}");
    const [point] = (await histogram(durations)).dataPoints;
    expect(point?.attributes).toEqual({
      "http.request.method": "GET",
      "http.response.status_code": 200,
      "http.route": "/a/{id}",
    });
    const counts = point?.value.buckets.counts ?? [];
    expect(counts[0]).toBe(2); // le 0.005
    expect(counts[1]).toBe(1); // le 0.01
    expect(counts[7]).toBe(1); // le 0.5
    expect(counts[14]).toBe(1); // +Inf
    expect(point?.value.count).toBe(5);
    expect(point?.value.sum).toBeCloseTo(11.3111, 6);
    expect([point?.value.min, point?.value.max]).toEqual([0.001, 11]);
  });

  it("one series per route, method and status; a 5xx carries error.type; no route, no http.route", async () => {
    const durations = new RequestDurations(resource, "test");
    durations.record(0.01, "GET", 200, "/a");
    durations.record(0.01, "GET", 200, "/a");
    durations.record(0.01, "POST", 503, "/a");
    durations.record(0.01, "GET", 404, undefined);
    const points = (await histogram(durations)).dataPoints;
    expect(points.map((p) => [p.attributes, p.value.count])).toEqual([
      [{ "http.request.method": "GET", "http.response.status_code": 200, "http.route": "/a" }, 2],
      [
        {
          "http.request.method": "POST",
          "http.response.status_code": 503,
          "http.route": "/a",
          "error.type": "503",
        },
        1,
      ],
      [{ "http.request.method": "GET", "http.response.status_code": 404 }, 1],
    ]);
  });

  it("past 1,999 series, requests count in the otel.metric.overflow series", async () => {
    const durations = new RequestDurations(resource, "test");
    for (let i = 0; i < 2100; i++) durations.record(0.01, "GET", 200, `/r${i}`);
    durations.record(0.01, "GET", 200, "/r5000");
    const points = (await histogram(durations)).dataPoints;
    expect(points).toHaveLength(2000);
    expect(points.at(-1)?.attributes).toEqual({ "otel.metric.overflow": true });
    expect(points.at(-1)?.value.count).toBe(102);
  });

  it("is served in the Prometheus text format by the exporter's own serializer", async () => {
    const durations = new RequestDurations(resource, "test");
    durations.record(0.02, "GET", 200, "/a");
    const { resourceMetrics } = await durations.collect();
    const text = new PrometheusSerializer().serialize(resourceMetrics);
    expect(text).toContain("# TYPE http_server_request_duration histogram");
    expect(text).toMatch(/http_server_request_duration_bucket\{[^}]*le="0\.025"\} 1/);
    expect(text).toMatch(/http_server_request_duration_bucket\{[^}]*le="0\.01"\} 0/);
    expect(text).toMatch(/http_server_request_duration_count\{[^}]*http_route="\/a"[^}]*\} 1/);
  });
});
