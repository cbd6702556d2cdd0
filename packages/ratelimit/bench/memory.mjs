// Bytes per key at 200,000 live keys: @svc/ratelimit's MemoryStore against express-rate-limit's
// MemoryStore and rate-limiter-flexible's RateLimiterMemory.
// Run after `npm run build`: node --expose-gc packages/ratelimit/bench/memory.mjs
// Reports heapUsed + arrayBuffers deltas (the typed arrays live outside the JS heap), once with the
// key strings allocated beforehand (the store's own overhead) and once with fresh key strings
// created as the keys are inserted (what a server retains per client).
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { MemoryStore as ErlMemoryStore } from "express-rate-limit";
import { RateLimiterMemory } from "rate-limiter-flexible";
import { createRateLimiter, MemoryStore } from "../dist/index.js";

const N = 200_000;
const WINDOW = 60_000;
if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");

function used() {
  globalThis.gc();
  globalThis.gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const key = (i) => `ip:10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

/** @svc/ratelimit's MemoryStore under one algorithm. */
const svcMemoryStore = (algorithm) => () => {
  const store = new MemoryStore();
  const limiter = createRateLimiter({ algorithm, limit: 100, windowMs: WINDOW, store });
  return { keep: store, hit: (k) => limiter.consume(k) };
};

const candidates = {
  "@svc/ratelimit MemoryStore (fixed-window)": svcMemoryStore("fixed-window"),
  "@svc/ratelimit MemoryStore (sliding-window)": svcMemoryStore("sliding-window"),
  "@svc/ratelimit MemoryStore (gcra)": svcMemoryStore("gcra"),
  "express-rate-limit MemoryStore": () => {
    const store = new ErlMemoryStore();
    store.init({ windowMs: WINDOW });
    return { keep: store, hit: (k) => store.increment(k), stop: () => store.shutdown() };
  },
  "rate-limiter-flexible RateLimiterMemory": () => {
    const limiter = new RateLimiterMemory({ points: 100, duration: WINDOW / 1000 });
    return { keep: limiter, hit: (k) => limiter.consume(k) };
  },
};

async function measure(make, freshKeys) {
  const keys = freshKeys ? undefined : Array.from({ length: N }, (_, i) => key(i));
  const candidate = make();
  const before = used();
  for (let i = 0; i < N; i++) await candidate.hit(keys ? keys[i] : key(i));
  const after = used();
  candidate.stop?.();
  // keep both alive until after the measurement
  if (!candidate.keep || (keys && keys.length !== N)) throw new Error("unreachable");
  return (after - before) / N;
}

// Each measurement runs in its own process, so nothing a previous candidate left behind (or the
// collector's timing of it) shows up in the next one's delta.
const [name, mode] = process.argv.slice(2);
if (name) {
  const make = candidates[name];
  if (!make) throw new Error(`unknown candidate ${name}`);
  process.stdout.write(JSON.stringify(await measure(make, mode === "fresh")));
} else {
  const results = {};
  for (const candidate of Object.keys(candidates)) {
    const run = (m) =>
      Number(
        execFileSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), candidate, m], {
          encoding: "utf8",
        }),
      );
    results[candidate] = { own: run("own"), withKeys: run("fresh") };
  }
  const erl = results["express-rate-limit MemoryStore"];
  process.stdout.write(`bytes per key at ${N.toLocaleString("en")} live keys (node ${process.version})\n`);
  for (const [candidate, r] of Object.entries(results)) {
    process.stdout.write(
      `${candidate.padEnd(46)} store overhead ${r.own.toFixed(1).padStart(7)} B (${(r.own / erl.own).toFixed(2)}x erl)` +
        `   incl. key strings ${r.withKeys.toFixed(1).padStart(7)} B (${(r.withKeys / erl.withKeys).toFixed(2)}x erl)\n`,
    );
  }
}
