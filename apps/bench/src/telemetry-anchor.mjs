#!/usr/bin/env node
// The telemetry anchor, in one command: the reference server with its telemetry off, on (metrics
// only) and on with every request's span batched to OTLP, beside the peer stack without and with
// the standard OpenTelemetry setup (servers/peer-stack-otel.mjs), the same GET /employees/{id}.
//
//   node apps/bench/src/telemetry-anchor.mjs [--rounds 2] [--duration 10] [--connections 32]
//     [--callgrind-warmup 8000] [--callgrind-requests 2000] [--no-callgrind] [--no-wrk] [--out <dir>]
//
// 1. Instructions a request on the main thread, by callgrind.mjs (one `--scenario` run a row, back
//    to back: minutes each).
// 2. wrk requests/s: the server pinned to the first allowed CPU (`taskset -c 0`), wrk to the last
//    (`taskset -c 1 wrk -t1 -c<n> -d<s>`), `--rounds` rounds, the rows in turn, in reverse order
//    every other round, so a change of the machine's load falls on all of them; the load average
//    before each run is kept beside its figures.
//
// Each row with telemetry says what its Prometheus metrics recorded for the route while it was
// measured (a row "with telemetry" that recorded nothing measured a server without it). The
// ratio printed last is the one users compare: the reference server with full telemetry
// (svc-stack-traced) over the peer stack with OpenTelemetry (peer-stack-otel), req/s in the same
// round. Output: the tables on stdout, and `telemetry-anchor-<time>.md` / `.json` (every figure,
// every run's load average) in `--out` (default apps/bench/results/).
import { execFile, spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { issueBenchToken } from "./fixtures.mjs";
import {
  chooseGenerator,
  choosePinning,
  cpuTimeMs,
  load,
  rawRequest,
  startServer,
  summarise,
} from "./harness.mjs";
import { scenarios } from "./scenarios.mjs";
import { scrapeRecorded } from "./telemetry-check.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const exec = promisify(execFile);

/** The rows, in the order of the tables: the reference server's three settings, then the peers. */
const ANCHOR_ROWS = [
  { id: "svc-stack-telemetry-off", label: "reference server, TELEMETRY=off" },
  { id: "svc-stack-metrics", label: "reference server, TELEMETRY=on (metrics)" },
  { id: "svc-stack-traced", label: "reference server, TELEMETRY=on + spans to OTLP (refused)" },
  { id: "peer-stack", label: "peer stack, no OpenTelemetry" },
  {
    id: "peer-stack-otel",
    label: "peer stack + OpenTelemetry (NodeSDK, http + Express, Prometheus, spans to OTLP)",
  },
];
/** Users' target: the reference server with full telemetry serves this many times the peer stack with OpenTelemetry. */
const TARGET = 6;
const FULL = "svc-stack-traced";
const PEER = "peer-stack-otel";

const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "2" },
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "3" },
    connections: { type: "string", default: "32" },
    "callgrind-warmup": { type: "string", default: "8000" },
    "callgrind-requests": { type: "string", default: "2000" },
    "no-callgrind": { type: "boolean", default: false },
    "no-wrk": { type: "boolean", default: false },
    out: { type: "string" },
  },
});
const rounds = Number(args.rounds);
const duration = Number(args.duration);
const connections = Number(args.connections);
for (const [name, value] of [
  ["rounds", rounds],
  ["duration", duration],
  ["connections", connections],
]) {
  if (!(Number.isInteger(value) && value >= 1)) {
    console.error(`--${name}: a whole number of 1 or more, not ${args[name]}`);
    process.exit(2);
  }
}
const outDir = resolve(args.out ?? join(here, "../results"));
const startedAt = new Date().toISOString();

/** `uptime` as the shell prints it, for the record of each run. */
async function uptime() {
  try {
    return (await exec("uptime")).stdout.trim();
  } catch {
    return `load average: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(", ")}`;
  }
}

/**
 * The commit measured, and the files of the servers' code that differed from it (the working
 * tree is what runs).
 */
async function checkout() {
  const git = async (...gitArgs) => (await exec("git", gitArgs, { cwd: here })).stdout.trimEnd();
  try {
    const dirty = await git(
      "status",
      "--porcelain",
      "--",
      "../../reference-server",
      "../../../packages",
      "..",
    );
    return { head: await git("rev-parse", "--short", "HEAD"), changed: dirty ? dirty.split("\n") : [] };
  } catch {
    return undefined;
  }
}

