import * as diagnostics_channel from "node:diagnostics_channel";
import {
  type RequestView,
  recordAuthentication,
  subscribeDiagnostics,
  unsubscribeDiagnostics,
} from "@svc/kernel";
import { afterEach, describe, expect, it, vi } from "vitest";
import { decisions } from "./diagnostics.js";
import { type RateLimitGateOptions, rateLimitGate } from "./gate.js";
import type { RateLimitDiagnostic } from "./index.js";
import { MemoryStore } from "./memory-store.js";
import type { Decision, RateLimitStore } from "./types.js";

const view: RequestView = { method: "GET", url: "/", headers: {}, socket: { remoteAddress: "203.0.113.7" } };
const silent = { warn() {}, info() {} };
const clock = () => 90_000;

/** One request through `gate`, its refusal (thrown at once by a synchronous store) swallowed. */
async function pass(gate: ReturnType<typeof rateLimitGate>, request: object = {}): Promise<void> {
  try {
    await gate(view, request);
  } catch {}
}

/** A store whose decisions fail while `down.is` is set. */
function flaky(down: { is: boolean }): RateLimitStore {
  const inner = new MemoryStore();
  return {
    consume(key, cost, policy, now) {
      if (down.is) throw new Error("connection refused");
      return inner.consume(key, cost, policy, now as number) as Decision;
    },
    reset() {},
  };
}

interface Case {
  name: string;
  options: RateLimitGateOptions;
  /** Requests sent before the one whose messages are compared. */
  before?: number;
  /** Set up the request (record a principal). */
  prepare?: (request: object) => void;
  /** Between the requests before and the one compared. */
  between?: () => void;
  expected: (request: object) => RateLimitDiagnostic[];
}

const window = { limit: 2, windowMs: 60_000, algorithm: "fixed-window", now: clock, logger: silent } as const;

const cases: Case[] = [
  {
    name: "first request by address → allowed, keyKind address, remaining 1",
    options: { ...window, store: new MemoryStore() },
    expected: (request) => [
      {
        request,
        decision: "allowed",
        policy: "default",
        keyKind: "address",
        limit: 2,
        remaining: 1,
        resetAt: 120_000,
        retryAfterMs: 0,
      },
    ],
  },
  {
    name: "a recorded principal → allowed, keyKind principal",
    options: { ...window, store: new MemoryStore(), policyName: "api" },
    prepare: (request) => recordAuthentication(request, { id: "alice" }),
    expected: (request) => [
      {
        request,
        decision: "allowed",
        policy: "api",
        keyKind: "principal",
        limit: 2,
        remaining: 1,
        resetAt: 120_000,
        retryAfterMs: 0,
      },
    ],
  },
  {
    name: "key(request) answering → allowed, keyKind custom",
    options: { ...window, store: new MemoryStore(), key: () => "tenant-1" },
    expected: (request) => [
      {
        request,
        decision: "allowed",
        policy: "default",
        keyKind: "custom",
        limit: 2,
        remaining: 1,
        resetAt: 120_000,
        retryAfterMs: 0,
      },
    ],
  },
  {
    name: "third request of 2 → limited, remaining 0, retryAfterMs to the window's end",
    options: { ...window, store: new MemoryStore() },
    before: 2,
    expected: (request) => [
      {
        request,
        decision: "limited",
        policy: "default",
        keyKind: "address",
        limit: 2,
        remaining: 0,
        resetAt: 120_000,
        retryAfterMs: 30_000,
      },
    ],
  },
  {
    name: "a cost above the whole quota → cost-exceeds-quota, before the store",
    options: { ...window, store: flaky({ is: true }), cost: () => 3 },
    expected: (request) => [
      {
        request,
        decision: "cost-exceeds-quota",
        policy: "default",
        keyKind: "address",
        cost: 3,
        capacity: 2,
      },
    ],
  },
  {
    name: "store throws, failMode open → store-failed open",
    options: { ...window, store: flaky({ is: true }) },
    expected: (request) => [
      { request, decision: "store-failed", failMode: "open", error: new Error("connection refused") },
    ],
  },
  {
    name: "store throws, failMode closed → store-failed closed",
    options: { ...window, store: flaky({ is: true }), failMode: "closed" },
    expected: (request) => [
      { request, decision: "store-failed", failMode: "closed", error: new Error("connection refused") },
    ],
  },
  {
    name: "skip answering true → nothing",
    options: { ...window, store: new MemoryStore(), skip: () => true },
    expected: () => [],
  },
  {
    name: "allowlisted address → nothing",
    options: { ...window, store: new MemoryStore(), allowlist: ["203.0.113.0/24"] },
    expected: () => [],
  },
];

