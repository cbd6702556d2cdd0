#!/usr/bin/env node
// The publish step of a release (RELEASING.md). `npm run release` runs .ci/run first (the same
// checks as CI: build, type-check, lint, tests, package checks, API reports, release guards, the
// registry suite), then this: it refuses unless HEAD is the version commit, publishes with
// `changeset publish` (which tags HEAD, so every tag lands on the version commit), records the
// release in releases.json in a commit of its own (scripts/release-record.mjs) and says what to
// push.
//
// A version is released already when a tag or the release record names it: a clone without the
// tags still knows what was released, and the missing tags are made from the record before
// publishing. Every other version must be one HEAD itself made (HEAD is the version commit).
//
// The README of each package it publishes must state the footprint of the build it publishes
// (scripts/footprint.mjs, within 1%): the version step writes those tables.
//
// It publishes where npm would send `@svc/*` from the root (`npm config get @svc:registry`, else
// `registry`), and refuses anything but the npm registry unless `--registry <url>` names it: a
// rehearsal says where it goes, and a `.npmrc` left by one cannot send a real release there.
// On a CI that can sign provenance (GitHub Actions with `id-token: write`, GitLab CI with a
// `SIGSTORE_ID_TOKEN` id token: docs.npmjs.com, "Generating provenance statements") a publish to
// the npm registry carries `--provenance` (as `npm_config_provenance`, which `changeset publish`
// hands to `npm publish`); elsewhere, and never to another registry, it publishes without.
//
//   node scripts/release.mjs [--dry-run] [--registry <url>] [--no-provenance] [--root <dir>]
//     --dry-run    checks, says where it would publish, and stops
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { hasTable, tableProblems } from "./footprint.mjs";
import { publishedPackages } from "./release-guard.mjs";
import { addToRecord, RECORD, readRecord, recordProblems, recreateTags } from "./release-record.mjs";

const toolingRoot = resolve(import.meta.dirname, "..");
export const NPM_REGISTRY = "https://registry.npmjs.org/";

const git = (root, ...args) =>
  execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
const withSlash = (url) => (url.endsWith("/") ? url : `${url}/`);

/** Where `npm publish` in `root` sends a package of `scope`: the scope's registry, else the default. */
export function publishRegistry(root, scope, env = process.env) {
  const get = (key) =>
    execFileSync("npm", ["config", "get", key], { cwd: root, env, encoding: "utf8" }).trim();
  const scoped = get(`${scope}:registry`);
  return withSlash(scoped && scoped !== "undefined" ? scoped : get("registry"));
}

/**
 * The CI whose OIDC token npm signs provenance with, or undefined: GitHub Actions with the
 * `id-token: write` permission (which sets ACTIONS_ID_TOKEN_REQUEST_URL), GitLab CI with a
 * `SIGSTORE_ID_TOKEN` id token. npm refuses `--provenance` anywhere else.
 */
export function provenanceCI(env = process.env) {
  if (env.GITHUB_ACTIONS === "true" && env.ACTIONS_ID_TOKEN_REQUEST_URL) return "GitHub Actions";
  if (env.GITLAB_CI === "true" && env.SIGSTORE_ID_TOKEN) return "GitLab CI";
  return undefined;
}

/** `name@version` is released already: a tag or the release record names it. */
function released(root, record, name, version) {
  return record[name]?.[version] !== undefined || git(root, "tag", "--list", `${name}@${version}`) !== "";
}

