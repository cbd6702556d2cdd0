// Instructions per request of a bench server, counted by valgrind's callgrind: a figure that does
// not drift with what else runs on the machine, unlike req/s and (less so) CPU µs/req. The server
// runs under `valgrind --tool=callgrind --instr-atstart=no`; this process warms it up with plain
// keep-alive requests (so V8 has optimised the hot path), switches collection on with
// `callgrind_control -i on`, sends the measured requests, switches it off, dumps, and divides the
// instructions by the requests.
//
//   node apps/bench/src/callgrind.mjs [--root <repository>] [--warmup 4000] [--requests 2000]
//     [--connections 8] [--keep <dir>] [--scenario svc-stack] [--soap [--signed]] [--frameworks]
//     [--readme [--rounds 2]] [--cache-sim] [--no-publishing]
//
// `--scenario` (default `svc-stack`: the reference server's GET /employees/{id}, with a token
// from its own /auth/token; `svc-stack-telemetry-off`, `svc-stack-metrics` and `svc-stack-traced`
// are the same server with its telemetry set) takes any scenario of scenarios.mjs whose server is a script of
// src/servers/, such as `packages-readme`, `soap-envelope-node`, `node-soap-node` or
// `soap-floor-node` (given the bench token and its key, as run.mjs gives them). `--soap`
// measures those three one after the other, with the same getCustomer request, and prints the
// SOAP layer (server − floor) and the ratios node-soap / soap-envelope, whole server and layer;
// with `--signed`, their `-signed` scenarios (a request signed with WS-Security X.509, checked).
// `--frameworks` measures packages-fastify and fastify-peers, then packages-hono and hono-peers,
// and prints each peer's instructions over the packages' app on the same framework. `--readme`
// measures readme-floor and packages-readme in turn, `--rounds` times, and prints the difference.
//
// `--no-publishing` builds the packages as if none published a decision (every `hasSubscribers`
// read in their sources is `false`, so the decisions' branches are dead code): the same scenario
// with and without it gives what the channels cost a request when nobody subscribes.
//
// `--cache-sim` adds callgrind's cache and branch simulation (valgrind's model of this host's
// caches, not its hardware counters, which a virtual machine may not expose): each figure then
// also has `events`, the main thread's counts a request of every event callgrind collected (Ir
// instructions, Dr/Dw data reads and writes, D1mr/D1mw first-level data misses, DLmr/DLmw
// last-level misses, Bc/Bcm conditional branches and mispredictions, Bi/Bim indirect ones). It
// answers why two servers with the same instructions take different CPU time. About twice as slow.
//
// A scenario's own Node.js flags are kept (the TypeScript loader aside: the bundle needs none), so
// peer-stack-otel runs behind the OpenTelemetry loader hook and its `--import`ed SDK setup, as
// unbundled: the instrumented packages stay external to the bundle, and the hook patches them as
// they load. A scenario with `metrics` (its Prometheus port's variable, given a free port) also
// has `telemetry` in its figure: the requests its metrics recorded for the route (warm-up and
// measured ones), so a row measured "with telemetry" shows it was live.
//
// `BENCH_NODE_ARGS` adds Node.js flags to the measured server, the reference server too (`--perf-basic-prof` for
// callgrind-profile.mjs, `--no-turbo-inlining` so each function keeps its own instructions);
// NODE_OPTIONS takes only some of them.
//
// `--root` names another checkout (a worktree of an older commit), so the same client measures
// both sides of an A/B; its server runs from its own sources (packages bundled from src/).
import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile } from "node:fs/promises";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort } from "@svc/test-utils/free-port";
import { build } from "esbuild";
import { issueBenchToken } from "./fixtures.mjs";
import { send, waitReady } from "./keep-alive-load.mjs";
import { REFERENCE_ENV, referenceNodeFlags } from "./reference-flags.mjs";
import { scenarios } from "./scenarios.mjs";
import { scrapeRecorded } from "./telemetry-check.mjs";
import { workspaceSources } from "./workspace-sources.mjs";

const exec = promisify(execFile);
// valgrind names its control pipes after $HOST, which the server gets as its listen address:
// callgrind_control must see the same value to find them.
const control = (...args) => exec("callgrind_control", args, { env: { ...process.env, HOST: "127.0.0.1" } });
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index === -1 ? fallback : args[index + 1];
};
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(option("root", join(here, "../../..")));
const warmup = Number(option("warmup", "4000"));
const requests = Number(option("requests", "2000"));
const connections = Number(option("connections", "8"));
const keep = option("keep", undefined);
const cacheSim = args.includes("--cache-sim");
const noPublishing = args.includes("--no-publishing");
const outDir = keep ?? (await mkdtemp(join(tmpdir(), "svc-callgrind-")));
await mkdir(outDir, { recursive: true });

