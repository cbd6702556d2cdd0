import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serviceUrl, uniquePrefix } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createLogger, startService } from "../src/server.js";
import { ADMIN, frameworkEnv } from "./harness.js";

const redisUrl = serviceUrl("REDIS_URL");

/**
 * The request spans leave the process the standard way: the OpenTelemetry environment
 * (`OTEL_TRACES_EXPORTER`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL`)
 * chooses the SDK's OTLP/HTTP exporter behind a batch processor, and a receiver listening as a
 * collector does decodes what it sends, in both encodings the exporter has.
 * @see https://opentelemetry.io/docs/specs/otlp/#otlphttp
 */

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
}

/** One field of a protobuf message: its number and its value (a varint, or the bytes of a length-delimited field). */
type WireField = { field: number; varint?: bigint; bytes?: Buffer };

/** The fields of a protobuf message, as the wire format lays them out (varints, 64-bit, length-delimited, 32-bit). */
function fields(buf: Buffer): WireField[] {
  const out: WireField[] = [];
  let at = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = buf[at++] as number;
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (at < buf.length) {
    const tag = Number(varint());
    const field = tag >>> 3;
    const type = tag & 7;
    if (type === 0) out.push({ field, varint: varint() });
    else if (type === 1) {
      out.push({ field, bytes: buf.subarray(at, at + 8) });
      at += 8;
    } else if (type === 2) {
      const length = Number(varint());
      out.push({ field, bytes: buf.subarray(at, at + length) });
      at += length;
    } else if (type === 5) {
      out.push({ field, bytes: buf.subarray(at, at + 4) });
      at += 4;
    } else throw new Error(`wire type ${type}`);
  }
  return out;
}
const sub = (buf: Buffer, n: number) => fields(buf).filter((f) => f.field === n && f.bytes !== undefined);
const text = (buf: Buffer, n: number) => sub(buf, n)[0]?.bytes?.toString("utf8");

/** opentelemetry.proto.common.v1.AnyValue: string 1, bool 2, int 3, double 4. */
function anyValue(buf: Buffer): unknown {
  const [first] = fields(buf);
  if (first === undefined) return undefined;
  if (first.field === 1) return first.bytes?.toString("utf8");
  if (first.field === 2) return first.varint === 1n;
  if (first.field === 3) return Number(first.varint);
  if (first.field === 4) return first.bytes?.readDoubleLE(0);
  return undefined;
}
/** KeyValue list: key 1, value 2. */
function attributesOf(list: WireField[]): Record<string, unknown> {
  return Object.fromEntries(
    list.map((kv) => [
      text(kv.bytes as Buffer, 1),
      anyValue(sub(kv.bytes as Buffer, 2)[0]?.bytes ?? Buffer.alloc(0)),
    ]),
  );
}

/**
 * ExportTraceServiceRequest (resource_spans 1) → ResourceSpans (scope_spans 2) → ScopeSpans
 * (spans 2) → Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6, attributes 9,
 * events 11 (Event: name 2, attributes 3).
 * @see https://github.com/open-telemetry/opentelemetry-proto/blob/main/opentelemetry/proto/trace/v1/trace.proto
 */
function decodeProtobuf(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resource of sub(body, 1))
    for (const scope of sub(resource.bytes as Buffer, 2))
      for (const span of sub(scope.bytes as Buffer, 2)) {
        const b = span.bytes as Buffer;
        spans.push({
          traceId: sub(b, 1)[0]?.bytes?.toString("hex") ?? "",
          spanId: sub(b, 2)[0]?.bytes?.toString("hex") ?? "",
          parentSpanId: sub(b, 4)[0]?.bytes?.toString("hex") ?? "",
          name: text(b, 5) ?? "",
          kind: Number(fields(b).find((f) => f.field === 6)?.varint ?? 0n),
          attributes: attributesOf(sub(b, 9)),
          events: sub(b, 11).map((e) => ({
            name: text(e.bytes as Buffer, 2) ?? "",
            attributes: attributesOf(sub(e.bytes as Buffer, 3)),
          })),
        });
      }
  return spans;
}

type JsonValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
};
type JsonKeyValue = { key: string; value: JsonValue };
const jsonAttributes = (list: JsonKeyValue[] = []) =>
  Object.fromEntries(
    list.map(({ key, value }) => [
      key,
      value.stringValue ??
        value.boolValue ??
        (value.intValue !== undefined ? Number(value.intValue) : value.doubleValue),
    ]),
  );

/** The OTLP/JSON mapping of the same request (trace ids in hex, as the mapping says). */
function decodeJson(body: Buffer): ReceivedSpan[] {
  const request = JSON.parse(body.toString("utf8")) as {
    resourceSpans: {
      scopeSpans: {
        spans: {
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          kind: number;
          attributes?: JsonKeyValue[];
          events?: { name: string; attributes?: JsonKeyValue[] }[];
        }[];
      }[];
    }[];
  };
  return request.resourceSpans.flatMap((r) =>
    r.scopeSpans.flatMap((s) =>
      s.spans.map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? "",
        name: span.name,
        kind: span.kind,
        attributes: jsonAttributes(span.attributes),
        events: (span.events ?? []).map((e) => ({ name: e.name, attributes: jsonAttributes(e.attributes) })),
      })),
    ),
  );
}

/** A collector's OTLP/HTTP traces receiver: takes each export, answers 200 with an empty response. */
class Receiver {
  readonly spans: ReceivedSpan[] = [];
  readonly contentTypes: string[] = [];
  private server: Server | undefined;
  url = "";

