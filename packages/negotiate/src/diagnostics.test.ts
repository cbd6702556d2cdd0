import * as diagnostics_channel from "node:diagnostics_channel";
import type { IncomingHttpHeaders } from "node:http";
import {
  createPipeline,
  type PipelineRequest,
  subscribeDiagnostics,
  unsubscribeDiagnostics,
} from "@svc/kernel";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  bodyReader,
  compression,
  json,
  type NegotiateDiagnostic,
  negotiateChannel,
  representations,
} from "./index.js";

// Each decision of the package on `svc:negotiate`, with plain values (no server): the
// representation and coding steps through a pipeline, the body reader on its own. The same
// through listening servers of every framework: test/diagnostics.test.ts.

/** A message's members but its `request`, for each kind of message. */
type WithoutRequest<T> = T extends unknown ? Omit<T, "request"> : never;

const pipeline = createPipeline({
  representations: representations({ offers: [json] }),
  coding: compression({ threshold: 0 }),
});
const items = Array.from({ length: 50 }, (_, i) => ({ id: i, name: `Employee ${i}` }));

function request(method: string, headers: IncomingHttpHeaders, native: object): PipelineRequest {
  return { view: { method, url: "/items", headers }, path: "/items", native };
}

/** The pipeline's answer to one request: prepared, run, and its body coded. */
async function respond(method: string, headers: IncomingHttpHeaders, native: object): Promise<void> {
  const req = request(method, headers, native);
  const prepared = pipeline.prepare(req, "/items");
  if (prepared.refusal !== undefined) return;
  await pipeline.run(req, prepared, () => items).catch(() => undefined);
}

const STEP_ROWS: readonly [
  string,
  string,
  IncomingHttpHeaders,
  WithoutRequest<NegotiateDiagnostic> | undefined,
][] = [
  [
    "GET Accept: text/csv → 406",
    "GET",
    { accept: "text/csv" },
    { decision: "not-acceptable", offered: ["application/json"] },
  ],
  [
    "POST Accept: text/csv → 406 before the handler",
    "POST",
    { accept: "text/csv" },
    { decision: "not-acceptable", offered: ["application/json"] },
  ],
  [
    "Accept-Encoding: gzip → coded gzip",
    "GET",
    { "accept-encoding": "gzip" },
    { decision: "coded", coding: "gzip" },
  ],
  ["Accept-Encoding: br → coded br", "GET", { "accept-encoding": "br" }, { decision: "coded", coding: "br" }],
  ["HEAD Accept-Encoding: gzip → no body coded, nothing", "HEAD", { "accept-encoding": "gzip" }, undefined],
  ["no Accept-Encoding → identity, nothing", "GET", {}, undefined],
];

const read = bodyReader({ limit: 64, depth: 2, others: "refuse" });
const BODY_ROWS: readonly [
  string,
  IncomingHttpHeaders,
  string,
  WithoutRequest<NegotiateDiagnostic> | undefined,
][] = [
  [
    "Content-Type: text/plain → 415",
    { "content-type": "text/plain" },
    "hi",
    { decision: "unsupported-media-type", contentType: "text/plain" },
  ],
  [
    "Content-Encoding: gzip → 415",
    { "content-type": "application/json", "content-encoding": "gzip" },
    "{}",
    { decision: "unsupported-media-type", contentType: "application/json", reason: "content-coding" },
  ],
  [
    "over the limit → 413",
    { "content-type": "application/json" },
    `"${"a".repeat(100)}"`,
    { decision: "body-refused", reason: "too-large" },
  ],
  [
    "nested past depth → 400",
    { "content-type": "application/json" },
    '{"a":{"b":{"c":1}}}',
    { decision: "body-refused", reason: "too-deep" },
  ],
  [
    "not JSON → 400",
    { "content-type": "application/json" },
    "{",
    { decision: "body-refused", reason: "malformed" },
  ],
  [
    "XML with a DOCTYPE → 400",
    { "content-type": "application/xml" },
    "<!DOCTYPE a><a/>",
    { decision: "body-refused", reason: "doctype" },
  ],
  [
    "XML nested past depth → 400",
    { "content-type": "application/xml" },
    "<a><b><c/></b></a>",
    { decision: "body-refused", reason: "too-deep" },
  ],
  ["valid JSON → nothing", { "content-type": "application/json" }, '{"a":1}', undefined],
];

async function readBody(
  headers: IncomingHttpHeaders,
  body: string,
  native: object | undefined,
): Promise<void> {
  const bytes = new TextEncoder().encode(body);
  const view = { method: "POST", headers: { ...headers, "content-length": String(bytes.byteLength) } };
  await read(view, bytes, native).catch(() => undefined);
}

describe("svc:negotiate", () => {
  const heard: NegotiateDiagnostic[] = [];
  const listener = (message: unknown) => heard.push(message as NegotiateDiagnostic);
  afterEach(() => {
    heard.length = 0;
    unsubscribeDiagnostics("svc:negotiate", listener);
    vi.restoreAllMocks();
  });

  for (const [name, method, headers, want] of STEP_ROWS) {
    it(`${name}: ${want?.decision ?? "no message"}`, async () => {
      subscribeDiagnostics("svc:negotiate", listener);
      const native = { framework: "request" };
      await respond(method, headers, native);
      expect(heard).toEqual(want === undefined ? [] : [{ request: native, ...want }]);
      if (want !== undefined) expect(heard[0]?.request).toBe(native);
    });
  }

  it("Accept-Encoding: identity;q=0, *;q=0 → 406 naming every coding offered", async () => {
    subscribeDiagnostics("svc:negotiate", listener);
    const native = {};
    await respond("GET", { "accept-encoding": "identity;q=0, *;q=0" }, native);
    expect(heard).toEqual([
      {
        request: native,
        decision: "not-acceptable",
        offered: expect.arrayContaining(["gzip", "br", "identity"]),
      },
    ]);
  });

  for (const [name, headers, body, want] of BODY_ROWS) {
    it(`body ${name}: ${want?.decision ?? "no message"}`, async () => {
      subscribeDiagnostics("svc:negotiate", listener);
      const native = { framework: "request" };
      await readBody(headers, body, native);
      expect(heard).toEqual(want === undefined ? [] : [{ request: native, ...want }]);
    });
  }

  it("body: without the framework's request, the view read is named", async () => {
    subscribeDiagnostics("svc:negotiate", listener);
    const view = { method: "POST", headers: { "content-type": "text/plain", "content-length": "2" } };
    await read(view, new TextEncoder().encode("hi")).catch(() => undefined);
    expect(heard[0]?.request).toBe(view);
  });

  it("with no subscriber, no decision publishes (nor builds) a message", async () => {
    const publish = vi.spyOn(diagnostics_channel.channel(negotiateChannel.name), "publish");
    expect(negotiateChannel.hasSubscribers).toBe(false);
    for (const [, method, headers] of STEP_ROWS) await respond(method, headers, {});
    for (const [, headers, body] of BODY_ROWS) await readBody(headers, body, {});
    expect(publish).not.toHaveBeenCalled();
    subscribeDiagnostics("svc:negotiate", listener);
    await respond("GET", { "accept-encoding": "gzip" }, {});
    expect(publish).toHaveBeenCalledTimes(1);
  });
});
