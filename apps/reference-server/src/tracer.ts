import { randomFillSync } from "node:crypto";
import {
  type Attributes,
  type AttributeValue,
  type Context,
  context as contexts,
  diag,
  type Exception,
  type HrTime,
  INVALID_SPAN_CONTEXT,
  type Link,
  type Span,
  type SpanAttributes,
  type SpanContext,
  SpanKind,
  type SpanOptions,
  type SpanStatus,
  SpanStatusCode,
  type TimeInput,
  TraceFlags,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import {
  getNumberFromEnv,
  type InstrumentationScope,
  isAttributeValue,
  isTimeInputHrTime,
  isTracingSuppressed,
  millisToHrTime,
} from "@opentelemetry/core";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan, SpanProcessor, TimedEvent } from "@opentelemetry/sdk-trace-base";

/**
 * The span limits, from the environment as the SDK reads them: each bounds what one span holds,
 * so that the spans a batch waits with bound the memory they take.
 * @see https://opentelemetry.io/docs/specs/otel/trace/sdk/#span-limits
 * @see https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/#span-limits
 */
export interface SpanLimits {
  attributeCount: number;
  /** A string's (or each string of an array's) most characters; `Infinity` for no limit. */
  attributeValueLength: number;
  eventCount: number;
  linkCount: number;
  attributePerEventCount: number;
  attributePerLinkCount: number;
}

/** The limits the environment sets, with the specification's defaults (128 each, no length limit). */
export function spanLimitsFromEnv(): SpanLimits {
  const attributeCount =
    getNumberFromEnv("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT") ??
    getNumberFromEnv("OTEL_ATTRIBUTE_COUNT_LIMIT") ??
    128;
  const length =
    getNumberFromEnv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT") ??
    getNumberFromEnv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT");
  return {
    attributeCount,
    // A limit that is not positive is invalid: the SDK truncates nothing then.
    attributeValueLength: length === undefined || length <= 0 ? Number.POSITIVE_INFINITY : length,
    eventCount: getNumberFromEnv("OTEL_SPAN_EVENT_COUNT_LIMIT") ?? 128,
    linkCount: getNumberFromEnv("OTEL_SPAN_LINK_COUNT_LIMIT") ?? 128,
    // The specification's names, else the ones the SDK for JavaScript reads.
    attributePerEventCount:
      getNumberFromEnv("OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT") ??
      getNumberFromEnv("OTEL_SPAN_ATTRIBUTE_PER_EVENT_COUNT_LIMIT") ??
      128,
    attributePerLinkCount:
      getNumberFromEnv("OTEL_LINK_ATTRIBUTE_COUNT_LIMIT") ??
      getNumberFromEnv("OTEL_SPAN_ATTRIBUTE_PER_LINK_COUNT_LIMIT") ??
      128,
  };
}

/** What receives a span once it has ended (the batch processors): none of them acts on a span's start. */
export type EndedSpanProcessor = Pick<SpanProcessor, "onEnd" | "forceFlush" | "shutdown">;

/**
 * Random ids from a pool of `crypto` bytes, refilled when used up: 16 bytes a trace id, 8 a span
 * id, never all zero (an invalid id). The pool is kept in hex, so that an id is a slice of it
 * rather than a call into the runtime to encode its bytes; an id holds the pool's 8 KiB string
 * only while its span waits to be exported.
 * @see https://www.w3.org/TR/trace-context/#trace-id what a valid trace id is
 * @see https://opentelemetry.io/docs/specs/otel/trace/sdk/#id-generators random ids, as the SDK's default
 */
class Ids {
  private readonly bytes = Buffer.allocUnsafe(4096);
  private hex = "";
  private at = 0;

