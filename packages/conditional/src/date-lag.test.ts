import { errorHandler } from "@svc/errors/express";
import { createPipeline, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { preconditions, setLastModified } from "./express.js";
import { validators } from "./validators.js";

// RFC 9110 §8.8.2.1: an origin server "MUST NOT send a Last-Modified date that is later than the
// server's time of message origination (Date)". Node writes `Date` from a per-second cache that a
// timer refreshes, so a handler that kept the event loop busy past a second boundary gets the
// stale second in `Date`, while a Last-Modified of "now" names the new one. These handlers block
// for 1.2 s (the timer cannot run meanwhile) after a first request primed Node's cache.

/** Blocks the event loop for `ms` (the point: Node's date cache timer cannot fire meanwhile). */
function block(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

let server: Listening;
beforeAll(async () => {
  const app = express();
  app.get("/prime", (_req, res) => {
    res.end("ok");
  });
  app.get("/modified-now", (_req, res) => {
    block(1200);
    setLastModified(res, new Date());
    res.end("x");
  });
  // PUT with a stale If-Match → 412; GET with the current tag in If-None-Match → 304.
  app.all(
    "/changed-now",
    (_req, _res, next) => {
      block(1200);
      next();
    },
    preconditions({ current: () => ({ etag: '"v2"', lastModified: new Date() }) }),
    (_req, res) => {
      res.end("x");
    },
  );
  // The same through the pipeline: a reply modified just now, and a write's current state.
  const svc = expressAdapter(createPipeline({ validators: validators() }));
  app.all(
    "/pipeline",
    svc.handle(async (req: express.Request) => {
      block(1200);
      const lastModified = new Date();
      if (req.method === "PUT") await svc.preconditions(req, { data: { v: 2 }, lastModified });
      return reply({ v: 2 }, { lastModified });
    }),
  );
  app.use(errorHandler({ logger: { error() {} } }));
  server = await listen(app);
});
afterAll(() => server.close());

async function primedThen(method: string, path: string, headers: Record<string, string> = {}) {
  await (await fetch(`${server.url}/prime`)).text();
  const res = await fetch(server.url + path, { method, headers });
  await res.arrayBuffer();
  return res;
}

function lastModifiedNotAfterDate(res: Response): void {
  const lastModified = Date.parse(res.headers.get("last-modified") ?? "");
  const date = Date.parse(res.headers.get("date") ?? "");
  expect(Number.isNaN(lastModified)).toBe(false);
  expect(lastModified).toBeLessThanOrEqual(date);
}

describe("Last-Modified never later than Date when Node's date cache lags", () => {
  it("setLastModified(res, now) after the loop was busy 1.2 s → Last-Modified ≤ Date", async () => {
    lastModifiedNotAfterDate(await primedThen("GET", "/modified-now"));
  });

  it("preconditions() 412 for a resource changed just now, loop busy 1.2 s → Last-Modified ≤ Date", async () => {
    const res = await primedThen("PUT", "/changed-now", { "if-match": '"v1"' });
    expect(res.status).toBe(412);
    lastModifiedNotAfterDate(res);
  });

  it("preconditions() 304 for a resource changed just now, loop busy 1.2 s → Last-Modified ≤ Date", async () => {
    const res = await primedThen("GET", "/changed-now", { "if-none-match": '"v2"' });
    expect(res.status).toBe(304);
    lastModifiedNotAfterDate(res);
  });
});

describe("Last-Modified never later than Date on the pipeline when Node's date cache lags", () => {
  it("a reply modified now after the loop was busy 1.2 s → Last-Modified ≤ Date", async () => {
    const res = await primedThen("GET", "/pipeline");
    expect(res.status).toBe(200);
    lastModifiedNotAfterDate(res);
  });

  it("svc.preconditions 412 for a resource changed just now, loop busy 1.2 s → Last-Modified ≤ Date", async () => {
    const res = await primedThen("PUT", "/pipeline", { "if-match": '"v1"' });
    expect(res.status).toBe(412);
    lastModifiedNotAfterDate(res);
  });

  it("the 304 of a resource changed just now, loop busy 1.2 s → Last-Modified ≤ Date", async () => {
    const res = await primedThen("GET", "/pipeline", { "if-none-match": "*" });
    expect(res.status).toBe(304);
    lastModifiedNotAfterDate(res);
  });
});
