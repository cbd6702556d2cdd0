// @ts-check
/**
 * Finished spans as they cross from the thread that serves requests to the span exporter's
 * worker (span-export.ts, span-export-worker.mjs): one flat array of primitives a batch, since a
 * structured clone pays for every object and array it meets (a span's context, times, status and
 * attributes as objects cost it twice what their values do), and the worker rebuilds the SDK's
 * `ReadableSpan`s from it. Plain JavaScript, as the worker runs it.
 *
 * A span's record, in order: name, kind, trace id, span id, trace flags, trace state (serialised,
 * or undefined), is-remote; whether it has a parent, then the parent's trace id, span id, trace
 * flags, trace state and is-remote; start and end (seconds, nanoseconds); status code and
 * message; its resource's and scope's index in the batch's lists; the dropped attributes, events
 * and links counts; then its attributes, its events and its links, each list of the two its length
 * first. Attributes are the index of their list of keys in the batch's, then their values in
 * that order: the keys, the same few strings in every span, are copied once a batch. An event is
 * its name, time (two numbers), dropped attributes count and attributes; a link its context
 * (five values as the span's), dropped attributes count and attributes.
 * @see https://opentelemetry.io/docs/specs/otel/trace/sdk/#additional-span-interfaces what a ReadableSpan holds
 */
import { hrTimeDuration, TraceState } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";

/** @typedef {import("@opentelemetry/api").Attributes} Attributes */
/** @typedef {import("@opentelemetry/api").AttributeValue} AttributeValue */
/** @typedef {import("@opentelemetry/api").HrTime} HrTime */
/** @typedef {import("@opentelemetry/api").Link} Link */
/** @typedef {import("@opentelemetry/api").SpanContext} SpanContext */
/** @typedef {import("@opentelemetry/api").SpanKind} SpanKind */
/** @typedef {import("@opentelemetry/api").SpanStatusCode} SpanStatusCode */
/** @typedef {import("@opentelemetry/core").InstrumentationScope} InstrumentationScope */
/** @typedef {import("@opentelemetry/resources").Resource} Resource */
/** @typedef {import("@opentelemetry/sdk-trace-base").ReadableSpan} ReadableSpan */
/** @typedef {import("@opentelemetry/sdk-trace-base").TimedEvent} TimedEvent */

/**
 * A batch of spans as the worker receives it: the resources, scopes and lists of attribute keys
 * its spans name, once each, and the spans' records, one after the other.
 * @typedef {{ resources: { attributes: Attributes; schemaUrl: string | undefined }[]; scopes: InstrumentationScope[]; keyLists: string[][]; values: unknown[] }} WireBatch
 */

/**
 * @param {unknown[]} out
 * @param {SpanContext} context
 */
function writeContext(out, context) {
  out.push(
    context.traceId,
    context.spanId,
    context.traceFlags,
    context.traceState?.serialize(),
    context.isRemote,
  );
}

/**
 * The index of `item` in `list`, appended the first time (`seen` keeps the indexes).
 * @template K, V
 * @param {Map<K, number>} seen
 * @param {V[]} list
 * @param {K} item
 * @param {(item: K) => V} data
 */
function indexIn(seen, list, item, data) {
  let index = seen.get(item);
  if (index === undefined) {
    index = list.push(data(item)) - 1;
    seen.set(item, index);
  }
  return index;
}

/** How many of a batch's latest lists of keys a span's attributes are compared with before a new one. */
const RECENT_KEY_LISTS = 8;

/** @param {Resource} resource */
const resourceData = (resource) => ({ attributes: resource.attributes, schemaUrl: resource.schemaUrl });
/** @param {InstrumentationScope} scope */
const scopeData = (scope) => scope;

/**
 * A batch being written, one span at a time as each ends; its message holds no span, so the
 * spans are garbage as soon as they end.
 */
export class SpanBatch {
  constructor() {
    /**
     * Of any values from the start: an array that begins with small integers only changes its
     * kind on the first string, which would undo the optimised code of every batch before it.
     * @type {unknown[]}
     */
    this.values = [undefined];
    this.values.pop();
    /** The spans written so far. */
    this.count = 0;
    /** @type {WireBatch["resources"]} */
    this.resources = [];
    /** @type {InstrumentationScope[]} */
    this.scopes = [];
    /** @type {Map<Resource, number>} */
    this.resourceIndexes = new Map();
    /** @type {Map<InstrumentationScope, number>} */
    this.scopeIndexes = new Map();
    /** The lists of attribute keys the batch's records name, each once. */
    /** @type {string[][]} */
    this.keyLists = [];
    /** The keys of the attributes being written. */
    /** @type {string[]} */
    this.keys = [];
  }

  /**
   * Writes `attributes`: the index of their list of keys, then their values in that order.
   * @param {Attributes} attributes
   */
  attributes(attributes) {
    const out = this.values;
    const keys = this.keys;
    keys.length = 0;
    const at = out.length;
    out.push(0);
    for (const key in attributes) {
      keys.push(key);
      out.push(attributes[key]);
    }
    out[at] = this.keyList(keys);
  }

  /**
   * The index of the list `keys` among the batch's, appended when none of the last few is equal:
   * spans of one kind name the same keys in the same order, so most records find the last one.
   * @param {string[]} keys
   */
  keyList(keys) {
    const lists = this.keyLists;
    for (let index = lists.length - 1; index >= 0 && index >= lists.length - RECENT_KEY_LISTS; index--) {
      const list = /** @type {string[]} */ (lists[index]);
      if (list.length !== keys.length) continue;
      let i = 0;
      while (i < keys.length && list[i] === keys[i]) i++;
      if (i === keys.length) return index;
    }
    return lists.push(keys.slice()) - 1;
  }

