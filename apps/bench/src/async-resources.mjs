// The async resources the reference server makes for one request, per framework, as `npm start`
// runs it (dist/main.js; `npm run build` first): promises, tick objects, timers, by type, and each
// promise by the frames that made it. While anything in the process uses `AsyncLocalStorage`
// (OpenTelemetry's context does) Node.js 20 and 22 run an async hook for every promise, so a
// promise a request could do without costs it more than its allocation and its microtask. It
// warms the server up with `--warmup` GETs of one employee with a token (as the svc-stack
// scenario does), counts over `--requests` more, and prints a table a request.
//
//   node apps/bench/src/async-resources.mjs [--frameworks express,fastify] [--warmup 2000]
//     [--requests 200]
import { setTimeout as sleep } from "node:timers/promises";
import { option } from "./cli-option.mjs";
import { send } from "./keep-alive-load.mjs";
import { probeReference } from "./probed-reference.mjs";

const frameworks = option("frameworks", "express,fastify").split(",");
const warmup = Number(option("warmup", "2000"));
const requests = Number(option("requests", "200"));

const perRequest = (n) => (n / requests).toFixed(2).replace(/\.00$/, "");
const rows = [];
for (const framework of frameworks) {
  const printed = await probeReference({
    framework,
    probe: "async-resources-probe.mjs",
    drive: async ({ child, url, agent, plan }) => {
      await send(url, agent, plan, warmup, 8);
      // The signal is handled on the server's next turn; the timers a response arms settle in less.
      child.kill("SIGUSR1");
      await sleep(200);
      await send(url, agent, plan, requests, 8);
      await sleep(200);
    },
  });
  const { types, promises } = JSON.parse(printed.trim().split("\n")[0]);
  console.log(`\n${framework}: promises a request by the frames that made them`);
  for (const [site, count] of promises.sort((a, b) => b[1] - a[1]))
    console.log(`  ${perRequest(count).padStart(5)}  ${site}`);
  rows.push(
    `| ${framework} | ${Object.entries(types)
      .sort((a, b) => b[1] - a[1])
      .map(([type, count]) => `${type} ${perRequest(count)}`)
      .join(", ")} |`,
  );
}
console.log(
  [
    "",
    `| framework | async resources a request (over ${requests}, after ${warmup}) |`,
    "|---|---|",
    ...rows,
  ].join("\n"),
);
