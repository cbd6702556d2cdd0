#!/usr/bin/env node
// node apps/bench/src/run.mjs [--quick] [--only <id>[,<id>...]] [--micro | --no-micro]
//                             [--redis | --no-redis] [--startup | --no-startup] [--startup-runs <n>]
//                             [--generator wrk|autocannon] [--no-pin]
//                             [--duration <s>] [--connections <n>] [--out <dir>] [--profile]
//
// Starts each scenario's server in its own process, warms it up, loads it with wrk when it is
// installed (else, or with --generator autocannon, with autocannon; the same connections and
// duration everywhere), the server and the generator pinned to different cores where there are
// two or more (--no-pin: not pinned), and writes load.md / load.json (and micro.md / micro.json
// for the packages' micro-benchmarks) into apps/bench/results/.
// --redis: rate-limit decisions per second through RedisStore on one Redis node vs a 3-master
// Redis Cluster (throw-away servers; redis.md / redis.json), also part of a full run.
// --startup: the time a fresh node takes to import / require each published package's built
// entry, and its installed size, beside the peer packages it replaces (startup.md /
// startup.json; 20 processes per entry and mode, 3 with --quick), also part of a full or quick run.
// --profile runs every server under `node --cpu-prof` and adds profiles.md: self time by
// package and by function, to show where the time goes.
// Exits non-zero when a server does not start or a scenario gets no expected response at all;
// scenarios whose code is not in the repository yet are skipped with the reason.
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { issueBenchToken } from "./fixtures.mjs";
import {
  chooseGenerator,
  choosePinning,
  cpuTimeMs,
  instantiate,
  load,
  pinSelf,
  rawRequest,
  sampleRss,
  startServer,
  summarise,
  wrkSeconds,
} from "./harness.mjs";
import { runMicro } from "./micro.mjs";
import { profileReport } from "./profile.mjs";
import { runRedisDecisions } from "./redis.mjs";
import { addRatios, writeReport } from "./report.mjs";
import { groups, scenarios, Unavailable } from "./scenarios.mjs";
import { runStartup } from "./startup.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "../../..");

const { values: args } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    micro: { type: "boolean" },
    "no-micro": { type: "boolean", default: false },
    redis: { type: "boolean" },
    "no-redis": { type: "boolean", default: false },
    startup: { type: "boolean" },
    "no-startup": { type: "boolean", default: false },
    "startup-runs": { type: "string" },
    duration: { type: "string" },
    connections: { type: "string" },
    out: { type: "string" },
    list: { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
    generator: { type: "string" },
    "no-pin": { type: "boolean", default: false },
  },
});

if (args.list) {
  for (const s of scenarios) console.log(`${s.id.padEnd(22)} ${s.group.padEnd(11)} ${s.label}`);
  process.exit(0);
}

const outDir = resolve(args.out ?? join(here, "../results"));
let generator;
try {
  generator = await chooseGenerator(args.generator);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(2);
}
// wrk takes whole seconds: the settings say what was run.
const seconds = (value) => (generator.name === "wrk" ? wrkSeconds(value) : value);
const settings = {
  quick: args.quick,
  generator: {
    name: generator.name,
    version: generator.version,
    threads: generator.name === "wrk" ? 1 : undefined,
  },
  connections: Number(args.connections ?? generator.connections),
  pipelining: 1,
  durationSeconds: seconds(Number(args.duration ?? (args.quick ? 1.5 : 10))),
  warmupSeconds: seconds(args.quick ? 0.5 : 3),
};
const only = args.only?.split(",").map((s) => s.trim());
const unknown = only?.filter((id) => !scenarios.some((s) => s.id === id)) ?? [];
if (unknown.length > 0) {
  console.error(`unknown scenario(s): ${unknown.join(", ")} (see --list)`);
  process.exit(2);
}

// --micro / --redis / --startup alone run only those; a full run (not --quick) includes them all,
// a --quick run the start-up table (with a few processes per entry).
const startupAlone = args.startup === true && !only;
const skipLoad = ((args.micro === true || args.redis === true) && !only && !args.quick) || startupAlone;
const picked = args.micro === true || args.redis === true || args.startup === true;
const withMicro =
  args.micro === true || (!args.quick && !only && !args["no-micro"] && !picked && !startupAlone);
