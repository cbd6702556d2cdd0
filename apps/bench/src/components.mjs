// Where the reference server's CPU goes, by component: each sample of a `.cpuprofile` (from
// `run.mjs --profile`) is charged to the innermost frame of its stack that belongs to a component
// (so `setHeader` called by the security headers counts as those, `writev` under the response's
// `end` as the response write), after the first `--skip` seconds (start-up and warm-up).
//
//   node apps/bench/src/components.mjs <file.cpuprofile> [--skip 8] [--us-per-request 150]
//
// With `--us-per-request` (the run's CPU µs/req), each share is also shown in µs per request.
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index === -1 ? fallback : args[index + 1];
};
const file = args[0];
const skipSeconds = Number(option("skip", "8"));
const usPerRequest = option("us-per-request", undefined);

/** Component rules, tried on each frame from the leaf up: the first frame that matches decides. */
const RULES = [
  ["logging (pino access log line, its write)", (_f, u) => /pino|sonic-boom|access-log/.test(u)],
  ["SQLite query (Kysely + better-sqlite3)", (_f, u) => /kysely|better-sqlite3|\/db\//.test(u)],
  ["JSON serialisation", (f) => f === "stringifyJson"],
  ["ETag (hash of the body) and 304 check", (_f, u) => /packages\/conditional\//.test(u)],
  ["jose (token verification)", (_f, u) => /\/jose\//.test(u)],
  ["authentication (Bearer, verified-token cache)", (_f, u) => /packages\/auth\//.test(u)],
  ["rate limit (count and headers)", (_f, u) => /packages\/ratelimit\//.test(u)],
  ["versioning", (_f, u) => /packages\/versioning\//.test(u)],
  ["allowed hosts", (_f, u) => /packages\/hal\/src\/(allowed-hosts|base-url)/.test(u)],
  ["CORS (Vary: Origin)", (_f, u) => /packages\/negotiate\/src\/cors/.test(u)],
  ["body parser (no body)", (_f, u) => /packages\/negotiate\/src\/body/.test(u)],
  [
    "negotiation and representation (HAL links, Vary)",
    (_f, u) => /packages\/(negotiate|hal)\//.test(u) || /routes\/crud|links\.ts|respond\.ts/.test(u),
  ],
  ["Vary (appendVary) and error helpers", (_f, u) => /packages\/errors\//.test(u)],
  [
    "security headers (helmet's, HSTS check)",
    (f, u) => /helmet|helmetHeaders|hstsWhenSecure/.test(`${f} ${u}`),
  ],
  ["correlation id", (f) => f === "correlate" || f === "randomUUID"],
  ["permission guard", (_f, u) => /security\.ts/.test(u)],
  [
    "Express routing and dispatch (incl. app chain)",
    (_f, u) => /node_modules\/(router|express|path-to-regexp)\/|chain\.ts|app\.ts/.test(u),
  ],
  [
    "node:http response write (headers, socket)",
    (f, u) => /_http_outgoing|stream_base_commons|node:net/.test(u) || f === "writev",
  ],
  ["node:http request parsing and dispatch", (_f, u) => /_http_server|_http_common|_http_incoming/.test(u)],
  ["garbage collector", (f) => f === "(garbage collector)"],
];

const profile = JSON.parse(readFileSync(file, "utf8"));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const decided = new Map();
function componentOf(id) {
  const known = decided.get(id);
  if (known !== undefined) return known;
  const { functionName, url } = byId.get(id).callFrame;
  let component;
  for (const [name, test] of RULES) {
    if (test(functionName, url)) {
      component = name;
      break;
    }
  }
  if (component === undefined) {
    const up = parent.get(id);
    component = up === undefined ? "other (event loop, promises, V8)" : componentOf(up);
  }
  decided.set(id, component);
  return component;
}

let time = profile.startTime;
const skipUntil = profile.startTime + skipSeconds * 1e6;
const totals = new Map();
let busy = 0;
for (let i = 0; i < profile.samples.length; i++) {
  time += profile.timeDeltas[i];
  if (time < skipUntil) continue;
  const node = byId.get(profile.samples[i]);
  if (node.callFrame.functionName === "(idle)") continue;
  const duration = profile.timeDeltas[i + 1] ?? 0;
  busy += duration;
  const component = componentOf(node.id);
  totals.set(component, (totals.get(component) ?? 0) + duration);
}
const rows = [...totals].sort((a, b) => b[1] - a[1]);
console.log(`| component | share |${usPerRequest ? " µs/req |" : ""}`);
console.log(`|---|---:|${usPerRequest ? "---:|" : ""}`);
for (const [name, value] of rows) {
  const share = value / busy;
  const us = usPerRequest ? ` ${(share * Number(usPerRequest)).toFixed(1)} |` : "";
  console.log(`| ${name} | ${(100 * share).toFixed(1)} % |${us}`);
}
