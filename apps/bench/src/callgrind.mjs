// Instructions per request of the reference server's GET /employees/{id}, counted by valgrind's
// callgrind: a figure that does not drift with what else runs on the machine, unlike req/s and
// (less so) CPU µs/req. The server runs under `valgrind --tool=callgrind --instr-atstart=no`;
// this process gets a token, warms the server up with plain keep-alive requests (so V8 has
// optimised the hot path), switches collection on with `callgrind_control -i on`, sends the
// measured requests, switches it off, dumps, and divides the instructions by the requests.
//
//   node apps/bench/src/callgrind.mjs [--root <repository>] [--warmup 4000] [--requests 2000]
//     [--connections 8] [--keep <dir>]
//
// `--root` names another checkout (a worktree of an older commit), so the same client measures
// both sides of an A/B; its server runs from its own sources through its own ts-loader.
import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";
import { freePort } from "./harness.mjs";
import { scenarios } from "./scenarios.mjs";

const exec = promisify(execFile);
// valgrind names its control pipes after $HOST, which the server gets as its listen address:
// callgrind_control must see the same value to find them.
const control = (...args) => exec("callgrind_control", args, { env: { ...process.env, HOST: "127.0.0.1" } });
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index === -1 ? fallback : args[index + 1];
};
const root = resolve(option("root", join(dirname(fileURLToPath(import.meta.url)), "../../..")));
const warmup = Number(option("warmup", "4000"));
const requests = Number(option("requests", "2000"));
const connections = Number(option("connections", "8"));
const keep = option("keep", undefined);

const serverDir = join(root, "apps/reference-server");
const outDir = keep ?? (await mkdtemp(join(tmpdir(), "svc-callgrind-")));
await mkdir(outDir, { recursive: true });
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const env = {
  ...process.env,
  PORT: String(port),
  HOST: "127.0.0.1",
  NODE_ENV: "production",
  DEMO_USERS: "admin:admin:admin",
  DATABASE_URL: "sqlite::memory:",
  RATE_LIMIT_MAX: "1000000",
  RATE_LIMIT_WINDOW_SECONDS: "1",
  CORS_ORIGINS: "https://app.example.com",
  LOG_LEVEL: "info",
};
delete env.REDIS_URL;
// The server bundled into one file (the workspace packages from their sources, as the ts-loader
// resolves them; node_modules stay external) next to src/, so its paths relative to
// import.meta.url still hold: under valgrind, loading hundreds of modules through the loader hooks
// takes minutes.
const packages = await readdir(join(root, "packages"));
const bundle = join(serverDir, "dist", "callgrind-main.mjs");
await build({
  entryPoints: [join(serverDir, "src/main.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  alias: Object.fromEntries(
    packages.map((name) => [`@svc/${name}`, join(root, "packages", name, "src/index.ts")]),
  ),
  outfile: bundle,
  logLevel: "error",
});
const child = spawn(
  "valgrind",
  [
    "--tool=callgrind",
    "--instr-atstart=no",
    // One file per thread: the main thread (JavaScript, the HTTP and SQLite work) apart from V8's
    // background compiler and the libuv pool (the logger's writes).
    "--separate-threads=yes",
    `--callgrind-out-file=${join(outDir, "callgrind.out.%p")}`,
    process.execPath,
    bundle,
  ],
  { cwd: serverDir, env, stdio: ["ignore", "ignore", "pipe"] },
);
let stderr = "";
child.stderr.on("data", (chunk) => {
  stderr = (stderr + chunk).slice(-4000);
});

try {
  await waitReady();
  const started = Date.now();
  const phase = (name) =>
    process.stderr.write(`${name} after ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  const svc = scenarios.find((s) => s.id === "svc-stack");
  const { path, headers } = await svc.prepare(url);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  await send(agent, path, headers, warmup);
  phase("warm");
  agent.destroy();
  await control("-i", "on", String(child.pid));
  const measured = new Agent({ keepAlive: true, maxSockets: connections });
  await send(measured, path, headers, requests);
  measured.destroy();
  phase("measured");
  await control("-i", "off", String(child.pid));
  await control("--dump", String(child.pid));
  agent.destroy();
  // The dump is written by the server's own thread; give it time to finish.
  await new Promise((r) => setTimeout(r, 3000));
  const files = (await readdir(outDir)).filter((f) => f.startsWith(`callgrind.out.${child.pid}`));
  let total = 0;
  const threads = {};
  for (const file of files) {
    const text = await readFile(join(outDir, file), "utf8");
    const summary = /^totals: (\d+)/m.exec(text);
    if (!summary) continue;
    total += Number(summary[1]);
    const thread = /^thread: (\d+)/m.exec(text)?.[1] ?? "all";
    threads[thread] = (threads[thread] ?? 0) + Math.round(Number(summary[1]) / requests);
  }
  console.log(
    JSON.stringify({
      root,
      path,
      warmup,
      requests,
      connections,
      instructions: total,
      perRequest: Math.round(total / requests),
      perRequestByThread: threads,
      files: files.map((f) => join(outDir, f)),
    }),
  );
} finally {
  child.kill("SIGKILL");
}

async function waitReady() {
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited: ${stderr}`);
    try {
      const response = await fetch(`${url}/health`);
      if (response.status === 200) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`server never answered: ${stderr}`);
}

/** `count` GETs over `agent`'s keep-alive sockets, `connections` at a time; each must be a 200. */
function send(agent, path, headers, count) {
  let started = 0;
  let finished = 0;
  return new Promise((done, fail) => {
    const next = () => {
      if (started >= count) return;
      started++;
      const req = request(`${url}${path}`, { agent, headers }, (res) => {
        res.resume();
        res.on("end", () => {
          if (res.statusCode !== 200) return fail(new Error(`GET ${path} → ${res.statusCode}`));
          if (++finished === count) done();
          else next();
        });
      });
      // A keep-alive socket the server closed while idle (its keep-alive timeout passes while
      // callgrind switches instrumentation on): send the request again on a fresh one.
      req.on("error", (err) => {
        if (err.code !== "ECONNRESET") return fail(err);
        started--;
        next();
      });
      req.end();
    };
    for (let i = 0; i < connections; i++) next();
  });
}
