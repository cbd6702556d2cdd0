import type * as asyncHooks from "node:async_hooks";
import { afterEach, describe, expect, it, vi } from "vitest";

const hooks: { enabled: boolean }[] = [];
/** When set, the hooks made report no async resource. */
let silent = false;
vi.mock("node:async_hooks", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:async_hooks")>();
  return {
    ...actual,
    createHook(callbacks: asyncHooks.HookCallbacks) {
      const hook = actual.createHook(silent ? {} : callbacks);
      const seen = { enabled: false };
      hooks.push(seen);
      return {
        enable() {
          seen.enabled = true;
          hook.enable();
          return this;
        },
        disable() {
          seen.enabled = false;
          hook.disable();
          return this;
        },
      };
    },
  };
});

const { holdTickShape } = await import("./tick-shape.js");

describe("holdTickShape", () => {
  afterEach(() => {
    hooks.length = 0;
  });

  it("holds a tick object on Node.js, with its one hook disabled before it returns", () => {
    expect(holdTickShape()).toBe(true);
    expect(hooks).toHaveLength(1);
    expect(hooks[0]?.enabled).toBe(false);
  });

  it("once: a second call holds the same object and enables no hook", () => {
    expect(holdTickShape()).toBe(true);
    expect(hooks).toHaveLength(0);
  });

  it("false where no tick object is reported, and tried again on the next call", async () => {
    vi.resetModules();
    silent = true;
    try {
      const fresh = await import("./tick-shape.js");
      expect(fresh.holdTickShape()).toBe(false);
      expect(fresh.holdTickShape()).toBe(false);
      expect(hooks.map((hook) => hook.enabled)).toEqual([false, false]);
    } finally {
      silent = false;
    }
  });
});
