import { errorHandler } from "@svc/errors";
import { negotiate } from "@svc/negotiate";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conditional } from "./conditional.js";

// conditional() mounted before a compressing negotiate(): negotiate's coder would send the headers
// before conditional() saw the body, so a client accepting gzip got a 200 with no ETag, no
// Cache-Control, and a 200 in place of the 412 (RFC 9110 §13.1.1) or 304 (§13.1.2) its
// conditions call for, while the HEAD of the same resource carried an ETag (§9.3.2). Correct over
// small: such responses go uncoded, with their validators, and negotiate() warns once.
describe("conditional() mounted before negotiate() with compression", () => {
  let server: Listening;
  const warnings: string[] = [];
  const onWarning = (w: Error & { code?: string }) => {
    if (w.code === "SVC_NEGOTIATE_MOUNT_ORDER") warnings.push(w.message);
  };

  beforeAll(async () => {
    process.on("warning", onWarning);
    const app = express();
    app.use(conditional());
    app.use(negotiate({ compression: { threshold: 10 } }));
    app.get("/e", (_req, res) => res.represent({ name: "x".repeat(200) }));
    app.use(errorHandler());
    server = await listen(app);
  });

  afterAll(async () => {
    process.off("warning", onWarning);
    await server.close();
  });

  it('Accept-Encoding: gzip, If-Match: "stale" → 412, not a silent 200', async () => {
    const res = await fetch(`${server.url}/e`, {
      headers: { "Accept-Encoding": "gzip", "If-Match": '"stale"' },
    });
    expect(res.status).toBe(412);
  });

  it("Accept-Encoding: gzip → 200 uncoded with its ETag and Cache-Control; If-None-Match of it → 304", async () => {
    const res = await fetch(`${server.url}/e`, { headers: { "Accept-Encoding": "gzip" } });
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-encoding")).toBeNull();
    const etag = res.headers.get("etag");
    expect(etag).not.toBeNull();
    expect(res.headers.get("cache-control")).not.toBeNull();
    const again = await fetch(`${server.url}/e`, {
      headers: { "Accept-Encoding": "gzip", "If-None-Match": etag ?? "", "Cache-Control": "max-age=0" },
    });
    expect(again.status).toBe(304);
  });

  it("HEAD → the same validators as its GET (RFC 9110 §9.3.2); one warning for all of it", async () => {
    const get = await fetch(`${server.url}/e`, { headers: { "Accept-Encoding": "gzip" } });
    await get.arrayBuffer();
    const head = await fetch(`${server.url}/e`, { method: "HEAD", headers: { "Accept-Encoding": "gzip" } });
    expect(head.status).toBe(200);
    expect(head.headers.get("etag")).toBe(get.headers.get("etag"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/mount negotiate\(\) first/);
  });
});
