#!/usr/bin/env node
// The install footprint of every published package, from the built `dist/` (run a build first):
// what `npm pack` would put in the tarball (compressed size, unpacked size, file count, the
// source maps' share), and the unpacked size with the package's own dependencies (the closure of
// `dependencies`, as installed in the workspace's node_modules; peers are the consumer's).
//
//   node scripts/footprint.mjs            a Markdown table, one row per package
//   node scripts/footprint.mjs --json     the same figures as JSON
//   node scripts/footprint.mjs @svc/hal   just the packages named
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");

/** Every published workspace package: `{ dir, manifest }`. */
export function publishedPackages(base = root) {
  return readdirSync(join(base, "packages"))
    .map((name) => join(base, "packages", name))
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) }))
    .filter(({ manifest }) => !manifest.private);
}

/** `npm pack --dry-run` of one package: `{ size, unpackedSize, entryCount, files }`. */
export function packSummary(dir) {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: dir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  return JSON.parse(out)[0];
}

function directorySize(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(entry.parentPath ?? dir, entry.name);
    if (entry.isDirectory()) total += directorySize(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

/** Where `name` resolves from `fromDir` through node_modules, as Node would look for it. */
function findInstalled(name, fromDir) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name, "package.json");
    if (existsSync(candidate)) return dirname(candidate);
    if (dirname(dir) === dir) return undefined;
  }
}

/** The unpacked size of `manifest`'s dependency closure (peers and @svc packages left out). */
function dependencySize(manifest, dir) {
  const seen = new Set();
  let total = 0;
  const visit = (deps, from) => {
    for (const name of Object.keys(deps ?? {})) {
      if (name.startsWith("@svc/")) continue;
      const at = findInstalled(name, from);
      if (!at || seen.has(at)) continue;
      seen.add(at);
      total += directorySize(at);
      visit(JSON.parse(readFileSync(join(at, "package.json"), "utf8")).dependencies, at);
    }
  };
  visit(manifest.dependencies, dir);
  return { bytes: total, count: seen.size };
}

export function footprint({ dir, manifest }) {
  const pack = packSummary(dir);
  const maps = pack.files.filter((f) => f.path.endsWith(".map")).reduce((sum, f) => sum + f.size, 0);
  const deps = dependencySize(manifest, dir);
  return {
    name: manifest.name,
    tarball: pack.size,
    unpacked: pack.unpackedSize,
    files: pack.entryCount,
    sourceMaps: maps,
    dependencies: deps.count,
    withDependencies: pack.unpackedSize + deps.bytes,
  };
}

export const kB = (n) => `${(n / 1000).toFixed(1)} kB`;

if (import.meta.url === `file://${process.argv[1]}`) {
  const names = process.argv.slice(2).filter((a) => !a.startsWith("--"));
  const rows = publishedPackages()
    .filter(({ manifest }) => names.length === 0 || names.includes(manifest.name))
    .map(footprint);
  if (process.argv.includes("--json")) console.log(JSON.stringify(rows, null, 2));
  else {
    console.log("| package | tarball | unpacked | files | of which source maps | with dependencies |");
    console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (const r of rows)
      console.log(
        `| ${r.name} | ${kB(r.tarball)} | ${kB(r.unpacked)} | ${r.files} | ${kB(r.sourceMaps)} | ${kB(r.withDependencies)} (${r.dependencies} packages) |`,
      );
    const sum = (k) => rows.reduce((s, r) => s + r[k], 0);
    console.log(
      `| all ${rows.length} | ${kB(sum("tarball"))} | ${kB(sum("unpacked"))} | ${sum("files")} | ${kB(sum("sourceMaps"))} | |`,
    );
  }
}