const report = {
  startedAt,
  checkout: await checkout(),
  machine: {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round(totalmem() / 2 ** 30),
  },
  rows: ANCHOR_ROWS,
  callgrind: [],
  wrk: { settings: undefined, runs: [] },
};
let failed = false;

if (!args["no-callgrind"]) {
  for (const row of ANCHOR_ROWS) {
    // A run ended by a signal (another process's, on a shared machine) is run once more, and
    // the report says so.
    let killed;
    for (let attempt = 1; attempt <= 2; attempt++) {
      const before = await uptime();
      console.error(`callgrind ${row.id} (${before})`);
      try {
        const figure = await callgrind(row.id);
        report.callgrind.push({
          id: row.id,
          uptimeBefore: before,
          figure,
          ...(killed ? { retriedAfter: killed } : {}),
        });
        console.log(JSON.stringify(figure));
        break;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        console.error(`FAIL callgrind ${row.id}: ${reason}`);
        killed = /exited with SIG\w+/.exec(reason)?.[0];
        if (killed && attempt === 1) continue;
        failed = true;
        report.callgrind.push({ id: row.id, uptimeBefore: before, error: reason });
        break;
      }
    }
  }
}

if (!args["no-wrk"]) {
  const generator = await chooseGenerator("wrk");
  const pinning = await choosePinning(true);
  // The server on the first allowed CPU, wrk on the last.
  const cpu =
    pinning.server === undefined
      ? { reason: pinning.reason }
      : { server: pinning.generator, generator: pinning.server };
  report.wrk.settings = {
    generator: { name: generator.name, version: generator.version, threads: 1 },
    connections,
    durationSeconds: duration,
    warmupSeconds: Number(args.warmup),
    rounds,
    pinning: cpu,
  };
  const { token, publicJwk } = await issueBenchToken();
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? ANCHOR_ROWS : [...ANCHOR_ROWS].reverse();
    for (const row of order) {
      const before = await uptime();
      try {
        const result = await wrkRow(row.id, { generator, cpu, token, publicJwk });
        report.wrk.runs.push({ id: row.id, round, uptimeBefore: before, ...result });
        console.error(
          `wrk round ${round} ${row.id}: ${result.summary.requestsPerSecond} req/s, ` +
            `CPU ${result.summary.cpuMicrosPerRequest ?? "–"} µs/req, server CPU ${result.summary.serverCpuPercent ?? "–"} %` +
            `${result.telemetry ? `, recorded ${result.telemetry.recorded ?? result.telemetry.error}` : ""} (${before})`,
        );
      } catch (error) {
        failed = true;
        const reason = error instanceof Error ? error.message : String(error);
        console.error(`FAIL wrk round ${round} ${row.id}: ${reason}`);
        report.wrk.runs.push({ id: row.id, round, uptimeBefore: before, error: reason });
      }
    }
  }
}

const markdown = anchorMarkdown(report);
console.log(`\n${markdown}`);
await mkdir(outDir, { recursive: true });
const stamp = startedAt.replace(/[:.]/g, "-");
await writeFile(join(outDir, `telemetry-anchor-${stamp}.md`), `${markdown}\n`);
await writeFile(join(outDir, `telemetry-anchor-${stamp}.json`), `${JSON.stringify(report, null, 2)}\n`);
console.log(`written: ${join(outDir, `telemetry-anchor-${stamp}`)}.{md,json}`);
process.exit(failed ? 1 : 0);

/** One `callgrind.mjs --scenario <id>` run: its figure (the JSON line it prints). */
function callgrind(id) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      [
        join(here, "callgrind.mjs"),
        "--scenario",
        id,
        "--warmup",
        args["callgrind-warmup"],
        "--requests",
        args["callgrind-requests"],
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let stdout = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      const line = stdout
        .trim()
        .split("\n")
        .reverse()
        .find((l) => l.startsWith("{"));
      if (code !== 0 || line === undefined)
        reject(new Error(`callgrind.mjs exited with ${signal ?? code}\n${stdout}`));
      else resolvePromise(JSON.parse(line));
    });
  });
}

