// Deprecation and Sunset dates given as strings: read the same instant on every server, whatever
// its time zone, or refused at construction.

import { errorHandler, notFound } from "@svc/errors/express";
import { createPipeline, requestState } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { listen } from "@svc/test-utils";
import express from "express";
import { describe, expect, it, onTestFinished } from "vitest";
import type { DeprecationPolicy } from "../src/index.js";
import { versionResolver, versions } from "../src/index.js";

async function served(policy: DeprecationPolicy): Promise<Response> {
  const app = express();
  const svc = expressAdapter(
    createPipeline({
      versioning: versions({ versions: [1, 2], defaultVersion: 1, deprecated: { 1: policy } }),
    }),
  );
  app.use(svc.prepare);
  app.get(
    "/employees",
    svc.handle((req: express.Request) => ({ v: requestState(req).version })),
  );
  app.use(notFound());
  app.use(errorHandler({ logger: { error() {} } }));
  const { url, close } = await listen(app);
  onTestFinished(close);
  return fetch(`${url}/v1/employees`);
}

describe("deprecation and sunset strings (ECMAScript date time string format, an ISO 8601 profile)", () => {
  // One instant, 2026-01-01T00:00:00Z, however it is written: the headers are the same.
  it.each([
    ["2026-01-01", "2026-07-01"],
    ["2026-01-01T00:00:00Z", "2026-07-01T00:00:00Z"],
    ["2026-01-01T00:00:00.000Z", "2026-07-01T00:00:00.000Z"],
    ["2026-01-01T00:00Z", "2026-07-01T00:00Z"],
    ["2026-01-01T01:00:00+01:00", "2026-06-30T19:00:00-05:00"],
    ["2026-01-01t00:00:00z", "2026-07-01t00:00:00z"],
    ["+002026-01-01T00:00:00Z", "+002026-07-01T00:00:00Z"],
  ])(
    "deprecation %j, sunset %j → Deprecation @1767225600, Sunset Wed, 01 Jul 2026",
    async (deprecation, sunset) => {
      const res = await served({ deprecation, sunset });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ v: 1 });
      expect(res.headers.get("deprecation")).toBe("@1767225600");
      expect(res.headers.get("sunset")).toBe("Wed, 01 Jul 2026 00:00:00 GMT");
    },
  );
  // RFC 9745 §2 and RFC 8594 §3 each name one instant. A date-time without Z or an offset is
  // read in the server's local time zone (ECMAScript Date.parse), so two replicas in different
  // zones sent different Deprecation and Sunset values; other strings are read by the engine's
  // own rules (`"1"` is 2001-01-01 local time) and impossible dates roll over (Feb 30 → Mar 2).
  it.each([
    "2026-01-01T00:00:00",
    "2026-01-01T00:00",
    "2026-01-01 00:00:00Z",
    "Jan 1 2026",
    "1",
    "2026/01/01",
    "Thu, 01 Jan 2026 00:00:00 GMT",
    "2026-02-30",
    "2026-02-29T00:00:00Z",
    "2026-04-31T00:00:00Z",
    " 2026-01-01",
  ])("deprecation %j → TypeError ERR_SVC_VERSIONING_DEPRECATED_DEPRECATION", (deprecation) => {
    for (const build of [versions, versionResolver]) {
      expect(() => build({ versions: [1], deprecated: { 1: { deprecation } } })).toThrow(
        expect.objectContaining({
          name: "TypeError",
          code: "ERR_SVC_VERSIONING_DEPRECATED_DEPRECATION",
          message: expect.stringContaining(JSON.stringify(deprecation)),
        }),
      );
    }
  });
  it.each(["2027-01-01T00:00:00", "Jan 1 2027", "2027-02-29"])(
    "sunset %j → TypeError ERR_SVC_VERSIONING_DEPRECATED_SUNSET",
    (sunset) => {
      expect(() =>
        versions({ versions: [1], deprecated: { 1: { deprecation: "2026-01-01", sunset } } }),
      ).toThrow(expect.objectContaining({ name: "TypeError", code: "ERR_SVC_VERSIONING_DEPRECATED_SUNSET" }));
    },
  );
  it("a leap day is a date: 2028-02-29 → Sunset Tue, 29 Feb 2028", async () => {
    const res = await served({ deprecation: "2026-01-01", sunset: "2028-02-29" });
    expect(res.headers.get("sunset")).toBe("Tue, 29 Feb 2028 00:00:00 GMT");
  });
});
