import { errorHandler } from "@svc/errors/express";
import { createPipeline, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { express4, listen, express4Version as version } from "@svc/test-utils";
import { describe, expect, it, onTestFinished } from "vitest";
import { idempotency } from "../src/express.js";
import { MemoryStore } from "../src/index.js";

const svc = expressAdapter(createPipeline());

describe(`idempotency() on Express ${version}`, () => {
  it("a repeated POST with one Idempotency-Key runs the handler once and replays its response", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    let runs = 0;
    app.post(
      "/orders",
      express4.json(),
      svc.handle(
        (req: import("node:http").IncomingMessage & { body?: unknown }) => {
          runs++;
          return reply({ order: runs, item: (req.body as { item: string }).item }, { status: 201 });
        },
        { idempotency: idempotency({ store: new MemoryStore() }) },
      ),
    );
    app.use(errorHandler({ logger: { error() {} } }));
    const { url, close } = await listen(app);
    onTestFinished(close);
    const post = () =>
      fetch(`${url}/orders`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Idempotency-Key": '"order-1"' },
        body: JSON.stringify({ item: "book" }),
      });
    const first = await post();
    const second = await post();
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(await second.json()).toEqual(await first.json());
    expect(runs).toBe(1);
  });
});

describe(`a reply that throws on Express ${version} (idempotency)`, () => {
  // A status taken from elsewhere (err.response?.status) that is no final status: reply() refuses
  // it, the handler throws, and the error handler answers a 500. draft-ietf-httpapi-idempotency-key-header §2.7:
  // 409 is for a retry "while the original request is still being processed"; this one is done.
  it("reply(data, { status: 1000 }) (an upstream status passed on) → 500; the retry runs the handler again, not a 409 until maxLeaseMs", async () => {
    const app = express4();
    let runs = 0;
    app.post(
      "/orders",
      express4.json(),
      svc.handle(
        () => {
          runs++;
          const upstream = { status: 1000 };
          if (runs === 1) return reply({ failed: true }, { status: upstream.status });
          return reply({ order: runs }, { status: 201 });
        },
        { idempotency: idempotency({ store: new MemoryStore() }) },
      ),
    );
    app.use(errorHandler({ logger: { error() {} } }));
    const { url, close } = await listen(app);
    onTestFinished(close);
    const post = () =>
      fetch(`${url}/orders`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Idempotency-Key": '"order-thrown"' },
        body: JSON.stringify({ item: "book" }),
      });
    const first = await post();
    expect(first.status).toBe(500);
    await first.text();
    const retry = await post();
    expect(retry.status).toBe(201);
    expect(await retry.json()).toEqual({ order: 2 });
    expect(runs).toBe(2);
  });
});
