import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createLogger, type Service, startService } from "../src/server.js";
import { ADMIN, frameworkEnv, problemsOf, type Started, sqlite, watchResponses } from "./harness.js";

/** The Accept field Prometheus 3 sends when it scrapes. */
const PROMETHEUS_ACCEPT =
  "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";

/** The value of the sample of `metric` whose labels include every one of `labels`, summed. */
function sample(text: string, metric: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${metric}{`)) continue;
    const body = line.slice(metric.length + 1, line.lastIndexOf("}"));
    if (Object.entries(labels).every(([k, v]) => body.includes(`${k}="${v}"`)))
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

/** promtool from Debian's prometheus package, when installed: the format checked by Prometheus's own tool. */
function promtool(): string | undefined {
  for (const path of ["/usr/bin/promtool", "/usr/local/bin/promtool"]) {
    try {
      execFileSync(path, ["--version"], { stdio: "ignore" });
      return path;
    } catch {}
  }
  if (process.env.CI) throw new Error("promtool missing: CI installs Debian's prometheus package");
  console.warn("[skip] promtool is not installed: the exposition format is checked by the parser here only");
  return undefined;
}

/** The metrics' own listener's URL of a started service. */
function metricsUrlOf(started: Started): string {
  const url = started.service.metricsUrl;
  if (url === undefined) throw new Error("the service has no metrics listener");
  return url;
}

describe("telemetry: GET /metrics and the access line show what the packages decided", () => {
  let started: Started;
  beforeAll(async () => {
    started = await sqlite.start({
      RATE_LIMIT_MAX: "3",
      RATE_LIMIT_WINDOW_SECONDS: "600",
      METRICS_PORT: "0",
    });
  });
  afterAll(() => started?.stop());

  it("429s, refusals by reason and idempotent replays are counted; Prometheus's own Accept gets the text format", async () => {
    const { url } = started;
    // Anonymous reads from one address: 3 admitted (then 401), the 4th limited.
    for (let i = 0; i < 4; i++) await fetch(`${url}/employees`);
    // A Bearer token no issuer signed: refused as malformed, whatever its budget.
    await fetch(`${url}/departments`, { headers: { authorization: "Bearer not.a.token" } });
    const key = randomUUID();
    const post = () =>
      fetch(`${url}/departments`, {
        method: "POST",
        headers: { authorization: ADMIN, "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify({ name: `telemetry-${key}`, city: "Oslo" }),
      });
    expect((await post()).status).toBe(201);
    const replay = await post();
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    // A route with a parameter, under a version prefix: the document's template, not the path.
    const one = await fetch(`${url}/v1/employees/424242424`, { headers: { authorization: ADMIN } });

    const scraped = await fetch(metricsUrlOf(started), { headers: { accept: PROMETHEUS_ACCEPT } });
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(scraped.headers.get("cache-control")).toBe("no-store");
    const text = await scraped.text();
    expect(sample(text, "svc_rate_limiting_requests_total", { svc_rate_limiting_result: "rejected" })).toBe(
      1,
    );
    expect(sample(text, "svc_idempotency_requests_total", { svc_idempotency_result: "replayed" })).toBe(1);
    expect(
      sample(text, "svc_authentication_attempts_total", {
        svc_authentication_result: "failure",
        error_type: "malformed",
      }),
    ).toBe(1);
    expect(sample(text, "svc_errors_records_total", { http_response_status_code: "429" })).toBe(1);
    // The semantic conventions' server duration, by the route the path matched: 429s per route.
    expect(
      sample(text, "http_server_request_duration_count", {
        http_route: "/employees",
        http_request_method: "GET",
        http_response_status_code: "429",
      }),
    ).toBe(1);
    expect(
      sample(text, "http_server_request_duration_count", {
        http_route: "/departments",
        http_request_method: "POST",
        http_response_status_code: "201",
      }),
    ).toBe(2);
    expect(
      sample(text, "http_server_request_duration_count", {
        http_route: "/employees/{id}",
        http_request_method: "GET",
        http_response_status_code: String(one.status),
      }),
    ).toBe(1);
    expect(text).not.toContain("424242424");
    // Each series' +Inf bucket holds all its requests.
    const inf = sample(text, "http_server_request_duration_bucket", {
      http_route: "/departments",
      le: "+Inf",
    });
    expect(inf).toBe(sample(text, "http_server_request_duration_count", { http_route: "/departments" }));
    const tool = promtool();
    if (tool) execFileSync(tool, ["check", "metrics"], { input: text, stdio: ["pipe", "pipe", "pipe"] });
  });

  it.each([
    ["POST /metrics → 405 with Allow", "/metrics", "POST", 405],
    ["GET /metrics/x → 404", "/metrics/x", "GET", 404],
    ["GET / → 404", "/", "GET", 404],
    ["HEAD /metrics → 200, no content", "/metrics", "HEAD", 200],
  ])("the metrics' listener: %s", async (_, path, method, status) => {
    const r = await fetch(new URL(path, metricsUrlOf(started)), { method });
    expect(r.status).toBe(status);
    if (status === 405) expect(r.headers.get("allow")).toBe("GET, HEAD");
    expect(r.headers.get("cache-control")).toBe("no-store");
    if (method === "HEAD") expect(await r.text()).toBe("");
  });
});

describe("telemetry: the metrics' listener, from the configuration", () => {
  it.each([
    ["unset", {}, undefined],
    ["METRICS_PORT=9464", { METRICS_PORT: "9464" }, { port: 9464, host: "127.0.0.1" }],
    [
      "METRICS_PORT=9464, METRICS_HOST=10.0.0.7",
      { METRICS_PORT: "9464", METRICS_HOST: "10.0.0.7" },
      { port: 9464, host: "10.0.0.7" },
    ],
  ])("%s → %j", (_, env, metrics) => {
    expect(loadConfig(env).metrics).toEqual(metrics);
  });

  it.each([
    ["METRICS_HOST alone", { METRICS_HOST: "0.0.0.0" }, /METRICS_HOST needs METRICS_PORT/],
    ["METRICS_PORT with TELEMETRY=off", { METRICS_PORT: "9464", TELEMETRY: "off" }, /needs TELEMETRY=on/],
    ["METRICS_PORT=PORT", { PORT: "3000", METRICS_PORT: "3000" }, /METRICS_PORT must differ from PORT/],
    ["METRICS_PORT=99999", { METRICS_PORT: "99999" }, /METRICS_PORT must be a whole number from 0 to 65535/],
    ["METRICS_HOST=a b", { METRICS_PORT: "9464", METRICS_HOST: "a b" }, /METRICS_HOST must be a host/],
  ])("%s → refused", (_, env, problem) => {
    expect(problemsOf(env).join("\n")).toMatch(problem);
  });
});

describe("telemetry: versions a client makes up", () => {
  let started: Started;
  beforeAll(async () => {
    started = await sqlite.start({ METRICS_PORT: "0" });
  });
  afterAll(() => started?.stop());

  it('300 × GET /v<8,000 digits>/employees without credentials → one svc_api_version="unsupported" series; version 2 keeps its own', async () => {
    const scrape = async () => (await fetch(metricsUrlOf(started))).text();
    const madeUp = async (i: number) => {
      const r = await fetch(`${started.url}/v${String(i).padStart(8000, "9")}/employees`);
      expect(r.status).toBe(404);
      await r.arrayBuffer();
    };
    await (await fetch(`${started.url}/v2/employees/1`, { headers: { authorization: ADMIN } })).arrayBuffer();
    await madeUp(0);
    const first = await scrape();
    for (let i = 1; i < 300; i++) await madeUp(i);
    await (await fetch(`${started.url}/v2/employees/1`, { headers: { authorization: ADMIN } })).arrayBuffer();
    const after = await scrape();
    // The first made-up version added its series (a 404, an unsupported version); the next 299
    // are counts of those series, not series of their own: only some digits more.
    expect(after.length - first.length).toBeLessThan(256);
    expect(after.length).toBeLessThan(64 * 1024);
    expect(Math.max(...after.split("\n").map((line) => line.length))).toBeLessThan(1024);
    const versions = new Set([...after.matchAll(/svc_api_version="([^"]*)"/g)].map((m) => m[1]));
    expect([...versions].sort()).toEqual(["2", "unsupported"]);
    expect(
      sample(after, "svc_versioning_requests_total", {
        svc_versioning_result: "unsupported",
        svc_api_version: "unsupported",
      }),
    ).toBe(300);
    expect(
      sample(after, "svc_versioning_requests_total", {
        svc_versioning_result: "chosen",
        svc_api_version: "2",
      }),
    ).toBe(2);
    expect(after).not.toContain("otel_metric_overflow");
  });

  it("GET /metrics on the API's listener → the 404 error record, for anyone", async () => {
    for (const headers of [{}, { authorization: ADMIN }]) {
      const r = await fetch(`${started.url}/metrics`, { headers });
      expect(r.status).toBe(404);
      expect(await r.json()).toMatchObject({ status: 404, path: "/metrics" });
    }
  });
});

describe("telemetry: the access line", () => {
  let service: Service;
  const lines: string[] = [];
  beforeAll(async () => {
    const logger = createLogger({ logLevel: "info" }, { write: (line: string) => void lines.push(line) });
    service = await startService(
      loadConfig({ PORT: "0", ...frameworkEnv(), DATABASE_URL: "sqlite::memory:" }),
      {
        logger,
      },
    );
    watchResponses(service.server as Server);
  });
  afterAll(() => service?.close());

  it("names the principal and the decisions in order; a refusal's reason, never the credentials", async () => {
    await fetch(`${service.url}/employees/1`, {
      headers: { authorization: ADMIN, "x-correlation-id": "tel-ok" },
    });
    await fetch(`${service.url}/employees/1`, {
      headers: { authorization: "Bearer not.a.token", "x-correlation-id": "tel-refused" },
    });
    // The access lines: a refusal's only line (no line of the error record for a 4xx).
    const entries = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.statusCode !== undefined && l.method !== undefined);
    const ok = entries.find((l) => l.correlationId === "tel-ok");
    expect(ok).toMatchObject({ statusCode: 200, principal: "admin" });
    expect(String(ok?.decisions)).toMatch(/\bauth:authenticated\b/);
    const refused = entries.find((l) => l.correlationId === "tel-refused");
    expect(refused).toMatchObject({ statusCode: 401 });
    expect(refused?.principal).toBeUndefined();
    expect(String(refused?.decisions)).toMatch(/\bauth:refused:malformed\b/);
    expect(lines.join("")).not.toContain("not.a.token");
  });

  it.each([
    [
      "a valid traceparent → its trace continued",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "4bf92f3577b34da6a3ce929d0e0e4736",
    ],
    ["none → no trace id (no span records one)", undefined, undefined],
    [
      "a malformed one (version ff) → ignored, no trace id",
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      undefined,
    ],
    [
      "an all-zero trace id → ignored, no trace id",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      undefined,
    ],
  ])("%s", async (_, traceparent, continued) => {
    const id = `tel-trace-${randomUUID()}`;
    const headers: Record<string, string> = { authorization: ADMIN, "x-correlation-id": id };
    if (traceparent !== undefined) headers.traceparent = traceparent;
    const r = await fetch(`${service.url}/employees/1`, { headers });
    expect(r.status).toBe(200);
    await r.arrayBuffer();
    let entry: Record<string, unknown> | undefined;
    for (let i = 0; i < 40 && entry === undefined; i++) {
      entry = lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.correlationId === id && l.statusCode !== undefined);
      if (entry === undefined) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(entry).toBeDefined();
    expect(entry?.traceId).toBe(continued);
  });
});
