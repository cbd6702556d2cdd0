// Where a server's CPU time went: the V8 profile written by `node --cpu-prof`, reduced to the
// functions and the packages with the most self time.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** The package a script URL belongs to: an npm package, an @svc workspace, or node itself. */
function ownerOf(url) {
  if (!url) return "(native / V8)";
  if (url.startsWith("node:")) return "node core";
  const modules = url.lastIndexOf("/node_modules/");
  if (modules !== -1) {
    const rest = url.slice(modules + "/node_modules/".length).split("/");
    return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  const workspace = /\/(packages|apps)\/([^/]+)\//.exec(url);
  if (workspace) return workspace[1] === "packages" ? `@svc/${workspace[2]}` : `apps/${workspace[2]}`;
  return url;
}

/** Self time per function and per package, in milliseconds, largest first. */
export function summariseProfile(profile, top = 15) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMicros = new Map();
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + (deltas[i] ?? 0));
  }
  let total = 0;
  const functions = new Map();
  const owners = new Map();
  for (const [id, micros] of selfMicros) {
    const node = byId.get(id);
    if (!node) continue;
    total += micros;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)" || functionName === "(program)" || functionName === "(garbage collector)") {
      owners.set(functionName, (owners.get(functionName) ?? 0) + micros);
      continue;
    }
    const file = url ? url.replace(/^.*\/(node_modules|packages|apps)\//, "$1/") : "";
    const key = `${functionName || "(anonymous)"} ${file}${file ? `:${lineNumber + 1}` : ""}`;
    functions.set(key, (functions.get(key) ?? 0) + micros);
    const owner = ownerOf(url);
    owners.set(owner, (owners.get(owner) ?? 0) + micros);
  }
  const rank = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, micros]) => ({ name, ms: Math.round(micros / 1000), share: micros / total }));
  return { totalMs: Math.round(total / 1000), functions: rank(functions), owners: rank(owners) };
}

/**
 * Summarises the busiest `.cpuprofile` in `dir`, as Markdown and as data. A server started with
 * module hooks writes one profile per thread (the hooks run in their own); the main thread is
 * the one with the most non-idle time.
 */
export async function profileReport(dir, title) {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".cpuprofile"));
  let file;
  let summary;
  let busiest = -1;
  for (const candidate of files) {
    const candidateSummary = summariseProfile(JSON.parse(await readFile(join(dir, candidate), "utf8")));
    const idle = candidateSummary.owners.find((o) => o.name === "(idle)")?.ms ?? 0;
    if (candidateSummary.totalMs - idle > busiest) {
      busiest = candidateSummary.totalMs - idle;
      file = candidate;
      summary = candidateSummary;
    }
  }
  if (!file || !summary) return undefined;
  const pct = (share) => `${(share * 100).toFixed(1)}%`;
  const lines = [
    `### ${title}`,
    "",
    `Profile: \`${join(dir, file)}\` (${summary.totalMs} ms sampled, start-up and warm-up included)`,
    "",
    "| self time by package | ms | share |",
    "|---|---:|---:|",
    ...summary.owners.map((o) => `| ${o.name} | ${o.ms} | ${pct(o.share)} |`),
    "",
    "| self time by function | ms | share |",
    "|---|---:|---:|",
    ...summary.functions.map((f) => `| \`${f.name.replace(/\|/g, "\\|")}\` | ${f.ms} | ${pct(f.share)} |`),
    "",
  ];
  return { file: join(dir, file), summary, markdown: lines.join("\n") };
}