  next(digits: 16 | 32): string {
    if (this.at + digits > this.hex.length) {
      this.hex = randomFillSync(this.bytes).toString("hex");
      this.at = 0;
    }
    const start = this.at;
    this.at += digits;
    const id = this.hex.slice(start, this.at);
    // One id in 2^64 at most: draw again rather than send an id the receiver rejects.
    return id === INVALID_SPAN_CONTEXT.spanId || id === INVALID_SPAN_CONTEXT.traceId ? this.next(digits) : id;
  }
}

const ids = new Ids();

/** A string (or each string of an array) cut to `limit` characters. */
function truncated(value: AttributeValue, limit: number): AttributeValue {
  if (typeof value === "string") return value.length > limit ? value.slice(0, limit) : value;
  if (Array.isArray(value))
    return value.map((item) =>
      typeof item === "string" && item.length > limit ? item.slice(0, limit) : item,
    ) as AttributeValue;
  return value;
}

/**
 * Room for one more entry in a span's events or links, bounded at `limit`: `"free"` below it,
 * `"made"` when the oldest entry was dropped for it (as the SDK drops it), `"none"` when the list
 * takes nothing (a limit of 0). Either of the last two counts one entry as dropped.
 */
function makeRoom(list: unknown[], limit: number): "free" | "made" | "none" {
  if (limit <= 0) return "none";
  if (list.length < limit) return "free";
  list.shift();
  return "made";
}

/**
 * `given`'s valid attributes, at most `count` (the rest counted as dropped), each value cut to
 * the length limit: what an event or a link keeps.
 */
function limitedAttributes(
  given: Attributes | undefined,
  count: number,
  length: number,
): { attributes: Attributes; dropped: number } {
  const attributes: Attributes = {};
  let kept = 0;
  let dropped = 0;
  for (const key in given) {
    if (!Object.hasOwn(given, key)) continue;
    const value = given[key];
    if (key.length === 0 || value == null || !isAttributeValue(value)) continue;
    if (kept >= count) dropped++;
    else {
      attributes[key] = length === Number.POSITIVE_INFINITY ? value : truncated(value, length);
      kept++;
    }
  }
  return { attributes, dropped };
}

/**
 * A recording span as a plain record: what the SDK's `ReadableSpan` holds, written by the
 * OpenTelemetry API's `Span` methods with the SDK's limits and rules, and handed to the
 * processors when it ends. It builds no other object: the processors copy it into their batch.
 * @see https://opentelemetry.io/docs/specs/otel/trace/api/#span-operations
 */
class RecordSpan implements Span, ReadableSpan {
  attributes: Attributes = {};
  events: TimedEvent[] = [];
  links: Link[] = [];
  status: SpanStatus = { code: SpanStatusCode.UNSET };
  endTime: HrTime = [0, 0];
  ended = false;
  droppedAttributesCount = 0;
  droppedEventsCount = 0;
  droppedLinksCount = 0;
  readonly startTime: HrTime;
  readonly parentSpanContext?: SpanContext;
  private attributeCount = 0;
  /**
   * The start by the wall clock and as `performance.now()`: a later time is the start's plus the
   * monotonic time elapsed, as the SDK's, so that a span's duration ignores the wall clock's steps.
   */
  private readonly startedMillis: number;
  private readonly startedAt: number;
  private readonly startGiven: boolean;

  constructor(
    private readonly tracer: RecordTracer,
    readonly name: string,
    readonly kind: SpanKind,
    private readonly context: SpanContext,
    parent: SpanContext | undefined,
    startTime: TimeInput | undefined,
  ) {
    // Set on every span, a root's too: one shape for the processors that read them all.
    (this as { parentSpanContext?: SpanContext | undefined }).parentSpanContext = parent;
    const now = Date.now();
    this.startedAt = performance.now();
    this.startedMillis = now;
    this.startGiven = startTime != null;
    this.startTime = startTime == null ? millisToHrTime(now) : this.time(startTime);
  }