if (args.includes("--soap")) {
  // `--signed`: the same three with the getCustomer request signed (WS-Security X.509), each
  // SOAP server checking the signature (soap-envelope's wsSecurity; node-soap behind the checks
  // a team writes around xml-crypto).
  const signed = args.includes("--signed") ? "-signed" : "";
  const [floorId, envelopeId, nodeSoapId] = ["soap-floor", "soap-envelope", "node-soap"].map(
    (name) => `${name}${signed}-node`,
  );
  const figures = {};
  for (const id of [floorId, envelopeId, nodeSoapId]) {
    figures[id] = await measure(id);
    console.log(JSON.stringify(figures[id]));
  }
  const floor = mainThread(figures[floorId]);
  const envelope = mainThread(figures[envelopeId]);
  const nodeSoap = mainThread(figures[nodeSoapId]);
  const row = (name, value) =>
    `| ${name} | ${value.toLocaleString("en")} | ${(value - floor).toLocaleString("en")} |`;
  console.log(
    [
      "",
      `| server (getCustomer${signed ? " signed" : ""}, main thread) | instructions/message | SOAP layer (− floor) |`,
      "|---|---:|---:|",
      row(floorId, floor),
      row(envelopeId, envelope),
      row(nodeSoapId, nodeSoap),
      "",
      `node-soap / soap-envelope: whole server ${(nodeSoap / envelope).toFixed(2)} ×, ` +
        `SOAP layer ${((nodeSoap - floor) / (envelope - floor)).toFixed(2)} ×`,
    ].join("\n"),
  );
} else if (args.includes("--frameworks")) {
  // The packages' app against the peers users would pick on the same framework, one pair at a
  // time: the ratio is the peer's instructions over the packages' (above 1: the packages do less).
  const pairs = [
    ["packages-fastify", "fastify-peers"],
    ["packages-hono", "hono-peers"],
  ];
  const rows = [];
  for (const [packages, peers] of pairs) {
    const ours = await measure(packages);
    console.log(JSON.stringify(ours));
    const theirs = await measure(peers);
    console.log(JSON.stringify(theirs));
    rows.push(
      `| ${packages} | ${mainThread(ours).toLocaleString("en")} | ${peers} | ${mainThread(theirs).toLocaleString("en")} | ` +
        `${(mainThread(theirs) / mainThread(ours)).toFixed(2)} × | ${(theirs.perRequest / ours.perRequest).toFixed(2)} × |`,
    );
  }
  console.log(
    [
      "",
      "| @svc row | instructions/request (main thread) | peer row | instructions/request (main thread) | peer / @svc | peer / @svc, whole process |",
      "|---|---:|---|---:|---:|---:|",
      ...rows,
    ].join("\n"),
  );
} else if (args.includes("--readme")) {
  // The READMEs app against its floor (the same response on Express, none of the packages'
  // decisions), alternating, `--rounds` times (2 by default): what the packages' decisions cost,
  // and whether the app could reach a bound at all.
  const rows = [];
  for (let round = 0; round < Number(option("rounds", "2")); round++) {
    const floor = await measure("readme-floor");
    console.log(JSON.stringify(floor));
    const app = await measure("packages-readme");
    console.log(JSON.stringify(app));
    rows.push(
      `| ${round + 1} | ${mainThread(floor).toLocaleString("en")} | ${mainThread(app).toLocaleString("en")} | ` +
        `${(mainThread(app) - mainThread(floor)).toLocaleString("en")} |`,
    );
  }
  console.log(
    [
      "",
      "| round | readme-floor | packages-readme | decisions (app − floor) |",
      "|---|---:|---:|---:|",
      ...rows,
    ].join("\n"),
  );
} else {
  console.log(JSON.stringify(await measure(option("scenario", "svc-stack"))));
}

/** A measurement's instructions a request on the main thread (the whole process's if not split by thread). */
function mainThread(figure) {
  return figure.perRequestByThread["1"] ?? figure.perRequest;
}

