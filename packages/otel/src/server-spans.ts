import type { IncomingMessage, ServerResponse } from "node:http";
import {
  type Attributes,
  type Context,
  context as contexts,
  ProxyTracerProvider,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapPropagator,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import { routeOf } from "@svc/kernel";
import { checkOptionNames, refusedOption } from "@svc/kernel/internal";
import { errorType, hasErrorType, OTHER, SCOPE_NAME } from "./shared.js";

/** Options of {@link serverSpans} and {@link fetchServerSpans}. */
export interface ServerSpanOptions {
  /**
   * Where the server spans go. With the API's no-op provider (no SDK registered), no span is built.
   * @default the global one (`trace.getTracerProvider()`), read for each request
   */
  tracerProvider?: TracerProvider;
  /**
   * What reads the parent span from the request's fields. The global one reads W3C `traceparent`
   * once an SDK has registered it (`NodeSDK` does); without one, each request starts a trace.
   * @default the global one (`propagation`)
   * @see https://www.w3.org/TR/trace-context/#traceparent-header
   */
  propagator?: TextMapPropagator;
  /**
   * The route of a request the router did not record one for (refused before routing, say), as
   * a template of the application's own bounded set, or `undefined` for none. Never the path as
   * sent: `http.route` is a low-cardinality template.
   * @default none: only the template the router recorded (`routeOf(request).template`)
   * @see https://opentelemetry.io/docs/specs/semconv/registry/attributes/http/#http-route
   */
  route?: (request: object) => string | undefined;
  /**
   * Whether the span is the active one in the OpenTelemetry context while the request is served:
   * what other instrumentations' spans (a database client's) and `trace.getActiveSpan()` read.
   * The decisions `instrumentSvc` hears land on the span either way, and `serverSpanOf(request)`
   * finds it. `false` spares each request the context's propagation through its asynchronous
   * work (with `AsyncLocalStorageContextManager`, a hook on every promise of the process once a
   * context has been entered); the store and key-set calls `instrumentSvc` traces are then not
   * children of the span, but roots of their own traces.
   * @default true
   */
  activate?: boolean;
}

/** A `node:http` request listener: Express's `app`, Fastify's `serverFactory` handler, `getRequestListener(app.fetch)`. */
export type NodeRequestListener = (req: IncomingMessage, res: ServerResponse) => unknown;

/** A Fetch handler: Hono's `app.fetch`, a Bun, Deno or workerd `fetch`. */
export type FetchHandler<Args extends unknown[], R extends Response> = (
  request: Request,
  ...args: Args
) => R | Promise<R>;

/**
 * The request methods the conventions know: RFC 9110's and `PATCH`. Any other is `_OTHER`, and
 * the span's name says `HTTP`.
 * @see https://opentelemetry.io/docs/specs/semconv/registry/attributes/http/#http-request-method
 */
const METHODS: ReadonlySet<string> = new Set([
  "CONNECT",
  "DELETE",
  "GET",
  "HEAD",
  "OPTIONS",
  "PATCH",
  "POST",
  "PUT",
  "TRACE",
]);

const knownMethod = (method: string | undefined): string =>
  method !== undefined && METHODS.has(method) ? method : OTHER;

/** The API's no-op provider, which a proxy hands out while no SDK is registered. */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * Whether `provider` is the no-op one: this API's, or another copy's (ESM beside CommonJS) by its
 * class name (a bundle that renames it gets no-op spans, as it would without this check).
 */
const isNoop = (provider: TracerProvider): boolean =>
  provider === NOOP_PROVIDER || provider.constructor?.name === "NoopTracerProvider";

const tracers = new WeakMap<TracerProvider, Tracer>();

/** The tracer of `given` (else of the global provider) as it is now; `undefined` for the no-op one. */
function tracerOf(given: TracerProvider | undefined): Tracer | undefined {
  let provider = given ?? trace.getTracerProvider();
  // A proxy (the API's global one, of any copy of the API) hands out its delegate's tracers.
  const proxy = provider as TracerProvider & { getDelegate?: () => TracerProvider };
  if (typeof proxy.getDelegate === "function") provider = proxy.getDelegate();
  if (isNoop(provider)) return undefined;
  let tracer = tracers.get(provider);
  if (tracer === undefined) {
    tracer = provider.getTracer(SCOPE_NAME);
    tracers.set(provider, tracer);
  }
  return tracer;
}

const nodeFields: TextMapGetter<IncomingMessage["headers"]> = {
  keys: (headers) => Object.keys(headers),
  get: (headers, name) => headers[name],
};

const fetchFields: TextMapGetter<Headers> = {
  keys: (headers) => [...headers.keys()],
  get: (headers, name) => headers.get(name) ?? undefined,
};

function checkOptions(options: ServerSpanOptions, label: string): void {
  checkOptionNames("otel", options, ["tracerProvider", "propagator", "route", "activate"], label);
  const { tracerProvider, propagator, route, activate } = options;
  if (activate !== undefined && typeof activate !== "boolean")
    throw refusedOption("otel", "activate", activate, "a boolean", `${label}: activate`);
  if (route !== undefined && typeof route !== "function")
    throw refusedOption("otel", "route", route, "a function of the request", `${label}: route`);
  if (tracerProvider !== undefined && typeof tracerProvider?.getTracer !== "function")
    throw refusedOption(
      "otel",
      "tracerProvider",
      tracerProvider,
      "a TracerProvider",
      `${label}: tracerProvider`,
    );
  if (propagator !== undefined && typeof propagator?.extract !== "function")
    throw refusedOption("otel", "propagator", propagator, "a TextMapPropagator", `${label}: propagator`);
}

/** The span each request is served in, by the object the wrapper was handed. */
const requestSpans = new WeakMap<object, ServerSpan>();

/**
 * The `SERVER` span {@link serverSpans} or {@link fetchServerSpans} serves `request` in, active or
 * not: `request` is the object the wrapper was handed (the `IncomingMessage`, the `Request`) or a
 * framework's request that wraps it as `raw` (Fastify's), as the kernel finds a request's
 * exchange. `undefined` for a request served without one (no SDK registered, another HTTP
 * instrumentation's span).
 *
 * @example const traceId = serverSpanOf(req)?.spanContext().traceId; // for the request's log lines
 */
export function serverSpanOf(request: object): Span | undefined {
  const raw = (request as { raw?: unknown }).raw;
  return requestSpans.get(typeof raw === "object" && raw !== null ? raw : request)?.span;
}

/** One request's server span, from its start to the response. */
class ServerSpan {
  private ended = false;
  constructor(
    readonly span: Span,
    private readonly parent: Context,
    private readonly method: string,
    private readonly route: ((request: object) => string | undefined) | undefined,
  ) {}

  /** The context the request is served in when the span is active: the parent's, with the span. */
  get active(): Context {
    return trace.setSpan(this.parent, this.span);
  }

  /** Names the span after the route, sets the response's attributes and ends it. */
  end(request: object, status: number | undefined, error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    const { span } = this;
    const template = routeOf(request).template ?? this.route?.(request);
    const attributes: Attributes = {};
    if (template !== undefined) {
      attributes["http.route"] = template;
      span.updateName(`${this.method === OTHER ? "HTTP" : this.method} ${template}`);
    }
    if (status !== undefined) attributes["http.response.status_code"] = status;
    if (error !== undefined) {
      if (error instanceof Error) span.recordException(error);
      if (!hasErrorType(span)) attributes["error.type"] = errorType(error);
      span.setStatus({ code: SpanStatusCode.ERROR });
    } else if (status !== undefined && status >= 500) {
      if (!hasErrorType(span)) attributes["error.type"] = String(status);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.setAttributes(attributes);
    span.end();
  }
}

/**
 * A server span for `request`, of `method` and `scheme`, child of the parent its `fields` name;
 * {@link serverSpanOf} finds it by `request`.
 */
function startSpan<F>(
  tracer: Tracer,
  { propagator, route }: ServerSpanOptions,
  request: object,
  method: string | undefined,
  scheme: string | undefined,
  fields: F,
  getter: TextMapGetter<F>,
): ServerSpan {
  const parent = (propagator ?? propagation).extract(ROOT_CONTEXT, fields, getter);
  const known = knownMethod(method);
  const attributes: Attributes = { "http.request.method": known };
  if (scheme !== undefined) attributes["url.scheme"] = scheme;
  const span = tracer.startSpan(
    known === OTHER ? "HTTP" : known,
    { kind: SpanKind.SERVER, attributes },
    parent,
  );
  const served = new ServerSpan(span, parent, known, route);
  requestSpans.set(request, served);
  return served;
}

/**
 * Ends the server span of the response's request: one listener for every response, no closure
 * made per request (`close` is emitted once; a span ends once).
 */
function responseClosed(this: ServerResponse): void {
  const { req } = this;
  requestSpans.get(req)?.end(req, this.headersSent ? this.statusCode : undefined);
}

/**
 * Wraps a `node:http` request listener so that each request is served in a `SERVER` span: the
 * child of the span a valid `traceparent` names, active while the request is served (unless
 * `activate: false`), ended when the response closes. The decisions `instrumentSvc` hears land on
 * it, and {@link serverSpanOf} finds it, by the request. The span is
 * named `GET /employees/:id` after the route's template (`routeOf(req).template` of `@svc/kernel`:
 * Express's route, a template recorded with `recordRouteTemplate`), else after the method alone,
 * and carries the conventions' `http.request.method` (`_OTHER` for a method they do not know),
 * `url.scheme`, `http.route`, `http.response.status_code` and, for a 5xx, `error.type` and an
 * error status. No attribute carries what the client wrote (`url.path`, `url.query`, `Host`).
 *
 * With the API's no-op tracer provider (no SDK registered), the listener runs as it is. A
 * `traceparent` is read by the global propagator, which `NodeSDK` registers; with the SDK's
 * providers alone, register `W3CTraceContextPropagator` of `@opentelemetry/core` (or pass it as
 * `propagator`).
 *
 * @example createServer(serverSpans(app)).listen(8080); // Express
 * @example Fastify({ serverFactory: (handler) => createServer(serverSpans(handler)) });
 * @see https://opentelemetry.io/docs/specs/semconv/http/http-spans/#http-server
 */
export function serverSpans(
  listener: NodeRequestListener,
  options: ServerSpanOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  if (typeof listener !== "function")
    throw refusedOption("otel", "listener", listener, "a request listener", "serverSpans: listener");
  checkOptions(options, "serverSpans");
  const { tracerProvider, activate = true } = options;
  return (req, res) => {
    const tracer = tracerOf(tracerProvider);
    if (tracer === undefined) {
      listener(req, res);
      return;
    }
    const scheme = (req.socket as { encrypted?: unknown } | null)?.encrypted === true ? "https" : "http";
    const served = startSpan(tracer, options, req, req.method, scheme, req.headers, nodeFields);
    res.on("close", responseClosed);
    try {
      if (activate) contexts.with(served.active, listener, undefined, req, res);
      else listener(req, res);
    } catch (error) {
      served.end(req, undefined, error);
      throw error;
    }
  };
}

/**
 * Wraps a Fetch handler (Hono's `app.fetch`, on Node.js through `@hono/node-server`, or on Bun,
 * Deno and workerd) as {@link serverSpans} wraps a listener: a `SERVER` span per request, ended
 * when the handler has returned its `Response` (a body streamed after that is not in it). The
 * route's template is the one recorded on the `Request` (`recordRouteTemplate(c.req.raw, ...)`).
 *
 * @example serve({ fetch: fetchServerSpans(app.fetch), port: 8080 }); // @hono/node-server
 * @see https://opentelemetry.io/docs/specs/semconv/http/http-spans/#http-server
 */
export function fetchServerSpans<Args extends unknown[], R extends Response>(
  handler: FetchHandler<Args, R>,
  options: ServerSpanOptions = {},
): (request: Request, ...args: Args) => Promise<R> {
  if (typeof handler !== "function")
    throw refusedOption("otel", "handler", handler, "a Fetch handler", "fetchServerSpans: handler");
  checkOptions(options, "fetchServerSpans");
  const { tracerProvider, activate = true } = options;
  return async (request, ...args) => {
    const tracer = tracerOf(tracerProvider);
    if (tracer === undefined) return handler(request, ...args);
    const url = request.url;
    const scheme = url.startsWith("https:") ? "https" : url.startsWith("http:") ? "http" : undefined;
    const served = startSpan(tracer, options, request, request.method, scheme, request.headers, fetchFields);
    try {
      const response = await (activate
        ? contexts.with(served.active, handler, undefined, request, ...args)
        : handler(request, ...args));
      served.end(request, response.status);
      return response;
    } catch (error) {
      served.end(request, undefined, error);
      throw error;
    }
  };
}