/** One row under wrk: start, check one request, warm up (every status counted), measure. */
async function wrkRow(id, { generator, cpu, token, publicJwk }) {
  const scenario = scenarios.find((s) => s.id === id);
  if (!scenario) throw new Error(`no scenario ${id}`);
  const definition = scenario.server();
  if (definition.unavailable) throw new Error(`${id}: ${definition.unavailable}`);
  const server = await startServer({
    ...definition,
    env: { ...definition.env, BENCH_JWK: publicJwk },
    cpu: cpu.server,
  });
  try {
    const request = await scenario.prepare(server.url, { token });
    const first = await rawRequest(server.url, { ...request, method: request.method ?? "GET" });
    if (first.status !== request.expectStatus)
      throw new Error(
        `${request.path} → ${first.status}, expected ${request.expectStatus}: ${first.text.slice(0, 300)}`,
      );
    const settings = { generator, connections, pipelining: 1, cpu: cpu.generator };
    const warmup = summarise(
      await load(server.url, request, { ...settings, duration: Number(args.warmup), exactStatus: true }),
      request.expectStatus,
    );
    if (warmup.unexpectedStatus > 0)
      throw new Error(
        `warm-up: ${warmup.unexpectedStatus} of ${warmup.requests} responses were not ${request.expectStatus} ` +
          `(${JSON.stringify(warmup.statusCodes)})`,
      );
    const cpuBefore = await cpuTimeMs(server.pid);
    const summary = summarise(
      await load(server.url, request, { ...settings, duration }),
      request.expectStatus,
    );
    const cpuAfter = await cpuTimeMs(server.pid);
    if (cpuBefore !== undefined && cpuAfter !== undefined && summary.requests > 0) {
      summary.cpuMicrosPerRequest = Math.round(((cpuAfter - cpuBefore) * 1000) / summary.requests);
      summary.serverCpuPercent = Math.round((cpuAfter - cpuBefore) / (summary.durationSeconds * 10));
    }
    if (summary.requests - summary.unexpectedStatus === 0)
      throw new Error(`no ${request.expectStatus} response in ${summary.requests} requests`);
    const telemetry = server.metricsUrl === undefined ? undefined : await scrapeRecorded(server.metricsUrl);
    return {
      summary,
      warmupRequests: warmup.requests,
      ...(telemetry === undefined ? {} : { telemetry }),
    };
  } finally {
    await server.stop();
  }
}

