import { afterEach, describe, expect, it } from "vitest";
import { rateLimit } from "../src/express.js";
import {
  type Algorithm,
  createRateLimiter,
  type ExpressRateLimitHits,
  expressRateLimitStore,
  type RateLimitOptions,
} from "../src/index.js";
import { limitedRoute } from "./requests.js";

// The `now` option is the limiter's clock: epoch milliseconds, a time value as a Date holds one
// (ECMA-262 §21.4.1.1: a finite number of at most 8.64 × 10^15 ms either side of the epoch).
// Anything else is the server's configuration at fault: refused at construction, and a clock that
// goes bad later fails its requests with a 500 (never a pass, never NaN in a header).

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** Clocks that answer something other than epoch milliseconds, and what the message shows. */
const BAD: [string, () => unknown, RegExp][] = [
  ["NaN", () => Number.NaN, /answered NaN/],
  ["Infinity", () => Number.POSITIVE_INFINITY, /answered Infinity/],
  ["-Infinity", () => Number.NEGATIVE_INFINITY, /answered -Infinity/],
  ["Date called without new (a string)", Date as unknown as () => unknown, /answered "/],
  ["a Date object", () => new Date(90_000), /answered a Date \(1970-01-01T00:01:30\.000Z\)/],
  ["a numeric string", () => "90000", /answered "90000"/],
  ["undefined", () => undefined, /answered undefined/],
  ["null", () => null, /answered null/],
  ["a bigint", () => 90_000n, /answered 90000n/],
  ["1e300 (past a Date's range)", () => 1e300, /answered 1e\+300/],
  ["8.64e15 + 1", () => 8.64e15 + 1, /answered 8640000000000001/],
  ["-8.64e15 - 1", () => -8.64e15 - 1, /answered -8640000000000001/],
  [
    "a clock that throws",
    () => {
      throw new Error("clock source down");
    },
    /threw/,
  ],
];

/** Clocks that do answer epoch milliseconds. */
const GOOD: [string, () => number][] = [
  ["Date.now", Date.now],
  ["0", () => 0],
  [
    "a fraction (performance.timeOrigin + performance.now())",
    () => performance.timeOrigin + performance.now(),
  ],
  ["8.64e15", () => 8.64e15],
  ["-8.64e15", () => -8.64e15],
];

describe("now answering anything but epoch milliseconds → TypeError ERR_SVC_RATELIMIT_NOW at construction", () => {
  it.each(BAD)("createRateLimiter, now %s", (_name, now, shows) => {
    expect(() => createRateLimiter({ limit: 1, now: now as () => number })).toThrow(
      expect.objectContaining({
        name: "TypeError",
        code: "ERR_SVC_RATELIMIT_NOW",
        message: expect.stringMatching(shows),
      }),
    );
  });

  it.each(BAD)("rateLimit, now %s", (_name, now, shows) => {
    expect(() => rateLimit({ limit: 1, now: now as () => number })).toThrow(
      expect.objectContaining({
        name: "TypeError",
        code: "ERR_SVC_RATELIMIT_NOW",
        message: expect.stringMatching(shows),
      }),
    );
  });

  it.each(GOOD)("now %s → accepted", (_name, now) => {
    expect(() => createRateLimiter({ limit: 1, now })).not.toThrow();
    expect(() => rateLimit({ limit: 1, now })).not.toThrow();
  });
});

/** An express-rate-limit store of fixed windows, on Date.now (its own clock). */
function erlStore() {
  const hits = new Map<string, ExpressRateLimitHits>();
  let windowMs = 0;
  return expressRateLimitStore({
    init(options: { windowMs: number }) {
      windowMs = options.windowMs;
    },
    increment(key: string) {
      const entry = hits.get(key) ?? { totalHits: 0, resetTime: new Date(Date.now() + windowMs) };
      entry.totalHits++;
      hits.set(key, entry);
      return { ...entry };
    },
    decrement(key: string) {
      const entry = hits.get(key);
      if (entry) entry.totalHits--;
    },
    resetKey(key: string) {
      hits.delete(key);
    },
  });
}

const SETUPS: [string, Algorithm, () => Partial<RateLimitOptions>][] = [
  ["fixed-window", "fixed-window", () => ({})],
  ["sliding-window", "sliding-window", () => ({})],
  ["gcra", "gcra", () => ({})],
  ["fixed-window on an express-rate-limit store", "fixed-window", () => ({ store: erlStore() })],
];

/**
 * A limiter of 2 per minute whose clock answers `clock.value` (90 s, mid-window, at construction),
 * with `failMode: "open"` (a store failure would pass), and the errors the error handler logged.
 */
async function serve(algorithm: Algorithm, extra: Partial<RateLimitOptions>) {
  const clock: { value: unknown; read: () => unknown } = { value: 90_000, read: () => clock.value };
  const server = await limitedRoute({
    limit: 2,
    windowMs: 60_000,
    algorithm,
    now: () => clock.read() as number,
    failMode: "open",
    logger: { warn() {} },
    ...extra,
  });
  closers.push(server.close);
  return { ...server, clock };
}

/** Every response header value, to check none carries NaN or Infinity. */
function headerValues(res: Response): string {
  return [...res.headers.entries()].map(([name, value]) => `${name}: ${value}`).join("\n");
}

describe("a clock that goes bad after construction → 500 per request (not a pass, not NaN headers)", () => {
  for (const [setup, algorithm, extra] of SETUPS)
    it.each(BAD)(`${setup}, now then %s`, async (_name, bad, shows) => {
      const s = await serve(algorithm, extra());
      s.clock.read = () => bad();
      for (let i = 0; i < 3; i++) {
        const res = await fetch(s.url);
        expect(res.status).toBe(500);
        expect(await res.json()).toMatchObject({ status: 500 });
        expect(headerValues(res)).not.toMatch(/NaN|Infinity/);
        expect(res.headers.get("ratelimit")).toBeNull();
        expect(res.headers.get("x-ratelimit-remaining")).toBeNull();
        expect(res.headers.get("retry-after")).toBeNull();
      }
      expect(s.reached()).toBe(0);
      expect(s.logged).toHaveLength(3);
      for (const err of s.logged) {
        const messages: string[] = [];
        for (let e: unknown = err; e instanceof Error; e = e.cause) messages.push(e.message);
        expect(messages.join(" <- ")).toMatch(/^rate limit: now\(\)/);
        expect(messages.join(" <- ")).toMatch(shows);
      }
      // Nothing was counted: the clock back, the client has its full quota of 2.
      s.clock.read = () => s.clock.value;
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await fetch(s.url)).status);
      expect(statuses).toEqual([200, 200, 429]);
    });
});

