import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueBenchToken } from "../src/fixtures.mjs";
import { rawRequest, startServer } from "../src/harness.mjs";
import { scenarios } from "../src/scenarios.mjs";
import { recordedRequests } from "../src/telemetry-check.mjs";

type Started = Awaited<ReturnType<typeof startServer>>;
type Attribute = { key: string; value: { stringValue?: string; intValue?: string | number } };
type OtlpSpan = { name: string; kind: number; traceId: string; attributes?: Attribute[] };

/** The spans an OTLP/HTTP JSON export request carries. */
function spansOf(body: string): { scope: string; span: OtlpSpan }[] {
  const spans: { scope: string; span: OtlpSpan }[] = [];
  for (const resource of JSON.parse(body).resourceSpans ?? [])
    for (const scoped of resource.scopeSpans ?? [])
      for (const span of scoped.spans ?? []) spans.push({ scope: scoped.scope?.name ?? "", span });
  return spans;
}

const attribute = (span: OtlpSpan, key: string) =>
  span.attributes?.find((a) => a.key === key)?.value.stringValue;

const scenario = (id: string) => {
  const found = scenarios.find((s) => s.id === id);
  if (!found) throw new Error(`no scenario ${id}`);
  return found;
};

/** A scenario's server, as startServer takes it. */
const serverOf = (id: string) => scenario(id).server() as Parameters<typeof startServer>[0];

type Plan = { path: string; headers: Record<string, string>; body: undefined; expectStatus: number };

/** The scenario's request against `url`, with the bench token. */
const requestOf = async (id: string, url: string, token: string) =>
  (await scenario(id).prepare(url, { token })) as unknown as Plan;

// The anchor row of the telemetry table: the peer stack behind the standard OpenTelemetry setup.
// It must answer the scenario's request as the reference server (svc-stack) does, and its
// instrumentations must really be live: a server started without the loader hook answers the
// same, records no metric and exports no span, and would be measured as a peer stack without
// OpenTelemetry.
describe("peer-stack-otel", () => {
  const exports: string[] = [];
  let receiver: Server;
  let otel: Started;
  let plain: Started;
  let token = "";

  beforeAll(async () => {
    // An OTLP/HTTP receiver in place of the refusing endpoint the bench exports to, JSON-encoded
    // so the test reads the spans.
    receiver = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        if (req.url === "/v1/traces") exports.push(body);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const { port } = receiver.address() as AddressInfo;
    const issued = await issueBenchToken();
    token = issued.token;
    const definition = serverOf("peer-stack-otel");
    [otel, plain] = await Promise.all([
      startServer({
        ...definition,
        env: {
          ...definition.env,
          BENCH_JWK: issued.publicJwk,
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${port}/v1/traces`,
          OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
          OTEL_BSP_SCHEDULE_DELAY: "50",
        },
      }),
      startServer({ ...serverOf("peer-stack"), env: { BENCH_JWK: issued.publicJwk } }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([otel?.stop(), plain?.stop()]);
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it("answers the scenario's request as svc-stack does, and as the peer stack without OpenTelemetry", async () => {
    const request = await requestOf("peer-stack-otel", otel.url, token);
    const response = await rawRequest(otel.url, request);
    // svc-stack's GET /employees/{id} with Accept: application/json.
    expect(response.status).toBe(request.expectStatus);
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toBe("application/json; charset=utf-8");
    const without = await rawRequest(plain.url, await requestOf("peer-stack", plain.url, token));
    expect(without.status).toBe(200);
    expect(response.headers["content-type"]).toBe(without.headers["content-type"]);
    expect(JSON.parse(response.text)).toEqual(JSON.parse(without.text));
  });

  it("exports a server span for the request, with the Express route, and the route's handler span in its trace", async () => {
    const request = await requestOf("peer-stack-otel", otel.url, token);
    expect((await rawRequest(otel.url, request)).status).toBe(200);
    let server: OtlpSpan | undefined;
    let handler: OtlpSpan | undefined;
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      const spans = exports.flatMap(spansOf);
      server = spans.find(
        ({ scope, span }) =>
          scope === "@opentelemetry/instrumentation-http" &&
          span.kind === 2 &&
          attribute(span, "http.route") === "/employees/:id",
      )?.span;
      handler = spans.find(
        ({ scope, span }) =>
          scope === "@opentelemetry/instrumentation-express" &&
          span.traceId === server?.traceId &&
          attribute(span, "http.route") === "/employees/:id",
      )?.span;
      if (server && handler) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(server?.name).toBe("GET /employees/:id");
    expect(handler).toBeDefined();
  });

  it("serves the request's duration on its Prometheus endpoint, by Express route", async () => {
    const request = await requestOf("peer-stack-otel", otel.url, token);
    expect((await rawRequest(otel.url, request)).status).toBe(200);
    const { metricsUrl } = otel;
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const text = await (await fetch(metricsUrl as string)).text();
    const seen = recordedRequests(text, /^\/employees\/:id$/);
    expect(seen?.metric).toBe("http_server_request_duration_count");
    expect(seen?.recorded).toBeGreaterThanOrEqual(1);
  });
});

describe("recordedRequests", () => {
  it("sums a route's counts over the other labels, and names the routes seen", () => {
    const text = [
      "# TYPE http_server_request_duration histogram",
      'http_server_request_duration_count{http_request_method="GET",http_route="/employees/{id}",http_response_status_code="200"} 7',
      'http_server_request_duration_count{http_request_method="GET",http_route="/employees/{id}",http_response_status_code="304"} 2',
      'http_server_request_duration_count{http_request_method="GET",http_route="/health",http_response_status_code="200"} 5',
      'http_server_request_duration_sum{http_request_method="GET",http_route="/employees/{id}"} 0.5',
    ].join("\n");
    expect(recordedRequests(text, /^\/employees\//)).toEqual({
      metric: "http_server_request_duration_count",
      recorded: 9,
      routes: ["/employees/{id}", "/health"],
    });
  });

  it("reads the older http.server.duration histogram, and nothing from text without one", () => {
    expect(
      recordedRequests('http_server_duration_count{http_route="/employees/:id"} 3', /employees/),
    ).toEqual({
      metric: "http_server_duration_count",
      recorded: 3,
      routes: ["/employees/:id"],
    });
    expect(recordedRequests("# no metrics\n", /employees/)).toBeUndefined();
  });
});
