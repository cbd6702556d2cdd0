import { errorHandler } from "@svc/errors";
import { express4, listen, express4Version as version } from "@svc/test-utils";
import { describe, expect, it, onTestFinished } from "vitest";
import { idempotencyMiddleware as idempotency, MemoryStore } from "../src/index.js";

describe(`idempotency() on Express ${version}`, () => {
  it("a repeated POST with one Idempotency-Key runs the handler once and replays its response", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    let runs = 0;
    app.post("/orders", express4.json(), idempotency({ store: new MemoryStore() }), (req, res) => {
      runs++;
      res.status(201).json({ order: runs, item: (req.body as { item: string }).item });
    });
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

describe(`an end that throws on Express ${version} (idempotency)`, () => {
  // Express 4's res.status(code) takes any value: res.status(err.response?.status) with no status
  // makes res.json throw (node:http refuses the status code when it writes the header section), and
  // Express answers the thrown error with a 500. draft-ietf-httpapi-idempotency-key-header §2.7:
  // 409 is for a retry "while the original request is still being processed"; this one is done.
  it("res.status(undefined).json() → 500; the retry runs the handler again, not a 409 until maxLeaseMs", async () => {
    const app = express4();
    let runs = 0;
    app.post("/orders", express4.json(), idempotency({ store: new MemoryStore() }), (_req, res) => {
      runs++;
      const upstream: { status?: number } = {};
      if (runs === 1) res.status(upstream.status as number).json({ failed: true });
      else res.status(201).json({ order: runs });
    });
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
