#!/usr/bin/env node
// The release guards CI runs (npm run release:guard), each failing with what to do:
//
// 1. changesets: `changeset status --since=<base>`: a published package whose shipped files
//    (.changeset/config.json `changedFilePatterns`) changed since the base has a changeset.
// 2. API bumps: a package whose API report (packages/<name>/api/*.api.md, see
//    scripts/api-report.mjs) differs from the report at the base has a pending changeset with
//    the bump the change needs: a removed or changed line is breaking (major, or minor below
//    1.0.0), added lines alone are a feature (minor, or patch below 1.0.0). A package never
//    released (version 0.0.0, or no report at the base) needs only its changeset.
// 3. kernels: a package listed in the root package.json `svc.kernels` (@svc/errors, and any
//    kernel split out of it) is depended on as a peer (required, never in `dependencies`), so an
//    application has one copy of it (CONTRIBUTING.md, "The kernel rule").
// 4. tarballs: `npm pack --dry-run` of each package lists its built entry points, README,
//    LICENSE, CHANGELOG.md once versioned, no placeholder repository, maps without sources, and
//    its manifest links to its folder of the repository the root package.json names
//    (repository with directory, homepage, bugs).
// 5. release record: each release releases.json records names a commit of the history that gives
//    the package that version, and no tag of that name names another commit
//    (scripts/release-record.mjs).
//
// The base: `--base <ref>` (or RELEASE_BASE); else the merge base with origin/main when HEAD is
// not on it (a branch); else the newest release reachable from HEAD that a tag
// (`<package>@<version>`) or the release record (releases.json) names; else the newest commit
// that changed a published package's version (the version commit); else the root commit
// (nothing released yet, so everything is pending).
// The version step (scripts/version-packages.mjs, the kernel rule) takes the same order from the
// tags on (`lastRelease`): it compares with what was last released, on a branch too.
//
//   node scripts/release-guard.mjs [--base <ref>] [--root <dir>] [--no-pack]
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";
import { linksFor, packageProblems } from "./check-package.mjs";
import { readRecord, recordEntries, recordProblems } from "./release-record.mjs";

const toolingRoot = resolve(import.meta.dirname, "..");
const BUMPS = ["none", "patch", "minor", "major"];

const git = (root, ...args) =>
  execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
const tryGit = (root, ...args) => {
  try {
    return git(root, ...args);
  } catch {
    return undefined;
  }
};

export function publishedPackages(root) {
  return readdirSync(join(root, "packages"))
    .map((name) => join(root, "packages", name))
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) }))
    .filter(({ manifest }) => !manifest.private);
}

/** `{ ref, why }`: the commit the guards compare with (see the head of this file). */
export function releaseBase(root, names, explicit) {
  if (explicit) return { ref: git(root, "rev-parse", explicit), why: `given (${explicit})` };
  const head = git(root, "rev-parse", "HEAD");
  const main = tryGit(root, "rev-parse", "--verify", "--quiet", "origin/main");
  if (main) {
    const mergeBase = tryGit(root, "merge-base", "HEAD", "origin/main");
    if (mergeBase && mergeBase !== head) return { ref: mergeBase, why: "the merge base with origin/main" };
  }
  return lastRelease(root, names);
}

/**
 * `{ ref, why }`: the last release reachable from HEAD (the base order above, without the merge
 * base): the newest commit a release tag or the release record (releases.json, which every
 * clone carries) names, else the version commit, else the root commit. The version step
 * (scripts/version-packages.mjs) compares the kernels' API reports with it.
 */
export function lastRelease(root, names) {
  const tagged = new Map(); // commit → a tag on it
  for (const tag of (tryGit(root, "tag", "--merged", "HEAD") ?? "").split("\n")) {
    if (!names.some((name) => tag.startsWith(`${name}@`))) continue;
    const commit = git(root, "rev-parse", `refs/tags/${tag}^{commit}`);
    if (!tagged.has(commit)) tagged.set(commit, tag);
  }
  const recorded = new Map(); // commit → a release it records
  for (const { name, commit, tag } of recordEntries(readRecord(root))) {
    if (!names.includes(name) || tagged.has(commit) || recorded.has(commit)) continue;
    if (tryGit(root, "merge-base", "--is-ancestor", commit, "HEAD") !== undefined) recorded.set(commit, tag);
  }
  const releases = [...tagged.keys(), ...recorded.keys()];
  if (releases.length > 0) {
    // The releases no other one descends from; of several (parallel lines), the newest commit.
    const independent = git(root, "merge-base", "--independent", ...releases).split("\n");
    const newest = git(root, "log", "--no-walk", "--format=%H", ...independent).split("\n")[0];
    return tagged.has(newest)
      ? { ref: newest, why: `the release tag ${tagged.get(newest)}` }
      : { ref: newest, why: `the release record (releases.json): ${recorded.get(newest)}` };
  }
  // A clone that did not bring the tags still has the version commit: the newest commit that
  // changed a published package's version.
  const versioned = tryGit(
    root,
    "log",
    "-n",
    "1",
    "--format=%H",
    "-G",
    '^  "version": ',
    "HEAD",
    "--",
    "packages/*/package.json",
  );
  if (versioned) return { ref: versioned, why: "the newest version commit (no release tag reachable)" };
  const roots = git(root, "rev-list", "--max-parents=0", "HEAD").split("\n");
  return { ref: roots[roots.length - 1], why: "the root commit (nothing released yet)" };
}