/** Why `root` cannot be released as it is (empty: HEAD is the version commit, ready). */
export function releaseProblems(root) {
  const problems = [];
  // What is published is built from the working tree, and tagged and recorded as HEAD: they must
  // be the same. Each file is named, as the fix depends on it: a file the version step wrote
  // belongs in the version commit, anything else in a commit of its own or out of the checkout.
  // Untrimmed: a line's first column is the index's state, a space when only the file changed.
  const changes = execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], {
    cwd: root,
    encoding: "utf8",
  })
    .split("\n")
    .filter(Boolean);
  if (changes.length > 0)
    problems.push(
      `the working tree differs from HEAD, the commit this would tag (git status --porcelain):\n` +
        [...changes.slice(0, 30), ...(changes.length > 30 ? [`... and ${changes.length - 30} more`] : [])]
          .map((line) => `    ${line}`)
          .join("\n") +
        `\n  a file the version step wrote belongs in the version commit (git add <file> && git commit --amend --no-edit);` +
        ` commit any other change after the release, or move it out of the checkout`,
    );
  const pending = readdirSync(join(root, ".changeset")).filter((f) => f.endsWith(".md") && f !== "README.md");
  if (pending.length > 0)
    problems.push(
      `${pending.length} changesets are pending (${pending.map((f) => `.changeset/${f}`).join(", ")}): run npm run version-packages (RELEASING.md) and commit first`,
    );
  problems.push(...recordProblems(root));
  const record = readRecord(root);
  let changedInHead = [];
  try {
    changedInHead = git(root, "diff", "--name-only", "HEAD~1", "HEAD").split("\n");
  } catch {} // the root commit
  for (const { dir, manifest } of publishedPackages(root)) {
    const rel = relative(root, dir).replaceAll("\\", "/");
    if (manifest.version === "0.0.0")
      problems.push(`${manifest.name} has no version yet (${rel}/package.json)`);
    const log = join(dir, "CHANGELOG.md");
    if (!existsSync(log) || !readFileSync(log, "utf8").includes(`\n## ${manifest.version}\n`))
      problems.push(
        `${manifest.name}: ${rel}/CHANGELOG.md ${existsSync(log) ? "has no entry" : "does not exist, so has no entry"} for ${manifest.version}`,
      );
    if (
      !released(root, record, manifest.name, manifest.version) &&
      !changedInHead.includes(`${rel}/package.json`)
    )
      problems.push(
        `${manifest.name}@${manifest.version} is neither tagged nor in ${RECORD}, and HEAD did not version it (HEAD does not change ${rel}/package.json): HEAD is not the version commit`,
      );
  }
  // The README each package ships with states its footprint; the tables are written in the
  // version commit (version-packages.mjs), from a build of the same sources as this one.
  const publishing = publishedPackages(root).filter(
    (pkg) => !released(root, record, pkg.manifest.name, pkg.manifest.version) && hasTable(pkg),
  );
  for (const p of tableProblems(publishing))
    problems.push(`${p}: build, then node scripts/footprint.mjs --write into the version commit`);
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const option = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const root = resolve(option("--root") ?? toolingRoot);
  const problems = releaseProblems(root);
  const scope = publishedPackages(root)[0]?.manifest.name.split("/")[0] ?? "@svc";
  const registry = publishRegistry(root, scope);
  const asked = option("--registry");
  if (asked === undefined && registry !== NPM_REGISTRY)
    problems.push(
      `npm would publish ${scope}/* to ${registry}, not the npm registry (a .npmrc or npm_config_* setting): remove that setting, or pass --registry ${registry} to publish there`,
    );
  else if (asked !== undefined && withSlash(asked) !== registry)
    problems.push(`--registry ${asked}, but npm would publish ${scope}/* to ${registry}`);
  if (problems.length > 0) {
    for (const p of problems) console.error(`release: ${p}`);
    process.exit(1);
  }
  const ci = provenanceCI();
  const provenance = registry === NPM_REGISTRY && ci !== undefined && !args.includes("--no-provenance");
  console.log(
    `release: HEAD is the version commit; publishing to ${registry} ${provenance ? `with provenance (${ci})` : 'without provenance (RELEASING.md, "Provenance")'}`,
  );
  if (args.includes("--dry-run")) {
    console.log("release: --dry-run stops before publishing");
    process.exit(0);
  }
  // The tags of earlier releases, for `changeset publish` (it skips what is tagged) and the push.
  const made = recreateTags(root);
  if (made.length > 0) console.log(`release: made ${made.length} tags of earlier releases from ${RECORD}`);
  const head = git(root, "rev-parse", "HEAD");
  execFileSync("node", [join(toolingRoot, "node_modules/@changesets/cli/bin.js"), "publish"], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, npm_config_provenance: provenance ? "true" : "false" },
  });
  // What `changeset publish` published, it tagged on HEAD: those are the releases to record.
  const record = readRecord(root);
  const onHead = git(root, "tag", "--points-at", head).split("\n");
  const unrecorded = publishedPackages(root)
    .map(({ manifest }) => ({ name: manifest.name, version: manifest.version }))
    .filter(({ name, version }) => record[name]?.[version] === undefined);
  const fresh = unrecorded.filter(({ name, version }) => onHead.includes(`${name}@${version}`));
  for (const { name, version } of unrecorded.filter((r) => !fresh.includes(r)))
    console.warn(
      `release: ${name}@${version} was on the registry already, so not published from here: add the commit it came from to ${RECORD} by hand`,
    );
  if (fresh.length > 0) {
    addToRecord(root, fresh, head);
    const list = fresh.map(({ name, version }) => `${name}@${version}`).join(", ");
    try {
      git(root, "add", RECORD);
      git(root, "commit", "--quiet", "-m", `Release record: ${list}`, "-m", `Published from ${head}.`);
      console.log(
        `release: recorded ${list} in ${RECORD} (commit ${git(root, "rev-parse", "--short", "HEAD")})`,
      );
    } catch (err) {
      console.error(
        `release: recorded ${list} in ${RECORD}, but could not commit it (${err.stderr?.trim() || err.message}): commit ${RECORD} alone`,
      );
      process.exitCode = 1;
    }
  }
  const branch = git(root, "rev-parse", "--abbrev-ref", "HEAD");
  console.log(
    branch === "HEAD"
      ? `release: published and tagged ${head.slice(0, 12)}. HEAD is detached: put the record commit on main (git cherry-pick), then push it and the tags:\n  git push --follow-tags`
      : `release: published and tagged ${head.slice(0, 12)}. Push the version commit, the record and the tags:\n  git push --follow-tags`,
  );
}
