import { withErrors } from "@svc/errors/fetch";
import { afterEach, describe, expect, it, vi } from "vitest";
import type {
  DurableObjectNamespaceLike,
  DurableObjectStateLike,
  DurableObjectStorageLike,
} from "./durable-object.js";
import { DurableObjectStore } from "./durable-object-store.js";
import { rateLimit } from "./fetch.js";
import { decideKey, type KeyState, refundKey } from "./key-state.js";
import { createRateLimiter } from "./limiter.js";
import { MemoryStore } from "./memory-store.js";
import { RateLimitObject } from "./rate-limit-object.js";
import { ALGORITHMS, type RateLimitPolicy } from "./types.js";

// The store and its object without workerd: the object over an in-memory storage with the
// Durable Object storage API's shape, reached through a namespace that calls its `fetch`. What
// workerd adds (one object per name worldwide, input and output gates, alarms that fire) is
// tested in apps/conformance (durable-objects.test.ts).

/** Storage as a Map, with an alarm slot and a switch that makes every write fail. */
class FakeStorage implements DurableObjectStorageLike {
  readonly values = new Map<string, unknown>();
  alarm: number | null = null;
  failWrites = false;
  async get<T>(key: string): Promise<T | undefined> {
    return structuredClone(this.values.get(key)) as T | undefined;
  }
  async put<T>(key: string, value: T): Promise<void> {
    if (this.failWrites) throw new Error("storage write failed");
    this.values.set(key, structuredClone(value));
  }
  async deleteAll(): Promise<void> {
    if (this.failWrites) throw new Error("storage write failed");
    this.values.clear();
  }
  async getAlarm(): Promise<number | null> {
    return this.alarm;
  }
  async setAlarm(at: number | Date): Promise<void> {
    this.alarm = typeof at === "number" ? at : at.getTime();
  }
}

/** A namespace of {@link RateLimitObject}s, one per name, each over a {@link FakeStorage}. */
function namespace() {
  const objects = new Map<string, { object: RateLimitObject; storage: FakeStorage }>();
  const of = (name: string) => {
    let found = objects.get(name);
    if (found === undefined) {
      const storage = new FakeStorage();
      const state: DurableObjectStateLike = { storage, blockConcurrencyWhile: (callback) => callback() };
      found = { object: new RateLimitObject(state), storage };
      objects.set(name, found);
    }
    return found;
  };
  const binding: DurableObjectNamespaceLike = {
    idFromName: (name) => ({ toString: () => name }),
    get: (id) => ({ fetch: (input, init) => of(id.toString()).object.fetch(new Request(input, init)) }),
  };
  return { binding, of, objects };
}

