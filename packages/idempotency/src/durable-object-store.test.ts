import { subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { afterEach, describe, expect, it, vi } from "vitest";
import { namespace } from "../test/durable-object-fake.js";
import type { DurableObjectNamespaceLike } from "./durable-object.js";
import { DurableObjectStore } from "./durable-object-store.js";
import { IdempotencyObject, RECORD_CHUNK_CHARS } from "./idempotency-object.js";
import { StoreUnavailableError } from "./redis-store.js";

const created = {
  status: 201,
  headers: { location: "/orders/1", "content-type": "application/json" },
  body: new TextEncoder().encode('{"id":1}'),
};

afterEach(() => {
  vi.useRealTimers();
});

describe("DurableObjectStore: the store contract", () => {
  it("claim → claimed; again → in flight; complete → the response replayed, byte for byte", async () => {
    const store = new DurableObjectStore({ namespace: namespace().binding });
    const claim = await store.claim("u:POST:/orders:k", "fp", 60_000);
    expect(claim.outcome).toBe("claimed");
    if (claim.outcome !== "claimed") return;
    const again = await store.claim("u:POST:/orders:k", "fp", 60_000);
    expect(again).toMatchObject({ outcome: "in-flight", fingerprint: "fp" });
    expect(again.outcome === "in-flight" && again.leaseRemainingMs).toBeGreaterThan(59_000);
    expect(await store.complete("u:POST:/orders:k", claim.token, created, 86_400_000)).toBe(true);
    expect(await store.claim("u:POST:/orders:k", "other", 60_000)).toEqual({
      outcome: "completed",
      fingerprint: "fp",
      response: created,
    });
  });

  it("50 concurrent claims of one key → exactly one claimed", async () => {
    const store = new DurableObjectStore({ namespace: namespace().binding });
    const claims = await Promise.all(Array.from({ length: 50 }, () => store.claim("k", "fp", 60_000)));
    expect(claims.filter((c) => c.outcome === "claimed")).toHaveLength(1);
    expect(claims.filter((c) => c.outcome === "in-flight")).toHaveLength(49);
  });

  it("fencing: another token cannot complete, release or renew; release → the key may be claimed again", async () => {
    const store = new DurableObjectStore({ namespace: namespace().binding });
    const claim = await store.claim("k", "fp", 60_000);
    if (claim.outcome !== "claimed") throw new Error("not claimed");
    expect(await store.complete("k", "not-mine", created, 60_000)).toBe(false);
    expect(await store.release("k", "not-mine")).toBe(false);
    expect(await store.renew("k", "not-mine", 60_000)).toBe(false);
    expect(await store.release("k", claim.token)).toBe(true);
    expect((await store.claim("k", "fp", 60_000)).outcome).toBe("claimed");
    expect(await store.complete("k", claim.token, created, 60_000)).toBe(false);
  });

  it("a lease that ends → the retry claims; the stalled worker's complete is refused", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(1_000_000);
    const store = new DurableObjectStore({ namespace: namespace().binding });
    const stalled = await store.claim("k", "fp", 1000);
    if (stalled.outcome !== "claimed") throw new Error("not claimed");
    vi.setSystemTime(1_000_999);
    expect((await store.claim("k", "fp", 1000)).outcome).toBe("in-flight");
    expect(await store.renew("k", stalled.token, 2000)).toBe(true);
    vi.setSystemTime(1_002_998);
    expect((await store.claim("k", "fp", 1000)).outcome).toBe("in-flight");
    vi.setSystemTime(1_002_999);
    const retry = await store.claim("k", "fp", 1000);
    expect(retry.outcome).toBe("claimed");
    expect(await store.complete("k", stalled.token, created, 60_000)).toBe(false);
  });

  it("retention over → the alarm deletes the record; before it → the alarm is set again", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(1_000_000);
    const { binding, of } = namespace();
    const store = new DurableObjectStore({ namespace: binding, prefix: "" });
    const claim = await store.claim("k", "fp", 60_000);
    if (claim.outcome !== "claimed") throw new Error("not claimed");
    await store.complete("k", claim.token, created, 5000);
    const { object, storage } = of("k");
    expect(storage.alarm).toBe(1_005_000);
    vi.setSystemTime(1_004_000);
    await object.alarm();
    expect(storage.values.size).toBeGreaterThan(0);
    vi.setSystemTime(1_005_000);
    await object.alarm();
    expect(storage.values.size).toBe(0);
    expect((await store.claim("k", "fp", 60_000)).outcome).toBe("claimed");
  });
});