  get resource(): Resource {
    return this.tracer.resource;
  }
  get instrumentationScope(): InstrumentationScope {
    return this.tracer.scope;
  }
  get duration(): HrTime {
    const seconds = this.endTime[0] - this.startTime[0];
    const nanos = this.endTime[1] - this.startTime[1];
    return nanos < 0 ? [seconds - 1, nanos + 1e9] : [seconds, nanos];
  }

  spanContext(): SpanContext {
    return this.context;
  }

  /** @see https://opentelemetry.io/docs/specs/otel/trace/api/#set-attributes */
  setAttribute(key: string, value: SpanAttributes[string]): this {
    if (value == null || this.ended) return this;
    const type = typeof value;
    if (
      key.length === 0 ||
      (type !== "string" && type !== "number" && type !== "boolean" && !isAttributeValue(value))
    ) {
      diag.warn(`Invalid attribute ${key === "" ? "key" : `value for ${key}`}`);
      return this;
    }
    const fresh = !Object.hasOwn(this.attributes, key);
    if (fresh && this.attributeCount >= this.tracer.limits.attributeCount) {
      this.droppedAttributesCount++;
      return this;
    }
    const length = this.tracer.limits.attributeValueLength;
    this.attributes[key] = length === Number.POSITIVE_INFINITY ? value : truncated(value, length);
    if (fresh) this.attributeCount++;
    return this;
  }

  setAttributes(attributes: SpanAttributes): this {
    for (const key in attributes) if (Object.hasOwn(attributes, key)) this.setAttribute(key, attributes[key]);
    return this;
  }

  /**
   * Past the limit, the oldest event makes room, as the SDK drops it.
   * @see https://opentelemetry.io/docs/specs/otel/trace/api/#add-events
   */
  addEvent(name: string, attributesOrTime?: SpanAttributes | TimeInput, time?: TimeInput): this {
    if (this.ended) return this;
    const { eventCount, attributePerEventCount, attributeValueLength } = this.tracer.limits;
    const room = makeRoom(this.events, eventCount);
    if (room !== "free") this.droppedEventsCount++;
    if (room === "none") return this;
    let given: SpanAttributes | undefined;
    if (isTimeInput(attributesOrTime)) time ??= attributesOrTime;
    else given = attributesOrTime;
    const { attributes, dropped } = limitedAttributes(given, attributePerEventCount, attributeValueLength);
    this.events.push({ name, attributes, time: this.time(time), droppedAttributesCount: dropped });
    return this;
  }

