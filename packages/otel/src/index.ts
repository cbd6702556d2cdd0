/**
 * OpenTelemetry for the @svc packages: every decision they publish on their diagnostics channels
 * becomes a metric and attributes of the request's active span, and every store or key-set call
 * they trace becomes a client span and a duration.
 *
 * @packageDocumentation
 */
import {
  type Attributes,
  type AttributeValue,
  context as contexts,
  type MeterProvider,
  metrics,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import type { AuthDiagnostic } from "@svc/auth";
import type { ConditionalDiagnostic } from "@svc/conditional";
import type { ErrorDiagnostic } from "@svc/errors";
import type { IdempotencyDiagnostic } from "@svc/idempotency";
import { type DiagnosticListener, subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { checkOptionNames, refusedOption } from "@svc/kernel/internal";
import type { NegotiateDiagnostic } from "@svc/negotiate";
import type { RateLimitDiagnostic } from "@svc/ratelimit";
import type { SoapDiagnostic } from "@svc/soap-envelope";
import type { VersioningDiagnostic } from "@svc/versioning";
import { serverSpanOf } from "./server-spans.js";
import { errorType, OTHER, SCOPE_NAME, spanAttributes } from "./shared.js";

export {
  type FetchHandler,
  fetchServerSpans,
  type NodeRequestListener,
  type ServerSpanOptions,
  serverSpanOf,
  serverSpans,
} from "./server-spans.js";
export { SCOPE_NAME } from "./shared.js";

/** The packages whose channels {@link instrumentSvc} listens to. */
export const PACKAGES = [
  "ratelimit",
  "auth",
  "idempotency",
  "conditional",
  "negotiate",
  "versioning",
  "soap",
  "errors",
] as const;

/** One of {@link PACKAGES}. */
export type SvcPackage = (typeof PACKAGES)[number];

/** Options of {@link instrumentSvc}. */
export interface SvcInstrumentationOptions {
  /**
   * Where the metrics go.
   * @default the global one (`metrics.getMeterProvider()`)
   */
  meterProvider?: MeterProvider;
  /**
   * Where the store and key-set spans go.
   * @default the global one (`trace.getTracerProvider()`)
   */
  tracerProvider?: TracerProvider;
  /**
   * The packages to listen to.
   * @default every one of {@link PACKAGES}
   */
  packages?: readonly SvcPackage[];
}

/** What {@link instrumentSvc} returns: the way to stop listening. */
export interface SvcInstrumentation {
  /** Unsubscribes from every channel; what was recorded stays with the providers. */
  disable(): void;
}

/** The context object a tracing channel hands each of its five events. */
type TraceContext = Record<string, unknown> & { error?: unknown; result?: unknown };

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/**
 * One attribute of a counter: its name and the values it takes. A listed attribute takes its
 * listed values only; one the application names (a policy, an API version, an error code) takes
 * the first {@link NAMED_VALUES} it is given. Any other value is {@link OTHER}: no request can add
 * a value, so a counter's points are bounded by the product of its attributes' value counts.
 * @see https://opentelemetry.io/docs/specs/otel/metrics/supplementary-guidelines/#limiting-cardinality
 */
interface AttributeSpec {
  readonly name: string;
  /** The values it takes; without them, the first {@link NAMED_VALUES} values it is given. */
  readonly values?: readonly AttributeValue[];
}

/** How many values an attribute that the application names keeps before the rest are {@link OTHER}. */
const NAMED_VALUES = 32;

const named = (name: string): AttributeSpec => ({ name });
const listed = (name: string, values: readonly AttributeValue[]): AttributeSpec => ({ name, values });
const BOOLEAN = [true, false] as const;

/** What every package's message has: the decision it tells, one word of a set the package names. */
type Decision = { readonly decision: string };

/** The members of `M` (a package's union) that tell the decision `K`. */
type OfKind<M extends Decision, K extends M["decision"]> = M extends unknown
  ? K extends M["decision"]
    ? M
    : never
  : never;

/** How one kind of decision becomes attribute values, and whether it refuses the request. */
interface KindMapping<M> {
  /**
   * The attributes' values for `message`, in the order of the package's attributes; `undefined`
   * leaves one out, as do the values past the list's end.
   */
  values(message: M): readonly (AttributeValue | undefined)[];
  /** The decision refuses the request (always, or for the messages the function says): a span event as well. */
  readonly refuses?: true | ((message: M) => boolean);
}

/** A kind of decision as a package's entry states it: its result, once, then the other values. */
interface KindEntry<M> {
  /** The value of the mapping's `result` attribute for this kind. */
  readonly result?: string;
  /** The values of the attributes after the result; none by default. */
  values?(message: M): readonly (AttributeValue | undefined)[];
  readonly refuses?: KindMapping<M>["refuses"];
}

/**
 * One entry for each decision kind of `M`, no more: a kind a package adds to its union is a
 * missing key here, and a kind it drops an excess one, both compile errors.
 */
type Kinds<M extends Decision> = { readonly [K in M["decision"]]: KindEntry<OfKind<M, K>> };

/** How one package's decisions, the union `M` it publishes, become a metric and span attributes. */
interface DecisionMapping<M extends Decision> {
  /** The counter's name and description. */
  readonly metric: readonly [name: string, description: string];
  /**
   * The attribute that names each kind's `result`, the first: its set is the kinds' results, so
   * a result is written once, by its kind.
   */
  readonly result?: string;
  /** The attributes after the result, in the order a kind's {@link KindEntry.values} gives their values. */
  readonly attributes: readonly AttributeSpec[];
  readonly kinds: Kinds<M>;
}

/** A {@link DecisionMapping} as the channel's listener reads it: by the decision a message tells. */
interface ChannelMapping {
  readonly metric: readonly [name: string, description: string];
  readonly attributes: readonly AttributeSpec[];
  /** The mapping of the kind `decision`; `undefined` for a kind the package's union does not name. */
  kind(decision: unknown): KindMapping<Decision> | undefined;
  /** The values of a kind the union does not name (a newer package's): the first attribute `_OTHER`. */
  readonly unknown: readonly (AttributeValue | undefined)[];
}

/** `mapping` of the union `M`, read by decision (a `Map`: no decision word reaches `Object.prototype`). */
function byDecision<M extends Decision>(mapping: DecisionMapping<M>): ChannelMapping {
  // Each kind's mapping reads the messages that tell its decision, which is what `kind` hands it.
  const entries = Object.entries(mapping.kinds) as [string, KindEntry<Decision>][];
  const kinds = new Map<unknown, KindMapping<Decision>>(
    entries.map(([decision, { result, values, refuses }]) => {
      const rest = values ?? (() => []);
      const kind: KindMapping<Decision> = {
        values: result === undefined ? rest : (message) => [result, ...rest(message)],
      };
      return [decision, refuses === undefined ? kind : { ...kind, refuses }];
    }),
  );
  const results = entries.flatMap(([, { result }]) => (result === undefined ? [] : [result]));
  const attributes =
    mapping.result === undefined
      ? mapping.attributes
      : [listed(mapping.result, results), ...mapping.attributes];
  return {
    metric: mapping.metric,
    attributes,
    kind: (decision) => kinds.get(decision),
    unknown: attributes.map((_, i) => (i === 0 ? OTHER : undefined)),
  };
}

/** Whether `message`, of the kind `kind` maps, refuses its request. */
function refuses(kind: KindMapping<Decision>, message: Decision): boolean {
  return kind.refuses === true || kind.refuses?.(message) === true;
}

/** Attributes without the members a message did not carry. */
function defined(attributes: Record<string, string | number | boolean | undefined>): Attributes {
  const out: Attributes = {};
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) out[name] = value;
  return out;
}

/**
 * The most points one counter keeps, whatever its attributes' sets multiply to: with the point
 * `otel.metric.overflow: true`, where decisions beyond them count, the SDK's default cardinality
 * limit of 2,000. The attributes' bounded sets keep a counter far below it.
 * @see https://opentelemetry.io/docs/specs/otel/metrics/sdk/#cardinality-limits
 */
const CARDINALITY_LIMIT = 1999;

/** The types a named attribute's value takes (a message of another version could carry anything). */
const SCALARS: ReadonlySet<string> = new Set(["string", "number", "boolean"]);

/** An attribute's value as counted: within its set, else {@link OTHER}. */
class AttributeBound {
  private readonly values: Set<AttributeValue>;
  private readonly open: boolean;
  constructor(spec: AttributeSpec) {
    this.values = new Set(spec.values ?? []);
    this.open = spec.values === undefined;
  }

  bound(value: AttributeValue | undefined): AttributeValue | undefined {
    if (value === undefined || this.values.has(value)) return value;
    if (!this.open || this.values.size >= NAMED_VALUES || !SCALARS.has(typeof value)) return OTHER;
    this.values.add(value);
    return value;
  }
}

interface Point {
  readonly attributes: Attributes;
  value: number;
}

/**
 * One counter's counts by attribute values, kept here and observed at each collection (an
 * asynchronous counter): a decision costs a few map lookups on values that are mostly the same
 * strings, where a synchronous counter would hash its attributes on every `add`.
 * @see https://opentelemetry.io/docs/specs/otel/metrics/api/#asynchronous-counter
 */
class Tally {
  readonly points: Point[] = [];
  overflow: Point | undefined;
  private readonly root = new Map<unknown, unknown>();
  private readonly names: readonly string[];
  private readonly bounds: readonly AttributeBound[];
  constructor(attributes: readonly AttributeSpec[]) {
    this.names = attributes.map((attribute) => attribute.name);
    this.bounds = attributes.map((attribute) => new AttributeBound(attribute));
  }

  /**
   * Counts one decision of `given` values (those past its end left out), each within its
   * attribute's set; answers its point's attributes.
   */
  add(given: readonly (AttributeValue | undefined)[]): Attributes {
    // Values within their sets (nearly every decision) find their point as given.
    let point = this.find(given);
    if (point === undefined) {
      const values = this.bounds.map((bound, i) => bound.bound(given[i]));
      point = this.find(values) ?? this.create(values);
    }
    point.value++;
    return point.attributes;
  }

  private find(values: readonly (AttributeValue | undefined)[]): Point | undefined {
    let node: Map<unknown, unknown> | undefined = this.root;
    const last = this.names.length - 1;
    for (let i = 0; i < last && node !== undefined; i++) node = node.get(values[i]) as typeof node;
    return node?.get(values[last]) as Point | undefined;
  }

  private create(values: readonly (AttributeValue | undefined)[]): Point {
    if (this.points.length >= CARDINALITY_LIMIT) {
      this.overflow ??= { attributes: { "otel.metric.overflow": true }, value: 0 };
      return this.overflow;
    }
    const attributes: Attributes = {};
    this.names.forEach((name, i) => {
      if (values[i] !== undefined) attributes[name] = values[i];
    });
    const point: Point = { attributes, value: 0 };
    let node = this.root;
    const last = this.names.length - 1;
    for (let i = 0; i < last; i++) {
      let next = node.get(values[i]) as Map<unknown, unknown> | undefined;
      if (next === undefined) {
        next = new Map();
        node.set(values[i], next);
      }
      node = next;
    }
    node.set(values[last], point);
    this.points.push(point);
    return point;
  }
}

/**
 * Each package's channel and metric. Where the semantic conventions name an attribute it is used
 * (`error.type`, `http.response.status_code`); the rate limit's names follow ASP.NET Core's
 * rate-limiting metrics (`aspnetcore.rate_limiting.requests`, `...result`, `...policy`).
 *
 * @see https://opentelemetry.io/docs/specs/semconv/dotnet/dotnet-aspnetcore-metrics/
 * @see https://opentelemetry.io/docs/specs/semconv/general/recording-errors/
 */
const DECISIONS: Readonly<Record<SvcPackage, ChannelMapping>> = {
  ratelimit: byDecision<RateLimitDiagnostic>({
    metric: ["svc.rate_limiting.requests", "Requests the rate limit decided on"],
    result: "svc.rate_limiting.result",
    attributes: [
      named("svc.rate_limiting.policy"),
      listed("svc.rate_limiting.key_kind", ["principal", "address", "custom"]),
      listed("svc.rate_limiting.fail_mode", ["open", "closed", "insurance"]),
      named("error.type"),
    ],
    kinds: {
      allowed: { result: "acquired", values: (m) => [m.policy, m.keyKind] },
      limited: { result: "rejected", values: (m) => [m.policy, m.keyKind], refuses: true },
      "cost-exceeds-quota": {
        result: "cost_exceeds_quota",
        values: (m) => [m.policy, m.keyKind],
        refuses: true,
      },
      "store-failed": {
        result: "store_failed",
        values: (m) => [undefined, undefined, m.failMode, errorType(m.error)],
        refuses: (m) => m.failMode === "closed",
      },
      "store-recovered": { result: "store_recovered" },
    },
  }),
  auth: byDecision<AuthDiagnostic>({
    metric: ["svc.authentication.attempts", "Authentication decisions and key-set refreshes"],
    result: "svc.authentication.result",
    attributes: [named("svc.authentication.scheme"), named("error.type")],
    kinds: {
      // An authentication's scheme is the application's verifier's.
      authenticated: { result: "success", values: (m) => [m.scheme] },
      anonymous: { result: "none" },
      // A refusal's scheme is the one the client wrote in `Authorization`: a registered one, or `_OTHER`.
      refused: { result: "failure", values: (m) => [registeredScheme(m.scheme), m.reason], refuses: true },
      "jwks-refreshed": { result: "jwks_refreshed" },
      "jwks-failed": { result: "jwks_failed", values: (m) => [undefined, errorType(m.error)] },
    },
  }),
  idempotency: byDecision<IdempotencyDiagnostic>({
    metric: ["svc.idempotency.requests", "Requests with an Idempotency-Key, by outcome"],
    result: "svc.idempotency.result",
    attributes: [named("error.type")],
    kinds: {
      claimed: { result: "claimed" },
      "lease-expired": { result: "lease_expired" },
      replayed: { result: "replayed" },
      "in-progress": { result: "in_progress", refuses: true },
      mismatch: { result: "mismatch", refuses: true },
      "store-failed": { result: "store_failed", values: (m) => [errorType(m.error)], refuses: true },
      completed: { result: "completed" },
      released: { result: "released" },
      "store-recovered": { result: "store_recovered" },
    },
  }),
  conditional: byDecision<ConditionalDiagnostic>({
    metric: ["svc.conditional.responses", "Responses decided by a precondition (304, 412, 428)"],
    result: "svc.conditional.result",
    attributes: [
      listed("svc.conditional.field", [
        "If-None-Match",
        "If-Modified-Since",
        "If-Match",
        "If-Unmodified-Since",
      ]),
    ],
    kinds: {
      "not-modified": { result: "not_modified", values: (m) => [m.field] },
      "precondition-failed": { result: "precondition_failed", values: (m) => [m.field] },
      "precondition-required": { result: "precondition_required", values: (m) => [m.field] },
    },
  }),
  negotiate: byDecision<NegotiateDiagnostic>({
    metric: ["svc.negotiation.decisions", "Content negotiation and body decisions (406, 415, codings)"],
    result: "svc.negotiation.result",
    attributes: [named("svc.negotiation.coding"), named("error.type")],
    kinds: {
      "not-acceptable": { result: "not_acceptable", refuses: true },
      "unsupported-media-type": { result: "unsupported_media_type", refuses: true },
      coded: { result: "coded", values: (m) => [m.coding] },
      "body-refused": { result: "body_refused", values: (m) => [undefined, m.reason], refuses: true },
      "cross-origin-refused": { result: "cross_origin_refused", refuses: true },
    },
  }),
  versioning: byDecision<VersioningDiagnostic>({
    metric: ["svc.versioning.requests", "Requests by the API version they got"],
    result: "svc.versioning.result",
    attributes: [
      named("svc.api.version"),
      listed("svc.versioning.strategy", ["path", "query", "header", "custom", "media-type", "default"]),
      listed("svc.api.version.deprecated", BOOLEAN),
      listed("svc.api.version.sunset", BOOLEAN),
    ],
    kinds: {
      // The version a request got: one of the application's.
      chosen: { result: "chosen", values: (m) => [m.version, m.strategy, m.deprecated, m.sunset] },
      // A version the API does not have is the client's to spell: `unsupported`, whatever it was.
      unsupported: { result: "unsupported", values: (m) => ["unsupported", m.strategy], refuses: true },
      "not-acceptable": { result: "not_acceptable", values: (m) => [undefined, m.strategy], refuses: true },
      malformed: { result: "malformed", values: (m) => [undefined, m.strategy] },
      conflicting: { result: "conflicting" },
    },
  }),
  soap: byDecision<SoapDiagnostic>({
    metric: ["svc.soap.operations", "SOAP messages by operation and outcome"],
    result: "svc.soap.result",
    attributes: [
      named("svc.soap.operation"),
      listed("svc.soap.version", ["1.1", "1.2"]),
      listed("svc.soap.one_way", BOOLEAN),
      named("error.type"),
    ],
    kinds: {
      operation: { result: "ok", values: (m) => [m.operation, m.soapVersion, m.oneWay] },
      fault: {
        result: "fault",
        values: (m) => [m.operation, m.soapVersion, undefined, m.faultCode],
        refuses: true,
      },
    },
  }),
  errors: byDecision<ErrorDiagnostic>({
    metric: ["svc.errors.records", "Error records rendered, by status and code"],
    attributes: [named("http.response.status_code"), named("error.type")],
    kinds: { record: { values: (m) => [m.status, m.code ?? String(m.status)] } },
  }),
};

/**
 * The buckets the semantic conventions give client durations, in seconds.
 * @see https://opentelemetry.io/docs/specs/semconv/database/database-metrics/#metric-dbclientoperationduration
 */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10];

