import { errorHandler } from "@svc/errors";
import { express4, listen, express4Version as version } from "@svc/test-utils";
import { describe, expect, it, onTestFinished } from "vitest";
import { idempotency, MemoryStore } from "../src/index.js";

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
