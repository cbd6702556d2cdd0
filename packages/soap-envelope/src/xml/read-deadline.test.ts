import { afterEach, describe, expect, it, vi } from "vitest";
import { DeadlineQueue } from "./read-deadline.js";

// Where a timer is a plain number (Cloudflare Workers before their Node.js timers, browsers), it
// has no unref(). Here setInterval answers the number Node's own timer converts to, which
// clearInterval takes back, as such a runtime's would.

describe("DeadlineQueue where setInterval answers a number", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("a read of 20 ms never ended → added without a throw, expired by the sweep", async () => {
    const nodeSetInterval = globalThis.setInterval;
    vi.stubGlobal("setInterval", (handler: () => void, ms?: number) => Number(nodeSetInterval(handler, ms)));
    const queue = new DeadlineQueue(20);
    let expired = false;
    expect(() =>
      queue.add(() => {
        expired = true;
      }),
    ).not.toThrow();
    await vi.waitFor(() => expect(expired).toBe(true), { timeout: 5000 });
  });
});
