// The state of the reference server's `process.nextTick` after start-up and load, on each
// framework, run as `npm start` runs it (dist/main.js, the flags of its start script). Node.js
// builds each tick object with an object literal whose property sites V8 keeps monomorphic or,
// once a site has seen a second map, megamorphic for good: a runtime call for every tick in
// optimised code, the "slow state" of the bench README's Fastify runs (a full collection while no
// tick object was alive freed the literal's maps). The server now holds one tick object from its
// first import (`holdTickShape` of @svc/kernel/node), so every start should end monomorphic; this
// script is how that is checked. It starts the built server
// (`npm run build` first) `--starts` times per framework, sends it `--requests` GETs of one
// employee with a token (as the svc-stack scenario does, 8 at a time), prints the sites' states
// read with V8's `%DebugPrint`, and counts the starts that ended megamorphic. "no feedback": V8
// had not given nextTick a feedback vector yet (it had not run often enough).
//
// `--gc`: after the requests, two full garbage collections while the server is idle (the probe
// calls `gc()`), then as many requests again: whether a collection at a moment when no tick object
// is alive costs the literal its shape.
//
//   node apps/bench/src/tick-feedback.mjs [--frameworks express,fastify] [--starts 6]
//     [--requests 8000] [--node-args "--no-lazy-feedback-allocation"] [--gc]
import { setTimeout as sleep } from "node:timers/promises";
import { option } from "./cli-option.mjs";
import { send } from "./keep-alive-load.mjs";
import { probeReference } from "./probed-reference.mjs";

const frameworks = option("frameworks", "express,fastify").split(",");
const starts = Number(option("starts", "6"));
const requests = Number(option("requests", "8000"));
const collect = process.argv.includes("--gc");
const nodeArgs = [...option("node-args", "").split(" ").filter(Boolean), ...(collect ? ["--expose-gc"] : [])];

/** One start under `requests` GETs: the states of nextTick's literal sites, or "no feedback". */
async function oneStart(framework) {
  const printed = await probeReference({
    framework,
    probe: "tick-feedback-probe.mjs",
    nodeArgs: ["--allow-natives-syntax", ...nodeArgs],
    drive: async ({ child, url, agent, plan }) => {
      await send(url, agent, plan, requests, 8);
      if (!collect) return;
      child.kill("SIGUSR1");
      // The probe's collections run on the server's thread; the next requests wait behind them.
      await sleep(500);
      await send(url, agent, plan, requests, 8);
    },
  });
  const states = [...printed.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]);
  return states.length === 0 ? "no feedback" : states.join(" ");
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
    `| framework | starts with a megamorphic tick literal after ${collect ? `${requests} requests, two full collections and ${requests} more` : `${requests} requests`}${nodeArgs.length ? ` (${nodeArgs.join(" ")})` : ""} |`,
    "|---|---:|",
    ...rows,
  ].join("\n"),
);
