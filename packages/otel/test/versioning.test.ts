// @svc/versioning on a listening node:http server, with the OpenTelemetry SDK: a version the API
// does not have is labelled `unsupported` however the client spelled it, by path, header or media
// type, so refused spellings add no point.
import type { Attributes } from "@opentelemetry/api";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { createPipeline } from "@svc/kernel";
import { nodeAdapter } from "@svc/kernel/node";
import { type Listening, listen } from "@svc/test-utils";
import { versions } from "@svc/versioning";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instrumentSvc, type SvcInstrumentation } from "../src/index.js";

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const reader = new TestReader();
const meterProvider = new MeterProvider({ readers: [reader] });
let instrumentation: SvcInstrumentation;
let server: Listening;

beforeAll(async () => {
  instrumentation = instrumentSvc({ meterProvider, packages: ["versioning"] });
  const svc = nodeAdapter(
    createPipeline({
      versioning: versions({
        versions: [1, 2],
        defaultVersion: 2,
        uri: true,
        header: true,
        mediaType: { vendor: "svc" },
      }),
    }),
  );
  server = await listen((req, res) => {
    svc
      .respond(req, res, (ctx) => ({ version: ctx.version }))
      .catch((err: { status?: number }) => {
        res.statusCode = err.status ?? 500;
        res.end();
      });
  });
});
afterAll(async () => {
  instrumentation.disable();
  await server.close();
  await meterProvider.shutdown();
});

/** `GET path` with `headers`: its status. */
async function get(path: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(`${server.url}${path}`, { headers });
  await response.arrayBuffer();
  return response.status;
}

/** The points of `svc.versioning.requests` collected now. */
async function points(): Promise<{ attributes: Attributes; value: number }[]> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .find((m) => m.descriptor.name === "svc.versioning.requests");
  return (metric?.dataPoints ?? []).map((p) => ({ attributes: p.attributes, value: p.value as number }));
}

/** A point's attributes as one string, to sort points by. */
const key = (p: { attributes: Attributes }) => JSON.stringify(Object.entries(p.attributes).sort());

const REFUSED = { "svc.api.version": "unsupported", "svc.versioning.result": "unsupported" };

describe("@svc/otel over @svc/versioning: a refused version is `unsupported`, never the client's spelling", () => {
  it("/v999, /v<10 kB>, Accept-Version 999 or 10 kB, vnd.svc.v999 → unsupported (malformed for 10 kB) by path, header, media type; then 100 more spellings add no point", async () => {
    const digits = "9".repeat(10_000);
    expect(await get("/v2/employees")).toBe(200);
    expect(await get("/v999/employees")).toBe(404);
    expect(await get(`/v${digits}/employees`)).toBe(404);
    expect(await get("/employees", { "Accept-Version": "999" })).toBe(400);
    // A version field that holds no version number: `malformed`, which names no version.
    expect(await get("/employees", { "Accept-Version": digits })).toBe(400);
    expect(await get("/employees", { Accept: "application/vnd.svc.v999+json" })).toBe(406);

    const first = (await points()).sort((a, b) => key(a).localeCompare(key(b)));
    const expected = [
      {
        attributes: {
          "svc.versioning.result": "chosen",
          "svc.api.version": "2",
          "svc.versioning.strategy": "path",
          "svc.api.version.deprecated": false,
          "svc.api.version.sunset": false,
        },
        value: 1,
      },
      { attributes: { ...REFUSED, "svc.versioning.strategy": "path" }, value: 2 },
      { attributes: { ...REFUSED, "svc.versioning.strategy": "header" }, value: 1 },
      { attributes: { ...REFUSED, "svc.versioning.strategy": "media-type" }, value: 1 },
      { attributes: { "svc.versioning.result": "malformed", "svc.versioning.strategy": "header" }, value: 1 },
    ];
    expect(first).toEqual(expected.sort((a, b) => key(a).localeCompare(key(b))));

    for (let i = 0; i < 100; i++) {
      const spelling = `${1000 + i}${"7".repeat(i * 100)}`;
      const status = await [
        () => get(`/v${spelling}/employees`),
        () => get("/employees", { "Accept-Version": spelling }),
        () => get("/employees", { Accept: `application/vnd.svc.v${1000 + i}+json` }),
      ][i % 3]?.();
      expect(status).toBeGreaterThanOrEqual(400);
    }

    const then = (await points()).sort((a, b) => key(a).localeCompare(key(b)));
    expect(then.map((p) => p.attributes)).toEqual(first.map((p) => p.attributes));
    const refusals = (list: typeof first) =>
      list.filter((p) => p.attributes["svc.versioning.result"] !== "chosen").reduce((n, p) => n + p.value, 0);
    expect(refusals(then)).toBe(refusals(first) + 100);
  });
});