  /**
   * Writes `span`'s record, reading it once; copies no string.
   * @param {ReadableSpan} span
   */
  add(span) {
    const out = this.values;
    out.push(span.name, span.kind);
    writeContext(out, span.spanContext());
    const parent = span.parentSpanContext;
    if (parent === undefined) out.push(false);
    else {
      out.push(true);
      writeContext(out, parent);
    }
    out.push(
      span.startTime[0],
      span.startTime[1],
      span.endTime[0],
      span.endTime[1],
      span.status.code,
      span.status.message,
      indexIn(this.resourceIndexes, this.resources, span.resource, resourceData),
      indexIn(this.scopeIndexes, this.scopes, span.instrumentationScope, scopeData),
      span.droppedAttributesCount,
      span.droppedEventsCount,
      span.droppedLinksCount,
    );
    this.attributes(span.attributes);
    out.push(span.events.length);
    for (const event of span.events) {
      out.push(event.name, event.time[0], event.time[1], event.droppedAttributesCount);
      this.attributes(event.attributes ?? {});
    }
    out.push(span.links.length);
    for (const link of span.links) {
      writeContext(out, link.context);
      out.push(link.droppedAttributesCount);
      this.attributes(link.attributes ?? {});
    }
    this.count++;
  }

  /** @returns {WireBatch} the batch's message */
  message() {
    return { resources: this.resources, scopes: this.scopes, keyLists: this.keyLists, values: this.values };
  }
}

/**
 * `spans` as one batch's message.
 * @param {readonly ReadableSpan[]} spans
 * @returns {WireBatch}
 */
export function encodeSpans(spans) {
  const batch = new SpanBatch();
  for (const span of spans) batch.add(span);
  return batch.message();
}

/** Reads a batch's values in order, each read typed as what the record holds there. */
class Reader {
  /** @param {WireBatch} batch */
  constructor(batch) {
    this.values = batch.values;
    this.keyLists = batch.keyLists;
    this.at = 0;
  }
  get done() {
    return this.at >= this.values.length;
  }
  next() {
    return this.values[this.at++];
  }
  string() {
    return /** @type {string} */ (this.next());
  }
  number() {
    return /** @type {number} */ (this.next());
  }
  /** @returns {HrTime} */
  time() {
    return [this.number(), this.number()];
  }
  /** @returns {Attributes} */
  attributes() {
    const keys = this.keyLists[this.number()];
    if (keys === undefined) throw new Error("a span names a list of keys the batch does not hold");
    /** @type {Attributes} */
    const attributes = {};
    for (const key of keys) attributes[key] = /** @type {AttributeValue | undefined} */ (this.next());
    return attributes;
  }
  /** @returns {SpanContext} */
  context() {
    /** @type {SpanContext} */
    const context = { traceId: this.string(), spanId: this.string(), traceFlags: this.number() };
    const traceState = /** @type {string | undefined} */ (this.next());
    const isRemote = /** @type {boolean | undefined} */ (this.next());
    if (traceState !== undefined) context.traceState = new TraceState(traceState);
    if (isRemote !== undefined) context.isRemote = isRemote;
    return context;
  }
}

/**
 * The SDK's spans a batch describes, as its exporters read them: one resource and one scope
 * object each, shared by their spans (the OTLP encoders group spans by those objects).
 * @param {WireBatch} batch
 * @returns {ReadableSpan[]}
 */
export function decodeSpans(batch) {
  const resources = batch.resources.map((resource) =>
    resourceFromAttributes(
      resource.attributes,
      resource.schemaUrl === undefined ? {} : { schemaUrl: resource.schemaUrl },
    ),
  );
  const read = new Reader(batch);
  /** @type {ReadableSpan[]} */
  const spans = [];
  while (!read.done) {
    const name = read.string();
    const kind = /** @type {SpanKind} */ (read.number());
    const context = read.context();
    const parent = read.next() === true ? read.context() : undefined;
    const startTime = read.time();
    const endTime = read.time();
    const code = /** @type {SpanStatusCode} */ (read.number());
    const message = /** @type {string | undefined} */ (read.next());
    const resource = resources[read.number()];
    const scope = batch.scopes[read.number()];
    if (resource === undefined || scope === undefined) throw new Error("a span names no resource or scope");
    const droppedAttributesCount = read.number();
    const droppedEventsCount = read.number();
    const droppedLinksCount = read.number();
    const attributes = read.attributes();
    /** @type {TimedEvent[]} */
    const events = [];
    for (let count = read.number(); count > 0; count--)
      events.push({
        name: read.string(),
        time: read.time(),
        droppedAttributesCount: read.number(),
        attributes: read.attributes(),
      });
    /** @type {Link[]} */
    const links = [];
    for (let count = read.number(); count > 0; count--)
      links.push({
        context: read.context(),
        droppedAttributesCount: read.number(),
        attributes: read.attributes(),
      });
    /** @type {ReadableSpan} */
    const span = {
      name,
      kind,
      spanContext: () => context,
      startTime,
      endTime,
      duration: hrTimeDuration(startTime, endTime),
      status: message === undefined ? { code } : { code, message },
      attributes,
      links,
      events,
      ended: true,
      resource,
      instrumentationScope: scope,
      droppedAttributesCount,
      droppedEventsCount,
      droppedLinksCount,
    };
    spans.push(parent === undefined ? span : { ...span, parentSpanContext: parent });
  }
  return spans;
}
