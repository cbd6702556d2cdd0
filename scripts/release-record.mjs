#!/usr/bin/env node
// The release record, `releases.json` at the root: for each published package, each version
// released and the commit it was published from (the version commit), in full:
//
//   { "@svc/kernel": { "0.1.0": "74bc1c3776b54cd7fb551e6a3bb7851431b3b331" } }
//
// The tags `<package>@<version>` say the same, but only where they were made or fetched: a
// clone that did not bring them (never pushed, `--no-tags`, a CI that fetches one branch) has
// none, while every clone carries this file. scripts/release.mjs writes it after publishing, in
// a commit of its own on top of the version commit: a commit cannot name itself, and the version
// commit's parent would name the wrong commit once the version commit is rebased or
// cherry-picked before the release (RELEASING.md, "The release record"). The release scripts
// read it where they read tags: release.mjs (what is released already), release-guard.mjs
// (the last release, the base of the guards) and the kernel rule of version-packages.mjs.
//
//   node scripts/release-record.mjs [--tags] [--root <dir>]
//     checks the record (each commit exists and gives the package that version, no tag of the
//     same name on another commit); --tags also makes every tag it records that is missing here,
//     on the recorded commit, annotated as `changeset publish` makes them (npm run release:tags)
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";
// A cycle (release-guard.mjs reads the record too), safe: nothing runs before both are loaded.
import { publishedPackages } from "./release-guard.mjs";

const toolingRoot = resolve(import.meta.dirname, "..");
const semver = createRequire(join(toolingRoot, "package.json"))("semver");
export const RECORD = "releases.json";

const git = (root, args, env) =>
  execFileSync("git", args, {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    ...(env ? { env: { ...process.env, ...env } } : {}),
  }).trim();
const tryGit = (root, ...args) => {
  try {
    return git(root, args);
  } catch {
    return undefined;
  }
};

/** The record of `root`: `{ [package]: { [version]: commit } }`, empty without the file. */
export function readRecord(root) {
  const file = join(root, RECORD);
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
}

/** Writes the record, packages by name and each package's versions in release order. */
export function writeRecord(root, record) {
  const sorted = {};
  for (const name of Object.keys(record).sort()) {
    sorted[name] = {};
    for (const version of Object.keys(record[name]).sort(semver.compare))
      sorted[name][version] = record[name][version];
  }
  writeFileSync(join(root, RECORD), `${JSON.stringify(sorted, null, 2)}\n`);
}

/** Every entry of the record: `[{ name, version, commit, tag }]`. */
export function recordEntries(record) {
  return Object.entries(record).flatMap(([name, versions]) =>
    Object.entries(versions).map(([version, commit]) => ({
      name,
      version,
      commit,
      tag: `${name}@${version}`,
    })),
  );
}

/** The commit a tag names, or undefined when there is no such tag. */
function taggedCommit(root, tag) {
  return tryGit(root, "rev-parse", "--verify", "--quiet", `refs/tags/${tag}^{commit}`);
}

/**
 * What is wrong with the record of `root`: an entry whose package is not a published package,
 * whose commit is not a full hash, is not in the history, or does not give the package that
 * version, and a tag of an entry's name on another commit.
 */
export function recordProblems(root, record = readRecord(root)) {
  const problems = [];
  const dirs = new Map(
    publishedPackages(root).map(({ dir, manifest }) => [
      manifest.name,
      relative(root, dir).replaceAll("\\", "/"),
    ]),
  );
  for (const { name, version, commit, tag } of recordEntries(record)) {
    const dir = dirs.get(name);
    if (!dir) {
      problems.push(`${RECORD}: ${tag}: ${name} is not a published package here`);
      continue;
    }
    if (!/^[0-9a-f]{40}$/.test(commit)) {
      problems.push(`${RECORD}: ${tag}: "${commit}" is not a full commit hash (git rev-parse gives one)`);
      continue;
    }
    if (tryGit(root, "cat-file", "-e", `${commit}^{commit}`) === undefined) {
      problems.push(`${RECORD}: ${tag}: commit ${commit} is not in this clone's history (fetch it)`);
      continue;
    }
    const manifest = tryGit(root, "show", `${commit}:${dir}/package.json`);
    const there = manifest === undefined ? undefined : JSON.parse(manifest).version;
    if (there !== version)
      problems.push(
        `${RECORD}: ${tag}: commit ${commit.slice(0, 12)} gives ${name} ${there ?? "no package.json"}, not ${version}`,
      );
    const tagged = taggedCommit(root, tag);
    if (tagged && tagged !== commit)
      problems.push(
        `${RECORD}: ${tag} is recorded on ${commit.slice(0, 12)}, but the tag ${tag} names ${tagged.slice(0, 12)}: one of them is wrong`,
      );
  }
  return problems;
}

/** The recorded releases that have no tag here: `[{ name, version, commit, tag }]`. */
export function missingTags(root, record = readRecord(root)) {
  return recordEntries(record).filter(({ tag }) => taggedCommit(root, tag) === undefined);
}

/**
 * Makes every missing tag of the record on its commit, annotated (`git push --follow-tags`
 * pushes only annotated tags) with the tag as its message, as `changeset publish` makes them,
 * and dated as the commit, so tags sort by release. Returns the tags made.
 */
export function recreateTags(root, record = readRecord(root)) {
  const made = [];
  for (const { commit, tag } of missingTags(root, record)) {
    const date = git(root, ["show", "-s", "--format=%cI", commit]);
    git(root, ["tag", "-a", tag, "-m", tag, commit], { GIT_COMMITTER_DATE: date });
    made.push(tag);
  }
  return made;
}

/** Adds `entries` (`[{ name, version }]`) to the record of `root` as released from `commit`. */
export function addToRecord(root, entries, commit) {
  const record = readRecord(root);
  for (const { name, version } of entries) {
    record[name] ??= {};
    record[name][version] = commit;
  }
  writeRecord(root, record);
  return record;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--root");
  const root = resolve(at >= 0 ? args[at + 1] : toolingRoot);
  const record = readRecord(root);
  const problems = recordProblems(root, record);
  for (const p of problems) console.error(`record: ${p}`);
  if (problems.length > 0) process.exit(1);
  const entries = recordEntries(record);
  if (args.includes("--tags")) {
    const made = recreateTags(root, record);
    console.log(
      made.length > 0
        ? `record: made ${made.length} tags from ${RECORD}: ${made.join(", ")}`
        : `record: all ${entries.length} recorded releases are tagged here`,
    );
  } else {
    const missing = missingTags(root, record);
    console.log(
      `record: ${entries.length} releases recorded, consistent with the history${missing.length > 0 ? `; ${missing.length} untagged here (npm run release:tags makes them)` : ""}`,
    );
  }
}
