// #region readme-core
import type { IncomingMessage, ServerResponse } from "node:http";
import { errorHandler } from "@svc/errors";
import { createIdempotency, MemoryStore, writeReplay } from "@svc/idempotency";

const idempotency = createIdempotency({ store: new MemoryStore(), required: ["/orders"] });
const sendError = errorHandler(); // the error record, in plain node:http too
let orders = 0;

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const decision = await idempotency.begin({
    method: req.method,
    target: req.url ?? "/",
    headers: req.headers,
    body: Buffer.concat(chunks), // fingerprinted byte for byte
  });
  if (decision.outcome === "error") return sendError(decision.error, req, res, () => {}); // 400, 409, 422, 503
  if (decision.outcome === "replay") return writeReplay(res, decision.response);
  if (chunks.length === 0) {
    // Validation failed before any work: free the key for a corrected retry.
    if (decision.outcome === "claimed") await idempotency.release(decision.claim);
    res.writeHead(400).end();
    return;
  }
  // "claimed" (or "pass", for a GET): run the operation.
  const body = Buffer.from(JSON.stringify({ id: ++orders }));
  const headers = { "content-type": "application/json", location: `/orders/${orders}` };
  // Stored before it is sent: a client retrying as soon as it has the response gets the replay.
  if (decision.outcome === "claimed") {
    await idempotency.complete(decision.claim, { status: 201, headers, body }, true);
  }
  res.writeHead(201, headers).end(body);
}

// #endregion readme-core

// The test's own imports, below the README's code (imports are hoisted).
import { assertReadmeShows, type Listening, listen, readmeRegion } from "@svc/test-utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let server: Listening;
beforeAll(async () => {
  server = await listen(handle);
});
afterAll(() => server.close());

const order = (key: string | undefined, body: string) =>
  fetch(`${server.url}/orders`, {
    method: "POST",
    headers: key === undefined ? {} : { "idempotency-key": key },
    body,
  });

describe("README: the core from plain node:http", () => {
  it("the README shows exactly the code this test runs", () => {
    expect(() =>
      assertReadmeShows(import.meta.url, readmeRegion(import.meta.url), { whole: false }),
    ).not.toThrow();
  });

  it("same key twice → one order, the retry replayed; same key, other body → 422; no key → 400", async () => {
    const first = await order('"k-1"', '{"item":"book"}');
    expect(first.status).toBe(201);
    expect(first.headers.get("location")).toBe("/orders/1");
    const firstBody = await first.text();

    const again = await order('"k-1"', '{"item":"book"}');
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe("/orders/1");
    expect(await again.text()).toBe(firstBody);

    const other = await order('"k-1"', '{"item":"pen"}');
    expect(other.status).toBe(422);
    expect(((await other.json()) as { message: string }).message).toMatch(/different request/);

    const none = await order(undefined, '{"item":"pen"}');
    expect(none.status).toBe(400);
    await none.arrayBuffer();
    expect(orders).toBe(1);
  });

  it("a request that failed validation is released: the same key with a body then runs", async () => {
    const empty = await order('"k-2"', "");
    expect(empty.status).toBe(400);
    await empty.arrayBuffer();
    const fixed = await order('"k-2"', '{"item":"cup"}');
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get("idempotent-replayed")).toBeNull();
    await fixed.arrayBuffer();
  });
});