const withRedis =
  args.redis === true || (!args.quick && !only && !args["no-redis"] && !picked && !startupAlone);
const withStartup = args.startup === true || (!only && !args["no-startup"] && !picked);
const startupRuns = args["startup-runs"] === undefined ? undefined : Number(args["startup-runs"]);
if (startupRuns !== undefined && !(Number.isInteger(startupRuns) && startupRuns >= 1)) {
  console.error(`--startup-runs: a whole number of 1 or more, not ${args["startup-runs"]}`);
  process.exit(2);
}

let failed = false;

if (!skipLoad) {
  const selected = scenarios.filter((s) => !only || only.includes(s.id));
  const { token, publicJwk } = await issueBenchToken();
  const ctx = { token };
  const run = {
    startedAt: new Date().toISOString(),
    settings,
    machine: {
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? "unknown",
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      loadAverage: loadavg().map((l) => l.toFixed(2)),
    },
    results: [],
  };
  const profiles = [];

  // The server on one core, the generator on another. autocannon runs in this process, so this
  // process is pinned while the scenarios run (the servers get their own core through taskset).
  const pinning = await choosePinning(!args["no-pin"]);
  settings.pinning = pinning;
  if (pinning.server !== undefined && generator.name === "autocannon") await pinSelf(pinning.generator);
  console.log(
    `load generator: ${generator.name} ${generator.version}, ${settings.connections} connections; ` +
      (pinning.server !== undefined
        ? `server pinned to CPU ${pinning.server}, ${generator.name} to CPU ${pinning.generator}`
        : `not pinned (${pinning.reason})`),
  );

  for (const scenario of selected) {
    const base = { id: scenario.id, group: scenario.group, label: scenario.label };
    const definition = scenario.server();
    if (definition.unavailable) {
      console.log(`skip ${scenario.id}: not available yet (${definition.unavailable})`);
      run.results.push({
        ...base,
        status: "skipped",
        reason: `not available yet: ${definition.unavailable}`,
      });
      continue;
    }
    let server;
    const profileDir = join(outDir, "profiles", scenario.id);
    try {
      const nodeArgs = args.profile
        ? ["--cpu-prof", "--cpu-prof-dir", profileDir, ...(definition.nodeArgs ?? [])]
        : definition.nodeArgs;
      server = await startServer({
        ...definition,
        nodeArgs,
        env: { ...definition.env, BENCH_JWK: publicJwk },
        cpu: pinning.server,
      });
      const request = await scenario.prepare(server.url, ctx);
      await preflight(server.url, request);
      const loadSettings = {
        generator,
        connections: settings.connections,
        pipelining: settings.pipelining,
        cpu: pinning.generator,
      };
      // The warm-up counts every status (wrk's response() hook costs the generator, not the
      // server), so a server that answers anything but the expected status fails here.
      const warmup = summarise(
        await load(server.url, request, {
          ...loadSettings,
          duration: settings.warmupSeconds,
          exactStatus: true,
        }),
        request.expectStatus,
      );
      if (warmup.unexpectedStatus > 0) {
        throw new Error(
          `warm-up: ${warmup.unexpectedStatus} of ${warmup.requests} responses were not ${request.expectStatus} ` +
            `(status codes ${JSON.stringify(warmup.statusCodes)}, errors ${warmup.errors})`,
        );
      }
      const stopSampling = sampleRss(server.pid);
      const cpuBefore = await cpuTimeMs(server.pid);
      const result = await load(server.url, request, { ...loadSettings, duration: settings.durationSeconds });
      const cpuAfter = await cpuTimeMs(server.pid);
      const peakRssBytes = await stopSampling();
      const summary = summarise(result, request.expectStatus);
      // Server CPU per request (µs): robust to the CPU the load generator takes from the server.
      if (cpuBefore !== undefined && cpuAfter !== undefined && summary.requests > 0) {
        summary.cpuMicrosPerRequest = Math.round(((cpuAfter - cpuBefore) * 1000) / summary.requests);
        // The share of one core the server got: well under 100 % while it had requests waiting
        // means something else (another process, the generator) had its CPU, and req/s shows that.
        summary.serverCpuPercent = Math.round((cpuAfter - cpuBefore) / (summary.durationSeconds * 10));
      }
      const expected = summary.requests - summary.unexpectedStatus;
      if (expected === 0) {
        throw new Error(
          `no ${request.expectStatus} response in ${summary.requests} requests ` +
            `(errors ${summary.errors}, status codes ${JSON.stringify(summary.statusCodes)})`,
        );
      }
      run.results.push({ ...base, status: "ok", summary, peakRssBytes });
      console.log(
        `${scenario.id}: ${summary.requestsPerSecond} req/s, p50 ${summary.latencyMs.p50} ms, ` +
          `p99 ${summary.latencyMs.p99} ms, CPU ${summary.cpuMicrosPerRequest ?? "–"} µs/req, ` +
          `errors ${summary.errors}, unexpected status ${summary.unexpectedStatus}`,
      );
    } catch (error) {
      if (error instanceof Unavailable) {
        console.log(`skip ${scenario.id}: not available yet (${error.message})`);
        run.results.push({ ...base, status: "skipped", reason: `not available yet: ${error.message}` });
      } else {
        failed = true;
        const reason = error instanceof Error ? error.message : String(error);
        console.error(`FAIL ${scenario.id}: ${reason}`);
        run.results.push({ ...base, status: "failed", reason });
      }
    } finally {
      await server?.stop();
    }
    if (args.profile && server) {
      const report = await profileReport(profileDir, `${scenario.id}: ${scenario.label}`).catch(
        () => undefined,
      );
      if (report) profiles.push(report.markdown);
      else console.error(`no CPU profile was written for ${scenario.id} (did the server exit on SIGTERM?)`);
    }
  }
  if (pinning.server !== undefined && generator.name === "autocannon") await pinSelf(pinning.allowed);
  if (args.profile) {
    await mkdir(outDir, { recursive: true });
    await writeFile(join(outDir, "profiles.md"), `# CPU profiles\n\n${profiles.join("\n")}`);
    console.log(`written: ${join(outDir, "profiles.md")}`);
  }

  addRatios(run.results, groups);
  const md = await writeReport(outDir, settings.quick ? "quick" : "load", run, groups);
  console.log(`\n${md}`);
  console.log(`written: ${join(outDir, settings.quick ? "quick" : "load")}.{md,json}`);
}

