import { MemoryStore as ErlMemoryStore } from "express-rate-limit";
import { RateLimiterMemory } from "rate-limiter-flexible";
import { bench, describe } from "vitest";
import { createRateLimiter, MemoryStore, type RateLimitPolicy } from "../src/index.js";

// Each iteration makes BATCH decisions over KEYS rotating clients, so decisions/s = hz × BATCH.
const BATCH = 1000;
const KEYS = 10_000;
const keys = Array.from({ length: KEYS }, (_, i) => `ip:10.0.${i >> 8}.${i & 255}`);
// A limit no client reaches, so every library takes its "allowed" path.
const LIMIT = 1_000_000_000;
const WINDOW = 60_000;

function policy(algorithm: RateLimitPolicy["algorithm"]): RateLimitPolicy {
  return { algorithm, limit: LIMIT, windowMs: WINDOW, burst: LIMIT };
}

const fixed = policy("fixed-window");
const sliding = policy("sliding-window");
const gcra = policy("gcra");
const fixedStore = new MemoryStore();
const slidingStore = new MemoryStore();
const gcraStore = new MemoryStore();
const limiter = createRateLimiter({ algorithm: "fixed-window", limit: LIMIT, windowMs: WINDOW });
const erl = new ErlMemoryStore();
erl.init({ windowMs: WINDOW } as Parameters<ErlMemoryStore["init"]>[0]);
const rlf = new RateLimiterMemory({ points: LIMIT, duration: WINDOW / 1000 });

// Long runs: the machine is shared, and short ones swing by ±20%.
const opts = { time: 3000, warmupTime: 500 };

let i = 0;
function nextKey(): string {
  i = (i + 1) % KEYS;
  return keys[i] as string;
}

describe(`MemoryStore decisions (${BATCH} per iteration, ${KEYS} clients)`, () => {
  bench(
    "@svc/ratelimit MemoryStore fixed-window",
    () => {
      for (let n = 0; n < BATCH; n++) fixedStore.consume(nextKey(), 1, fixed, Date.now());
    },
    opts,
  );
  bench(
    "@svc/ratelimit MemoryStore sliding-window",
    () => {
      for (let n = 0; n < BATCH; n++) slidingStore.consume(nextKey(), 1, sliding, Date.now());
    },
    opts,
  );
  bench(
    "@svc/ratelimit MemoryStore gcra",
    () => {
      for (let n = 0; n < BATCH; n++) gcraStore.consume(nextKey(), 1, gcra, Date.now());
    },
    opts,
  );
  bench(
    "@svc/ratelimit limiter.decide fixed-window (synchronous with MemoryStore)",
    () => {
      for (let n = 0; n < BATCH; n++) limiter.decide(nextKey());
    },
    opts,
  );
  bench(
    "@svc/ratelimit limiter.consume fixed-window (awaited)",
    async () => {
      for (let n = 0; n < BATCH; n++) await limiter.consume(nextKey());
    },
    opts,
  );
  bench(
    "express-rate-limit MemoryStore.increment (awaited)",
    async () => {
      for (let n = 0; n < BATCH; n++) await erl.increment(nextKey());
    },
    opts,
  );
  bench(
    "rate-limiter-flexible RateLimiterMemory.consume (awaited)",
    async () => {
      for (let n = 0; n < BATCH; n++) await rlf.consume(nextKey());
    },
    opts,
  );
});
