#!/usr/bin/env node
// The publish step of a release (RELEASING.md). `npm run release` runs .ci/run first (the same
// checks as CI: build, type-check, lint, tests, package checks, API reports, release guards, the
// registry suite), then this: it refuses unless HEAD is the version commit, publishes with
// `changeset publish` (which tags HEAD, so every tag lands on the version commit) and says what
// to push.
//
//   node scripts/release.mjs [--dry-run]    --dry-run checks and stops before publishing
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { publishedPackages } from "./release-guard.mjs";

const root = resolve(import.meta.dirname, "..");
const git = (...args) => execFileSync("git", args, { cwd: root, encoding: "utf8" }).trim();
const problems = [];

if (git("status", "--porcelain") !== "")
  problems.push("the working tree has changes: commit the version commit alone, or stash the rest");
const pending = readdirSync(join(root, ".changeset")).filter((f) => f.endsWith(".md") && f !== "README.md");
if (pending.length > 0)
  problems.push(
    `${pending.length} changesets are pending: run npm run version-packages (RELEASING.md) and commit first`,
  );
const changedInHead = git("diff", "--name-only", "HEAD~1", "HEAD").split("\n");
for (const { dir, manifest } of publishedPackages(root)) {
  const rel = dir.slice(root.length + 1);
  if (manifest.version === "0.0.0") problems.push(`${manifest.name} has no version yet`);
  const log = join(dir, "CHANGELOG.md");
  if (!existsSync(log) || !readFileSync(log, "utf8").includes(`\n## ${manifest.version}\n`))
    problems.push(`${manifest.name}: CHANGELOG.md has no entry for ${manifest.version}`);
  const tagged = git("tag", "--list", `${manifest.name}@${manifest.version}`) !== "";
  if (!tagged && !changedInHead.includes(`${rel}/package.json`))
    problems.push(
      `${manifest.name}@${manifest.version} is untagged but HEAD did not version it: HEAD is not the version commit`,
    );
}

if (problems.length > 0) {
  for (const p of problems) console.error(`release: ${p}`);
  process.exit(1);
}
if (process.argv.includes("--dry-run")) {
  console.log("release: HEAD is the version commit; --dry-run stops before publishing");
  process.exit(0);
}
execFileSync("node", [join(root, "node_modules/@changesets/cli/bin.js"), "publish"], {
  cwd: root,
  stdio: "inherit",
});
console.log(`release: published and tagged ${git("rev-parse", "--short", "HEAD")}. Push the commit and its tags:
  git push --follow-tags`);
