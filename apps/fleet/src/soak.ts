import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startFleet } from "./fleet.js";
import { basic, call, keepAliveAgent, type Reply } from "./http.js";
import { startLoad } from "./load.js";

/**
 * `npm run soak`: the fleet (3 instances + nginx, PostgreSQL and Redis from DATABASE_URL and
 * REDIS_URL) under a steady mix of reads and writes through nginx for a while, reporting errors
 * (target 0), status counts, latency, and each instance's resident memory over time with its
 * trend (least-squares slope after the warm-up; a leak shows as a steady positive slope).
 */
const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "60" },
    warmup: { type: "string", default: "10" },
    connections: { type: "string", default: "16" },
    instances: { type: "string", default: "3" },
  },
});
const durationS = Number(values.duration);
const warmupS = Number(values.warmup);
const connections = Number(values.connections);
const instanceCount = Number(values.instances);
for (const [name, v] of Object.entries({ durationS, warmupS, connections, instanceCount })) {
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a non-negative number`);
}
if (warmupS >= durationS) throw new Error("--warmup must be shorter than --duration");

const databaseUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
const redisUrl = process.env.REDIS_URL || "redis://127.0.0.1:6379";
const RESULTS = join(dirname(fileURLToPath(import.meta.url)), "..", "results");

/** Resident set size of a process in MB, from /proc (Linux). */
function rssMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Least-squares slope of y over x. */
function slope(points: ReadonlyArray<[number, number]>): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

type Op = "get item" | "list" | "list reviews" | "post review" | "put department" | "delete review";
/** The mix, in percent. */
const MIX: Array<[Op, number]> = [
  ["get item", 50],
  ["list", 15],
  ["list reviews", 10],
  ["post review", 12],
  ["put department", 8],
  ["delete review", 5],
];
/** What each operation may answer; anything else is an error. */
const EXPECTED: Record<Op, number[]> = {
  "get item": [200],
  list: [200],
  "list reviews": [200],
  "post review": [201],
  "put department": [200],
  "delete review": [204],
};

async function main(): Promise<void> {
  console.error(`starting the fleet: ${instanceCount} instances + nginx, PostgreSQL and Redis shared`);
  const fleet = await startFleet({
    databaseUrl,
    redisUrl,
    instances: instanceCount,
    label: "soak",
    env: { RATE_LIMIT_MAX: "1000000", LOG_LEVEL: "warn", DEMO_USERS: "admin:admin:admin" },
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await fleet.close();
  };
  process.once("SIGINT", () => {
    void close().finally(() => process.exit(130));
  });
  try {
    const base = fleet.proxy?.url ?? "";
    const agent = keepAliveAgent(false, connections);
    // A Bearer token, as API clients use: Basic pays a deliberately slow password hash (scrypt)
    // on every request, which would make the soak measure that hash rather than the service.
    const issued = await call(`${base}/auth/token`, {
      method: "POST",
      agent,
      headers: { authorization: basic("admin") },
    });
    if (issued.status !== 200) throw new Error(`POST /auth/token → ${issued.status}: ${issued.body}`);
    const headers = { authorization: `Bearer ${issued.json<{ access_token: string }>().access_token}` };
    const statuses: Record<string, number> = {};
    const errors: Array<{ op: Op; status: number | string; body: string }> = [];
    const latencies: number[] = [];
    const byOp: Record<string, number> = {};
    // Each worker owns one department (its ETag chain) and the reviews it wrote.
    const owned = new Map<number, { path: string; etag: string; reviews: string[] }>();
    for (let w = 0; w < connections; w++) {
      const created = await call(`${base}/departments`, {
        method: "POST",
        agent,
        headers,
        body: { name: `soak-${w}-${Date.now()}`, city: "Oslo" },
      });
      if (created.status !== 201)
        throw new Error(`setup POST /departments → ${created.status}: ${created.body}`);
      owned.set(w, {
        path: new URL(created.header("location") ?? "").pathname,
        etag: created.header("etag") ?? "",
        reviews: [],
      });
    }

    const started = performance.now();
    const samples: Array<{ t: number; rss: Record<string, number | undefined> }> = [];
    const sample = () =>
      samples.push({
        t: (performance.now() - started) / 1000,
        rss: Object.fromEntries(fleet.instances.map((i) => [i.name, rssMb(i.pid)])),
      });
    sample();
    const sampler = setInterval(sample, 1000);
    let roll = 0;
    const pick = (): Op => {
      roll = (roll * 1103515245 + 12345) % 2 ** 31;
      let r = roll % 100;
      for (const [op, weight] of MIX) {
        if (r < weight) return op;
        r -= weight;
      }
      return "get item";
    };
    const load = startLoad(connections, async (w, i) => {
      const mine = owned.get(w) as { path: string; etag: string; reviews: string[] };
      let op = pick();
      if (op === "delete review" && mine.reviews.length === 0) op = "post review";
      const t0 = performance.now();
      let reply: Reply | undefined;
      let failure: string | undefined;
      try {
        switch (op) {
          case "get item":
            reply = await call(`${base}/employees/${(i % 60) + 1}`, { agent, headers });
            break;
          case "list":
            reply = await call(`${base}/employees?page=${(i % 3) + 1}&size=20&sort=lastName`, {
              agent,
              headers,
            });
            break;
          case "list reviews":
            reply = await call(`${base}/products/${(i % 16) + 1}/reviews?size=10`, { agent, headers });
            break;
          case "post review":
            reply = await call(`${base}/products/${(i % 16) + 1}/reviews`, {
              method: "POST",
              agent,
              headers: i % 2 ? { ...headers, "idempotency-key": `soak-${w}-${i}` } : headers,
              body: { author: `soak-${w}`, rating: (i % 5) + 1, comment: "x".repeat(i % 200) },
            });
            if (reply.status === 201) mine.reviews.push(new URL(reply.header("location") ?? "").pathname);
            break;
          case "put department":
            reply = await call(`${base}${mine.path}`, {
              method: "PUT",
              agent,
              headers: { ...headers, "if-match": mine.etag },
              body: { name: `soak-${w}-${i}`, city: i % 2 ? "Oslo" : "Bergen" },
            });
            if (reply.status === 200) mine.etag = reply.header("etag") ?? mine.etag;
            break;
          case "delete review":
            reply = await call(`${base}${mine.reviews.shift()}`, { method: "DELETE", agent, headers });
            break;
        }
      } catch (err) {
        failure = (err as NodeJS.ErrnoException).code ?? String(err);
      }
      latencies.push(performance.now() - t0);
      byOp[op] = (byOp[op] ?? 0) + 1;
      const key = reply ? String(reply.status) : `error ${failure}`;
      statuses[key] = (statuses[key] ?? 0) + 1;
      if (!reply || !EXPECTED[op].includes(reply.status)) {
        if (errors.length < 20)
          errors.push({
            op,
            status: reply?.status ?? (failure as string),
            body: reply?.body.slice(0, 300) ?? "",
          });
        else errors.push({ op, status: reply?.status ?? (failure as string), body: "" });
      }
    });
    await new Promise((r) => setTimeout(r, durationS * 1000));
    await load.stop();
    clearInterval(sampler);
    sample();
    const elapsed = (performance.now() - started) / 1000;
    agent.destroy();

    const total = Object.values(statuses).reduce((a, b) => a + b, 0);
    const sorted = [...latencies].sort((a, b) => a - b);
    const memory = fleet.instances.map((inst) => {
      const series = samples
        .map((s) => [s.t, s.rss[inst.name]] as const)
        .filter((p): p is readonly [number, number] => p[1] !== undefined);
      const after = series.filter(([t]) => t >= warmupS).map(([t, mb]) => [t / 60, mb] as [number, number]);
      const values = series.map(([, mb]) => mb);
      return {
        instance: inst.name,
        startMb: values[0] ?? Number.NaN,
        afterWarmupMb: after[0]?.[1] ?? Number.NaN,
        endMb: values.at(-1) ?? Number.NaN,
        maxMb: Math.max(...values),
        slopeMbPerMin: slope(after),
      };
    });
    const result = {
      date: new Date().toISOString(),
      node: process.version,
      cpus: `${cpus().length} × ${cpus()[0]?.model ?? "?"}`,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      loadAverageAtEnd: loadavg(),
      setup: {
        instances: instanceCount,
        connections,
        durationS,
        warmupS,
        mix: MIX,
        database: "PostgreSQL",
        proxy: "nginx",
      },
      requests: total,
      requestsPerSecond: total / elapsed,
      errors: errors.length,
      firstErrors: errors.slice(0, 20),
      statuses,
      operations: byOp,
      latencyMs: {
        p50: percentile(sorted, 50),
        p90: percentile(sorted, 90),
        p99: percentile(sorted, 99),
        max: sorted.at(-1),
      },
      memory,
      rssSamples: samples,
    };
    mkdirSync(RESULTS, { recursive: true });
    const file = join(RESULTS, `soak-${result.date.replace(/[:.]/g, "-")}.json`);
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);

    const f = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : "n/a");
    const lines = [
      `# Soak run`,
      "",
      `${result.date} · Node ${result.node} · ${result.cpus} · ${result.memoryGiB} GiB · load average at end ${result.loadAverageAtEnd.map((l) => l.toFixed(2)).join(" / ")}`,
      `${instanceCount} instances behind nginx, PostgreSQL + Redis shared; ${connections} keep-alive connections for ${durationS} s; RSS sampled every second, trend after a ${warmupS} s warm-up.`,
      "",
      `**Errors: ${errors.length}** (target 0) of ${total} requests (${f(result.requestsPerSecond, 0)} req/s); latency p50 ${f(result.latencyMs.p50)} ms, p90 ${f(result.latencyMs.p90)} ms, p99 ${f(result.latencyMs.p99)} ms, max ${f(result.latencyMs.max ?? Number.NaN)} ms`,
      "",
      "| Status | Count |",
      "|---|---:|",
      ...Object.entries(statuses)
        .sort()
        .map(([s, c]) => `| ${s} | ${c} |`),
      "",
      "| Operation | Share | Count |",
      "|---|---:|---:|",
      ...MIX.map(([op, w]) => `| ${op} | ${w} % | ${byOp[op] ?? 0} |`),
      "",
      "| Instance | RSS start (MB) | after warm-up | end | max | trend after warm-up (MB/min) |",
      "|---|---:|---:|---:|---:|---:|",
      ...memory.map(
        (m) =>
          `| ${m.instance} | ${f(m.startMb)} | ${f(m.afterWarmupMb)} | ${f(m.endMb)} | ${f(m.maxMb)} | ${f(m.slopeMbPerMin, 2)} |`,
      ),
      "",
      ...(errors.length > 0
        ? ["First errors:", ...errors.slice(0, 5).map((e) => `- ${e.op} → ${e.status} ${e.body}`), ""]
        : []),
      `JSON: ${file}`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    process.exitCode = errors.length > 0 ? 1 : 0;
  } finally {
    await close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