/** The two tables and the ratio, as Markdown. */
function anchorMarkdown({ startedAt, checkout, machine, rows, callgrind, wrk }) {
  const n = (value) => (typeof value === "number" ? value.toLocaleString("en") : "–");
  const lines = [
    "# Telemetry anchor: the reference server beside the peer stack with OpenTelemetry",
    "",
    `${startedAt} · Node ${machine.node} · ${machine.cpus} × ${machine.cpuModel} · ${machine.memoryGiB} GiB` +
      (checkout
        ? ` · at ${checkout.head}${checkout.changed.length > 0 ? `, with ${checkout.changed.length} file(s) of the servers' code changed in the working tree (listed in the JSON)` : ""}`
        : ""),
    "",
    "GET /employees/{id} with `Authorization: Bearer <JWT>` and `Accept: application/json` → 200. " +
      "Spans of both telemetry rows go to OTLP/HTTP at `http://127.0.0.1:9/v1/traces`, which refuses " +
      "every connection, through a BatchSpanProcessor. *recorded*: the requests the server's " +
      "Prometheus metrics counted for the route (warm-up included).",
  ];
  if (callgrind.length > 0) {
    const main = (figure) => figure?.perRequestByThread?.["1"] ?? figure?.perRequest;
    const of = (id) => callgrind.find((c) => c.id === id)?.figure;
    lines.push(
      "",
      "## Instructions a request (callgrind, main thread)",
      "",
      "| row | scenario | instructions/request, main thread | whole process | recorded | `uptime` before |",
      "|---|---|---:|---:|---:|---|",
    );
    for (const row of rows) {
      const entry = callgrind.find((c) => c.id === row.id);
      const figure = entry?.figure;
      lines.push(
        `| ${row.label} | \`${row.id}\`${entry?.retriedAfter ? ` (run again: the first ${entry.retriedAfter.replace("exited with", "ended by")})` : ""} | ` +
          `${entry?.error ? `failed: ${entry.error.split("\n")[0]}` : n(main(figure))} | ` +
          `${n(figure?.perRequest)} | ${recorded(figure?.telemetry)} | ${entry?.uptimeBefore?.replace(/^.*load/, "load") ?? "–"} |`,
      );
    }
    if (main(of(FULL)) && main(of(PEER)))
      lines.push(
        "",
        `${PEER} / ${FULL}, main thread: **${(main(of(PEER)) / main(of(FULL))).toFixed(2)} ×** ` +
          `(whole process ${(of(PEER).perRequest / of(FULL).perRequest).toFixed(2)} ×)`,
      );
  }
  if (wrk.runs.length > 0) {
    const { settings } = wrk;
    const roundsRun = [...new Set(wrk.runs.map((r) => r.round))].sort((a, b) => a - b);
    lines.push(
      "",
      "## Requests/s (wrk)",
      "",
      `wrk ${settings.generator.version}, 1 thread, ${settings.connections} connections, ${settings.warmupSeconds} s ` +
        `warm-up then ${settings.durationSeconds} s measured; ` +
        (settings.pinning.server === undefined
          ? `not pinned (${settings.pinning.reason})`
          : `server on CPU ${settings.pinning.server}, wrk on CPU ${settings.pinning.generator}`) +
        `; ${roundsRun.length} round(s), the rows in turn, reversed every other round.`,
      "",
      `| row | ${roundsRun.map((r) => `req/s round ${r}`).join(" | ")} | CPU µs/req | server CPU % | p99 ms | recorded |`,
      `|---|${roundsRun.map(() => "---:").join("|")}|---:|---:|---:|---:|`,
    );
    const runsOf = (id) => wrk.runs.filter((r) => r.id === id);
    const range = (values) => {
      const known = values.filter((v) => typeof v === "number");
      if (known.length === 0) return "–";
      const low = Math.min(...known);
      const high = Math.max(...known);
      return low === high ? n(low) : `${n(low)}–${n(high)}`;
    };
    for (const row of rows) {
      const runs = runsOf(row.id);
      const perRound = roundsRun.map((round) => {
        const run = runs.find((r) => r.round === round);
        return run?.error ? "failed" : n(run?.summary.requestsPerSecond);
      });
      lines.push(
        `| ${row.label} | ${perRound.join(" | ")} | ${range(runs.map((r) => r.summary?.cpuMicrosPerRequest))} | ` +
          `${range(runs.map((r) => r.summary?.serverCpuPercent))} | ${range(runs.map((r) => r.summary?.latencyMs.p99))} | ` +
          `${runs.map((r) => recorded(r.telemetry)).join(" / ")} |`,
      );
    }
    const ratios = roundsRun
      .map((round) => {
        const full = runsOf(FULL).find((r) => r.round === round)?.summary?.requestsPerSecond;
        const peer = runsOf(PEER).find((r) => r.round === round)?.summary?.requestsPerSecond;
        return full && peer ? { round, ratio: full / peer } : undefined;
      })
      .filter(Boolean);
    if (ratios.length > 0) {
      const low = Math.min(...ratios.map((r) => r.ratio));
      const high = Math.max(...ratios.map((r) => r.ratio));
      lines.push(
        "",
        `${FULL} / ${PEER}, req/s in the same round: ` +
          ratios.map((r) => `round ${r.round} **${r.ratio.toFixed(2)} ×**`).join(", ") +
          `. Target ≥ ${TARGET} ×: ${low >= TARGET ? "met in every round" : high >= TARGET ? "met in some rounds only" : "not met"}.`,
      );
    }
    lines.push("", "`uptime` before each wrk run:", "");
    for (const run of wrk.runs) lines.push(`- round ${run.round} \`${run.id}\`: ${run.uptimeBefore}`);
  }
  return lines.join("\n");
}

/** What a row's metrics recorded, for a table cell. */
function recorded(telemetry) {
  if (telemetry === undefined) return "–";
  if (telemetry.error) return `unreadable (${telemetry.error})`;
  return telemetry.recorded.toLocaleString("en");
}