describe("a good clock: counted and reported as before", () => {
  it.each([
    ["fixed-window", "fixed-window", '"default";r=1;t=30', '"default";r=0;t=30', "30"],
    ["sliding-window", "sliding-window", '"default";r=1;t=90', '"default";r=0;t=60', "60"],
    ["gcra", "gcra", '"default";r=1;t=30', '"default";r=0;t=30', "30"],
  ] as const)(
    "%s at 90 s: 200, 200, 429, RateLimit and Retry-After exact",
    async (_name, algorithm, first, limited, retry) => {
      const s = await serve(algorithm, {});
      const one = await fetch(s.url);
      expect(one.status).toBe(200);
      expect(one.headers.get("ratelimit")).toBe(first);
      expect((await fetch(s.url)).status).toBe(200);
      const three = await fetch(s.url);
      expect(three.status).toBe(429);
      expect(three.headers.get("ratelimit")).toBe(limited);
      expect(three.headers.get("retry-after")).toBe(retry);
      expect(headerValues(three)).not.toMatch(/NaN|Infinity/);
      expect(s.reached()).toBe(2);
    },
  );

  it("a clock that moves: the fixed window starts over at 120 s", async () => {
    const s = await serve("fixed-window", {});
    expect((await fetch(s.url)).status).toBe(200);
    expect((await fetch(s.url)).status).toBe(200);
    expect((await fetch(s.url)).status).toBe(429);
    s.clock.value = 120_000;
    const next = await fetch(s.url);
    expect(next.status).toBe(200);
    expect(next.headers.get("ratelimit")).toBe('"default";r=1;t=60');
  });
});
