// Where a callgrind.mjs run's instructions went, by JavaScript function. Run the measurement with
// `NODE_OPTIONS=--perf-basic-prof` and `--keep <dir>`, so V8 writes /tmp/perf-<pid>.map naming
// its JIT code; then
//
//   node apps/bench/src/callgrind-profile.mjs /tmp/perf-<pid>.map <dir>/callgrind.out.<pid>.1-01
//     [--requests 2000] [--top 60]
//
// prints the instructions per request of each JIT function, V8's builtins and runtime functions
// it called (inline-cache misses, string concatenation and flattening, allocation) charged to it,
// and what ran under no JavaScript frame (llhttp, libuv, GC) as one remainder. A native function
// that calls back into JavaScript is charged only for its own part, estimated from its callees.
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index === -1 ? fallback : args[index + 1];
};
const [perfMap, callgrindOut] = args;
if (!perfMap || !callgrindOut) {
  console.error("usage: callgrind-profile.mjs <perf map> <callgrind.out file> [--requests n] [--top n]");
  process.exit(2);
}
const requests = Number(option("requests", "2000"));
const top = Number(option("top", "60"));

const ranges = readFileSync(perfMap, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((line) => {
    const [start, size, ...name] = line.split(" ");
    return { start: Number.parseInt(start, 16), size: Number.parseInt(size, 16), name: name.join(" ") };
  })
  .sort((a, b) => a.start - b.start);
const jitName = (fn) => {
  const address = Number.parseInt(fn, 16);
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ranges[mid].start <= address) lo = mid;
    else hi = mid - 1;
  }
  const r = ranges[lo];
  return r && address >= r.start && address < r.start + r.size ? r.name : "(JIT, unnamed)";
};
const isJit = (fn) => fn.startsWith("0x");

// callgrind's format: fn= opens a function, cfn= / calls= announce a call whose next cost line is
// the call's inclusive cost; other cost lines are the function's own. Names may be compressed.
const names = new Map();
const named = (token) => {
  const m = /^\((\d+)\)(?: (.*))?$/.exec(token);
  if (!m) return token;
  if (m[2] !== undefined) names.set(m[1], m[2]);
  return names.get(m[1]);
};
const self = new Map();
const calls = new Map();
let fn;
let cfn;
let pending;
for (const line of readFileSync(callgrindOut, "utf8").split("\n")) {
  if (line.startsWith("fn=")) fn = named(line.slice(3));
  else if (line.startsWith("cfn=")) cfn = named(line.slice(4));
  else if (line.startsWith("calls=")) pending = cfn;
  else if (/^[\d+*-]/.test(line)) {
    const parts = line.trim().split(/\s+/);
    if (parts.length < 2) continue;
    const cost = Number(parts[parts.length - 1]);
    if (pending !== undefined) {
      const out = calls.get(fn) ?? new Map();
      out.set(pending, (out.get(pending) ?? 0) + cost);
      calls.set(fn, out);
      pending = undefined;
    } else self.set(fn, (self.get(fn) ?? 0) + cost);
  }
}
const all = new Set([...self.keys(), ...calls.keys()]);
for (const out of calls.values()) for (const callee of out.keys()) all.add(callee);
// The share of each native function's inclusive cost that is native (not JavaScript under it).
const share = new Map([...all].map((f) => [f, isJit(f) ? 0 : 1]));
const inclusive = new Map(
  [...all].map((f) => [
    f,
    (self.get(f) ?? 0) + [...(calls.get(f)?.values() ?? [])].reduce((a, b) => a + b, 0),
  ]),
);
for (let round = 0; round < 30; round++) {
  for (const f of all) {
    if (isJit(f) || !inclusive.get(f)) continue;
    let native = self.get(f) ?? 0;
    for (const [callee, cost] of calls.get(f) ?? []) if (callee !== f) native += cost * share.get(callee);
    share.set(f, Math.min(1, native / inclusive.get(f)));
  }
}
const charged = new Map();
let total = 0;
for (const cost of self.values()) total += cost;
let jitTotal = 0;
for (const f of all) {
  if (!isJit(f)) continue;
  let cost = self.get(f) ?? 0;
  for (const [callee, c] of calls.get(f) ?? []) if (!isJit(callee)) cost += c * share.get(callee);
  const name = jitName(f.split("'")[0]);
  charged.set(name, (charged.get(name) ?? 0) + cost);
  jitTotal += cost;
}
const perRequest = (n) => Math.round(n / requests).toLocaleString("en");
console.log(
  `total ${perRequest(total)} instructions/request, ${perRequest(jitTotal)} charged to JavaScript\n`,
);
console.log("| instructions/request | function |\n|---:|---|");
for (const [name, cost] of [...charged].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(
    `| ${perRequest(cost)} | \`${name.replace(/file:\/\/\/\S*?\/(apps|packages|node_modules)\//, "$1/")}\` |`,
  );
}
console.log(
  `| ${perRequest(total - jitTotal)} | (native code under no JavaScript frame: llhttp, libuv, GC) |`,
);