if (withMicro) {
  const results = await runMicro({ repoRoot, outDir });
  if (results.some((r) => r.exitCode !== 0)) failed = true;
  console.log(`written: ${join(outDir, "micro")}.{md,json} (${results.length} package(s))`);
}

if (withRedis) {
  const redis = await runRedisDecisions({
    outDir,
    seconds: Number(args.duration ?? 5),
    concurrency: Number(args.connections ?? 64),
  });
  if (redis.failed) failed = true;
  if (redis.markdown) console.log(`\n${redis.markdown}`);
  console.log(`written: ${join(outDir, "redis")}.{md,json}`);
}

if (withStartup) {
  const startup = await runStartup({ outDir, quick: args.quick, runs: startupRuns });
  if (startup.failed) failed = true;
  console.log(`\n${startup.markdown}`);
  console.log(`written: ${join(outDir, "startup")}.{md,json}`);
}

process.exit(failed ? 1 : 0);

/** One request before the load, so a wrong status or body fails loudly instead of being measured. */
async function preflight(url, request) {
  const shaped = instantiate(request, `preflight-${process.pid}-${Date.now().toString(36)}`);
  const method = shaped.method ?? "GET";
  const response = await rawRequest(url, { ...shaped, method });
  if (response.status !== request.expectStatus) {
    throw new Error(
      `${method} ${shaped.path} → ${response.status}, expected ${request.expectStatus}: ${response.text.slice(0, 300)}`,
    );
  }
  if (request.expectBody && !request.expectBody.test(response.text)) {
    throw new Error(`${method} ${shaped.path}: unexpected body ${response.text.slice(0, 300)}`);
  }
}
