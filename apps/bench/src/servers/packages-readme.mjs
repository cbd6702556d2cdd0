// Issue 22 §1 and issue 38: what a team gets when it composes its own Express app from the @svc
// packages as their READMEs show (no code of the reference server), serving the same in-memory
// employee as the peer stack. The response goes through @svc/kernel's pipeline: the steps of
// @svc/versioning, @svc/negotiate and @svc/conditional in one `createPipeline`, each route's
// handler under `svc.handle`. Each block below names the README it comes from.
//
// BENCH_OTEL=on starts it with @svc/otel's `instrumentSvc` listening (its README, "Start it"): every
// decision counted into the OpenTelemetry SDK's meters (a reader that is never collected, so the
// figure is the recording alone) and, for a request inside a span, set on that span.
//
// BENCH_PROTOTYPES=none starts the same app with `http.createServer(app)`, without
// `expressServerOptions(app)`, so the helper's effect has a row of its own.
// Runs from the packages' TypeScript sources through ../ts-loader.mjs, like soap-envelope-bare.
import "./tick-shape.mjs";
import http from "node:http";
import { authenticate, requireScopes } from "@svc/auth/express";
import { HttpError } from "@svc/errors";
import { errorHandler, expressServerOptions, notFound } from "@svc/errors/express";
import { hal, Rel } from "@svc/hal";
import { allowedHosts, hrefFor } from "@svc/hal/express";
import { MemoryStore } from "@svc/idempotency";
import { idempotency } from "@svc/idempotency/express";
import { reply } from "@svc/kernel";
import { chain, expressAdapter } from "@svc/kernel/express";
import { crossOrigin, parseBody } from "@svc/negotiate/express";
import { rateLimit } from "@svc/ratelimit/express";
import { versionedPath } from "@svc/versioning";
import express from "express";
import { benchPort, EMPLOYEES, exitOnSigterm } from "../fixtures.mjs";
import { readmeAuth, readmePipeline } from "./readme-pipeline.mjs";

// @svc/kernel, "The pipeline": one pipeline, its steps from the packages that own them, run in
// the kernel's fixed order (version, representation, coding decision, validators, preconditions,
// coding, one write) whatever order they are given in.
const svc = expressAdapter(readmePipeline());

if (process.env.BENCH_OTEL === "on") {
  const { instrumentSvc } = await import("@svc/otel");
  const { MeterProvider, InMemoryMetricExporter, AggregationTemporality, PeriodicExportingMetricReader } =
    await import("@opentelemetry/sdk-metrics");
  const { BasicTracerProvider } = await import("@opentelemetry/sdk-trace-base");
  const reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 3_600_000,
  });
  instrumentSvc({
    meterProvider: new MeterProvider({ readers: [reader] }),
    tracerProvider: new BasicTracerProvider(),
  });
}

const app = express();

// @svc/kernel, "Express: one layer for the middleware every request passes".
app.use(
  chain(
    // @svc/hal, "Allowed hosts": links are built from Host, so only the service's own hosts answer.
    allowedHosts(["127.0.0.1", "localhost"]),
    // @svc/versioning: the version is decided before routing (a /v<N> prefix stripped).
    svc.prepare,
    // @svc/negotiate, crossOrigin: the same origin list as the peer stack's `cors`.
    crossOrigin({ origins: ["https://app.example.com"] }),
    // @svc/auth, "Use": Bearer JWTs (ES256, one public key), issuer and audience checked.
    authenticate(readmeAuth),
    // @svc/ratelimit, "Examples": after authenticate, so limits apply per principal. The same
    // limit as the peer stack's express-rate-limit: counted on every request, never hit.
    rateLimit({ limit: 1_000_000, windowMs: 1000 }),
  ),
);

// The plain document (`toJSON()`), not the HalResource: @svc/negotiate's `xml` walks the object's
// own properties and renders a HalResource as an empty `<resource/>` (JSON is the same either way).
function represent(req, employee) {
  return hal(employee)
    .link(Rel.SELF, hrefFor(req, versionedPath(req, `/employees/${employee.id}`)))
    .toJSON();
}

app.get(
  "/employees/:id",
  requireScopes("employees:read"),
  svc.handle(async (req) => {
    const employee = EMPLOYEES.get(Number(req.params.id));
    if (!employee) throw HttpError.notFound(`Employee ${req.params.id} does not exist`);
    return represent(req, employee);
  }),
);

// @svc/idempotency, "Use": body parser, then authentication (above), then the route's
// `{ idempotency }` step of `svc.handle`.
let nextId = 1000;
const keys = { idempotency: idempotency({ store: new MemoryStore() }) };
app.post(
  "/employees",
  parseBody({ limit: 100 * 1024 }),
  svc.handle(async (req) => {
    const employee = { ...req.body, id: nextId++ };
    EMPLOYEES.set(employee.id, employee);
    const location = hrefFor(req, versionedPath(req, `/employees/${employee.id}`));
    return reply(represent(req, employee), { status: 201, headers: { Location: location } });
  }, keys),
);

// @svc/errors, "Use": unmatched routes → 404 record, the error handler last.
app.use(notFound());
app.use(errorHandler());

// @svc/errors, "expressServerOptions(app)": requests built with the app's prototypes.
const server =
  process.env.BENCH_PROTOTYPES === "none"
    ? http.createServer(app)
    : http.createServer(expressServerOptions(app), app);
server.listen(benchPort(), "127.0.0.1");
exitOnSigterm();
