import { vi } from "vitest";
import type { IdempotencyOptions } from "../src/step.js";
import type { IdempotencyStore } from "../src/store.js";
import type { buildStepApp } from "./pipeline-app.js";

export { buildStepApp as buildApp, PROBLEM_BASE } from "./pipeline-app.js";

export function post(
  url: string,
  key: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
) {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(key === undefined ? {} : { "idempotency-key": key }),
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A promise with its resolve function outside, to hold a handler at a known point. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

/** What {@link retriesDuringSlowHandler} saw. */
export interface SlowRun {
  first: { status: number; location: string | null };
  /** Status and Location of each retry sent while the first still ran. */
  retries: Array<[number, string | null]>;
  after: { status: number; location: string | null; replayed: string | null };
  /** Handler executions, by route. */
  calls: Record<string, number>;
}

/**
 * The lease of {@link retriesDuringSlowHandler}: one minute, renewed every 20 s. Time passes only
 * when the test moves it, so no real lease can run out under a loaded machine.
 */
export const SLOW = { leaseMs: 60_000, renewEveryMs: 20_000 } as const;

/**
 * A handler slower than its lease, with no real time in it. The first POST's handler is held on a
 * promise until the test lets it go; meanwhile `age(ms)` makes `ms` of store time pass (a
 * `MemoryStore`'s clock, the TTLs of a `RedisStore`'s records) and the renewal timer (a fake
 * `setInterval`) fires for the same `ms`, each renewal answered before time moves on. Retries go
 * out after two leases and after three and a third, the handler ends after four, and one more
 * request follows its response. `options` go to the middleware (`leaseMs` is {@link SLOW}'s).
 */
export async function retriesDuringSlowHandler(
  start: (
    options: IdempotencyOptions,
    hooks: NonNullable<Parameters<typeof buildStepApp>[1]>,
  ) => Promise<{ url: string; calls: Record<string, number> }>,
  inner: IdempotencyStore & { renew: NonNullable<IdempotencyStore["renew"]> },
  age: (ms: number) => Promise<void>,
  options: IdempotencyOptions = {},
): Promise<SlowRun> {
  let renewed = 0;
  /** A renewal answered false: the lease is lost for good, and the timer stops. */
  let lost = false;
  const store: IdempotencyStore = {
    claim: (...a) => inner.claim(...a),
    complete: (...a) => inner.complete(...a),
    release: (...a) => inner.release(...a),
    renew: async (...a) => {
      try {
        const owned = await inner.renew(...a);
        if (!owned) lost = true;
        return owned;
      } finally {
        renewed += 1;
      }
    },
  };
  const renewing = options.renewLease !== false;
  const hold = gate();
  const entered = gate();
  vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
  try {
    const { url, calls } = await start(
      { ...options, store, leaseMs: SLOW.leaseMs },
      {
        before: async (n) => {
          if (n !== 1) return;
          entered.open();
          await hold.promise;
        },
      },
    );
    /** `periods` renewal periods of store time, one at a time, each renewal due in it answered. */
    const elapse = async (periods: number) => {
      for (let i = 0; i < periods; i++) {
        await age(SLOW.renewEveryMs);
        const seen = renewed;
        await vi.advanceTimersByTimeAsync(SLOW.renewEveryMs);
        if (renewing && !lost) {
          await vi.waitFor(
            () => {
              if (renewed === seen) throw new Error("no lease renewal answered in this period");
            },
            { timeout: 10_000, interval: 1 },
          );
        }
      }
    };
    const send = async () => {
      const res = await post(`${url}/orders`, "slow", { a: 1 });
      await res.arrayBuffer();
      return res;
    };
    const firstPromise = post(`${url}/orders`, "slow", { a: 1 });
    await entered.promise;
    const retries: Array<[number, string | null]> = [];
    // Three periods to a lease: retries after two leases and after three and a third.
    for (const periods of [6, 4]) {
      await elapse(periods);
      const retry = await send();
      retries.push([retry.status, retry.headers.get("location")]);
    }
    await elapse(2);
    hold.open();
    const firstResponse = await firstPromise;
    await firstResponse.arrayBuffer();
    const after = await send();
    return {
      first: { status: firstResponse.status, location: firstResponse.headers.get("location") },
      retries,
      after: {
        status: after.status,
        location: after.headers.get("location"),
        replayed: after.headers.get("idempotent-replayed"),
      },
      calls,
    };
  } finally {
    hold.open();
    vi.useRealTimers();
  }
}

/** Deletes every key under `prefix` (a test's unique prefix) and disconnects the client. */
export async function dropPrefix(client: import("ioredis").Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== "0");
  client.disconnect();
}
