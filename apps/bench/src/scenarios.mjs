// Every load scenario: which server to start, and the one request the load generator repeats
// against it (`{{seq}}` in its body or a header is filled in per request, see harness.mjs).
// Scenarios that need code from the reference server say "not available yet" until it is there.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { EMPLOYEE_ID, WSSE_FIXTURES } from "./fixtures.mjs";
import { rawRequest, SEQ } from "./harness.mjs";
import { REFERENCE_ENV, referenceNodeFlags } from "./reference-flags.mjs";
import { onRuntime, RUNTIMES } from "./runtimes.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "../../..");
const referenceDir = join(repoRoot, "apps/reference-server");
const referenceMain = join(referenceDir, "src/main.ts");
const referenceServerModule = join(referenceDir, "src/server.ts");
const customerWsdl = join(referenceDir, "contracts/customer.wsdl");
const tsLoader = join(here, "ts-loader.mjs");
const soapEnvelopeSource = join(repoRoot, "packages/soap-envelope/src/index.ts");
const expressServerOptionsSource = join(repoRoot, "packages/errors/src/express-server.ts");

/** Thrown by `prepare` when the server runs but lacks the route a scenario needs. */
export class Unavailable extends Error {}

/** Tables of the report: scenarios of a group share one request shape; ratios are to the baselines. */
export const groups = [
  {
    id: "get",
    title: "GET /employees/{id} with Bearer JWT, Accept: application/json → 200",
    // fastify-peers and hono-peers: the peers on Fastify and on a Fetch server, the baselines of
    // packages-fastify and packages-hono.
    baselines: ["raw-node", "express-bare", "peer-stack", "fastify-peers", "hono-peers"],
  },
  {
    id: "revalidate",
    title: "GET /employees/{id} with If-None-Match: <current ETag> → 304",
    baselines: ["express-bare-304", "peer-stack-304"],
  },
  {
    id: "post",
    title: "POST /employees → 201 (same route, with and without Idempotency-Key)",
    baselines: ["svc-post-plain"],
  },
  {
    id: "soap",
    title: "SOAP 1.2 getCustomer on /ws/customer (same WSDL)",
    baselines: ["node-soap", "node-soap-noauth", "node-soap-node", "node-soap-reference"],
  },
  {
    id: "soap-signed",
    title:
      "SOAP 1.2 getCustomer signed with WS-Security X.509 (BinarySecurityToken; Body and Timestamp, RSA-SHA256, exclusive C14N) → 200",
    baselines: ["node-soap-signed-node"],
  },
  {
    id: "telemetry",
    title:
      "GET /employees/{id} with telemetry on: the reference server's settings beside the peer stack with the standard OpenTelemetry setup → 200",
    baselines: ["peer-stack-otel"],
  },
  // One table per runtime: the packages' Hono composition beside Hono's own middleware there.
  ...RUNTIMES.map((runtime) => ({
    id: `runtime-${runtime}`,
    title: `GET /employees/{id} with Bearer JWT on ${runtime === "node" ? "this Node.js" : runtime}, bundled, the runtime's own server → 200`,
    baselines: [`hono-peers@${runtime}`],
  })),
];

const script = (name) => join(here, "servers", name);
const bearer = (ctx) => ({ authorization: `Bearer ${ctx.token}`, accept: "application/json" });

// ---------------------------------------------------------------------------------------------
// The @svc reference server: started from its own entry point with every middleware on,
// SQLite in memory, in-memory stores, a rate limit high enough never to trigger.

/** The reference server as `npm start` runs it (its node flags, see referenceNodeFlags). */
function referenceServer() {
  if (!existsSync(referenceMain))
    return { unavailable: "apps/reference-server/src/main.ts is not there yet" };
  return {
    script: referenceMain,
    nodeArgs: [...referenceNodeFlags(), "--import", tsLoader],
    cwd: referenceDir,
    readyPath: "/health",
    readyStatus: 200,
    env: { ...REFERENCE_ENV, REDIS_URL: null },
    // The script is the reference server's entry point: callgrind.mjs bundles it from `--root`.
    reference: true,
  };
}