/** The pending changesets: `Map<package, bump>`, the highest bump any changeset gives it. */
export function pendingBumps(root) {
  const bumps = new Map();
  const dir = join(root, ".changeset");
  for (const file of existsSync(dir) ? readdirSync(dir) : []) {
    if (!file.endsWith(".md") || file === "README.md") continue;
    const front = /^---\r?\n([\s\S]*?)\r?\n---/.exec(readFileSync(join(dir, file), "utf8"))?.[1] ?? "";
    for (const line of front.split("\n")) {
      const m = /^\s*["']?([^"':]+(?::[^"':]+)?)["']?\s*:\s*(patch|minor|major|none)\s*$/.exec(line);
      if (!m) continue;
      const [, name, bump] = m;
      if (BUMPS.indexOf(bump) > BUMPS.indexOf(bumps.get(name) ?? "none")) bumps.set(name, bump);
    }
  }
  return bumps;
}

/** The bump a change of an API report from `before` to `after` needs at `version`. */
export function neededBump(before, after, version) {
  const lines = (text) =>
    text
      .split("\n")
      .map((l) => l.trimEnd())
      .filter((l) => l.trim() !== "" && !l.startsWith("//"));
  const old = new Set(lines(before));
  const now = new Set(lines(after));
  const removed = [...old].filter((l) => !now.has(l));
  const added = [...now].filter((l) => !old.has(l));
  if (removed.length === 0 && added.length === 0) return { bump: "none", removed, added };
  const belowOne = version.startsWith("0.");
  const breaking = removed.length > 0;
  const bump = breaking ? (belowOne ? "minor" : "major") : belowOne ? "patch" : "minor";
  return { bump, removed, added, breaking };
}

function checkChangesets(root, base, packages = publishedPackages(root), bumps = pendingBumps(root)) {
  const bin = join(toolingRoot, "node_modules/@changesets/cli/bin.js");
  const run = spawnSync("node", [bin, "status", `--since=${base}`], { cwd: root, encoding: "utf8" });
  if (run.status === 0) return [];
  const output = `${run.stdout}${run.stderr}`
    .split("\n")
    .filter((l) => /error|changed|no changesets/i.test(l))
    .join("\n");
  // changeset status names no package and no file: the files are what to look at.
  const changed = shippedChanges(root, base, packages)
    .filter(({ manifest }) => (bumps.get(manifest.name) ?? "none") === "none")
    .map(({ manifest, files }) => `  ${manifest.name}: ${files.join(", ")}\n`)
    .join("");
  return [
    `changeset status --since=${base.slice(0, 12)} failed: a published package changed without a changeset.\n` +
      `${output}\n` +
      (changed === "" ? "" : `Changed since the base, without a pending changeset:\n${changed}`) +
      "Add one with `npx changeset` (or a .changeset/<package>-<slug>.md) naming the package and the bump.",
  ];
}

/**
 * `[{ manifest, files }]`: each published package's files, changed since `base` (working tree
 * included), that .changeset/config.json `changedFilePatterns` says ship, as git pathspecs.
 */
function shippedChanges(root, base, packages) {
  const configFile = join(root, ".changeset", "config.json");
  const patterns = existsSync(configFile)
    ? (JSON.parse(readFileSync(configFile, "utf8")).changedFilePatterns ?? ["**"])
    : ["**"];
  const found = [];
  for (const { dir, manifest } of packages) {
    const rel = relative(root, dir).replaceAll("\\", "/");
    const specs = patterns.map((p) =>
      p.startsWith("!") ? `:(exclude,glob)${rel}/${p.slice(1)}` : `:(glob)${rel}/${p}`,
    );
    const files = (tryGit(root, "diff", "--name-only", base, "--", ...specs) ?? "")
      .split("\n")
      .filter(Boolean);
    if (files.length > 0) found.push({ manifest, files });
  }
  return found;
}

