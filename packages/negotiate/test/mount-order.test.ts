import type { IncomingMessage, ServerResponse } from "node:http";
import { errorHandler } from "@svc/errors";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNegotiator, negotiate } from "../src/index.js";

/**
 * What conditional() of @svc/conditional leaves on a response it watches: a registered symbol, the
 * whole contract between the two packages (neither imports the other). Set before the coding step,
 * it is conditional() mounted first.
 */
const watchedByConditional = (res: ServerResponse) => {
  (res as ServerResponse & Record<symbol, unknown>)[Symbol.for("@svc/conditional")] = {};
};

const body = { name: "x".repeat(200) };

// conditional() before a compressing coder: the coder would send the headers before conditional()
// saw the body (no ETag, no 304 or 412), so the body goes uncoded, and the one warning says why.
describe("compression after conditional(): one SVC_NEGOTIATE_MOUNT_ORDER warning, core and adapter alike", () => {
  const warnings: string[] = [];
  const onWarning = (w: Error & { code?: string }) => {
    if (w.code === "SVC_NEGOTIATE_MOUNT_ORDER") warnings.push(w.message);
  };
  let core: Listening;
  let adapter: Listening;

  beforeAll(async () => {
    process.on("warning", onWarning);
    const negotiator = createNegotiator({ compression: { threshold: 10 } });
    core = await listen((req: IncomingMessage, res: ServerResponse) => {
      watchedByConditional(res);
      negotiator.negotiate(req, res);
      void negotiator.represent(req, res, body);
    });
    const app = express();
    app.use((_req, res, next) => {
      watchedByConditional(res);
      next();
    });
    app.use(negotiate({ compression: { threshold: 10 } }));
    app.get("/e", (_req, res) => res.represent(body));
    app.use(errorHandler({ logger: { error() {} } }));
    adapter = await listen(app);
  });

  afterAll(async () => {
    process.off("warning", onWarning);
    await Promise.all([core.close(), adapter.close()]);
  });

  const gzip = async (url: string) => {
    const res = await fetch(url, { headers: { "Accept-Encoding": "gzip" } });
    await res.arrayBuffer();
    return res;
  };

  it("createNegotiator, Accept-Encoding: gzip twice → 200 uncoded, one warning naming the order", async () => {
    warnings.length = 0;
    for (let i = 0; i < 2; i++) {
      const res = await gzip(`${core.url}/e`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-encoding")).toBeNull();
    }
    // process.emitWarning is delivered on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/mount negotiate\(\) first/);
  });

  it("negotiate(), Accept-Encoding: gzip twice → 200 uncoded, one warning naming the order", async () => {
    warnings.length = 0;
    for (let i = 0; i < 2; i++) {
      const res = await gzip(`${adapter.url}/e`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-encoding")).toBeNull();
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings).toHaveLength(1);
  });
});