describe("DurableObjectStore: bounds", () => {
  it("record over maxRecordBytes → kept without its body, never released", async () => {
    const store = new DurableObjectStore({ namespace: namespace().binding, maxRecordBytes: 2048 });
    const claim = await store.claim("r", "fp", 60_000);
    if (claim.outcome !== "claimed") throw new Error("claim failed");
    const body = new Uint8Array(4096).fill(7);
    const response = { status: 201, headers: { location: "/r/1", "content-type": "text/plain" }, body };
    expect(await store.complete("r", claim.token, response, 60_000)).toBe(true);
    expect(await store.claim("r", "fp", 60_000)).toEqual({
      outcome: "completed",
      fingerprint: "fp",
      response: { status: 201, headers: { location: "/r/1" }, body: new Uint8Array(), bodyOmitted: true },
    });
  });

  it("a 1 MiB body under maxRecordBytes 2 MiB → stored in values of at most 32 Ki characters, replayed whole after a restart", async () => {
    const { binding, of } = namespace();
    const store = new DurableObjectStore({ namespace: binding, prefix: "", maxRecordBytes: 2_097_152 });
    const body = new Uint8Array(1_048_576).map((_, i) => (i * 31) % 251);
    const claim = await store.claim("big", "fp", 60_000);
    if (claim.outcome !== "claimed") throw new Error("claim failed");
    expect(await store.complete("big", claim.token, { status: 200, headers: {}, body }, 60_000)).toBe(true);
    const { storage } = of("big");
    const values = [...storage.values.values()].filter((v) => typeof v === "string") as string[];
    expect(values.length).toBeGreaterThan(40);
    expect(Math.max(...values.map((v) => v.length))).toBeLessThanOrEqual(RECORD_CHUNK_CHARS);
    const restarted = new IdempotencyObject({ storage, blockConcurrencyWhile: (callback) => callback() });
    const answer = await restarted.fetch(
      new Request("https://x.invalid/", {
        method: "POST",
        body: JSON.stringify({ op: "claim", fingerprint: "fp", leaseMs: 1000, token: "t" }),
      }),
    );
    expect(((await answer.json()) as { outcome: string }).outcome).toBe("completed");
    const replay = await store.claim("big", "fp", 60_000);
    if (replay.outcome !== "completed") throw new Error("not replayed");
    expect(Buffer.from(replay.response.body).equals(Buffer.from(body))).toBe(true);
  });
});

describe("DurableObjectStore: failures are StoreUnavailableError, as a Redis outage", () => {
  it("a storage write that fails → StoreUnavailableError; the record from before is kept", async () => {
    const { binding, of } = namespace();
    const store = new DurableObjectStore({ namespace: binding, prefix: "" });
    const claim = await store.claim("k", "fp", 60_000);
    if (claim.outcome !== "claimed") throw new Error("not claimed");
    of("k").storage.failWrites = true;
    await expect(store.complete("k", claim.token, created, 60_000)).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    of("k").storage.failWrites = false;
    expect((await store.claim("k", "fp", 60_000)).outcome).toBe("in-flight");
  });

  it("an object that throws, or never answers → StoreUnavailableError", async () => {
    const throwing: DurableObjectNamespaceLike = {
      idFromName: (name) => ({ toString: () => name }),
      get: () => ({
        fetch: async () => {
          throw new Error("Durable Object is overloaded");
        },
      }),
    };
    await expect(new DurableObjectStore({ namespace: throwing }).claim("k", "fp", 1000)).rejects.toThrow(
      expect.objectContaining({
        name: "StoreUnavailableError",
        message: expect.stringMatching(/overloaded/),
      }),
    );
    const silent: DurableObjectNamespaceLike = {
      idFromName: (name) => ({ toString: () => name }),
      get: () => ({ fetch: () => new Promise<Response>(() => {}) }),
    };
    await expect(
      new DurableObjectStore({ namespace: silent, timeoutMs: 5 }).claim("k", "fp", 1000),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it("a call that is not one → 400 from the object", async () => {
    const bad = await namespace()
      .of("x")
      .object.fetch(new Request("https://x.invalid/", { method: "POST", body: '{"op":"claim"}' }));
    expect(bad.status).toBe(400);
  });
});

describe("DurableObjectStore: svc:idempotency:store", () => {
  it("claim, renew, complete, release, and a failing call → traced with the object's name", async () => {
    const { binding, of } = namespace();
    const store = new DurableObjectStore({ namespace: binding, prefix: "orders:" });
    const ends: Record<string, unknown>[] = [];
    const listener = (context: unknown) => ends.push({ ...(context as object) });
    subscribeDiagnostics("tracing:svc:idempotency:store:asyncEnd", listener);
    try {
      const claim = await store.claim("k", "fp", 60_000);
      if (claim.outcome !== "claimed") throw new Error("not claimed");
      await store.renew("k", claim.token, 60_000);
      of("orders:k").storage.failWrites = true;
      await store.complete("k", claim.token, created, 60_000).catch(() => {});
      of("orders:k").storage.failWrites = false;
      await store.release("k", claim.token);
    } finally {
      unsubscribeDiagnostics("tracing:svc:idempotency:store:asyncEnd", listener);
    }
    const key = "orders:k";
    expect(ends).toEqual([
      {
        store: "durable-object",
        operation: "claim",
        key,
        result: expect.objectContaining({ outcome: "claimed" }),
      },
      { store: "durable-object", operation: "renew", key, result: true },
      { store: "durable-object", operation: "complete", key, error: expect.any(StoreUnavailableError) },
      { store: "durable-object", operation: "release", key, result: true },
    ]);
  });
});

describe("DurableObjectStore options", () => {
  const { binding } = namespace();
  it.each([
    [undefined, "ERR_SVC_IDEMPOTENCY_OPTIONS"],
    [{}, "ERR_SVC_IDEMPOTENCY_NAMESPACE"],
    [{ namespace: { idFromName() {} } }, "ERR_SVC_IDEMPOTENCY_NAMESPACE"],
    [{ namespace: binding, prefix: 5 }, "ERR_SVC_IDEMPOTENCY_PREFIX"],
    [{ namespace: binding, timeoutMs: -1 }, "ERR_SVC_IDEMPOTENCY_TIMEOUT_MS"],
    [{ namespace: binding, maxRecordBytes: 1023 }, "ERR_SVC_IDEMPOTENCY_MAX_RECORD_BYTES"],
    [{ namespace: binding, maxRecordBytes: 2_097_153 }, "ERR_SVC_IDEMPOTENCY_MAX_RECORD_BYTES"],
    [{ namespace: binding, maxRecordByte: 2048 }, "ERR_SVC_IDEMPOTENCY_UNKNOWN_OPTION"],
  ])("%o → %s at construction", (options, code) => {
    expect(() => new DurableObjectStore(options as never)).toThrow(expect.objectContaining({ code }));
  });
});
