import { option } from "./helpers.mjs";

const RAISER = "`instrumentSvc()` of `@svc/otel`";
const imports = 'import { instrumentSvc } from "@svc/otel";';
const otel = ({ name, ...rest }) =>
  option({
    raiser: RAISER,
    name,
    imports,
    call: (v) => `const instrumentation = instrumentSvc({ ${name}: ${v} });\ninstrumentation.disable();`,
    ...rest,
  });

const SPANS = "`serverSpans()` or `fetchServerSpans()` of `@svc/otel`";
const spansImports = 'import { fetchServerSpans, serverSpans } from "@svc/otel";';

export default {
  ERR_SVC_OTEL_LISTENER: option({
    raiser: "`serverSpans()` of `@svc/otel`",
    name: "listener",
    refused: "its first argument is not a `node:http` request listener (a function)",
    accepted: "a request listener",
    imports: `${spansImports}\nimport type { RequestListener } from "node:http";`,
    call: (v) => `const listener = serverSpans(${v});\nvoid fetchServerSpans;\nvoid listener;`,
    wrong: 'JSON.parse("{}") as RequestListener',
    right: '((_req, res) => res.end("ok")) satisfies RequestListener',
    fix: "Give the listener the server would call (Express's `app`, a `(req, res) => …` function, `getRequestListener(app.fetch)` of `@hono/node-server`), not a server or a router object.",
  }),
  ERR_SVC_OTEL_HANDLER: option({
    raiser: "`fetchServerSpans()` of `@svc/otel`",
    name: "handler",
    refused: "its first argument is not a Fetch handler (a function from a `Request` to a `Response`)",
    accepted: "a Fetch handler",
    imports: spansImports,
    call: (v) => `const fetch = fetchServerSpans(${v});\nvoid serverSpans;\nvoid fetch;`,
    wrong: 'JSON.parse("{}") as (request: Request) => Response',
    right: '(_request: Request) => new Response("ok")',
    fix: "Give the Fetch handler itself (Hono's `app.fetch`, a Worker's `fetch`), not the app object.",
  }),
  ERR_SVC_OTEL_PROPAGATOR: option({
    raiser: SPANS,
    name: "propagator",
    accepted: "a TextMapPropagator",
    imports: `${spansImports}\nimport { propagation, type TextMapPropagator } from "@opentelemetry/api";`,
    call: (v) =>
      `const listener = serverSpans((_req, res) => res.end("ok"), { propagator: ${v} });\nvoid fetchServerSpans;\nvoid listener;`,
    wrong: "JSON.parse('\"tracecontext\"') as TextMapPropagator",
    right: "propagation satisfies TextMapPropagator",
    fix: "Give a propagator object (the API's `propagation`, or `new W3CTraceContextPropagator()` of `@opentelemetry/core`), or leave `propagator` out to use the global one.",
  }),
  ERR_SVC_OTEL_ROUTE: option({
    raiser: SPANS,
    name: "route",
    accepted: "a function of the request",
    imports: spansImports,
    call: (v) =>
      `const listener = serverSpans((_req, res) => res.end("ok"), { route: ${v} });\nvoid fetchServerSpans;\nvoid listener;`,
    wrong: "JSON.parse('\"/orders/{id}\"') as (request: object) => string | undefined",
    right: "(_request: object): string | undefined => undefined",
    fix: "Give a function that names the route of a request the router did not record one for, from the application's own set of templates (or returns `undefined`), or leave `route` out.",
  }),
  ERR_SVC_OTEL_ACTIVATE: option({
    raiser: SPANS,
    name: "activate",
    accepted: "a boolean",
    imports: spansImports,
    call: (v) =>
      `const listener = serverSpans((_req, res) => res.end("ok"), { activate: ${v} });\nvoid fetchServerSpans;\nvoid listener;`,
    wrong: "JSON.parse('\"false\"') as boolean",
    right: "false",
    fix: "Give `true` (the span is the active one while the request is served, the default) or `false` (it is not: the decisions still land on it, other instrumentations' spans do not see it), not a string read from the environment as it is.",
  }),
  ERR_SVC_OTEL_PACKAGES: otel({
    name: "packages",
    accepted: "a list of ",
    wrong: "JSON.parse('[\"@svc/ratelimit\"]')",
    right: '["ratelimit", "auth"]',
    fix: 'List the packages by the names the message gives (`"ratelimit"`, not `"@svc/ratelimit"`), or leave `packages` out for all of them.',
  }),
  ERR_SVC_OTEL_METER_PROVIDER: otel({
    name: "meterProvider",
    accepted: "a MeterProvider",
    imports: `${imports}\nimport { metrics } from "@opentelemetry/api";`,
    wrong: 'metrics.getMeter("svc") as never',
    right: "metrics.getMeterProvider()",
    fix: "Give the provider (`metrics.getMeterProvider()`, or your SDK's `MeterProvider`), not a meter.",
  }),
  ERR_SVC_OTEL_TRACER_PROVIDER: otel({
    name: "tracerProvider",
    accepted: "a TracerProvider",
    imports: `${imports}\nimport { trace } from "@opentelemetry/api";`,
    wrong: 'trace.getTracer("svc") as never',
    right: "trace.getTracerProvider()",
    fix: "Give the provider (`trace.getTracerProvider()`, or your SDK's `TracerProvider`), not a tracer.",
  }),
  ERR_SVC_OTEL_OPTIONS: option({
    raiser: RAISER,
    name: "options",
    refused: "its options argument is not an object",
    accepted: "an object with the fields meterProvider, tracerProvider, packages",
    imports,
    call: (v) => `const instrumentation = instrumentSvc(${v});\ninstrumentation.disable();`,
    wrong: "JSON.parse('[\"ratelimit\"]')",
    right: '{ packages: ["ratelimit"] }',
    fix: "Pass an object of options, or nothing.",
  }),
  ERR_SVC_OTEL_UNKNOWN_OPTION: option({
    raiser: RAISER,
    name: "options",
    refused: "its options name one it does not know; the message names the nearest it knows",
    accepted: 'did you mean "packages"?',
    imports,
    call: (v) =>
      `// Options assembled at run time, so the compiler does not check their names.\nconst options: Record<string, unknown> = { ${v}: ["ratelimit"] };\nconst instrumentation = instrumentSvc(options);\ninstrumentation.disable();`,
    wrong: "package",
    right: "packages",
    fix: "Spell the option as the message suggests.",
  }),
};