/**
 * The reference server with its telemetry set through its environment: `TELEMETRY` (`on`: the
 * packages' decisions and the request durations as metrics; `off`: nothing recorded) and, with
 * `traces`, a server span per request batched to an OTLP endpoint that refuses every connection
 * (nothing listens on the discard port): each span is built, batched and its export attempted, as
 * the peer stack's are. Inherited OpenTelemetry variables are removed, so the shell does not
 * change a row. With telemetry on, the harness gives `METRICS_PORT` a free port (`metrics`), so a
 * run can read `GET /metrics` and see what was recorded.
 */
function referenceWithTelemetry({ telemetry, traces = false }) {
  const base = referenceServer();
  if (base.unavailable) return base;
  return {
    ...base,
    env: {
      ...base.env,
      ...UNSET_OTEL,
      TELEMETRY: telemetry ? "on" : "off",
      METRICS_PORT: null,
      ...(traces ? { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: REFUSED_OTLP } : {}),
    },
    ...(telemetry ? { metrics: { portEnv: "METRICS_PORT" } } : {}),
  };
}

/** OTLP/HTTP traces to a loopback port nothing listens on: every export is refused. */
export const REFUSED_OTLP = "http://127.0.0.1:9/v1/traces";

/** The OpenTelemetry variables a shell may carry, removed from a server's environment. */
const UNSET_OTEL = Object.freeze({
  OTEL_SDK_DISABLED: null,
  OTEL_TRACES_EXPORTER: null,
  OTEL_METRICS_EXPORTER: null,
  OTEL_LOGS_EXPORTER: null,
  OTEL_EXPORTER_OTLP_ENDPOINT: null,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: null,
  OTEL_EXPORTER_OTLP_PROTOCOL: null,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: null,
  OTEL_SEMCONV_STABILITY_OPT_IN: null,
});

/**
 * The peer stack (peer-stack.mjs, unchanged) behind the OpenTelemetry setup of
 * servers/peer-stack-otel.mjs, started as the OpenTelemetry JS documentation starts an ES module
 * application: `--experimental-loader=@opentelemetry/instrumentation/hook.mjs --import
 * ./peer-stack-otel.mjs`. Spans go to the same refusing OTLP endpoint as the reference server's,
 * through the SDK's BatchSpanProcessor (http/protobuf, the default protocol); the Prometheus
 * exporter listens on a free port (`metrics`). `OTEL_LOGS_EXPORTER=none`: the application's log
 * lines go through pino to stdout, as the reference server's do, not to an OTLP log exporter.
 */
function peerStackOtel() {
  const hook = createRequire(import.meta.url).resolve("@opentelemetry/instrumentation/hook.mjs");
  return {
    script: script("peer-stack.mjs"),
    nodeArgs: [
      `--experimental-loader=${pathToFileURL(hook).href}`,
      "--import",
      script("peer-stack-otel.mjs"),
    ],
    env: {
      ...UNSET_OTEL,
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: REFUSED_OTLP,
      OTEL_LOGS_EXPORTER: "none",
      OTEL_EXPORTER_PROMETHEUS_HOST: "127.0.0.1",
    },
    metrics: { portEnv: "OTEL_EXPORTER_PROMETHEUS_PORT" },
  };
}

/** A Bearer token from the reference server's `POST /auth/token` with Basic admin:admin. */
async function referenceToken(url) {
  const basic = `Basic ${Buffer.from("admin:admin").toString("base64")}`;
  const attempts = [
    {},
    {
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials",
    },
    { headers: { "content-type": "application/json" }, body: "{}" },
  ];
  let last = "";
  for (const attempt of attempts) {
    const response = await fetch(`${url}/auth/token`, {
      method: "POST",
      ...attempt,
      headers: { authorization: basic, accept: "application/json", ...attempt.headers },
    });
    const text = await response.text();
    if (response.status === 404) throw new Unavailable("POST /auth/token is not there yet");
    if (response.ok) {
      const token = JSON.parse(text).access_token;
      if (typeof token === "string") return token;
    }
    last = `${response.status} ${text.slice(0, 300)}`;
  }
  throw new Error(`POST /auth/token with Basic admin:admin did not give a token: ${last}`);
}

