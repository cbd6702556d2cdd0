// Runs redis-decisions.mjs in its own process (it imports the workspaces' TypeScript sources
// through the ts-loader) and writes redis.md / redis.json: rate-limit decisions per second
// through RedisStore on one Redis node vs a 3-master Redis Cluster.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

function onPath(program) {
  const probe = spawnSync(program, ["--version"], { stdio: "ignore" });
  return !probe.error && probe.status === 0;
}

/** Markdown table of one run's results (decisions/s, latency, ratio to the single node). */
export function redisMarkdown(run) {
  const [base] = run.results;
  const rows = run.results.map(
    (r) =>
      `| ${r.label} | ${r.perSecond.toLocaleString("en-US")} | ${r.p50Ms} | ${r.p99Ms} | ${r.errors} | ${
        base && base.perSecond > 0 ? (r.perSecond / base.perSecond).toFixed(2) : ""
      } |`,
  );
  return [
    "# Rate-limit decisions through RedisStore: one node vs a 3-master cluster",
    "",
    `${run.settings.concurrency} concurrent decisions (each loop awaits the previous), ${run.settings.keys.toLocaleString("en-US")} clients, fixed window, ` +
      `${run.settings.warmupSeconds} s warm-up, ${run.settings.seconds} s measured, ioredis; ` +
      `Node ${run.machine.node}, ${run.machine.cpus} CPUs, load average ${run.machine.loadAverage.join(" ")} at the start.`,
    "",
    "| target | decisions/s | p50 ms | p99 ms | errors | × one node |",
    "|---|---:|---:|---:|---:|---:|",
    ...rows,
    "",
  ].join("\n");
}

/** Runs the scenario; `{ failed, markdown }`. Skipped (not failed) without redis-server. */
export async function runRedisDecisions({ outDir, seconds = 5, concurrency = 64 }) {
  if (!onPath("redis-server") || !onPath("redis-cli")) {
    console.log("skip redis-decisions: redis-server or redis-cli is not on the PATH");
    return { failed: false, markdown: undefined };
  }
  await mkdir(outDir, { recursive: true });
  const jsonFile = join(outDir, "redis.json");
  const machine = {
    node: process.version,
    cpus: cpus().length,
    loadAverage: loadavg().map((l) => l.toFixed(2)),
  };
  console.log(`redis-decisions: ${seconds} s per target, ${concurrency} concurrent`);
  const code = await new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        join(here, "ts-loader.mjs"),
        join(here, "redis-decisions.mjs"),
        "--seconds",
        String(seconds),
        "--concurrency",
        String(concurrency),
        "--json",
        jsonFile,
      ],
      { stdio: ["ignore", "inherit", "inherit"] },
    );
    child.on("close", resolve);
  });
  if (code !== 0 || !existsSync(jsonFile)) {
    console.error(`FAIL redis-decisions: exited with ${code}`);
    return { failed: true, markdown: undefined };
  }
  const run = {
    ...JSON.parse(await readFile(jsonFile, "utf8")),
    machine,
    startedAt: new Date().toISOString(),
  };
  await writeFile(jsonFile, `${JSON.stringify(run, null, 2)}\n`);
  const markdown = redisMarkdown(run);
  await writeFile(join(outDir, "redis.md"), markdown);
  return { failed: false, markdown };
}