  /**
   * Past the limit, the oldest link makes room, as the SDK drops it.
   * @see https://opentelemetry.io/docs/specs/otel/trace/api/#add-link
   */
  addLink(link: Link): this {
    if (this.ended) return this;
    const { linkCount, attributePerLinkCount, attributeValueLength } = this.tracer.limits;
    const room = makeRoom(this.links, linkCount);
    if (room !== "free") this.droppedLinksCount++;
    if (room === "none") return this;
    const { attributes, dropped } = limitedAttributes(
      link.attributes,
      attributePerLinkCount,
      attributeValueLength,
    );
    const kept: Link = { context: link.context };
    if (Object.keys(attributes).length > 0) kept.attributes = attributes;
    if (dropped > 0) kept.droppedAttributesCount = dropped;
    this.links.push(kept);
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  /**
   * `Ok` is final, `Unset` changes nothing, a description is kept only for `Error`.
   * @see https://opentelemetry.io/docs/specs/otel/trace/api/#set-status
   */
  setStatus(status: SpanStatus): this {
    if (this.ended || status.code === SpanStatusCode.UNSET || this.status.code === SpanStatusCode.OK)
      return this;
    this.status =
      status.code === SpanStatusCode.ERROR && typeof status.message === "string"
        ? { code: status.code, message: status.message }
        : { code: status.code };
    return this;
  }

  updateName(name: string): this {
    if (!this.ended) (this as { name: string }).name = name;
    return this;
  }

  /**
   * Only the first call ends the span; an end before the start is the start.
   * @see https://opentelemetry.io/docs/specs/otel/trace/api/#end
   */
  end(endTime?: TimeInput): void {
    if (this.ended) {
      diag.error(`${this.name} ${this.context.traceId}-${this.context.spanId}: a span ends once`);
      return;
    }
    const end = this.time(endTime);
    this.endTime =
      end[0] < this.startTime[0] || (end[0] === this.startTime[0] && end[1] < this.startTime[1])
        ? [this.startTime[0], this.startTime[1]]
        : end;
    this.ended = true;
    this.tracer.ended(this);
  }

  isRecording(): boolean {
    return !this.ended;
  }

  /**
   * An `exception` event: the error's code or name as its type, its message and stack.
   * @see https://opentelemetry.io/docs/specs/otel/trace/exceptions/
   */
  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === "string") attributes["exception.message"] = exception;
    else if (exception) {
      if (exception.code) attributes["exception.type"] = exception.code.toString();
      else if (exception.name) attributes["exception.type"] = exception.name;
      if (exception.message) attributes["exception.message"] = exception.message;
      if (exception.stack) attributes["exception.stacktrace"] = exception.stack;
    }
    if (attributes["exception.type"] !== undefined || attributes["exception.message"] !== undefined)
      this.addEvent("exception", attributes, time);
  }

  /** `given` as the span's clock tells it: a performance timestamp, epoch milliseconds, a `Date`, an `HrTime`; now, else. */
  private time(given: TimeInput | undefined): HrTime {
    if (typeof given === "number")
      return millisToHrTime(
        given <= performance.now() ? this.startedMillis + (given - this.startedAt) : given,
      );
    if (given instanceof Date) return millisToHrTime(given.getTime());
    if (given !== undefined && isTimeInputHrTime(given)) return given;
    // A start that was given says nothing of this clock: the wall clock's now, as the SDK's.
    if (this.startGiven) return millisToHrTime(Date.now());
    return millisToHrTime(this.startedMillis + (performance.now() - this.startedAt));
  }
}

function isTimeInput(value: unknown): value is TimeInput {
  return (
    typeof value === "number" ||
    value instanceof Date ||
    (Array.isArray(value) && isTimeInputHrTime(value as HrTime))
  );
}

/**
 * A tracer of {@link RecordTracerProvider}: the SDK's default sampler, `ParentBased(AlwaysOn)`,
 * decides without building a result.
 * @see https://opentelemetry.io/docs/specs/otel/trace/sdk/#parentbased
 */
class RecordTracer implements Tracer {
  constructor(
    readonly resource: Resource,
    readonly scope: InstrumentationScope,
    readonly limits: SpanLimits,
    private readonly processors: readonly EndedSpanProcessor[],
  ) {}