/** The first numeric `id` found in a collection response, whatever its wrapper. */
function firstId(value) {
  if (Array.isArray(value)) {
    for (const item of value) {
      if (item && typeof item === "object" && typeof item.id === "number") return item.id;
      const nested = firstId(item);
      if (nested !== undefined) return nested;
    }
  } else if (value && typeof value === "object") {
    for (const [key, nestedValue] of Object.entries(value)) {
      if (key === "_links") continue;
      const nested = firstId(nestedValue);
      if (nested !== undefined) return nested;
    }
  }
  return undefined;
}

/** The reference server's GET /employees/{id} with a token of its own. */
async function referenceGet(url) {
  const session = await referenceSession(url);
  return { path: session.path, headers: session.headers, expectStatus: 200 };
}

async function referenceSession(url) {
  const token = await referenceToken(url);
  const headers = { authorization: `Bearer ${token}`, accept: "application/json" };
  const list = await fetch(`${url}/employees?size=1`, { headers });
  if (list.status === 404) throw new Unavailable("GET /employees is not there yet");
  const id = list.ok ? firstId(await list.json()) : undefined;
  if (id === undefined) throw new Error(`GET /employees?size=1 gave no employee id (${list.status})`);
  const path = `/employees/${id}`;
  // node:http with the exact headers of the load, so the ETag is the one the load will meet.
  const item = await rawRequest(url, { path, headers });
  if (item.status !== 200) throw new Error(`GET ${path} → ${item.status} ${item.text.slice(0, 300)}`);
  return { token, headers, path, etag: item.headers.etag, employee: JSON.parse(item.text) };
}

/** The id of a seeded customer, read through the REST API. */
async function referenceCustomerId(url, token) {
  const list = await fetch(`${url}/customers?size=1`, {
    headers: { authorization: `Bearer ${token}`, accept: "application/json" },
  });
  return (list.ok ? firstId(await list.json()) : undefined) ?? 1;
}

/**
 * A POST body built from an existing employee, with `{{seq}}` in its names and e-mail address:
 * the harness makes every request's unique, so no constraint trips.
 */
function employeeTemplate(employee) {
  const body = {};
  for (const [key, value] of Object.entries(employee)) {
    if (key === "id" || key.startsWith("_") || /^(created|updated)(At|_at)$/.test(key)) continue;
    body[key] = value;
  }
  for (const field of ["name", "lastName"]) {
    if (typeof body[field] === "string") body[field] = `${body[field]} ${SEQ}`;
  }
  if (typeof body.email === "string") body.email = `bench-${SEQ}@example.com`;
  return JSON.stringify(body);
}

function soapEnvelope(customerId) {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    '<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope" ' +
    'xmlns:c="http://svc.example.com/ws/customer/v1">' +
    `<soap:Body><c:GetCustomerRequest><c:customerId>${customerId}</c:customerId></c:GetCustomerRequest>` +
    "</soap:Body></soap:Envelope>"
  );
}

const soapContentType = 'application/soap+xml; charset=utf-8; action="getCustomer"';

/**
 * getCustomer with customerId 1 as node-soap's WSSecurityCert signs it for the partner of the
 * bench's WS-Security material: a BinarySecurityToken, a Timestamp (10 minutes), the Body and the
 * Timestamp signed with RSA-SHA256 over exclusive C14N, `wsu:Id`s. One message, sent again and
 * again (the signed servers keep no replay cache).
 */
async function signedGetCustomer() {
  const { default: soap } = await import("soap");
  const pem = (name) => readFileSync(join(WSSE_FIXTURES, name), "utf8");
  const signer = new soap.WSSecurityCert(pem("partner.key"), pem("partner.pem"), "", {
    signatureAlgorithm: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
    signerOptions: { idMode: "wssecurity" },
  });
  const unsigned = soapEnvelope(1).replace("<soap:Body>", "<soap:Header></soap:Header><soap:Body>");
  return signer.postProcess(unsigned, "soap");
}

const signedGetCustomerInMemory = async () => ({
  method: "POST",
  path: "/ws/customer",
  headers: { "content-type": soapContentType },
  body: await signedGetCustomer(),
  expectStatus: 200,
  expectBody: /GetCustomerResponse/,
});

async function etagOf(url, path, headers) {
  const response = await rawRequest(url, { path, headers });
  const etag = response.headers.etag;
  if (!etag) throw new Error(`GET ${path} → ${response.status} without an ETag`);
  return etag;
}

// ---------------------------------------------------------------------------------------------

// Request plans shared by the scenarios that differ only in the server they run against.

