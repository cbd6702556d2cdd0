// #region readme-core
import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError } from "@svc/errors";
import { errorResponder } from "@svc/errors/node";
import { MemoryStore } from "@svc/idempotency";
import { idempotency } from "@svc/idempotency/node";
import { createPipeline, exchangeOf, reply } from "@svc/kernel";
import { pipelineRequest, writeResponse } from "@svc/kernel/node";

const pipeline = createPipeline(); // JSON; add coding, validators... as your service needs
const route = { idempotency: idempotency({ store: new MemoryStore(), required: ["/orders"] }) };
const sendError = errorResponder(); // the error record, on node:http
const MAX_BODY_BYTES = 1_048_576; // the most of a request body held in memory
let orders = 0;

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).byteLength;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk as Buffer); // past it: read on, keep nothing
    }
  } catch {
    return; // the client went away mid-body: no whole request to run, nobody to answer
  }
  if (size > MAX_BODY_BYTES) {
    // RFC 9110 §15.5.14: 413 Content Too Large, before any key is claimed.
    return sendError(HttpError.contentTooLarge("The request body is over 1 MiB"), req, res);
  }
  // The body as read is fingerprinted byte for byte.
  exchangeOf(req).body = { value: Buffer.concat(chunks) };
  const request = pipelineRequest(req, res);
  try {
    const value = await pipeline.run(
      request,
      pipeline.prepare(request, req.url ?? "/"),
      () => {
        // A thrown error is the handler's failure: the key is freed for a corrected retry.
        if (chunks.length === 0) throw new HttpError(400, "An order needs a body");
        orders += 1;
        return reply({ id: orders }, { status: 201, headers: { location: `/orders/${orders}` } });
      },
      route, // the key claimed before the handler runs, its response recorded before it is sent
    );
    await writeResponse(res, value, req.method ?? "GET");
  } catch (err) {
    sendError(err, req, res); // 400, 409, 422, 503, or the handler's own error
  }
}

// #endregion readme-core

// The test's own imports, below the README's code (imports are hoisted).
import { once } from "node:events";
import { connect } from "node:net";
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

  it("a client that resets the connection mid-body → handle settles without a rejection (Node.js ends the process on an unhandled one); the key stays free", async () => {
    const settled: Promise<void>[] = [];
    const own = await listen((req, res) => {
      settled.push(handle(req, res));
    });
    try {
      const socket = connect(Number(new URL(own.url).port), "127.0.0.1");
      await once(socket, "connect");
      socket.write(
        'POST /orders HTTP/1.1\r\nHost: x\r\nIdempotency-Key: "k-3"\r\nContent-Length: 100\r\n\r\n{"item":',
      );
      while (settled.length === 0) await new Promise((r) => setTimeout(r, 10));
      socket.destroy();
      await expect(settled[0]).resolves.toBeUndefined();
    } finally {
      await own.close();
    }
    const whole = await order('"k-3"', '{"item":"mug"}');
    expect(whole.status).toBe(201);
    await whole.arrayBuffer();
  });

  it("a body of MAX_BODY_BYTES + 1 → 413 (RFC 9110 §15.5.14) before any key is claimed; the same key with a small body then runs", async () => {
    const big = await order('"k-4"', "x".repeat(MAX_BODY_BYTES + 1));
    expect(big.status).toBe(413);
    await big.arrayBuffer();
    const small = await order('"k-4"', '{"item":"cup"}');
    expect(small.status).toBe(201);
    expect(small.headers.get("idempotent-replayed")).toBeNull();
    await small.arrayBuffer();
  });
});
