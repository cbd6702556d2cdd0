import { MemoryStore } from "@svc/idempotency";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../src/config.js";
import { client, problemsOf, type Started, sqlite } from "./harness.js";

/**
 * IDEMPOTENCY_LEASE_SECONDS: how long a key's claim lasts, so how long a key stays blocked after
 * the instance running its request died (draft-ietf-httpapi-idempotency-key-header §2.6: a retry
 * meanwhile gets 409).
 */

let s: Started | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await s?.stop();
  s = undefined;
});

describe("IDEMPOTENCY_LEASE_SECONDS", () => {
  it("defaults to 60 s, the middleware's default; a whole number from 1 to 86400 is taken", () => {
    expect(loadConfig({}).idempotencyLeaseSeconds).toBe(60);
    expect(loadConfig({ IDEMPOTENCY_LEASE_SECONDS: "5" }).idempotencyLeaseSeconds).toBe(5);
    expect(loadConfig({ IDEMPOTENCY_LEASE_SECONDS: " 86400 " }).idempotencyLeaseSeconds).toBe(86_400);
    expect(loadConfig({ IDEMPOTENCY_LEASE_SECONDS: "" }).idempotencyLeaseSeconds).toBe(60);
  });

  it.each(["0", "86401", "1.5", "-5", "5s", "soon"])(
    "%s → refused at start-up, naming the variable",
    (value) => {
      const problems = problemsOf({ IDEMPOTENCY_LEASE_SECONDS: value });
      expect(problems).toEqual([
        `IDEMPOTENCY_LEASE_SECONDS must be a whole number from 1 to 86400 (got "${value}")`,
      ]);
    },
  );

  it.each([
    [{}, 60_000],
    [{ IDEMPOTENCY_LEASE_SECONDS: "5" }, 5000],
  ])("%j → a keyed POST claims its key for %i ms", async (env, leaseMs) => {
    const claim = vi.spyOn(MemoryStore.prototype, "claim");
    s = await sqlite.start(env);
    const api = client(s.url);
    const res = await api("/transfers", {
      method: "POST",
      headers: { "idempotency-key": '"lease-1"', "content-type": "application/json" },
      body: JSON.stringify({ fromAccountId: 3, toAccountId: 4, amount: 1 }),
    });
    expect(res.status).toBe(202);
    expect(claim).toHaveBeenCalledTimes(1);
    expect(claim.mock.calls[0]?.[2]).toBe(leaseMs);
  });
});