/** GET /employees/{id} with the Bearer token. */
const getEmployee = async (_url, ctx) => ({
  path: `/employees/${EMPLOYEE_ID}`,
  headers: bearer(ctx),
  expectStatus: 200,
});

/** The same GET with If-None-Match set to the server's current ETag → 304. */
const revalidateEmployee = async (url, ctx) => {
  const path = `/employees/${EMPLOYEE_ID}`;
  const etag = await etagOf(url, path, bearer(ctx));
  return { path, headers: { ...bearer(ctx), "if-none-match": etag }, expectStatus: 304 };
};

/**
 * The app of issue 22 §1: errors, negotiate, conditional, hal, versioning, ratelimit, auth and
 * idempotency composed as their READMEs show, from the packages' sources.
 */
function packagesReadme() {
  if (!existsSync(expressServerOptionsSource)) {
    return { unavailable: "@svc/errors does not export expressServerOptions yet" };
  }
  return { script: script("packages-readme.mjs"), nodeArgs: ["--import", tsLoader] };
}

/** The same app on another framework, from the packages' entries for it (`entry` is the kernel's). */
function packagesOn(name, entry) {
  if (!existsSync(join(repoRoot, entry))) return { unavailable: `${entry} is not there yet` };
  return { script: script(name), nodeArgs: ["--import", tsLoader] };
}

/** SOAP getCustomer for customer 1 of the in-memory SOAP servers. */
const getCustomerInMemory = async (_url, ctx) => ({
  method: "POST",
  path: "/ws/customer",
  headers: { authorization: `Bearer ${ctx.token}`, "content-type": soapContentType },
  body: soapEnvelope(1),
  expectStatus: 200,
  expectBody: /GetCustomerResponse/,
});