/** Starts `id`'s server under callgrind, warms it up, and counts the measured requests. */
async function measure(id) {
  const scenario = scenarios.find((s) => s.id === id);
  if (!scenario) throw new Error(`no scenario ${id}`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const { token, publicJwk } = await issueBenchToken();
  const server = await bundled(scenario, port, publicJwk);
  const child = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      "--instr-atstart=no",
      // One file per thread: the main thread (JavaScript, the HTTP and SQLite work) apart from
      // V8's background compiler and the libuv pool (the logger's writes).
      "--separate-threads=yes",
      ...(cacheSim ? ["--cache-sim=yes", "--branch-sim=yes"] : []),
      `--callgrind-out-file=${join(outDir, "callgrind.out.%p")}`,
      process.execPath,
      ...server.nodeArgs,
      server.bundle,
    ],
    { cwd: server.cwd, env: server.env, stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  try {
    await waitReady(child, `${url}${server.readyPath}`, {
      status: server.readyStatus,
      timeoutMs: 300_000,
      detail: () => stderr,
    });
    const started = Date.now();
    const phase = (name) =>
      process.stderr.write(`${id}: ${name} after ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
    // svc-stack gets a token from its own /auth/token; the others check the bench token, if any.
    const plan = await scenario.prepare(url, { token });
    const agent = new Agent({ keepAlive: true, maxSockets: connections });
    await send(url, agent, plan, warmup, connections);
    phase("warm");
    agent.destroy();
    await control("-i", "on", String(child.pid));
    const measured = new Agent({ keepAlive: true, maxSockets: connections });
    await send(url, measured, plan, requests, connections);
    measured.destroy();
    phase("measured");
    await control("-i", "off", String(child.pid));
    await control("--dump", String(child.pid));
    // The dump is written by the server's own thread; give it time to finish.
    await new Promise((r) => setTimeout(r, 3000));
    const files = (await readdir(outDir)).filter((f) => f.startsWith(`callgrind.out.${child.pid}`));
    let total = 0;
    const threads = {};
    let events;
    for (const file of files) {
      const text = await readFile(join(outDir, file), "utf8");
      const summary = /^totals: (\d+)(.*)$/m.exec(text);
      if (!summary) continue;
      total += Number(summary[1]);
      const thread = /^thread: (\d+)/m.exec(text)?.[1] ?? "all";
      threads[thread] = (threads[thread] ?? 0) + Math.round(Number(summary[1]) / requests);
      if (cacheSim && thread === "1") {
        const names = /^events: (.*)$/m.exec(text)?.[1].trim().split(/\s+/) ?? [];
        const counts = [summary[1], ...summary[2].trim().split(/\s+/)].map(Number);
        events = Object.fromEntries(names.map((name, i) => [name, Math.round((counts[i] ?? 0) / requests)]));
      }
    }
    // What the server's telemetry recorded (warm-up and measured requests), when it has metrics.
    const telemetry = server.metricsUrl === undefined ? undefined : await scrapeRecorded(server.metricsUrl);
    return {
      scenario: id,
      root,
      path: plan.path,
      warmup,
      requests,
      connections,
      ...(noPublishing ? { publishing: false } : {}),
      instructions: total,
      perRequest: Math.round(total / requests),
      perRequestByThread: threads,
      ...(events === undefined ? {} : { events }),
      ...(telemetry === undefined ? {} : { telemetry }),
      files: files.map((f) => join(outDir, f)),
    };
  } finally {
    child.kill("SIGKILL");
  }
}

/**
 * The scenario's server bundled into one file (the workspace packages from their sources, as the
 * ts-loader resolves them; node_modules stay external) at the same depth as its source, so its
 * paths relative to import.meta.url still hold: under valgrind, loading hundreds of modules
 * through the loader hooks takes minutes.
 */
async function bundled(scenario, port, publicJwk) {
  const sources = workspaceSources(root);
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: "127.0.0.1",
    NODE_ENV: "production",
    BENCH_JWK: publicJwk,
  };
  delete env.REDIS_URL;
  const spec = scenario.server();
  if (spec.unavailable) throw new Error(`${scenario.id}: ${spec.unavailable}`);
  // The variable naming the port of the server's Prometheus metrics, given a free port: the
  // figure then says what the server recorded while it was measured.
  const metricsPort = spec.metrics === undefined ? undefined : await freePort();
  const metricsUrl =
    spec.metrics === undefined
      ? undefined
      : `http://127.0.0.1:${metricsPort}${spec.metrics.path ?? "/metrics"}`;
  /** The scenario's environment over this one's: a null value removes the variable. */
  const withSpecEnv = () => {
    for (const [name, value] of Object.entries(spec.env ?? {})) {
      if (value === null) delete env[name];
      else env[name] = value;
    }
    if (spec.metrics !== undefined) env[spec.metrics.portEnv] = String(metricsPort);
  };
  if (spec.reference) {
    // The reference server (svc-stack and its variants), from `root`'s entry point.
    const serverDir = join(root, "apps/reference-server");
    Object.assign(env, REFERENCE_ENV);
    withSpecEnv();
    const bundle = join(serverDir, "dist", "callgrind-main.mjs");
    await esbuild(join(serverDir, "src/main.ts"), bundle, sources);
    // As `npm start` of the checkout measured runs it (see referenceNodeFlags).
    const nodeArgs = [
      ...referenceNodeFlags(serverDir),
      ...(process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean),
    ];
    return { bundle, cwd: serverDir, env, nodeArgs, readyPath: "/health", readyStatus: 200, metricsUrl };
  }
  if (!spec.script) throw new Error(`${scenario.id}: no script`);
  // src/servers/x.mjs of this checkout → apps/bench/dist/servers/x.mjs of `root`: same depth.
  const source = join(root, "apps/bench/src", relative(here, spec.script));
  const bundle = join(
    root,
    "apps/bench/dist",
    relative(join(root, "apps/bench/src"), dirname(source)),
    `callgrind-${basename(source)}`,
  );
  await esbuild(source, bundle, sources);
  withSpecEnv();
  return {
    bundle,
    cwd: join(root, "apps/bench"),
    env,
    // The bundle needs no TypeScript loader; the scenario's other flags stay, such as the
    // OpenTelemetry loader hook and the `--import` of its setup (peer-stack-otel): they run
    // before the bundle is loaded, and the packages it imports stay external, so the
    // instrumentations patch them as they would the unbundled server's.
    nodeArgs: [
      ...withoutTsLoader(spec.nodeArgs ?? []),
      ...(process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean),
    ],
    metricsUrl,
    readyPath: spec.readyPath ?? "/",
    // As harness.mjs: any status, when the scenario names none.
    readyStatus: spec.readyStatus,
  };
}

/**
 * `--no-publishing`: the packages built as if no package published anything. Every read of a
 * channel's `hasSubscribers` in a package's source (outside the kernel's diagnostics.ts, which
 * defines it) is the constant `false`, so each decision's branch is dead code: no message, no
 * check, no `publishDecision` call is left on a request's path. Measured against the ordinary
 * build with nobody listening, it is what the channels cost when no one subscribes.
 */
function withoutPublishing() {
  return {
    name: "without-publishing",
    setup(context) {
      context.onLoad({ filter: /[\\/]packages[\\/][^\\/]+[\\/]src[\\/].*\.ts$/ }, async (args) => {
        if (/[\\/]kernel[\\/]src[\\/]diagnostics\.ts$/.test(args.path)) return undefined;
        const source = await readFile(args.path, "utf8");
        const replaced = source.replace(/(?<!\bget )\b[A-Za-z_$][\w$]*\.hasSubscribers\b(?!\s*\()/g, "false");
        return replaced === source ? undefined : { contents: replaced, loader: "ts" };
      });
    },
  };
}

/** Node flags without `--import <the TypeScript loader>`, which a bundle does not need. */
function withoutTsLoader(nodeArgs) {
  const kept = [];
  for (let i = 0; i < nodeArgs.length; i++) {
    if (nodeArgs[i] === "--import" && /ts-loader\.mjs$/.test(nodeArgs[i + 1] ?? "")) i++;
    else kept.push(nodeArgs[i]);
  }
  return kept;
}

/**
 * `entry` bundled into `outfile`, every `@svc/...` specifier (entries such as `@svc/kernel/fastify`
 * included) from the source file `sources` maps it to; the other packages stay external.
 */
function esbuild(entry, outfile, sources) {
  const workspace = {
    name: "workspace-sources",
    setup(context) {
      context.onResolve({ filter: /^@svc\// }, (args) => {
        const path = sources.get(args.path);
        return path === undefined ? undefined : { path };
      });
    },
  };
  return build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    plugins: noPublishing ? [workspace, withoutPublishing()] : [workspace],
    outfile,
    logLevel: "error",
  });
}
