// Rate-limit decisions per second through @svc/ratelimit's RedisStore (ioredis), on one Redis node
// and on a 3-master Redis Cluster. Each target is a throw-away server of its own (test-utils'
// throwawayRedis / redisCluster), so the shared Redis is never disturbed.
//
// Run by run.mjs (`--redis`, and in a full run) as:
//   node --import ./ts-loader.mjs redis-decisions.mjs --seconds 3 --concurrency 64 --json <file>
// The ts-loader lets it import the workspaces' TypeScript sources (@svc/ratelimit, @svc/test-utils).
import { writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { createRateLimiter, RedisStore } from "@svc/ratelimit";
import { redisCluster, throwawayRedis } from "@svc/test-utils";
import { Cluster, Redis } from "ioredis";

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "3" },
    warmup: { type: "string", default: "1" },
    concurrency: { type: "string", default: "64" },
    keys: { type: "string", default: "10000" },
    json: { type: "string" },
  },
});
const seconds = Number(args.seconds);
const warmupSeconds = Number(args.warmup);
const concurrency = Number(args.concurrency);
const keyCount = Number(args.keys);

/** The fail-fast client settings RedisStore requires (see the ratelimit README). */
const NODE_OPTIONS = { autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0, commandTimeout: 2000 };

/**
 * `concurrency` loops, each awaiting one decision after another for `ms`, over `keyCount`
 * clients (fixed window, a limit never reached: every decision is the full script).
 */
async function drive(limiter, ms) {
  const latencies = [];
  let decisions = 0;
  let errors = 0;
  const until = performance.now() + ms;
  let next = 0;
  const worker = async () => {
    while (performance.now() < until) {
      const key = `ip:10.${(next >> 16) & 255}.${(next >> 8) & 255}.${next & 255}`;
      next = (next + 1) % keyCount;
      const started = performance.now();
      try {
        await limiter.consume(key);
        decisions += 1;
        latencies.push(performance.now() - started);
      } catch {
        errors += 1;
      }
    }
  };
  const begun = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - begun) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    decisions,
    errors,
    seconds: Number(elapsed.toFixed(2)),
    perSecond: Math.round(decisions / elapsed),
    p50Ms: Number(at(0.5).toFixed(2)),
    p99Ms: Number(at(0.99).toFixed(2)),
  };
}

async function measure(label, client) {
  const store = new RedisStore({ client, prefix: "bench:rl:", timeoutMs: 2000 });
  const limiter = createRateLimiter({
    algorithm: "fixed-window",
    limit: 1_000_000_000,
    windowMs: 3_600_000,
    store,
  });
  await drive(limiter, warmupSeconds * 1000);
  const result = await drive(limiter, seconds * 1000);
  console.log(
    `${label}: ${result.perSecond} decisions/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, errors ${result.errors}`,
  );
  return { label, ...result };
}

const results = [];

const single = await throwawayRedis();
try {
  const client = new Redis(single.url, { ...NODE_OPTIONS, enableOfflineQueue: false, lazyConnect: true });
  await client.connect();
  results.push(await measure("one Redis node, ioredis Redis", client));
  client.disconnect();
} finally {
  await single.stop();
}

const cluster = await redisCluster({ masters: 3 });
if (cluster) {
  try {
    const client = new Cluster(cluster.nodes, {
      enableOfflineQueue: false,
      retryDelayOnFailover: 0,
      lazyConnect: true,
      redisOptions: NODE_OPTIONS,
    });
    await client.connect();
    await Promise.all(client.nodes("master").map((node) => node.ping()));
    results.push(await measure("3-master Redis Cluster, ioredis Cluster", client));
    client.disconnect();
  } finally {
    await cluster.stop();
  }
}

const settings = { seconds, warmupSeconds, concurrency, keys: keyCount };
if (args.json) await writeFile(args.json, `${JSON.stringify({ settings, results }, null, 2)}\n`);
process.exit(results.some((r) => r.decisions === 0) ? 1 : 0);
