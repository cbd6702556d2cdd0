import { randomUUID } from "node:crypto";
import { subscribeDiagnostics, unsubscribeDiagnostics } from "@svc/kernel";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createIdempotency } from "./core.js";
import { decisions, type IdempotencyDiagnostic } from "./diagnostics.js";
import { MemoryStore } from "./memory-store.js";
import type { IdempotencyStore } from "./store.js";

const heard: IdempotencyDiagnostic[] = [];
const listener = (message: unknown) => heard.push(message as IdempotencyDiagnostic);
afterEach(() => {
  unsubscribeDiagnostics("svc:idempotency", listener);
  heard.length = 0;
  vi.restoreAllMocks();
});

const silent = { warn() {}, error() {} };
const attempt = (request: object, key: string, body: unknown) => ({
  method: "POST",
  target: "/orders",
  headers: { "idempotency-key": `"${key}"`, "content-type": "application/json" },
  body,
  request,
});

/** A store whose every call fails, as an unreachable Redis does. */
const down: IdempotencyStore = {
  claim: () => Promise.reject(new Error("connection refused")),
  complete: () => Promise.reject(new Error("connection refused")),
  release: () => Promise.reject(new Error("connection refused")),
  renew: () => Promise.reject(new Error("connection refused")),
};

describe("svc:idempotency: one message per keyed request looked up", () => {
  it("claimed, in-progress, replayed, mismatch → each with its request and the scope", async () => {
    subscribeDiagnostics("svc:idempotency", listener);
    const core = createIdempotency({
      store: new MemoryStore(),
      scope: () => "tenant-a",
      logger: silent,
      waitMs: 0,
    });
    const key = randomUUID();
    const [first, second, third, fourth] = [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }];
    const claim = await core.begin(attempt(first, key, { a: 1 }));
    await core.begin(attempt(second, key, { a: 1 }));
    if (claim.outcome !== "claimed") throw new Error("not claimed");
    await core.complete(claim.claim, { status: 201, headers: {}, body: new Uint8Array() });
    await core.begin(attempt(third, key, { a: 1 }));
    await core.begin(attempt(fourth, key, { a: 2 }));
    expect(heard).toEqual([
      { request: first, decision: "claimed", scope: "tenant-a" },
      { request: second, decision: "in-progress", scope: "tenant-a" },
      { request: third, decision: "replayed", scope: "tenant-a" },
      { request: fourth, decision: "mismatch", scope: "tenant-a" },
    ]);
  });

  it.each([
    ["fail", false],
    ["pass-through", true],
  ] as const)(
    "the store down, onStoreError %s → store-failed, passed %s, with the store's error",
    async (mode, passed) => {
      subscribeDiagnostics("svc:idempotency", listener);
      const core = createIdempotency({ store: down, scope: () => "s", logger: silent, onStoreError: mode });
      const request = {};
      const decision = await core.begin(attempt(request, randomUUID(), {}));
      expect(decision.outcome).toBe(passed ? "pass" : "error");
      expect(heard).toEqual([
        { request, decision: "store-failed", scope: "s", passed, error: new Error("connection refused") },
      ]);
    },
  );

  it("no subscriber → nothing published", async () => {
    const publish = vi.spyOn(decisions, "publish");
    const core = createIdempotency({ store: new MemoryStore(), scope: () => "s", logger: silent });
    await core.begin(attempt({}, randomUUID(), {}));
    expect(publish).not.toHaveBeenCalled();
  });
});
