import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createLogger, type Service, startService } from "../src/server.js";
import { ADMIN, frameworkEnv, type Started, sqlite, watchResponses } from "./harness.js";

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

describe("telemetry: GET /metrics and the access line show what the packages decided", () => {
  let started: Started;
  beforeAll(async () => {
    started = await sqlite.start({ RATE_LIMIT_MAX: "3", RATE_LIMIT_WINDOW_SECONDS: "600" });
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

    const scraped = await fetch(`${url}/metrics`, { headers: { accept: PROMETHEUS_ACCEPT } });
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
    const tool = promtool();
    if (tool) execFileSync(tool, ["check", "metrics"], { input: text, stdio: ["pipe", "pipe", "pipe"] });
  });

  it("with TELEMETRY=off /metrics is the 404 error record", async () => {
    const off = await sqlite.start({ TELEMETRY: "off" });
    try {
      const r = await fetch(`${off.url}/metrics`);
      expect(r.status).toBe(404);
      expect(await r.json()).toMatchObject({ status: 404, path: "/metrics" });
    } finally {
      await off.stop();
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
    // The access lines (a refusal also has its 4xx line, with the error and its cause, before it).
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
    ["none → a new trace", undefined, undefined],
    [
      "a malformed one (version ff) → ignored, a new trace",
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      undefined,
    ],
    [
      "an all-zero trace id → ignored, a new trace",
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
    expect(entry?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(entry?.traceId).not.toBe("00000000000000000000000000000000");
    if (continued !== undefined) expect(entry?.traceId).toBe(continued);
    else expect(entry?.traceId).not.toBe("4bf92f3577b34da6a3ce929d0e0e4736");
  });
});
