import * as diagnostics_channel from "node:diagnostics_channel";
import type { IncomingHttpHeaders } from "node:http";
import {
  createPipeline,
  type PipelineRequest,
  type Prepared,
  reply,
  subscribeDiagnostics,
  unsubscribeDiagnostics,
} from "@svc/kernel";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  type ConditionalDiagnostic,
  checkPreconditions,
  conditionalChannel,
  representationTag,
  validators,
} from "./index.js";
import { preconditionsGate } from "./preconditions.js";

// Each decision of the package on `svc:conditional`, over the pipeline's validators step and the
// pipeline-less preconditions() with plain values. The same through listening servers of every
// framework: test/diagnostics.test.ts.

const PREPARED: Prepared = { version: undefined, refusal: undefined };
const MODIFIED = new Date("2026-01-02T03:04:05Z");
const EARLIER = "Thu, 01 Jan 2026 00:00:00 GMT";
const data = { id: 7 };
const tag = representationTag("application/json", undefined, JSON.stringify(data));

const pipeline = createPipeline({ validators: validators({ required: true }) });

function request(method: string, headers: IncomingHttpHeaders, native: object): PipelineRequest {
  return { view: { method, headers }, path: "/r", preset: () => undefined, native };
}

let heard: unknown[] = [];
const listener = (message: unknown) => heard.push(message);

/** Method, fields, and the one message expected (`undefined`: none). */
type DecisionRow = [string, string, IncomingHttpHeaders, Omit<ConditionalDiagnostic, "request"> | undefined];

const ROWS: readonly DecisionRow[] = [
  [
    "If-None-Match: the current tag → 304",
    "GET",
    { "if-none-match": tag },
    { decision: "not-modified", field: "If-None-Match" },
  ],
  [
    "If-Modified-Since: Last-Modified → 304",
    "GET",
    { "if-modified-since": MODIFIED.toUTCString() },
    { decision: "not-modified", field: "If-Modified-Since" },
  ],
  [
    "GET If-Match: another tag → 412",
    "GET",
    { "if-match": '"x"' },
    { decision: "precondition-failed", field: "If-Match" },
  ],
  [
    "GET If-Unmodified-Since: earlier → 412",
    "GET",
    { "if-unmodified-since": EARLIER },
    { decision: "precondition-failed", field: "If-Unmodified-Since" },
  ],
  ["If-None-Match: another tag → 200, nothing", "GET", { "if-none-match": '"x"' }, undefined],
  ["no precondition → 200, nothing", "GET", {}, undefined],
  [
    "PUT If-Match: another tag → 412",
    "PUT",
    { "if-match": '"x"' },
    { decision: "precondition-failed", field: "If-Match" },
  ],
  [
    "PUT If-Unmodified-Since: earlier → 412",
    "PUT",
    { "if-unmodified-since": EARLIER },
    { decision: "precondition-failed", field: "If-Unmodified-Since" },
  ],
  [
    "PUT If-None-Match: * → 412",
    "PUT",
    { "if-none-match": "*" },
    { decision: "precondition-failed", field: "If-None-Match" },
  ],
  ["PUT without a precondition → 428", "PUT", {}, { decision: "precondition-required", field: undefined }],
  ["PUT If-Match: the current tag → on, nothing", "PUT", { "if-match": tag }, undefined],
];

/** Runs the row's request through the pipeline: a GET's response, or a write's preconditions. */
async function run(method: string, headers: IncomingHttpHeaders, native: object): Promise<void> {
  const req = request(method, headers, native);
  if (method === "GET") {
    await pipeline.respond(req, PREPARED, reply(data, { lastModified: MODIFIED })).catch(() => undefined);
  } else {
    await pipeline.checkWrite(req, PREPARED, { data, lastModified: MODIFIED }).catch(() => undefined);
  }
}

describe("svc:conditional", () => {
  beforeEach(() => {
    heard = [];
  });
  afterEach(() => {
    unsubscribeDiagnostics("svc:conditional", listener);
    vi.restoreAllMocks();
  });

  describe("the pipeline's validators step", () => {
    for (const [name, method, headers, want] of ROWS) {
      it(`${name}: ${want === undefined ? "no message" : want.decision}`, async () => {
        subscribeDiagnostics("svc:conditional", listener);
        const native = { framework: "request" };
        await run(method, headers, native);
        expect(heard).toEqual(want === undefined ? [] : [{ request: native, ...want }]);
        if (want !== undefined) expect((heard[0] as ConditionalDiagnostic).request).toBe(native);
      });
    }
  });

  describe("preconditions() (the gate every framework's entry mounts)", () => {
    const gate = preconditionsGate<object>({
      current: () => ({ etag: tag, lastModified: MODIFIED }),
      required: true,
    });
    for (const [name, method, headers, want] of ROWS) {
      it(`${name}: ${want === undefined ? "no message" : want.decision}`, async () => {
        subscribeDiagnostics("svc:conditional", listener);
        const native = { framework: "request" };
        await Promise.resolve(gate({ method, headers: { ...headers } }, native)).catch(() => undefined);
        expect(heard).toEqual(want === undefined ? [] : [{ request: native, ...want }]);
        if (want !== undefined) expect((heard[0] as ConditionalDiagnostic).request).toBe(native);
      });
    }
  });

  it("checkPreconditions(req, current): the message's request is the req given", async () => {
    subscribeDiagnostics("svc:conditional", listener);
    const req = { method: "GET", headers: { "if-none-match": tag } };
    expect(await checkPreconditions(req, { etag: tag })).toBe(304);
    expect(heard).toEqual([{ request: req, decision: "not-modified", field: "If-None-Match" }]);
  });

  it("with no subscriber, no decision publishes (nor builds) a message", async () => {
    const publish = vi.spyOn(diagnostics_channel.channel(conditionalChannel.name), "publish");
    expect(conditionalChannel.hasSubscribers).toBe(false);
    for (const [, method, headers] of ROWS) await run(method, headers, {});
    expect(publish).not.toHaveBeenCalled();
    subscribeDiagnostics("svc:conditional", listener);
    await run("GET", { "if-none-match": tag }, {});
    expect(publish).toHaveBeenCalledTimes(1);
  });
});
