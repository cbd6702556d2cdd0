import type { ServerResponse } from "node:http";
import { type Listening, listen } from "@svc/test-utils";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { idempotency } from "./idempotency.js";
import { MemoryStore } from "./memory-store.js";

// Middleware mounted app-wide before a route's idempotency() wraps res.end first, so its wrapper
// runs inside idempotency's: @svc/conditional sets ETag there. Holding the response until its
// record is stored must not take the header section out of its hands: the first response and
// its replay carry the same ETag.
let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** What conditional() does in its res.end: a header of the body, while the headers are not sent. */
function tagOnEnd(_req: express.Request, res: express.Response, next: express.NextFunction): void {
  const end = res.end as (this: ServerResponse, ...args: unknown[]) => ServerResponse;
  res.end = function taggedEnd(this: ServerResponse, ...args: unknown[]) {
    const body = args[0];
    if (!this.headersSent && (typeof body === "string" || body instanceof Uint8Array))
      this.setHeader("ETag", `"${Buffer.byteLength(body)}"`);
    return end.apply(this, args);
  } as express.Response["end"];
  next();
}

describe("wrappers of res.end inside idempotency()", () => {
  it("POST with an Idempotency-Key → the inner wrapper's header is on the response and on its replay", async () => {
    const app = express();
    app.use(tagOnEnd);
    let runs = 0;
    app.post("/orders", idempotency({ store: new MemoryStore() }), (_req, res) => {
      runs++;
      res.status(201).type("application/json").end('{"id":1}');
    });
    server = await listen(app);
    const send = (key?: string) =>
      fetch(`${server?.url}/orders`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(key ? { "idempotency-key": `"${key}"` } : {}) },
        body: "{}",
      });
    const plain = await send();
    expect(plain.headers.get("etag")).toBe('"8"');
    const first = await send("k1");
    expect(first.status).toBe(201);
    expect(await first.text()).toBe('{"id":1}');
    expect(first.headers.get("etag")).toBe('"8"');
    const replay = await send("k1");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.headers.get("etag")).toBe('"8"');
    expect(await replay.text()).toBe('{"id":1}');
    expect(runs).toBe(2);
  });
});