/** The tracing channels the packages trace their outside calls on, and what kind of call each is. */
const TRACED: readonly { readonly name: string; readonly pkg: SvcPackage; readonly kind: "db" | "http" }[] = [
  { name: "svc:ratelimit:store", pkg: "ratelimit", kind: "db" },
  { name: "svc:idempotency:store", pkg: "idempotency", kind: "db" },
  { name: "svc:auth:jwks", pkg: "auth", kind: "http" },
];

/**
 * The store names the packages use, as the semantic conventions' `db.system.name` values where
 * there is one.
 * @see https://opentelemetry.io/docs/specs/semconv/registry/attributes/db/#db-system-name
 */
const DB_SYSTEM: Record<string, string> = { redis: "redis", postgres: "postgresql" };

/**
 * The schemes of IANA's HTTP Authentication Scheme Registry, in lower case as `@svc/auth` names
 * them, and its SOAP header credentials.
 * @see https://www.iana.org/assignments/http-authschemes/http-authschemes.xhtml
 */
const REGISTERED_SCHEMES: ReadonlySet<string> = new Set([
  "basic",
  "bearer",
  "concealed",
  "digest",
  "dpop",
  "gnap",
  "hoba",
  "mutual",
  "negotiate",
  "oauth",
  "privatetoken",
  "scram-sha-1",
  "scram-sha-256",
  "vapid",
  "soap",
]);