export const scenarios = [
  {
    id: "raw-node",
    group: "get",
    label: "raw node:http, precomputed bytes",
    server: () => ({ script: script("raw-http.mjs") }),
    prepare: getEmployee,
  },
  {
    id: "express-bare",
    group: "get",
    label: "bare Express 5 route",
    server: () => ({ script: script("express-bare.mjs") }),
    prepare: getEmployee,
  },
  {
    id: "peer-stack",
    group: "get",
    label: "peer stack: helmet, cors, compression, express-rate-limit, pino-http, jose, accepts",
    server: () => ({ script: script("peer-stack.mjs") }),
    prepare: getEmployee,
  },
  {
    id: "express-bare-classes",
    group: "get",
    label: "bare Express 5 route, requests built with the app's prototypes (as the reference server)",
    server: () => ({ script: script("express-bare.mjs"), env: { BENCH_PROTOTYPES: "classes" } }),
    prepare: getEmployee,
  },
  {
    id: "svc-floor",
    group: "get",
    label:
      "the reference server's response and unavoidable work on Express (app's prototypes), none of the packages' decisions",
    server: () => ({ script: script("svc-floor.mjs"), env: { BENCH_PROTOTYPES: "classes" } }),
    prepare: getEmployee,
  },
  {
    id: "peer-stack-classes",
    group: "get",
    label: "peer stack, requests built with the app's prototypes (as the reference server)",
    server: () => ({ script: script("peer-stack.mjs"), env: { BENCH_PROTOTYPES: "classes" } }),
    prepare: getEmployee,
  },
  {
    id: "svc-stack",
    group: "get",
    label: "@svc reference server, every middleware on, SQLite",
    server: referenceServer,
    prepare: referenceGet,
  },
  {
    id: "svc-stack-telemetry-off",
    group: "telemetry",
    label: "@svc reference server, TELEMETRY=off: nothing recorded",
    server: () => referenceWithTelemetry({ telemetry: false }),
    prepare: referenceGet,
  },
  {
    id: "svc-stack-metrics",
    group: "telemetry",
    label:
      "@svc reference server, TELEMETRY=on: the packages' decisions and request durations as metrics, no spans",
    server: () => referenceWithTelemetry({ telemetry: true }),
    prepare: referenceGet,
  },
  {
    id: "svc-stack-traced",
    group: "telemetry",
    label: `@svc reference server, TELEMETRY=on, OTEL_TRACES_EXPORTER=otlp to ${REFUSED_OTLP}: metrics and a server span per request, batched`,
    server: () => referenceWithTelemetry({ telemetry: true, traces: true }),
    prepare: referenceGet,
  },
  {
    id: "peer-stack-otel",
    group: "telemetry",
    label: `peer stack + NodeSDK: http and Express instrumentations, Prometheus exporter, spans batched to OTLP ${REFUSED_OTLP}`,
    server: peerStackOtel,
    prepare: getEmployee,
  },
  {
    id: "packages-readme",
    group: "get",
    label:
      "Express 5 app composed from the @svc packages as their READMEs show, in memory, expressServerOptions(app)",
    server: packagesReadme,
    prepare: getEmployee,
  },
  {
    id: "readme-floor",
    group: "get",
    label:
      "packages-readme's response and unavoidable work on Express (app's prototypes), none of the packages' decisions",
    server: () => ({ script: script("readme-floor.mjs"), env: { BENCH_PROTOTYPES: "classes" } }),
    prepare: getEmployee,
  },
  {
    id: "packages-readme-plain",
    group: "get",
    label: "the same app on http.createServer(app), without expressServerOptions",
    server: () => {
      const definition = packagesReadme();
      return definition.unavailable ? definition : { ...definition, env: { BENCH_PROTOTYPES: "none" } };
    },
    prepare: getEmployee,
  },
  {
    id: "fastify-peers",
    group: "get",
    label:
      "Fastify 5 with its plugins: @fastify/helmet, cors, compress, rate-limit, etag, jwt, its logger, accepts",
    server: () => ({ script: script("fastify-peers.mjs") }),
    prepare: getEmployee,
  },
  {
    id: "hono-peers",
    group: "get",
    label:
      "Hono on @hono/node-server with its middleware: secureHeaders, cors, compress, etag, jwt, logger, hono-rate-limiter",
    server: () => ({ script: script("hono-peers.mjs") }),
    prepare: getEmployee,
  },
  {
    id: "packages-fastify",
    group: "get",
    label:
      "the packages-readme app on Fastify 5 from the packages' /fastify entries, in memory, Fastify's logger",
    server: () => packagesOn("packages-fastify.mjs", "packages/kernel/src/fastify.ts"),
    prepare: getEmployee,
  },
  {
    id: "packages-hono",
    group: "get",
    label:
      "the packages-readme app on Hono + @hono/node-server from the packages' /fetch entries, in memory, Hono's logger",
    server: () => packagesOn("packages-hono.mjs", "packages/kernel/src/fetch.ts"),
    prepare: getEmployee,
  },
  {
    id: "express-bare-304",
    group: "revalidate",
    label: "bare Express 5 (default weak ETag, fresh)",
    server: () => ({ script: script("express-bare.mjs") }),
    prepare: revalidateEmployee,
  },
  {
    id: "peer-stack-304",
    group: "revalidate",
    label: "peer stack",
    server: () => ({ script: script("peer-stack.mjs") }),
    prepare: revalidateEmployee,
  },
  {
    id: "svc-stack-304",
    group: "revalidate",
    label: "@svc reference server",
    server: referenceServer,
    prepare: async (url) => {
      const session = await referenceSession(url);
      if (!session.etag) throw new Error(`GET ${session.path} gave no ETag`);
      return {
        path: session.path,
        headers: { ...session.headers, "if-none-match": session.etag },
        expectStatus: 304,
      };
    },
  },
  {
    id: "svc-post-plain",
    group: "post",
    label: "@svc reference server, no Idempotency-Key",
    server: referenceServer,
    prepare: async (url) => {
      const session = await referenceSession(url);
      return {
        method: "POST",
        path: "/employees",
        headers: { ...session.headers, "content-type": "application/json" },
        body: employeeTemplate(session.employee),
        expectStatus: 201,
      };
    },
  },
  {
    id: "svc-post-idempotent",
    group: "post",
    label: "@svc reference server, fresh Idempotency-Key per request",
    server: referenceServer,
    prepare: async (url) => {
      const session = await referenceSession(url);
      return {
        method: "POST",
        path: "/employees",
        headers: {
          ...session.headers,
          "content-type": "application/json",
          "idempotency-key": `bench-${SEQ}`,
        },
        body: employeeTemplate(session.employee),
        expectStatus: 201,
      };
    },
  },
  {
    id: "svc-post-replay",
    group: "post",
    label: "@svc reference server, the same Idempotency-Key replayed",
    server: referenceServer,
    prepare: async (url) => {
      const session = await referenceSession(url);
      const body = employeeTemplate(session.employee).replaceAll(SEQ, `replay-${process.pid}-${Date.now()}`);
      const headers = {
        ...session.headers,
        "content-type": "application/json",
        "idempotency-key": `bench-replay-${process.pid}-${Date.now()}`,
      };
      const first = await fetch(`${url}/employees`, { method: "POST", headers, body });
      const text = await first.text();
      if (first.status !== 201)
        throw new Error(`first POST /employees → ${first.status} ${text.slice(0, 300)}`);
      return { method: "POST", path: "/employees", headers, body, expectStatus: 201 };
    },
  },
  {
    id: "soap-floor-node",
    group: "soap",
    label: "floor: node:http reading the body, answering precomputed getCustomer bytes",
    server: () => ({
      script: script("soap-floor.mjs"),
      env: { BENCH_FLOOR: "node" },
      readyPath: "/ws/customer?wsdl",
      readyStatus: 200,
    }),
    prepare: getCustomerInMemory,
  },
  {
    id: "soap-floor-express",
    group: "soap",
    label: "floor: an Express 5 route reading the body, answering precomputed getCustomer bytes",
    server: () => ({ script: script("soap-floor.mjs"), readyPath: "/ws/customer?wsdl", readyStatus: 200 }),
    prepare: getCustomerInMemory,
  },
  {
    id: "node-soap",
    group: "soap",
    label: "node-soap on Express 5 (+ jose Bearer check), customers in memory",
    server: () =>
      existsSync(customerWsdl)
        ? { script: script("node-soap.mjs"), readyPath: "/ws/customer?wsdl", readyStatus: 200 }
        : { unavailable: "apps/reference-server/contracts/customer.wsdl is not there yet" },
    prepare: getCustomerInMemory,
  },
  {
    id: "soap-envelope-bare",
    group: "soap",
    label: "@svc/soap-envelope on Express 5 (+ jose Bearer check), customers in memory",
    server: () =>
      existsSync(customerWsdl) && existsSync(soapEnvelopeSource)
        ? {
            script: script("soap-envelope-bare.mjs"),
            nodeArgs: ["--import", tsLoader],
            readyPath: "/ws/customer?wsdl",
            readyStatus: 200,
          }
        : { unavailable: "packages/soap-envelope or the customer WSDL is not there yet" },
    prepare: getCustomerInMemory,
  },
  {
    id: "node-soap-noauth",
    group: "soap",
    label: "node-soap on Express 5, no Bearer check, customers in memory",
    server: () =>
      existsSync(customerWsdl)
        ? {
            script: script("node-soap.mjs"),
            env: { BENCH_AUTH: "none" },
            readyPath: "/ws/customer?wsdl",
            readyStatus: 200,
          }
        : { unavailable: "apps/reference-server/contracts/customer.wsdl is not there yet" },
    prepare: getCustomerInMemory,
  },
  {
    id: "soap-envelope-noauth",
    group: "soap",
    label: "@svc/soap-envelope on Express 5, no Bearer check, customers in memory",
    server: () =>
      existsSync(customerWsdl) && existsSync(soapEnvelopeSource)
        ? {
            script: script("soap-envelope-bare.mjs"),
            nodeArgs: ["--import", tsLoader],
            env: { BENCH_AUTH: "none" },
            readyPath: "/ws/customer?wsdl",
            readyStatus: 200,
          }
        : { unavailable: "packages/soap-envelope or the customer WSDL is not there yet" },
    prepare: getCustomerInMemory,
  },
  {
    id: "soap-envelope-node",
    group: "soap",
    label: "@svc/soap-envelope soapEndpoint on bare node:http, no Bearer check, customers in memory",
    server: () =>
      existsSync(customerWsdl) && existsSync(soapEnvelopeSource)
        ? {
            script: script("soap-envelope-bare.mjs"),
            nodeArgs: ["--import", tsLoader],
            env: { BENCH_HTTP: "node" },
            readyPath: "/ws/customer?wsdl",
            readyStatus: 200,
          }
        : { unavailable: "packages/soap-envelope or the customer WSDL is not there yet" },
    prepare: getCustomerInMemory,
  },
  {
    id: "node-soap-node",
    group: "soap",
    label: "node-soap soap.listen on bare node:http, no Bearer check, customers in memory",
    server: () =>
      existsSync(customerWsdl)
        ? {
            script: script("node-soap.mjs"),
            env: { BENCH_HTTP: "node" },
            readyPath: "/ws/customer?wsdl",
            readyStatus: 200,
          }
        : { unavailable: "apps/reference-server/contracts/customer.wsdl is not there yet" },
    prepare: getCustomerInMemory,
  },
  {
    id: "node-soap-reference",
    group: "soap",
    label: "node-soap mounted on the reference server (same SQLite, jose check, no app middleware)",
    server: () => {
      const base = referenceServer();
      if (base.unavailable) return base;
      if (!existsSync(referenceServerModule) || !existsSync(customerWsdl)) {
        return { unavailable: "apps/reference-server/src/server.ts or the customer WSDL is not there yet" };
      }
      return {
        ...base,
        // Its own script, which mounts node-soap on the reference server's http server.
        reference: false,
        script: script("reference-node-soap.mjs"),
        readyPath: "/ws/node-soap/customer?wsdl",
      };
    },
    prepare: async (url) => {
      const token = await referenceToken(url);
      const customerId = await referenceCustomerId(url, token);
      return {
        method: "POST",
        path: "/ws/node-soap/customer",
        headers: { authorization: `Bearer ${token}`, "content-type": soapContentType },
        body: soapEnvelope(customerId),
        expectStatus: 200,
        expectBody: /GetCustomerResponse/,
      };
    },
  },
  {
    id: "svc-soap",
    group: "soap",
    label: "@svc reference server /ws/customer (@svc/soap-envelope), SQLite",
    server: referenceServer,
    prepare: async (url) => {
      const token = await referenceToken(url);
      const wsdl = await fetch(`${url}/ws/customer?wsdl`);
      await wsdl.arrayBuffer();
      // Until the SOAP service is mounted, the path falls through to the resource API (404, 401).
      if (wsdl.status !== 200) throw new Unavailable(`GET /ws/customer?wsdl → ${wsdl.status}`);
      const customerId = await referenceCustomerId(url, token);
      return {
        method: "POST",
        path: "/ws/customer",
        headers: { authorization: `Bearer ${token}`, "content-type": soapContentType },
        body: soapEnvelope(customerId),
        expectStatus: 200,
        expectBody: /GetCustomerResponse/,
      };
    },
  },
  ...RUNTIMES.flatMap((runtime) => [
    {
      id: `packages-hono@${runtime}`,
      group: `runtime-${runtime}`,
      label: `servers/packages-hono-app.mjs bundled for ${runtime}, served by its own server`,
      server: () => onRuntime(runtime, "packages-hono-app.mjs"),
      prepare: getEmployee,
    },
    {
      id: `hono-peers@${runtime}`,
      group: `runtime-${runtime}`,
      label: `servers/hono-peers-app.mjs bundled for ${runtime}, served by its own server`,
      server: () => onRuntime(runtime, "hono-peers-app.mjs"),
      prepare: getEmployee,
    },
  ]),
];

/**
 * The signed getCustomer (group `soap-signed`): the three node:http servers of the SOAP group,
 * each given `BENCH_WSSE=signature` (the SOAP servers check the signature; the floor reads the
 * body and checks nothing) and sent the signed request.
 */
for (const [id, label] of [
  [
    "soap-floor-node",
    "floor: node:http reading the signed body, checking nothing, answering precomputed getCustomer bytes",
  ],
  [
    "soap-envelope-node",
    "@svc/soap-envelope soapEndpoint with wsSecurity (signature, timestamp; no replay cache) on bare node:http",
  ],
  [
    "node-soap-node",
    "node-soap soap.listen on bare node:http behind the same checks written around xml-crypto",
  ],
]) {
  const base = scenarios.find((scenario) => scenario.id === id);
  scenarios.push({
    id: id.replace(/-node$/, "-signed-node"),
    group: "soap-signed",
    label,
    server: () => {
      const spec = base.server();
      return spec.unavailable ? spec : { ...spec, env: { ...spec.env, BENCH_WSSE: "signature" } };
    },
    prepare: signedGetCustomerInMemory,
  });
}