  /**
   * The parent is the span of `parent` (the active context, else), unless `options.root`. A valid
   * parent gives its trace id and trace state; an unsampled one gives a non-recording span that
   * carries the new span id, as the SDK's `NOT_RECORD` decision does.
   * @see https://opentelemetry.io/docs/specs/otel/trace/api/#span-creation
   * @see https://opentelemetry.io/docs/specs/otel/trace/sdk/#sampling
   */
  startSpan(name: string, options: SpanOptions = {}, parent: Context = contexts.active()): Span {
    if (isTracingSuppressed(parent)) return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
    const parentContext = options.root === true ? undefined : trace.getSpanContext(parent);
    const spanId = ids.next(16);
    if (parentContext !== undefined && trace.isSpanContextValid(parentContext)) {
      const { traceId, traceState } = parentContext;
      if ((parentContext.traceFlags & TraceFlags.SAMPLED) === 0)
        return trace.wrapSpanContext(
          traceState === undefined
            ? { traceId, spanId, traceFlags: TraceFlags.NONE }
            : { traceId, spanId, traceFlags: TraceFlags.NONE, traceState },
        );
      const spanContext: SpanContext =
        traceState === undefined
          ? { traceId, spanId, traceFlags: TraceFlags.SAMPLED }
          : { traceId, spanId, traceFlags: TraceFlags.SAMPLED, traceState };
      return this.started(name, options, spanContext, parentContext);
    }
    return this.started(
      name,
      options,
      { traceId: ids.next(32), spanId, traceFlags: TraceFlags.SAMPLED },
      undefined,
    );
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    options: SpanOptions,
    fn: F,
  ): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    options: SpanOptions,
    context: Context,
    fn: F,
  ): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    a?: SpanOptions | F,
    b?: Context | F,
    c?: F,
  ): ReturnType<F> {
    const fn = (typeof a === "function" ? a : typeof b === "function" ? b : c) as F;
    const options = typeof a === "object" ? a : {};
    const parent = typeof b === "object" ? b : contexts.active();
    const span = this.startSpan(name, options, parent);
    return contexts.with(trace.setSpan(parent, span), fn as (span: Span) => ReturnType<F>, undefined, span);
  }

  /** Hands an ended span to the processors. */
  ended(span: RecordSpan): void {
    for (const processor of this.processors) processor.onEnd(span);
  }

  private started(
    name: string,
    options: SpanOptions,
    spanContext: SpanContext,
    parent: SpanContext | undefined,
  ): RecordSpan {
    const span = new RecordSpan(
      this,
      name,
      options.kind ?? SpanKind.INTERNAL,
      spanContext,
      parent,
      options.startTime,
    );
    if (options.links !== undefined) span.addLinks(options.links);
    if (options.attributes !== undefined) span.setAttributes(options.attributes);
    return span;
  }
}

/** Options of {@link RecordTracerProvider}. */
export interface RecordTracerProviderOptions {
  resource: Resource;
  /** Where spans go when they end: each batch processor. */
  spanProcessors: readonly EndedSpanProcessor[];
  /** @default spanLimitsFromEnv() */
  limits?: SpanLimits;
}

/**
 * A `TracerProvider` whose spans are plain records (the SDK's `ReadableSpan` fields) handed to
 * the batch processors when they end: the SDK's `BasicTracerProvider` with its defaults (a
 * `ParentBased(AlwaysOn)` sampler, random ids, the environment's span limits), without its span
 * objects, sampler results and per-attribute checks on the thread that serves requests.
 * @see https://opentelemetry.io/docs/specs/otel/trace/api/#tracerprovider
 * @see https://opentelemetry.io/docs/specs/otel/trace/sdk/#tracer-provider
 */
export class RecordTracerProvider implements TracerProvider {
  private readonly tracers = new Map<string, RecordTracer>();
  private readonly limits: SpanLimits;

  constructor(private readonly options: RecordTracerProviderOptions) {
    this.limits = options.limits ?? spanLimitsFromEnv();
  }

  /** One tracer (and one scope object, as the OTLP encoders group spans by it) per name, version and schema URL. */
  getTracer(name: string, version?: string, options?: { schemaUrl?: string }): Tracer {
    const key = `${name}@${version ?? ""}:${options?.schemaUrl ?? ""}`;
    let tracer = this.tracers.get(key);
    if (tracer === undefined) {
      const schemaUrl = options?.schemaUrl;
      const scope: InstrumentationScope = {
        name,
        ...(version === undefined ? {} : { version }),
        ...(schemaUrl === undefined ? {} : { schemaUrl }),
      };
      tracer = new RecordTracer(this.options.resource, scope, this.limits, this.options.spanProcessors);
      this.tracers.set(key, tracer);
    }
    return tracer;
  }

  async forceFlush(): Promise<void> {
    await Promise.all(this.options.spanProcessors.map((processor) => processor.forceFlush()));
  }

  async shutdown(): Promise<void> {
    await Promise.all(this.options.spanProcessors.map((processor) => processor.shutdown()));
  }
}
