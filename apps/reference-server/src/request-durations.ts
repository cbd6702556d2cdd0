import { type Attributes, type HrTime, ValueType } from "@opentelemetry/api";
import type { Resource } from "@opentelemetry/resources";
import {
  AggregationTemporality,
  type CollectionResult,
  DataPointType,
  type MetricProducer,
} from "@opentelemetry/sdk-metrics";

/** The semantic conventions' buckets for HTTP durations, in seconds. */
const BOUNDARIES = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** One series: its attributes and its cumulative histogram. */
interface Series {
  readonly attributes: Attributes;
  readonly counts: number[];
  count: number;
  sum: number;
  min: number;
  max: number;
}

/**
 * The most series kept, as the SDK's default cardinality limit: a request beyond them counts in
 * the series `otel.metric.overflow: true`.
 * @see https://opentelemetry.io/docs/specs/otel/metrics/sdk/#cardinality-limits
 */
const MAX_SERIES = 1999;

/** An HrTime of a `Date.now()`-style millisecond count. */
const hrTime = (millis: number): HrTime => [Math.trunc(millis / 1000), Math.round((millis % 1000) * 1e6)];

/**
 * `http.server.request.duration`, kept by the service itself and read by the meter provider's
 * reader at each collection (a metric producer), so that a request costs a few map lookups and
 * additions. The SDK's synchronous histogram hashes a request's attributes on every `record`.
 *
 * Its series are bounded by what the server decides alone: a route of the service's table (or
 * none), a method of a fixed set, and a status code.
 *
 * @see https://opentelemetry.io/docs/specs/semconv/http/http-metrics/#metric-httpserverrequestduration
 * @see https://opentelemetry.io/docs/specs/otel/metrics/sdk/#metricproducer
 */
export class RequestDurations implements MetricProducer {
  /** route (or "") → method → status → series. */
  private readonly series = new Map<string, Map<string, Map<number, Series>>>();
  private readonly all: Series[] = [];
  private readonly started = Date.now();

  constructor(
    private readonly resource: Resource,
    private readonly scope: string,
  ) {}

  /** Records one request of `seconds`. */
  record(seconds: number, method: string, status: number, route: string | undefined): void {
    let methods = this.series.get(route ?? "");
    if (methods === undefined) {
      methods = new Map();
      this.series.set(route ?? "", methods);
    }
    let statuses = methods.get(method);
    if (statuses === undefined) {
      statuses = new Map();
      methods.set(method, statuses);
    }
    let series = statuses.get(status);
    if (series === undefined) {
      series = this.all.length < MAX_SERIES ? this.create(method, status, route) : this.overflow();
      statuses.set(status, series);
    }
    let bucket = 0;
    while (bucket < BOUNDARIES.length && seconds > (BOUNDARIES[bucket] as number)) bucket++;
    (series.counts[bucket] as number)++;
    series.count++;
    series.sum += seconds;
    if (seconds < series.min) series.min = seconds;
    if (seconds > series.max) series.max = seconds;
  }

  private create(method: string, status: number, route: string | undefined): Series {
    const attributes: Attributes = { "http.request.method": method, "http.response.status_code": status };
    if (route !== undefined) attributes["http.route"] = route;
    if (status >= 500) attributes["error.type"] = String(status);
    return this.add(attributes);
  }

  private overflowing: Series | undefined;
  private overflow(): Series {
    this.overflowing ??= this.add({ "otel.metric.overflow": true });
    return this.overflowing;
  }

  private add(attributes: Attributes): Series {
    const series: Series = {
      attributes,
      counts: new Array(BOUNDARIES.length + 1).fill(0),
      count: 0,
      sum: 0,
      min: Number.POSITIVE_INFINITY,
      max: Number.NEGATIVE_INFINITY,
    };
    this.all.push(series);
    return series;
  }

  async collect(): Promise<CollectionResult> {
    const startTime = hrTime(this.started);
    const endTime = hrTime(Date.now());
    return {
      errors: [],
      resourceMetrics: {
        resource: this.resource,
        scopeMetrics: [
          {
            scope: { name: this.scope },
            metrics: [
              {
                descriptor: {
                  name: "http.server.request.duration",
                  description: "Duration of HTTP server requests",
                  unit: "s",
                  valueType: ValueType.DOUBLE,
                },
                aggregationTemporality: AggregationTemporality.CUMULATIVE,
                dataPointType: DataPointType.HISTOGRAM,
                dataPoints: this.all.map((series) => ({
                  startTime,
                  endTime,
                  attributes: series.attributes,
                  value: {
                    buckets: { boundaries: BOUNDARIES, counts: [...series.counts] },
                    count: series.count,
                    sum: series.sum,
                    min: series.min,
                    max: series.max,
                  },
                })),
              },
            ],
          },
        ],
      },
    };
  }
}
