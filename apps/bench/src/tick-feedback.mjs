// The state of the reference server's `process.nextTick` after start-up and load, on each
// framework, run as `npm start` runs it (dist/main.js, the flags of its start script). Node.js
// builds each tick object with an object literal whose property sites V8 keeps monomorphic or,
// once a site has seen a second map, megamorphic for good: a runtime call for every tick in
// optimised code, the "slow state" of the bench README's Fastify runs. It starts the built server
// (`npm run build` first) `--starts` times per framework, sends it `--requests` GETs of one
// employee with a token (as the svc-stack scenario does, 8 at a time), prints the sites' states
// read with V8's `%DebugPrint`, and counts the starts that ended megamorphic. "no feedback": V8
// had not given nextTick a feedback vector yet (it had not run often enough).
//
//   node apps/bench/src/tick-feedback.mjs [--frameworks express,fastify] [--starts 6]
//     [--requests 8000] [--node-args "--no-lazy-feedback-allocation"]
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@svc/test-utils/free-port";
import { send } from "./keep-alive-load.mjs";
import { referenceNodeFlags } from "./reference-flags.mjs";
import { scenarios } from "./scenarios.mjs";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index === -1 ? fallback : args[index + 1];
};
const here = dirname(fileURLToPath(import.meta.url));
const serverDir = resolve(here, "../../reference-server");
const frameworks = option("frameworks", "express,fastify").split(",");
const starts = Number(option("starts", "6"));
const requests = Number(option("requests", "8000"));
const nodeArgs = option("node-args", "").split(" ").filter(Boolean);

/** One start under `requests` GETs: the states of nextTick's literal sites, or "no feedback". */
async function oneStart(framework) {
  const port = await freePort();
  // A file, not a pipe: V8 prints with C stdio, which drops what a non-blocking pipe refuses.
  const dir = mkdtempSync(join(tmpdir(), "svc-tick-feedback-"));
  const file = join(dir, "stdout");
  const fd = openSync(file, "w");
  const child = spawn(
    process.execPath,
    [
      ...referenceNodeFlags(serverDir),
      "--allow-natives-syntax",
      ...nodeArgs,
      "--import",
      join(here, "tick-feedback-probe.mjs"),
      "dist/main.js",
    ],
    {
      cwd: serverDir,
      env: {
        ...process.env,
        REDIS_URL: "",
        PORT: String(port),
        HOST: "127.0.0.1",
        NODE_ENV: "production",
        SERVER_FRAMEWORK: framework,
        DEMO_USERS: "admin:admin:admin",
        DATABASE_URL: "sqlite::memory:",
        RATE_LIMIT_MAX: "1000000",
        RATE_LIMIT_WINDOW_SECONDS: "1",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", fd, "ignore"],
    },
  );
  closeSync(fd);
  const exited = new Promise((done) => child.on("close", done));
  const url = `http://127.0.0.1:${port}`;
  try {
    await ready(`${url}/health`, child);
    const plan = await scenarios.find((s) => s.id === "svc-stack").prepare(url, {});
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    await send(url, agent, plan, requests, 8);
    agent.destroy();
  } catch (err) {
    child.kill("SIGKILL");
    await exited;
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  child.kill("SIGUSR2");
  const code = await exited;
  const out = readFileSync(file, "utf8");
  rmSync(dir, { recursive: true, force: true });
  const printed = out.slice(out.indexOf("--- tick feedback ---"));
  if (code !== 0 || !out.includes("--- tick feedback ---"))
    throw new Error(
      `${framework}: the server ended with ${code} before the probe printed:\n${out.slice(-2000)}`,
    );
  const states = [...printed.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]);
  return states.length === 0 ? "no feedback" : states.join(" ");
}

/** Resolves once `url` answers 200; rejects if the server ends first. */
async function ready(url, child) {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    if (child.exitCode !== null) throw new Error(`the server ended with ${child.exitCode}`);
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer in 60 s`);
}

const rows = [];
for (const framework of frameworks) {
  let megamorphic = 0;
  for (let i = 1; i <= starts; i++) {
    const states = await oneStart(framework);
    if (states.includes("MEGAMORPHIC")) megamorphic++;
    console.log(`${framework} start ${i}: ${states}`);
  }
  rows.push(`| ${framework} | ${megamorphic} of ${starts} |`);
}
console.log(
  [
    "",
    `| framework | starts with a megamorphic tick literal after ${requests} requests${nodeArgs.length ? ` (${nodeArgs.join(" ")})` : ""} |`,
    "|---|---:|",
    ...rows,
  ].join("\n"),
);
