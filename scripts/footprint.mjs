#!/usr/bin/env node
// The install footprint of every published package, from the built `dist/` (run a build first):
// what `npm pack` would put in the tarball (compressed size, unpacked size, file count), and the
// unpacked size with the package's own dependencies (the closure of `dependencies`, as installed
// in the workspace's node_modules; peers are the consumer's).
//
// Each package's README states its footprint in a table between `<!-- footprint -->` and
// `<!-- /footprint -->`, which --write fills in. The figures are those of the version the README
// ships with: they change with every CHANGELOG entry and every change to the code, so
// scripts/version-packages.mjs writes the tables of the packages it versions, from a fresh build,
// into the version commit, and scripts/release.mjs checks them (--check) against the build it
// publishes. Between releases, the README on main states the last version's figures.
//
//   node scripts/footprint.mjs              a Markdown table, one row per package
//   node scripts/footprint.mjs --json       the same figures as JSON
//   node scripts/footprint.mjs --write      each README's table, from this build
//   node scripts/footprint.mjs --check      fails when a README's table is not this build's (±1%)
//   node scripts/footprint.mjs @svc/hal     just the packages named
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
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
  const deps = dependencySize(manifest, dir);
  return {
    name: manifest.name,
    version: manifest.version,
    tarball: pack.size,
    unpacked: pack.unpackedSize,
    files: pack.entryCount,
    dependencies: deps.count,
    withDependencies: pack.unpackedSize + deps.bytes,
  };
}

export const kB = (n) => `${(n / 1000).toFixed(1)} kB`;

export const TABLE_START = "<!-- footprint: node scripts/footprint.mjs --write -->";
export const TABLE_END = "<!-- /footprint -->";
const TABLE = new RegExp(`${TABLE_START}\\n[\\s\\S]*?${TABLE_END}`);

/** A README's footprint table of the figures `r` (footprint). */
export function readmeTable(r) {
  return [
    TABLE_START,
    "| tarball | unpacked | files | with dependencies |",
    "| ---: | ---: | ---: | ---: |",
    `| ${kB(r.tarball)} | ${kB(r.unpacked)} | ${r.files} | ${kB(r.withDependencies)} (${r.dependencies} ${r.dependencies === 1 ? "package" : "packages"}) |`,
    TABLE_END,
  ].join("\n");
}

/** The figures a README's footprint table states, or undefined without a table. */
export function statedFootprint(readme) {
  const table = TABLE.exec(readme)?.[0];
  const row = table?.split("\n")[3];
  const m = row && /^\| ([\d.]+) kB \| ([\d.]+) kB \| (\d+) \| ([\d.]+) kB \((\d+) packages?\) \|$/.exec(row);
  if (!m) return table === undefined ? undefined : {};
  const bytes = (text) => Math.round(Number(text) * 1000);
  return {
    tarball: bytes(m[1]),
    unpacked: bytes(m[2]),
    files: Number(m[3]),
    withDependencies: bytes(m[4]),
    dependencies: Number(m[5]),
  };
}

const readmeOf = (dir) => join(dir, "README.md");
export const hasTable = ({ dir }) =>
  existsSync(readmeOf(dir)) && TABLE.test(readFileSync(readmeOf(dir), "utf8"));

/**
 * Whether a table stating `stated` (statedFootprint) needs writing again for the figures `now`:
 * more than the rounding apart. (Not at every byte: the README is in the tarball it measures, so
 * a compressed size just at a rounding boundary could flip between two tables forever.)
 */
const stale = (stated, now) =>
  stated?.tarball === undefined ||
  ["tarball", "unpacked", "withDependencies"].some((key) => Math.abs(stated[key] - now[key]) > 100) ||
  stated.files !== now.files ||
  stated.dependencies !== now.dependencies;

/**
 * Writes the footprint table of each package (`{ dir, manifest }`) into its README, measured
 * again until it states the tarball it is in (the README is part of what it measures). Returns
 * the packages whose README changed.
 */
export function writeTables(packages) {
  const changed = [];
  for (const pkg of packages.filter(hasTable)) {
    const file = readmeOf(pkg.dir);
    const before = readFileSync(file, "utf8");
    for (let i = 0; i < 5; i++) {
      const text = readFileSync(file, "utf8");
      const now = footprint(pkg);
      if (!stale(statedFootprint(text), now)) break;
      writeFileSync(file, text.replace(TABLE, readmeTable(now)));
    }
    if (readFileSync(file, "utf8") !== before) changed.push(pkg.manifest.name);
  }
  return changed;
}

/**
 * What is wrong with the footprint tables of `packages`: a README without one, or one whose
 * figures differ from this build's by more than `tolerance` (a share: they are rounded to 100
 * bytes, and compression may differ by a few bytes between zlib builds).
 */
export function tableProblems(packages, tolerance = 0.01) {
  const problems = [];
  for (const pkg of packages) {
    const stated = existsSync(readmeOf(pkg.dir))
      ? statedFootprint(readFileSync(readmeOf(pkg.dir), "utf8"))
      : undefined;
    const name = pkg.manifest.name;
    if (stated === undefined) {
      problems.push(`${name}: README.md has no footprint table (${TABLE_START} ... ${TABLE_END})`);
      continue;
    }
    const now = footprint(pkg);
    const built = `this build: tarball ${now.tarball}, unpacked ${now.unpacked}, files ${now.files}`;
    if (Object.keys(stated).length === 0) {
      problems.push(`${name}: README.md's footprint table is empty; ${built}`);
      continue;
    }
    const off = ["tarball", "unpacked", "files", "withDependencies", "dependencies"].filter(
      (key) => stated[key] === undefined || Math.abs(stated[key] - now[key]) > tolerance * now[key],
    );
    if (off.length > 0)
      problems.push(
        `${name}: README.md states ${off.map((k) => `${k} ${stated[k] ?? "?"}`).join(", ")}; this build: ${off.map((k) => `${k} ${now[k]}`).join(", ")}`,
      );
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const names = process.argv.slice(2).filter((a) => !a.startsWith("--"));
  const packages = publishedPackages().filter(
    ({ manifest }) => names.length === 0 || names.includes(manifest.name),
  );
  if (process.argv.includes("--write")) {
    const changed = writeTables(packages);
    console.log(
      `footprint: ${changed.length} README tables written${changed.length > 0 ? `: ${changed.join(", ")}` : ""}`,
    );
  } else if (process.argv.includes("--check")) {
    const problems = tableProblems(packages);
    for (const p of problems) console.error(`footprint: ${p}`);
    if (problems.length > 0) {
      console.error("footprint: build, then node scripts/footprint.mjs --write");
      process.exit(1);
    }
    console.log(`footprint: the README tables of ${packages.length} packages are this build's`);
  } else {
    const rows = packages.map(footprint);
    if (process.argv.includes("--json")) console.log(JSON.stringify(rows, null, 2));
    else {
      console.log("| package | tarball | unpacked | files | with dependencies |");
      console.log("| --- | ---: | ---: | ---: | ---: |");
      for (const r of rows)
        console.log(
          `| ${r.name} | ${kB(r.tarball)} | ${kB(r.unpacked)} | ${r.files} | ${kB(r.withDependencies)} (${r.dependencies} packages) |`,
        );
      const sum = (k) => rows.reduce((s, r) => s + r[k], 0);
      console.log(
        `| all ${rows.length} | ${kB(sum("tarball"))} | ${kB(sum("unpacked"))} | ${sum("files")} | |`,
      );
    }
  }
}