/** A scheme the client wrote, when it is a registered one; else `_OTHER`. */
function registeredScheme(scheme: string | undefined): string | undefined {
  if (scheme === undefined) return undefined;
  return REGISTERED_SCHEMES.has(scheme) ? scheme : OTHER;
}

/**
 * Subscribes to the @svc packages' diagnostics channels and records, for each decision, one point
 * of its package's counter and the same attributes on the request's active span (a refusal also as
 * a span event); for each traced store or key-set call, a client span and one point of
 * `db.client.operation.duration` or `http.client.request.duration` (seconds). Call it once, after
 * the OpenTelemetry SDK has started, before the server takes requests.
 *
 * The span is the request's server span: {@link serverSpans}' (found by the message's request,
 * active or not), else the active span (an HTTP instrumentation's).
 * Its `error.type` tells why the request failed: the first refusal's reason (`expired`), else the
 * first a decision gave; a later decision's stays in its event and its point.
 *
 * @example
 * const instrumentation = instrumentSvc();
 * // ...later, on shutdown:
 * instrumentation.disable();
 * @see https://opentelemetry.io/docs/specs/semconv/database/database-metrics/
 * @see https://opentelemetry.io/docs/specs/semconv/http/http-metrics/#metric-httpclientrequestduration
 */
export function instrumentSvc(options: SvcInstrumentationOptions = {}): SvcInstrumentation {
  checkOptionNames("otel", options, ["meterProvider", "tracerProvider", "packages"], "instrumentSvc");
  const chosen = options.packages ?? PACKAGES;
  if (!Array.isArray(chosen) || chosen.some((p) => !PACKAGES.includes(p as SvcPackage)))
    throw refusedOption(
      "otel",
      "packages",
      chosen,
      `a list of ${PACKAGES.join(", ")}`,
      "instrumentSvc: packages",
    );
  const { meterProvider = metrics.getMeterProvider(), tracerProvider = trace.getTracerProvider() } = options;
  if (typeof meterProvider?.getMeter !== "function")
    throw refusedOption(
      "otel",
      "meterProvider",
      meterProvider,
      "a MeterProvider",
      "instrumentSvc: meterProvider",
    );
  if (typeof tracerProvider?.getTracer !== "function")
    throw refusedOption(
      "otel",
      "tracerProvider",
      tracerProvider,
      "a TracerProvider",
      "instrumentSvc: tracerProvider",
    );
  const meter = meterProvider.getMeter(SCOPE_NAME);
  const tracer = tracerProvider.getTracer(SCOPE_NAME);
  const subscriptions: [string, DiagnosticListener][] = [];
  const listen = (name: string, listener: DiagnosticListener) => {
    subscribeDiagnostics(name, listener);
    subscriptions.push([name, listener]);
  };

  for (const pkg of new Set(chosen as readonly SvcPackage[])) {
    const mapping = DECISIONS[pkg];
    const tally = new Tally(mapping.attributes);
    meter
      .createObservableCounter(mapping.metric[0], { description: mapping.metric[1], unit: "{decision}" })
      .addCallback((result) => {
        for (const point of tally.points) result.observe(point.value, point.attributes);
        if (tally.overflow !== undefined) result.observe(tally.overflow.value, tally.overflow.attributes);
      });
    listen(`svc:${pkg}`, (raw) => {
      if (typeof raw !== "object" || raw === null) return;
      // A message of the package's channel: one of its union, or a kind a newer package added.
      const message = raw as Decision;
      const kind = mapping.kind(message.decision);
      const attributes = tally.add(kind === undefined ? mapping.unknown : kind.values(message));
      // The request's server span, ours whether or not it is active; else the active one (an HTTP instrumentation's).
      const request = (raw as { request?: unknown }).request;
      const span =
        (typeof request === "object" && request !== null ? serverSpanOf(request) : undefined) ??
        trace.getActiveSpan();
      if (span === undefined || !span.isRecording()) return;
      const refusal = kind !== undefined && refuses(kind, message);
      // The span keeps the first refusal's `error.type`: a later decision's goes in its event and point.
      span.setAttributes(spanAttributes(span, attributes, refusal));
      if (refusal) span.addEvent(`svc.${pkg}.${message.decision.replaceAll("-", "_")}`, attributes);
    });
  }

  const durations = {
    db: meter.createHistogram("db.client.operation.duration", {
      description: "Duration of the @svc packages' store calls",
      unit: "s",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    http: meter.createHistogram("http.client.request.duration", {
      description: "Duration of the @svc packages' key-set fetches",
      unit: "s",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
  };
  for (const traced of TRACED) {
    if (!chosen.includes(traced.pkg)) continue;
    const calls = new WeakMap<object, { span: Span; started: number }>();
    const finish = (ctx: TraceContext) => {
      const call = calls.get(ctx);
      if (call === undefined) return;
      calls.delete(ctx);
      const attributes = callAttributes(traced.kind, traced.pkg, ctx);
      if (ctx.error !== undefined) {
        attributes["error.type"] = errorType(ctx.error);
        call.span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(ctx.error) });
        if (ctx.error instanceof Error) call.span.recordException(ctx.error);
      }
      call.span.setAttributes(attributes);
      call.span.end();
      durations[traced.kind].record((performance.now() - call.started) / 1000, attributes);
    };
    listen(`tracing:${traced.name}:start`, (raw) => {
      if (typeof raw !== "object" || raw === null) return;
      const ctx = raw as TraceContext;
      const parent = contexts.active();
      const span = tracer.startSpan(
        spanName(traced.kind, ctx),
        { kind: SpanKind.CLIENT, attributes: callAttributes(traced.kind, traced.pkg, ctx) },
        parent,
      );
      calls.set(ctx, { span, started: performance.now() });
    });
    // A call that threw before it gave a promise: `error` then `end`, no `asyncEnd`.
    listen(`tracing:${traced.name}:end`, (raw) => {
      if (typeof raw === "object" && raw !== null && (raw as TraceContext).error !== undefined)
        finish(raw as TraceContext);
    });
    listen(`tracing:${traced.name}:asyncEnd`, (raw) => {
      if (typeof raw === "object" && raw !== null) finish(raw as TraceContext);
    });
  }

  let enabled = true;
  return {
    disable() {
      if (!enabled) return;
      enabled = false;
      for (const [name, listener] of subscriptions) unsubscribeDiagnostics(name, listener);
    },
  };
}

/** The span name the conventions give a call: `{db.operation.name} {db.system.name}`, or the HTTP method. */
function spanName(kind: "db" | "http", ctx: TraceContext): string {
  if (kind === "http") return "GET";
  const operation = text(ctx.operation) ?? "call";
  const store = text(ctx.store);
  return store === undefined ? operation : `${operation} ${DB_SYSTEM[store] ?? store}`;
}

/** A traced call's attributes, as the semantic conventions name them. */
function callAttributes(kind: "db" | "http", pkg: SvcPackage, ctx: TraceContext): Attributes {
  if (kind === "http")
    return defined({ "http.request.method": "GET", "url.full": text(ctx.uri), "svc.package": pkg });
  const store = text(ctx.store);
  return defined({
    "db.system.name": store === undefined ? undefined : (DB_SYSTEM[store] ?? store),
    "db.operation.name": text(ctx.operation),
    "svc.package": pkg,
  });
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