function checkApiBumps(root, base, packages, bumps) {
  const problems = [];
  for (const { dir, manifest } of packages) {
    const apiDir = join(dir, "api");
    if (!existsSync(apiDir)) continue;
    for (const file of readdirSync(apiDir).filter((f) => f.endsWith(".api.md"))) {
      const path = relative(root, join(apiDir, file)).replaceAll("\\", "/");
      const before = tryGit(root, "show", `${base}:${path}`);
      if (before === undefined || manifest.version === "0.0.0") continue; // never released
      const change = neededBump(before, readFileSync(join(apiDir, file), "utf8"), manifest.version);
      if (change.bump === "none") continue;
      const given = bumps.get(manifest.name) ?? "none";
      if (BUMPS.indexOf(given) >= BUMPS.indexOf(change.bump)) continue;
      const sample = [...change.removed.map((l) => `- ${l}`), ...change.added.map((l) => `+ ${l}`)]
        .slice(0, 6)
        .join("\n    ");
      problems.push(
        `${manifest.name}: its public API changed since the base (${path}: ${change.removed.length} line(s) removed or changed, ${change.added.length} added),\n` +
          `  which needs a ${change.bump} bump at ${manifest.version} (${change.breaking ? "a breaking change" : "an addition"}); the pending changesets give it ${given}.\n` +
          `    ${sample}\n` +
          `  Add a changeset: .changeset/<slug>.md with "${manifest.name}": ${change.bump}, saying what changed for users.`,
      );
    }
  }
  return problems;
}

export function kernelProblems(rootManifest, packages) {
  const kernels = rootManifest.svc?.kernels ?? [];
  const problems = [];
  const versions = new Map(packages.map(({ manifest }) => [manifest.name, manifest.version]));
  for (const { manifest } of packages) {
    for (const kernel of kernels) {
      if (manifest.name === kernel) continue;
      if (manifest.dependencies?.[kernel] || manifest.optionalDependencies?.[kernel])
        problems.push(
          `${manifest.name}: ${kernel} is a kernel, so it is a peer dependency, never in dependencies (CONTRIBUTING.md, "The kernel rule")`,
        );
      const peer = manifest.peerDependencies?.[kernel];
      if (peer && manifest.peerDependenciesMeta?.[kernel]?.optional)
        problems.push(`${manifest.name}: the peer dependency on ${kernel} must not be optional`);
      if (peer && !manifest.devDependencies?.[kernel])
        problems.push(
          `${manifest.name}: ${kernel} is a peer; list it in devDependencies too, for the workspace`,
        );
      if (peer && versions.has(kernel) && !satisfies(versions.get(kernel), peer))
        problems.push(
          `${manifest.name}: its peer range ${peer} leaves out ${kernel}@${versions.get(kernel)}`,
        );
    }
  }
  return problems;
}

const satisfies = (version, range) =>
  createRequire(join(toolingRoot, "package.json"))("semver").satisfies(version, range);

function tarballProblems(root, rootManifest, packages) {
  const problems = [];
  for (const { dir, manifest } of packages) {
    let shipped;
    try {
      const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
        cwd: dir,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
      shipped = JSON.parse(out)[0].files.map((f) => f.path);
    } catch (err) {
      problems.push(`${manifest.name}: npm pack --dry-run failed: ${err.message}`);
      continue;
    }
    const links = linksFor(root, rootManifest, dir);
    for (const p of packageProblems(
      manifest,
      shipped,
      (file) => readFileSync(join(dir, file), "utf8"),
      links,
    ))
      problems.push(`${manifest.name}: ${p}`);
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const option = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const root = resolve(option("--root") ?? toolingRoot);
  const packages = publishedPackages(root);
  const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const base = releaseBase(
    root,
    packages.map((p) => p.manifest.name),
    // biome-ignore lint/suspicious/noUndeclaredEnvVars: a maintainer's or CI's override of the base
    option("--base") ?? process.env.RELEASE_BASE,
  );
  console.log(`guard: base ${base.ref.slice(0, 12)}, ${base.why}`);
  const sections = [
    ["changesets", () => checkChangesets(root, base.ref, packages, pendingBumps(root))],
    ["API bumps", () => checkApiBumps(root, base.ref, packages, pendingBumps(root))],
    ["kernels", () => kernelProblems(rootManifest, packages)],
    ...(args.includes("--no-pack")
      ? []
      : [["tarballs", () => tarballProblems(root, rootManifest, packages)]]),
    ["release record", () => recordProblems(root)],
  ];
  let failed = 0;
  for (const [name, check] of sections) {
    const problems = check();
    if (problems.length === 0) console.log(`guard: ${name} ok`);
    for (const p of problems) console.error(`guard: ${name}: ${p}`);
    failed += problems.length > 0 ? 1 : 0;
  }
  console.log(`guard: ${sections.length - failed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}
