import { getEventListeners } from "node:events";
import { describe, expect, it, vi } from "vitest";
import { createIdempotency } from "./core.js";
import { MemoryStore } from "./memory-store.js";

const post = (key: string, body: unknown = { a: 1 }) => ({
  method: "POST",
  target: "/orders",
  headers: { "idempotency-key": key },
  body,
});

describe("createIdempotency (the core)", () => {
  it("claim, complete, then the same request replays; a body over maxStoredBytes is left out", async () => {
    const warnings: string[] = [];
    const core = createIdempotency({
      maxStoredBytes: 4,
      logger: { warn: (_o, m) => warnings.push(m ?? "") },
    });
    const first = await core.begin(post("k"));
    if (first.outcome !== "claimed") throw new Error(first.outcome);
    const headers = { location: "/orders/1", "content-type": "text/plain", "set-cookie": "s=1" };
    await core.complete(first.claim, { status: 201, headers, body: Buffer.from("12345") }, true);
    const again = await core.begin(post("k"));
    expect(again).toMatchObject({
      outcome: "replay",
      response: { status: 201, headers: { location: "/orders/1" }, bodyOmitted: true },
    });
    expect(warnings.some((w) => w.includes("maxStoredBytes"))).toBe(true);
  });

  it("scope(request) and a required predicate get the request passed to begin", async () => {
    const core = createIdempotency<{ user: string }>({
      scope: (req) => req.user,
      required: (_path, req) => req.user === "strict",
    });
    const missing = await core.begin({
      method: "POST",
      target: "/x",
      headers: {},
      request: { user: "strict" },
    });
    expect(missing).toMatchObject({ outcome: "error", error: { status: 400 } });
    expect(await core.begin({ method: "POST", target: "/x", headers: {}, request: { user: "lax" } })).toEqual(
      {
        outcome: "pass",
      },
    );
    const a = await core.begin({ ...post("k"), request: { user: "a" } });
    const b = await core.begin({ ...post("k"), request: { user: "b" } });
    expect([a.outcome, b.outcome]).toEqual(["claimed", "claimed"]);
  });

  it("release frees the key; abandon leaves it in flight (409) until the lease ends", async () => {
    let clock = 1_000_000;
    const core = createIdempotency({ store: new MemoryStore({ now: () => clock }), leaseMs: 50 });
    const first = await core.begin(post("r"));
    if (first.outcome !== "claimed") throw new Error(first.outcome);
    await core.release(first.claim);
    const second = await core.begin(post("r"));
    if (second.outcome !== "claimed") throw new Error(second.outcome);
    core.abandon(second.claim);
    expect(await core.begin(post("r"))).toMatchObject({ outcome: "error", error: { status: 409 } });
    clock += 49;
    expect(await core.begin(post("r"))).toMatchObject({ outcome: "error", error: { status: 409 } });
    clock += 1;
    expect((await core.begin(post("r"))).outcome).toBe("claimed");
  });

  it("a claim not made by this core → TypeError; GET is not guarded", async () => {
    const core = createIdempotency({ store: new MemoryStore() });
    expect(() => core.release({ key: "k", token: "t" })).toThrow(TypeError);
    expect(core.guards("get")).toBe(false);
    expect(core.guards("post")).toBe(true);
  });

  it("leaseMs of 81 days: renewal waits a third of the lease capped at the longest setTimeout, never every 1 ms", async () => {
    let renewals = 0;
    class Counting extends MemoryStore {
      override renew(key: string, token: string, leaseMs: number): Promise<boolean> {
        renewals++;
        return super.renew(key, token, leaseMs);
      }
    }
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      // leaseMs / 3 is past 2^31 - 1 ms, which Node.js turns into a 1 ms interval.
      const core = createIdempotency({ store: new Counting(), leaseMs: 7_000_000_000 });
      const first = await core.begin(post("long-lease"));
      if (first.outcome !== "claimed") throw new Error(first.outcome);
      // Fifty event-loop turns of at least 1 ms each: a 1 ms interval renews on (nearly) every one.
      for (let i = 0; i < 50; i++) await new Promise((resolve) => setTimeout(resolve, 1));
      await core.release(first.claim);
      expect(renewals).toBe(0);
      expect(warnings).not.toContain("TimeoutOverflowWarning");
    } finally {
      process.off("warning", onWarning);
    }
  });

  it.each([
    ["aborted while waiting", true],
    ["not aborted", false],
  ])(
    "begin with a signal (%s) while a duplicate waits → 409, no abort listener left",
    async (_name, abort) => {
      let claims = 0;
      class Counting extends MemoryStore {
        override claim(...args: Parameters<MemoryStore["claim"]>) {
          claims++;
          return super.claim(...args);
        }
      }
      // Aborted: a wait far longer than the test, so only the abort can end it. Not aborted:
      // the 409 comes when waitMs is over, after the store was polled more than once.
      const core = createIdempotency({ store: new Counting(), waitMs: abort ? 600_000 : 300 });
      const attempt = { method: "POST", target: "/orders", headers: { "idempotency-key": '"k"' }, body: {} };
      expect((await core.begin(attempt)).outcome).toBe("claimed");
      const controller = new AbortController();
      const waiting = core.begin({ ...attempt, signal: controller.signal });
      if (abort) {
        await vi.waitFor(() => expect(claims).toBeGreaterThanOrEqual(3), { timeout: 10_000, interval: 5 });
        controller.abort();
      }
      const decision = await waiting;
      expect(decision.outcome === "error" && decision.error.status).toBe(409);
      expect(claims).toBeGreaterThanOrEqual(abort ? 3 : 2);
      expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    },
  );
});
