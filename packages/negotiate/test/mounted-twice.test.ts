import { gunzipSync } from "node:zlib";
import { errorHandler } from "@svc/errors";
import { hal, halJson } from "@svc/hal";
import { type Listening, listen, rawRequest } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, negotiate } from "../src/index.js";

const raw = (url: string, headers: Record<string, string>) => rawRequest(url, "GET", headers);

const items = Array.from({ length: 300 }, (_, i) => ({ id: i, name: `Employee ${i}` }));

// negotiate() for the app and again for one route with its own representations, as halJson's
// documentation shows (`app.get(path, negotiate({ representations: [json, halJson, xml] }), ...)`).
// Each mount wrapped the response's removeHeader around the other's: the first removeHeader (the
// coder dropping Content-Length, a 304 dropping Content-Type) recursed until the stack overflowed,
// thrown where the headers are written, and the process went down.
describe("negotiate() mounted for the app and again for a route", () => {
  let server: Listening;
  beforeAll(async () => {
    const app = express();
    app.use(negotiate());
    // A middleware between the two that reads the response as it is ended (conditional() of
    // @svc/conditional computes the ETag and answers 304 there): it must see the headers unsent.
    app.use((_req, res, next) => {
      const end = res.end;
      res.end = function (this: typeof res, ...args: unknown[]) {
        if (!this.headersSent) this.setHeader("X-Seen-Before-Headers", "yes");
        return (end as (...a: unknown[]) => typeof res).apply(this, args);
      } as typeof res.end;
      next();
    });
    app.get("/employees", negotiate({ representations: [json, halJson] }), (_req, res) =>
      res.represent(hal({ items }).link("self", "/employees")),
    );
    // Express's own ETag and 304 (res.send removes Content-Type for it).
    app.get("/sent", negotiate({ representations: [json, halJson] }), (_req, res) => {
      res.json(hal({ items }).link("self", "/sent"));
    });
    app.use(errorHandler({ logger: { error() {} } }));
    server = await listen(app);
  });
  afterAll(async () => server.close());

  it("Accept-Encoding: gzip → 200, the body gzip-coded once", async () => {
    const res = await raw(`${server.url}/employees`, { "accept-encoding": "gzip" });
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe("gzip");
    const body = JSON.parse(gunzipSync(res.body).toString()) as { items: unknown[] };
    expect(body.items).toHaveLength(300);
    // The route's negotiate() codes nothing itself: the app's coding step, beneath the middleware
    // mounted after it, codes the body once that middleware has seen it.
    expect(res.headers["x-seen-before-headers"]).toBe("yes");
  });

  it("If-None-Match with the tag of that 200 → 304 keeping Vary: Accept-Encoding", async () => {
    const first = await raw(`${server.url}/sent`, { "accept-encoding": "gzip" });
    expect(first.status).toBe(200);
    const etag = first.headers.etag as string;
    const res = await raw(`${server.url}/sent`, { "accept-encoding": "gzip", "if-none-match": etag });
    expect(res.status).toBe(304);
    expect(res.headers.etag).toBe(etag);
    expect(String(res.headers.vary)).toContain("Accept-Encoding");
    // The server is still up.
    expect((await raw(`${server.url}/employees`, {})).status).toBe(200);
  });
});
