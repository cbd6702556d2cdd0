import * as diagnostics_channel from "node:diagnostics_channel";
import type { IncomingHttpHeaders } from "node:http";
import { type PipelineRequest, subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type VersioningDiagnostic, versioningChannel, versions } from "./index.js";

/** A message's members but its `request`, for each kind of message. */
type WithoutRequest<T> = T extends unknown ? Omit<T, "request"> : never;

// Each decision of the versioning step on `svc:versioning`, with plain values (no server). The
// same through listening servers of every framework: test/diagnostics.test.ts.

const step = versions({
  versions: [1, 2, 3],
  defaultVersion: 3,
  uri: true,
  header: true,
  mediaType: { vendor: "svc" },
  deprecated: {
    1: { deprecation: "2026-01-01T00:00:00Z", sunset: "2026-07-01T00:00:00Z" },
    2: { deprecation: "2026-03-01T00:00:00Z" },
  },
  neutral: ["/health"],
});

function request(target: string, headers: IncomingHttpHeaders, native: object): PipelineRequest {
  return { view: { method: "GET", url: target, headers }, path: target, native };
}

type Expected = WithoutRequest<VersioningDiagnostic> | undefined;

const ROWS: readonly [string, string, IncomingHttpHeaders, Expected][] = [
  [
    "/v3/x → 3 by path",
    "/v3/x",
    {},
    { decision: "chosen", version: "3", strategy: "path", deprecated: false, sunset: false },
  ],
  [
    "/v1/x → 1 by path, deprecated with a sunset",
    "/v1/x",
    {},
    { decision: "chosen", version: "1", strategy: "path", deprecated: true, sunset: true },
  ],
  [
    "API-Version: 2 → 2 by header, deprecated, no sunset",
    "/x",
    { "api-version": "2" },
    { decision: "chosen", version: "2", strategy: "header", deprecated: true, sunset: false },
  ],
  [
    "Accept: vnd.svc.v3+json → 3 by media type",
    "/x",
    { accept: "application/vnd.svc.v3+json" },
    { decision: "chosen", version: "3", strategy: "media-type", deprecated: false, sunset: false },
  ],
  [
    "no version → the default",
    "/x",
    {},
    { decision: "chosen", version: "3", strategy: "default", deprecated: false, sunset: false },
  ],
  ["/v9/x → unsupported (404), without the 9", "/v9/x", {}, { decision: "unsupported", strategy: "path" }],
  [
    "API-Version: 9 → unsupported (400), without the 9",
    "/x",
    { "api-version": "9" },
    { decision: "unsupported", strategy: "header" },
  ],
  [
    "Accept: vnd.svc.v9+json → unsupported (406), without the 9",
    "/x",
    { accept: "application/vnd.svc.v9+json" },
    { decision: "unsupported", strategy: "media-type" },
  ],
  [
    "/v<8,000 digits>/x → unsupported (404), none of the digits",
    `/v${"7".repeat(8000)}/x`,
    {},
    { decision: "unsupported", strategy: "path" },
  ],
  [
    "/v1/x with API-Version: 2 → a conflict (400) between path and header",
    "/v1/x",
    { "api-version": "2" },
    { decision: "conflicting", strategies: ["path", "header"] },
  ],
  [
    "/v1/x with Accept: vnd.svc.v2+json only → not acceptable (406), by the path",
    "/v1/x",
    { accept: "application/vnd.svc.v2+json" },
    { decision: "not-acceptable", strategy: "path" },
  ],
  [
    "/v1/x with Accept naming a version of 100 digits → not acceptable (406), none of the digits",
    "/v1/x",
    { accept: `application/vnd.svc.v${"9".repeat(100)}+json` },
    { decision: "not-acceptable", strategy: "path" },
  ],
  [
    "API-Version: two → malformed (400), by the header",
    "/x",
    { "api-version": "two" },
    { decision: "malformed", strategy: "header" },
  ],
];

describe("svc:versioning", () => {
  const heard: unknown[] = [];
  const listener = (message: unknown) => heard.push(message);
  afterEach(() => {
    heard.length = 0;
    unsubscribeDiagnostics("svc:versioning", listener);
    vi.restoreAllMocks();
  });

  for (const [name, target, headers, want] of ROWS) {
    it(`${name}: ${want?.decision ?? "nothing"}`, () => {
      subscribeDiagnostics("svc:versioning", listener);
      const native = { framework: "request" };
      step.resolve(request(target, headers, native), target);
      expect(heard).toEqual(want === undefined ? [] : [{ request: native, ...want }]);
      if (want !== undefined) expect((heard[0] as VersioningDiagnostic).request).toBe(native);
    });
  }

  it("with no subscriber, no decision publishes (nor builds) a message", () => {
    const publish = vi.spyOn(diagnostics_channel.channel(versioningChannel.name), "publish");
    expect(versioningChannel.hasSubscribers).toBe(false);
    for (const [, target, headers] of ROWS) step.resolve(request(target, headers, {}), target);
    expect(publish).not.toHaveBeenCalled();
    subscribeDiagnostics("svc:versioning", listener);
    step.resolve(request("/v1/x", {}, {}), "/v1/x");
    expect(publish).toHaveBeenCalledTimes(1);
  });
});