/** A small seeded generator, so a failing sequence is the same on every run. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1_664_525 + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("decideKey: the Durable Object's arithmetic is the MemoryStore's", () => {
  it.each(ALGORITHMS)("%s: 2000 random requests and refunds → the same decisions", (algorithm) => {
    const policy: RateLimitPolicy = {
      algorithm,
      limit: 7,
      windowMs: 1000,
      burst: algorithm === "gcra" ? 10 : 7,
    };
    const next = random(algorithm.length);
    const memory = new MemoryStore();
    let state: KeyState | undefined;
    let expiresAt = 0;
    let now = 5_000_000;
    for (let i = 0; i < 2000; i++) {
      now += Math.floor(next() * (next() < 0.1 ? 2500 : 120));
      const cost = Math.floor(next() * 3);
      const live = state !== undefined && expiresAt > now ? state : undefined;
      const step = decideKey(live, policy, cost, now);
      expect(step.decision, `request ${i} at ${now}`).toEqual(memory.consume("k", cost, policy, now));
      state = step.state;
      expiresAt = step.expiresAt;
      if (step.decision.allowed && next() < 0.2) {
        state = refundKey(state, policy, cost, step.decision.now);
        memory.refund("k", cost, policy, step.decision);
      }
    }
  });
});

describe("DurableObjectStore", () => {
  const fixed: RateLimitPolicy = { algorithm: "fixed-window", limit: 10, windowMs: 60_000, burst: 10 };

  it("limit 10, 50 concurrent decisions on one key → exactly 10 allowed", async () => {
    const { binding } = namespace();
    const limiter = createRateLimiter({
      limit: 10,
      windowMs: 60_000,
      store: new DurableObjectStore({ namespace: binding }),
    });
    const decisions = await Promise.all(Array.from({ length: 50 }, () => limiter.consume("client")));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    expect((await limiter.consume("other")).allowed).toBe(true);
  });

  it("blockDurationMs: gcra limit 10 per s, 30 concurrent decisions → exactly 10 allowed; a unit back later the key is still blocked, its block in an object of its own", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(1_000_000);
    const { binding, objects } = namespace();
    const limiter = createRateLimiter({
      algorithm: "gcra",
      limit: 10,
      windowMs: 1000,
      blockDurationMs: 60_000,
      store: new DurableObjectStore({ namespace: binding }),
    });
    const decisions = await Promise.all(Array.from({ length: 30 }, () => limiter.consume("client")));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    // GCRA gives a unit back every 100 ms: without the block, the key would be admitted again.
    vi.setSystemTime(1_001_000);
    const later = await limiter.consume("client");
    expect(later.allowed).toBe(false);
    expect(later.retryAfterMs).toBeGreaterThan(58_000);
    expect([...objects.keys()].some((name) => name.includes("sha256:b:"))).toBe(true);
    vi.setSystemTime(1_061_000);
    expect((await limiter.consume("client")).allowed).toBe(true);
  });

  it("one object per key, named prefix + key", async () => {
    const { binding, objects } = namespace();
    const store = new DurableObjectStore({ namespace: binding, prefix: "api:" });
    await store.consume("a", 1, fixed);
    await store.consume("b", 1, fixed);
    expect([...objects.keys()]).toEqual(["api:a", "api:b"]);
  });

  it("reset → the full quota again; refund → the units back", async () => {
    const { binding } = namespace();
    const store = new DurableObjectStore({ namespace: binding });
    for (let i = 0; i < 10; i++) await store.consume("k", 1, fixed);
    expect((await store.consume("k", 1, fixed)).allowed).toBe(false);
    await store.reset("k");
    const first = await store.consume("k", 4, fixed);
    expect(first.remaining).toBe(6);
    await store.refund("k", 4, fixed, first);
    expect((await store.consume("k", 1, fixed)).remaining).toBe(9);
  });

  it("the object restarted (evicted from memory) → it reads the count back from storage", async () => {
    const { binding, of } = namespace();
    const store = new DurableObjectStore({ namespace: binding });
    for (let i = 0; i < 10; i++) await store.consume("k", 1, fixed);
    const { storage } = of("rl:k");
    const restarted = new RateLimitObject({ storage, blockConcurrencyWhile: (callback) => callback() });
    const answer = await restarted.fetch(
      new Request("https://x.invalid/", {
        method: "POST",
        body: JSON.stringify({ op: "consume", policy: fixed, cost: 1 }),
      }),
    );
    expect(await answer.json()).toMatchObject({ allowed: false, remaining: 0 });
  });

  it("an alarm after the window → the object's storage is deleted; before it → set again for the window's end", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(1_000_000);
    const { binding, of } = namespace();
    const store = new DurableObjectStore({ namespace: binding });
    await store.consume("k", 1, fixed);
    const { object, storage } = of("rl:k");
    expect(storage.alarm).toBe(1_020_000);
    expect(storage.values.size).toBe(1);
    vi.setSystemTime(1_010_000);
    await object.alarm();
    expect(storage.values.size).toBe(1);
    expect(storage.alarm).toBe(1_020_000);
    vi.setSystemTime(1_020_000);
    await object.alarm();
    expect(storage.values.size).toBe(0);
    expect((await store.consume("k", 1, fixed)).remaining).toBe(9);
  });

  it("a storage write that fails → the decision rejects; the count from before is kept", async () => {
    const { binding, of } = namespace();
    const store = new DurableObjectStore({ namespace: binding });
    await store.consume("k", 3, fixed);
    of("rl:k").storage.failWrites = true;
    await expect(store.consume("k", 1, fixed)).rejects.toThrow(/answered 500|storage write failed/);
    of("rl:k").storage.failWrites = false;
    expect((await store.consume("k", 1, fixed)).remaining).toBe(6);
  });

  it("an answer that is not a call → 400 from the object, a rejection from the store", async () => {
    const { of } = namespace();
    const bad = await of("x").object.fetch(new Request("https://x.invalid/", { method: "POST", body: "{}" }));
    expect(bad.status).toBe(400);
    const broken: DurableObjectNamespaceLike = {
      idFromName: (name) => ({ toString: () => name }),
      get: () => ({ fetch: async () => Response.json({ allowed: "yes" }) }),
    };
    await expect(new DurableObjectStore({ namespace: broken }).consume("k", 1, fixed)).rejects.toThrow(
      /unexpected answer/,
    );
  });

  it("an object that never answers → rejects after timeoutMs", async () => {
    const silent: DurableObjectNamespaceLike = {
      idFromName: (name) => ({ toString: () => name }),
      get: () => ({ fetch: () => new Promise<Response>(() => {}) }),
    };
    await expect(
      new DurableObjectStore({ namespace: silent, timeoutMs: 5 }).consume("k", 1, fixed),
    ).rejects.toThrow(/did not answer within 5 ms/);
  });
});

describe("DurableObjectStore: a store failure is the limiter's failMode, as a Redis outage", () => {
  const unreachable: DurableObjectNamespaceLike = {
    idFromName: (name) => ({ toString: () => name }),
    get: () => ({
      fetch: async () => {
        throw new Error("Durable Object is overloaded");
      },
    }),
  };
  const serve = (failMode: "open" | "closed") =>
    withErrors(
      rateLimit({
        limit: 1,
        windowMs: 60_000,
        failMode,
        logger: { warn() {} },
        store: new DurableObjectStore({ namespace: unreachable }),
      }).wrap(
        () => new Response("ok"),
        () => ({ address: "203.0.113.7" }),
      ),
      { logger: { error() {} } },
    );

  it('failMode "closed" → 503 with Retry-After', async () => {
    const response = await serve("closed")(new Request("http://svc.example/"));
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).not.toBeNull();
  });

  it('failMode "open" → the request passes', async () => {
    const response = await serve("open")(new Request("http://svc.example/"));
    expect(response.status).toBe(200);
  });
});

describe("DurableObjectStore options", () => {
  const { binding } = namespace();
  it.each([
    [undefined, "ERR_SVC_RATELIMIT_OPTIONS"],
    [{}, "ERR_SVC_RATELIMIT_NAMESPACE"],
    [{ namespace: undefined }, "ERR_SVC_RATELIMIT_NAMESPACE"],
    [{ namespace: { get() {} } }, "ERR_SVC_RATELIMIT_NAMESPACE"],
    [{ namespace: binding, prefix: 1 }, "ERR_SVC_RATELIMIT_PREFIX"],
    [{ namespace: binding, timeoutMs: 0 }, "ERR_SVC_RATELIMIT_TIMEOUT_MS"],
    [{ namespace: binding, timeoutMs: 2 ** 31 }, "ERR_SVC_RATELIMIT_TIMEOUT_MS"],
    [{ namespace: binding, timeout: 5 }, "ERR_SVC_RATELIMIT_UNKNOWN_OPTION"],
  ])("%o → %s at construction", (options, code) => {
    expect(() => new DurableObjectStore(options as never)).toThrow(expect.objectContaining({ code }));
  });

  it("namespace missing → the message names the binding and the class", () => {
    expect(() => new DurableObjectStore({} as never)).toThrow(
      /namespace must be a Durable Object namespace binding.*RateLimitObject/,
    );
  });
});
