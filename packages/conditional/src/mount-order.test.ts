import { errorHandler } from "@svc/errors";
import { negotiate } from "@svc/negotiate";
import { type Listening, listen } from "@svc/test-utils";
import express, { type ErrorRequestHandler } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conditional } from "./conditional.js";

// conditional() mounted before a compressing negotiate(): negotiate's coder sends the headers
// before conditional() sees the body, so a client accepting gzip got a 200 with no ETag, no
// Cache-Control, and a 200 in place of the 412 (RFC 9110 §13.1.1) or 304 (§13.1.2) its
// conditions call for, while the HEAD of the same resource carried an ETag (§9.3.2). The
// combination must fail loudly, never answer silently wrong.
describe("conditional() mounted before negotiate() with compression", () => {
  let server: Listening;
  const codes: unknown[] = [];

  beforeAll(async () => {
    const app = express();
    app.use(conditional());
    app.use(negotiate({ compression: { threshold: 10 } }));
    app.get("/e", (_req, res) => res.represent({ name: "x".repeat(200) }));
    const noteCode: ErrorRequestHandler = (err, _req, _res, next) => {
      codes.push((err as { code?: unknown }).code);
      next(err);
    };
    app.use(noteCode);
    app.use(errorHandler());
    server = await listen(app);
  });

  afterAll(async () => {
    await server.close();
  });

  it('Accept-Encoding: gzip, If-Match: "stale" → not a silent 200: an error naming the order', async () => {
    const res = await fetch(`${server.url}/e`, {
      headers: { "Accept-Encoding": "gzip", "If-Match": '"stale"' },
    });
    expect(res.status).toBe(500);
    expect(codes.at(-1)).toBe("ERR_SVC_NEGOTIATE_MOUNT_ORDER");
  });

  it("Accept-Encoding: identity → the same error (not only for clients that compress)", async () => {
    const res = await fetch(`${server.url}/e`, { headers: { "Accept-Encoding": "identity" } });
    expect(res.status).toBe(500);
    expect(codes.at(-1)).toBe("ERR_SVC_NEGOTIATE_MOUNT_ORDER");
  });

  it("HEAD → the same error as its GET (RFC 9110 §9.3.2)", async () => {
    const res = await fetch(`${server.url}/e`, { method: "HEAD", headers: { "Accept-Encoding": "gzip" } });
    expect(res.status).toBe(500);
  });
});