describe("svc:ratelimit messages, one per decision", () => {
  let listener: ((message: unknown) => void) | undefined;
  afterEach(() => {
    if (listener) unsubscribeDiagnostics("svc:ratelimit", listener);
    listener = undefined;
  });

  it.each(cases)("$name", async (c) => {
    const gate = rateLimitGate(c.options);
    for (let i = 0; i < (c.before ?? 0); i++) await pass(gate);
    c.between?.();
    const seen: unknown[] = [];
    listener = (message) => seen.push(message);
    subscribeDiagnostics("svc:ratelimit", listener);
    const request = {};
    c.prepare?.(request);
    await pass(gate, request);
    expect(seen).toEqual(c.expected(request));
    for (const [i, message] of seen.entries())
      expect((message as { request?: object }).request, `message ${i}: the request itself`).toBe(request);
  });

  it("a store down for two requests then back → store-recovered once, then allowed", async () => {
    const down = { is: true };
    let now = 1_000_000;
    const time = vi.spyOn(Date, "now").mockImplementation(() => now);
    try {
      const gate = rateLimitGate({ ...window, store: flaky(down) });
      const seen: RateLimitDiagnostic[] = [];
      listener = (message) => seen.push(message as RateLimitDiagnostic);
      subscribeDiagnostics("svc:ratelimit", listener);
      await pass(gate);
      now += 1_500;
      await pass(gate);
      down.is = false;
      now += 500;
      await pass(gate);
      await pass(gate);
      expect(seen.map((m) => m.decision)).toEqual([
        "store-failed",
        "store-failed",
        "store-recovered",
        "allowed",
        "allowed",
      ]);
      expect(seen[2]).toEqual({ decision: "store-recovered", downMs: 2_000 });
    } finally {
      time.mockRestore();
    }
  });

  it("no subscriber: no message is published (nor built)", async () => {
    const publish = vi.spyOn(diagnostics_channel.channel(decisions.name), "publish");
    try {
      const down = { is: true };
      const gate = rateLimitGate({ ...window, limit: 1, store: flaky(down) });
      await pass(gate);
      down.is = false;
      await pass(gate);
      await pass(gate);
      expect(decisions.hasSubscribers).toBe(false);
      expect(publish).not.toHaveBeenCalled();
    } finally {
      publish.mockRestore();
    }
  });
});

describe("store outage in the log", () => {
  it("down, down, back, down: each outage warned once at its start, its end once at info", async () => {
    const warn = vi.fn();
    const info = vi.fn();
    const down = { is: true };
    const gate = rateLimitGate({
      ...window,
      logIntervalMs: 3_600_000,
      logger: { warn, info },
      store: flaky(down),
    });
    await pass(gate);
    await pass(gate);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[1]).toMatch(/store failed; requests pass unlimited/);
    down.is = false;
    await pass(gate);
    await pass(gate);
    expect(info).toHaveBeenCalledTimes(1);
    expect(info.mock.calls[0]?.[0]).toMatchObject({ failed: 2 });
    expect(info.mock.calls[0]?.[1]).toMatch(/store answered again/);
    // A second outage inside the log interval is logged all the same.
    down.is = true;
    await pass(gate);
    expect(warn).toHaveBeenCalledTimes(2);
  });

  it("failMode closed: the outage is warned once too; a logger without info gets the recovery on warn", async () => {
    const warn = vi.fn();
    const down = { is: true };
    const gate = rateLimitGate({ ...window, failMode: "closed", logger: { warn }, store: flaky(down) });
    await pass(gate);
    await pass(gate);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[1]).toMatch(/answered 503/);
    down.is = false;
    await pass(gate);
    expect(warn).toHaveBeenCalledTimes(2);
    expect(warn.mock.calls[1]?.[1]).toMatch(/store answered again/);
  });
});