  async start(): Promise<void> {
    this.server = createServer(async (req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const type = req.headers["content-type"] ?? "";
      this.contentTypes.push(type);
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      this.spans.push(...(type.startsWith("application/json") ? decodeJson(body) : decodeProtobuf(body)));
      if (type.startsWith("application/json"))
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      else res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`;
  }

  async stop(): Promise<void> {
    this.server?.close();
  }
}

/**
 * The service on SQLite in memory, on the framework of the run, with `env` on top (the
 * OpenTelemetry variables of the case); its log lines silent unless `logger` is given.
 */
function tracedService(env: Record<string, string>, logger = createLogger({ logLevel: "silent" })) {
  return startService(loadConfig({ PORT: "0", ...frameworkEnv(), DATABASE_URL: "sqlite::memory:", ...env }), {
    logger,
  });
}

const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe.each([
  ["http/protobuf", "application/x-protobuf"],
  ["http/json", "application/json"],
])("spans over OTLP/HTTP (%s) to a listening receiver", (protocol, contentType) => {
  const receiver = new Receiver();
  beforeAll(() => receiver.start());
  afterAll(() => receiver.stop());

  it("a refused request's server span: continued trace, route, status and the refusal's event with its reason", async () => {
    const service = await tracedService({
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol,
    });
    try {
      const refused = await fetch(`${service.url}/v1/employees`, {
        headers: { traceparent: TRACEPARENT, authorization: "Bearer not.a.token" },
      });
      expect(refused.status).toBe(401);
      await refused.arrayBuffer();
    } finally {
      // Shutting down flushes the batch processor's queue to the exporter.
      await service.close();
    }
    expect(receiver.contentTypes[0]).toContain(contentType);
    const span = receiver.spans.find((s) => s.traceId === "4bf92f3577b34da6a3ce929d0e0e4736");
    expect(span, JSON.stringify(receiver.spans.map((s) => s.name))).toBeDefined();
    expect(span?.name).toBe("GET /employees");
    expect(span?.kind).toBe(2); // SPAN_KIND_SERVER
    expect(span?.attributes).toMatchObject({
      "http.request.method": "GET",
      "http.response.status_code": 401,
      "http.route": "/employees",
    });
    const refusal = span?.events.find((e) => e.name.startsWith("svc.auth."));
    expect(refusal, JSON.stringify(span?.events)).toBeDefined();
    // The refusal's own reason: the token does not parse (not the record's `invalid_token`).
    expect(refusal?.attributes).toMatchObject({
      "svc.authentication.scheme": "bearer",
      "svc.authentication.result": "failure",
      "error.type": "malformed",
    });
  });
});

describe("the access line names the exported span's trace", () => {
  const receiver = new Receiver();
  beforeAll(() => receiver.start());
  afterAll(() => receiver.stop());

  it("a request without traceparent → a new trace, its id in the line and on the span", async () => {
    const lines: string[] = [];
    const service = await tracedService(
      { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url },
      createLogger({ logLevel: "info" }, { write: (line: string) => void lines.push(line) }),
    );
    try {
      const r = await fetch(`${service.url}/v1/employees`, { headers: { "x-correlation-id": "otlp-line" } });
      await r.arrayBuffer();
    } finally {
      await service.close();
    }
    const entry = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.correlationId === "otlp-line" && l.statusCode !== undefined);
    expect(entry?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(entry?.traceId).not.toBe("00000000000000000000000000000000");
    expect(receiver.spans.map((s) => s.traceId)).toContain(entry?.traceId);
  });
});

describe.skipIf(!redisUrl)("with REDIS_URL, the store calls are the server span's children", () => {
  const receiver = new Receiver();
  beforeAll(() => receiver.start());
  afterAll(() => receiver.stop());

  it("a request whose rate limit is counted in Redis → a CLIENT span consume redis under its SERVER span", async () => {
    const service = await tracedService({
      REDIS_URL: redisUrl as string,
      REDIS_KEY_PREFIX: uniquePrefix("otlp-traces"),
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url,
    });
    try {
      const r = await fetch(`${service.url}/v1/employees`, {
        headers: { traceparent: TRACEPARENT, authorization: ADMIN },
      });
      expect(r.status).toBe(200);
      await r.arrayBuffer();
    } finally {
      await service.close();
    }
    const traced = receiver.spans.filter((s) => s.traceId === "4bf92f3577b34da6a3ce929d0e0e4736");
    const server = traced.find((s) => s.kind === 2); // SPAN_KIND_SERVER
    const store = traced.find((s) => s.name === "consume redis");
    expect(store, JSON.stringify(traced.map((s) => s.name))).toBeDefined();
    expect(store?.kind).toBe(3); // SPAN_KIND_CLIENT
    expect(store?.parentSpanId).toBe(server?.spanId);
  });
});

describe("no span without an exporter", () => {
  const receiver = new Receiver();
  beforeAll(() => receiver.start());
  afterAll(() => receiver.stop());

  it("OTEL_TRACES_EXPORTER=none beside an endpoint: nothing is sent", async () => {
    const service = await tracedService({
      OTEL_TRACES_EXPORTER: "none",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url.replace("/v1/traces", ""),
    });
    try {
      await (await fetch(`${service.url}/v1/employees`)).arrayBuffer();
    } finally {
      await service.close();
    }
    expect(receiver.contentTypes).toEqual([]);
  });
});

describe("the OpenTelemetry environment, read by the configuration", () => {
  const base = { PORT: "0", DATABASE_URL: "sqlite::memory:" };
  it.each([
    [{}, undefined],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" },
      { exporters: ["otlp"], protocol: "http/protobuf", url: "http://collector:4318/v1/traces" },
    ],
    [
      { OTEL_TRACES_EXPORTER: "otlp" },
      { exporters: ["otlp"], protocol: "http/protobuf", url: "http://localhost:4318/v1/traces" },
    ],
    [
      { OTEL_TRACES_EXPORTER: "console,otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
      { exporters: ["console", "otlp"], protocol: "http/json", url: "http://localhost:4318/v1/traces" },
    ],
    [{ OTEL_TRACES_EXPORTER: "otlp", OTEL_SDK_DISABLED: "true" }, undefined],
    [{ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }, undefined],
  ])("%j → %j", (env, traces) => {
    expect(loadConfig({ ...base, ...env }).traces).toEqual(traces);
  });

  it.each([
    [{ OTEL_TRACES_EXPORTER: "zipkin" }, /OTEL_TRACES_EXPORTER names "zipkin"/],
    [
      { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
      /OTEL_EXPORTER_OTLP_PROTOCOL "grpc"/,
    ],
    [
      { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "not a url" },
      /must be an http\(s\) URL/,
    ],
    [{ OTEL_TRACES_EXPORTER: "otlp,none" }, /none beside an exporter/],
    [{ OTEL_TRACES_EXPORTER: "otlp", TELEMETRY: "off" }, /needs TELEMETRY=on/],
  ])("%j is refused by name", (env, message) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(message);
  });
});
