// Added latency per POST: the same route with no middleware, with the memory store and with the
// Redis store, each behind a real listening server and called with fetch (keep-alive).
// Run: REDIS_URL=redis://127.0.0.1:6379 npx vitest bench --run --project @svc/idempotency

import { createPipeline, reply } from "@svc/kernel";
import { expressAdapter } from "@svc/kernel/express";
import { listen, uniquePrefix } from "@svc/test-utils";
import express from "express";
import { Redis } from "ioredis";
import { afterAll, bench, describe } from "vitest";
import { idempotency } from "../src/express.js";
import { type IdempotencyStep, MemoryStore, RedisStore } from "../src/index.js";

const redisUrl = process.env.REDIS_URL;
const prefix = uniquePrefix("idempotency-bench");
const redis = redisUrl ? new Redis(redisUrl) : undefined;

/** The same route with no step, or through the pipeline with the idempotency step. */
function app(step?: IdempotencyStep) {
  const a = express();
  const svc = expressAdapter(createPipeline());
  a.post(
    "/orders",
    express.json(),
    svc.handle(
      (req: express.Request) =>
        reply({ id: 1, echo: req.body }, { status: 201, headers: { location: "/orders/1" } }),
      step === undefined ? {} : { idempotency: step },
    ),
  );
  return a;
}

const plain = await listen(app());
const memory = await listen(app(idempotency({ store: new MemoryStore({ maxEntries: 1_000_000 }) })));
const viaRedis = redis
  ? await listen(app(idempotency({ store: new RedisStore({ client: redis, prefix }), retentionMs: 600_000 })))
  : undefined;

const payload = JSON.stringify({ item: "book", qty: 2, address: { city: "Berlin", zip: "10115" } });
let n = 0;
async function send(url: string, key?: string): Promise<void> {
  const res = await fetch(`${url}/orders`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}) },
    body: payload,
  });
  await res.arrayBuffer();
  if (res.status !== 201) throw new Error(`unexpected ${res.status}`);
}

// The machine running this is usually shared, so back-to-back runs see different load. This
// group sends one request to each target per iteration, in rotating order, and prints medians,
// so the three figures are measured under the same conditions.
const samples: Record<string, number[]> = { "no middleware": [], MemoryStore: [], RedisStore: [] };
let round = 0;
async function timed(label: string, run: () => Promise<void>): Promise<void> {
  const t0 = performance.now();
  await run();
  samples[label]?.push(performance.now() - t0);
}
async function interleavedRound(): Promise<void> {
  const targets: [string, () => Promise<void>][] = [
    ["no middleware", () => send(plain.url)],
    ["MemoryStore", () => send(memory.url, `i-${++n}`)],
  ];
  if (viaRedis) targets.push(["RedisStore", () => send(viaRedis.url, `i-${++n}`)]);
  round += 1;
  for (let i = 0; i < targets.length; i++) {
    const [label, run] = targets[(i + round) % targets.length] as [string, () => Promise<void>];
    await timed(label, run);
  }
}
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

afterAll(async () => {
  const base = quantile(samples["no middleware"] ?? [], 0.5);
  for (const [label, values] of Object.entries(samples)) {
    if (values.length === 0) continue;
    const p50 = quantile(values, 0.5);
    process.stdout.write(
      `interleaved ${label.padEnd(14)} n=${values.length} p50=${p50.toFixed(3)} ms p90=${quantile(values, 0.9).toFixed(3)} ms added p50=${(p50 - base).toFixed(3)} ms\n`,
    );
  }
  await Promise.all([plain.close(), memory.close(), viaRedis?.close()]);
  if (redis) {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== "0");
    redis.disconnect();
  }
});

const options = { time: 3000, warmupTime: 500 };

describe("POST, first request with a key (claim + handler + complete)", () => {
  bench("no middleware", () => send(plain.url), options);
  bench("MemoryStore", () => send(memory.url, `k-${++n}`), options);
  bench.skipIf(!viaRedis)("RedisStore (ioredis)", () => send(viaRedis?.url ?? "", `k-${++n}`), options);
});

describe("POST, retry of a completed key (replay)", () => {
  bench("no middleware", () => send(plain.url), options);
  bench("MemoryStore", () => send(memory.url, "replayed"), options);
  bench.skipIf(!viaRedis)("RedisStore (ioredis)", () => send(viaRedis?.url ?? "", "replayed"), options);
});

describe("POST, first request with a key, interleaved (medians printed at the end)", () => {
  bench("one request to each target per round", interleavedRound, options);
});

// A store at its bound (the default 10,000 records, all live): every fresh claim makes room. This
// is where a busy server with fresh keys spends its time once the store has filled up.
const full = new MemoryStore();
const storedBody = new Uint8Array(400);
let f = 0;
async function claimAndComplete(store: MemoryStore): Promise<void> {
  const key = `full-${++f}`;
  const claim = await store.claim(key, "fp", 60_000);
  if (claim.outcome !== "claimed") throw new Error(`claim of a fresh key: ${claim.outcome}`);
  await store.complete(key, claim.token, { status: 201, headers: {}, body: storedBody }, 86_400_000);
}
for (let i = 0; i < 10_000; i++) await claimAndComplete(full);
const roomy = new MemoryStore({ maxEntries: 10_000_000 });

describe("MemoryStore claim + complete of a fresh key", () => {
  bench("below maxEntries", () => claimAndComplete(roomy), options);
  bench("at maxEntries (every claim evicts)", () => claimAndComplete(full), options);
});
