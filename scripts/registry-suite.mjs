#!/usr/bin/env node
// The release, rehearsed against a real registry (npm run test:registry; CI runs it):
//
// 1. A throw-away verdaccio (root devDependency) on a free loopback port, its storage and users
//    in a temporary folder, and an npm user config that sends `@svc/*` there (with a token of a
//    user created on it) and everything else to the usual registry.
// 2. A temporary clone of HEAD (plus uncommitted changes to tracked files) is released as
//    RELEASING.md does it: scripts/version-packages.mjs versions the pending changesets (when
//    none is pending, a rehearsal patch of @svc/kernel, so versioning always runs), the result is
//    committed as the version commit, given the built dist/ of this checkout (same sources: build
//    first), and published by scripts/release.mjs (`changeset publish`, then the release record).
//    Checked: private apps keep their version, each versioned package's CHANGELOG.md gains one
//    entry for its new version on top of the released ones, every new tag names the version
//    commit, every package's version is tagged, releases.json records the new versions on the
//    version commit in the commit after it, and a clone without tags makes the same tags from it.
// 3. Consumers install exact versions from that registry: with Express 5 (and @types/express 5)
//    and with Express 4.17.3, the oldest the peer ranges admit. In each, every package loads
//    through `import` and `require` (its smoke.mjs), the installed files pass the tarball checks,
//    and the README examples run: type-checked and run in the Express 5 project; compiled in the
//    Express 4.17 one, where those that load Express run again.
// 4. The kernel rule: a second minor of @svc/errors is released with the dependents it leaves
//    (scripts/version-packages.mjs moves their peer ranges). A consumer with @svc/auth of the
//    current kernel minor who adds the @svc/ratelimit built against the next one gets ERESOLVE,
//    never a second copy; one with both on either minor has exactly one @svc/errors.
//
// Where verdaccio cannot start, the suite says so and skips, unless CI is set: then it fails.
//   node scripts/registry-suite.mjs [--keep]     (--keep leaves the temporary folder)
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { freePort } from "@svc/test-utils/free-port";
import { linksFor, packageProblems } from "./check-package.mjs";
import {
  checkReadmeExamples,
  PEER_LIBRARIES,
  printSummary,
  readmeFiles,
  typescriptCompiler,
} from "./readme-examples.mjs";
import { publishedPackages } from "./release-guard.mjs";

const root = resolve(import.meta.dirname, "..");
const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const inCI = Boolean(process.env.CI) && process.env.CI !== "false";
const keep = process.argv.includes("--keep");
const started = Date.now();
const seconds = () => `${Math.round((Date.now() - started) / 1000)} s`;
const work = mkdtempSync(join(tmpdir(), "svc-registry-"));
const results = { passed: 0, failed: 0 };
const pass = (what) => {
  results.passed++;
  console.log(`registry: ${what} ok (${seconds()})`);
};
const fail = (what, detail = "") => {
  results.failed++;
  console.error(`registry: ${what} FAILED${detail ? `\n${detail}` : ""}`);
};
let verdaccio;
let env;
let registryUrl;
// A stopped suite stops its registry and removes its folder too.
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    verdaccio?.kill();
    if (!keep) rmSync(work, { recursive: true, force: true });
    process.exit(1);
  });
}

const run = (cmd, args, cwd, options = {}) =>
  execFileSync(cmd, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...options });
const git = (cwd, ...args) => run("git", args, cwd).trim();

function skipOrFail(reason) {
  if (inCI) {
    console.error(`registry: FAILED: ${reason} (CI must run the registry suite)`);
    process.exit(1);
  }
  console.log(`registry: SKIPPED: ${reason}; the registry suite did not run`);
  process.exit(0);
}

async function startRegistry() {
  const bin = join(root, "node_modules/verdaccio/bin/verdaccio");
  if (!existsSync(bin)) skipOrFail("verdaccio is not installed (npm install)");
  const dir = join(work, "verdaccio");
  mkdirSync(dir);
  writeFileSync(
    join(dir, "config.yaml"),
    [
      "storage: ./storage",
      "auth:",
      "  htpasswd:",
      "    file: ./htpasswd",
      "    max_users: 10",
      "uplinks: {}",
      "packages:",
      "  '**':",
      "    access: $all",
      "    publish: $authenticated",
      "    unpublish: $authenticated",
      "log: { type: stdout, format: pretty, level: error }",
      "",
    ].join("\n"),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  let output = "";
  verdaccio = spawn(
    process.execPath,
    [bin, "--config", join(dir, "config.yaml"), "--listen", `127.0.0.1:${port}`],
    {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  verdaccio.stdout.on("data", (d) => (output += d));
  verdaccio.stderr.on("data", (d) => (output += d));
  // Up to two minutes: CI starts it beside the tests, and a loaded two-core machine answers late.
  for (const until = Date.now() + 120_000; Date.now() < until; ) {
    if (verdaccio.exitCode !== null) break;
    try {
      const response = await fetch(`${url}-/ping`, { signal: AbortSignal.timeout(1000) });
      if (response.ok) return url;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  verdaccio.kill();
  skipOrFail(`verdaccio did not start on ${url}: ${output.trim().split("\n").slice(-3).join(" | ")}`);
}

/** A user on the registry, and an npm user config that sends @svc/* there with its token. */
async function registryUser(url) {
  const name = "svc-release";
  const response = await fetch(`${url}-/user/org.couchdb.user:${name}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, password: `pw-${process.pid}-${Date.now()}`, type: "user", roles: [] }),
  });
  const { token } = await response.json();
  if (!token) throw new Error(`verdaccio gave no token (${response.status})`);
  const userConfig = join(homedir(), ".npmrc");
  const host = url.replace(/^https?:/, "");
  const npmrc = join(work, "npmrc");
  writeFileSync(
    npmrc,
    `${existsSync(userConfig) ? `${readFileSync(userConfig, "utf8")}\n` : ""}@svc:registry=${url}\n${host}:_authToken=${token}\n`,
  );
  // The clone's commits and the tags `changeset publish` writes need an identity, which a CI
  // machine may not have configured.
  const identity = { NAME: "release rehearsal", EMAIL: "release@localhost" };
  return {
    ...process.env,
    npm_config_userconfig: npmrc,
    npm_config_update_notifier: "false",
    GIT_AUTHOR_NAME: identity.NAME,
    GIT_AUTHOR_EMAIL: identity.EMAIL,
    GIT_COMMITTER_NAME: identity.NAME,
    GIT_COMMITTER_EMAIL: identity.EMAIL,
  };
}

/** A clone of HEAD with the uncommitted changes to tracked files, built dist/ copied in. */
function cloneCheckout() {
  const clone = join(work, "repo");
  const snapshot = run("git", ["stash", "create"], root).trim() || "HEAD";
  run("git", ["clone", "--quiet", "--shared", "--no-checkout", root, clone], work);
  git(clone, "checkout", "--quiet", snapshot === "HEAD" ? "HEAD" : snapshot);
  git(clone, "checkout", "--quiet", "-B", "main");
  return clone;
}

function copyDist(clone) {
  for (const { dir, manifest } of publishedPackages(root)) {
    if (!existsSync(join(dir, "dist")))
      throw new Error(`${manifest.name} is not built: run npm run build first`);
    run("cp", ["-R", join(dir, "dist"), join(clone, relative(root, dir), "dist")], root);
  }
}

function versionAndPublish(clone, versionArgs, label, only) {
  run(
    "node",
    [
      join(root, "scripts/version-packages.mjs"),
      "--root",
      clone,
      "--no-install",
      "--no-build",
      ...versionArgs,
    ],
    clone,
  );
  git(clone, "add", "-A");
  git(clone, "commit", "--quiet", "-m", `Version packages (${label})`);
  const versionCommit = git(clone, "rev-parse", "HEAD");
  if (!only) {
    // The release step itself, to this registry, which it must be told (never with provenance:
    // there is no CI identity to sign with here).
    const out = run(
      "node",
      [join(root, "scripts/release.mjs"), "--root", clone, "--registry", registryUrl, "--no-provenance"],
      clone,
    );
    return { versionCommit, out };
  }
  // Just the packages a check needs: every publish costs a few seconds.
  for (const name of only) run("npm", ["publish", "--access", "public"], join(clone, "packages", name));
  return { versionCommit, out: "" };
}

/** `name → version` of every published package of `dir`. */
function versionsOf(dir) {
  return new Map(publishedPackages(dir).map(({ manifest }) => [manifest.name, manifest.version]));
}

function checkRelease(clone, before, versionCommit) {
  const problems = [];
  for (const app of readdirSync(join(clone, "apps"))) {
    const manifest = JSON.parse(readFileSync(join(clone, "apps", app, "package.json"), "utf8"));
    if (manifest.version !== "0.0.0")
      problems.push(`${manifest.name} (private) was versioned to ${manifest.version}`);
  }
  const onCommit = git(clone, "tag", "--points-at", versionCommit).split("\n").filter(Boolean);
  const packages = publishedPackages(clone);
  const currentTags = new Set(packages.map(({ manifest }) => `${manifest.name}@${manifest.version}`));
  let versioned = 0;
  for (const { dir, manifest } of packages) {
    const { name, version } = manifest;
    const tag = `${name}@${version}`;
    if (git(clone, "tag", "--list", tag) === "") problems.push(`${tag} is not tagged`);
    if (version === before.get(name)) continue;
    versioned++;
    const log = existsSync(join(dir, "CHANGELOG.md")) ? readFileSync(join(dir, "CHANGELOG.md"), "utf8") : "";
    const entries = [...log.matchAll(/^## (\S+)$/gm)].map((m) => m[1]);
    // A package never released (0.0.0) has no entry below its first one.
    const prior = before.get(name) === "0.0.0" ? undefined : before.get(name);
    if (entries[0] !== version || entries[1] !== prior)
      problems.push(
        `${name}: CHANGELOG.md lists ${entries.slice(0, 2).join(", ") || "nothing"}, not ${version} on top of ${prior ?? "nothing (a first release)"}`,
      );
    if (!onCommit.includes(tag)) problems.push(`${tag} is not tagged on the version commit`);
  }
  if (versioned === 0) problems.push("the release versioned no package");
  problems.push(...recordCheck(clone, before, versionCommit));
  const stray = onCommit.filter((tag) => !currentTags.has(tag));
  if (stray.length > 0)
    problems.push(`tags of no current version on the version commit: ${stray.join(", ")}`);
  return problems;
}

/**
 * The release record: the commit after the version commit records each version the release
 * made, on the version commit, and a clone without tags makes from it the same tags the release
 * left (scripts/release-record.mjs).
 */
function recordCheck(clone, before, versionCommit) {
  const problems = [];
  const record = JSON.parse(readFileSync(join(clone, "releases.json"), "utf8"));
  if (git(clone, "rev-parse", "HEAD~1") !== versionCommit)
    problems.push("the release did not commit its record on top of the version commit");
  for (const { manifest } of publishedPackages(clone)) {
    const { name, version } = manifest;
    if (version === before.get(name)) continue;
    if (record[name]?.[version] !== versionCommit)
      problems.push(
        `releases.json records ${name}@${version} on ${record[name]?.[version]}, not the version commit`,
      );
  }
  const tags = (dir) =>
    git(dir, "for-each-ref", "--format=%(refname:short) %(*objectname)", "refs/tags")
      .split("\n")
      .sort()
      .join("\n");
  const fresh = join(work, "repo-no-tags");
  run("git", ["clone", "--quiet", "--no-tags", clone, fresh], work);
  run("node", [join(root, "scripts/release-record.mjs"), "--root", fresh, "--tags"], fresh);
  if (tags(fresh) !== tags(clone))
    problems.push(
      `a clone without tags made from releases.json:\n${tags(fresh)}\nnot the release's tags:\n${tags(clone)}`,
    );
  return problems;
}

function consumer(name, installs) {
  const dir = join(work, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `svc-${name}`, private: true }));
  const t = Date.now();
  run("npm", ["install", "--save-exact", "--no-audit", "--no-fund", "--loglevel=error", ...installs], dir);
  console.log(
    `registry: ${name}: installed ${installs.length} packages (${((Date.now() - t) / 1000).toFixed(1)} s)`,
  );
  return dir;
}

/** Each package through `import` and `require`, handed to its smoke.mjs (as npm run smoke does). */
function loadEverywhere(dir, label) {
  const problems = [];
  for (const { dir: pkgDir, manifest } of publishedPackages(root)) {
    const check = pathToFileURL(join(pkgDir, "smoke.mjs")).href;
    const subpaths = Object.keys(manifest.exports ?? {}).filter(
      (k) => k.startsWith("./") && k !== "./package.json",
    );
    for (const kind of ["esm", "cjs"]) {
      const load = (s) =>
        kind === "esm" ? `await import(${JSON.stringify(s)})` : `require(${JSON.stringify(s)})`;
      const entries = `{ ${subpaths.map((k) => `${JSON.stringify(k)}: ${load(`${manifest.name}/${k.slice(2)}`)}`).join(", ")} }`;
      const body = `const smoke = (await import(${JSON.stringify(check)})).default;\nawait smoke(${load(manifest.name)}, ${JSON.stringify(kind)}, ${entries});\n`;
      const file = join(dir, `load-${manifest.name.replace("/", "-")}.${kind === "esm" ? "mjs" : "cjs"}`);
      writeFileSync(
        file,
        kind === "esm"
          ? body
          : `(async () => {\n${body}})().catch((e) => { console.error(e); process.exit(1); });\n`,
      );
      const r = spawnSync("node", [file], { cwd: dir, encoding: "utf8" });
      if (r.status !== 0)
        problems.push(`${manifest.name} (${kind}): ${(r.stderr || r.stdout).trim().slice(0, 500)}`);
    }
    const installed = join(dir, "node_modules", manifest.name);
    const files = listFiles(installed);
    for (const p of packageProblems(
      JSON.parse(readFileSync(join(installed, "package.json"), "utf8")),
      files,
      (f) => readFileSync(join(installed, f), "utf8"),
      linksFor(root, rootManifest, pkgDir),
    ))
      problems.push(`${manifest.name} (installed files): ${p}`);
  }
  if (problems.length === 0) pass(`${label}: every package loads through import and require, files complete`);
  else fail(`${label}: loading`, problems.join("\n"));
}

function listFiles(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(join(dir, e.name), base) : [relative(base, join(dir, e.name))],
  );
}

async function readmes(dir, label, typecheck, expressMajor) {
  const result = await checkReadmeExamples({
    readmes: readmeFiles(root, publishedPackages(root)),
    project: dir,
    root,
    tsc: typescriptCompiler(root),
    // biome-ignore lint/suspicious/noUndeclaredEnvVars: CI sets it; the runnable examples read it
    env: { REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" },
    typecheck,
    expressMajor,
    log: () => {},
  });
  printSummary(result);
  if (result.failures.length === 0)
    pass(`${label}: README examples (${result.checked} compiled, ${result.run} run)`);
  else fail(`${label}: README examples`);
}

function errorsCopies(dir) {
  const out = spawnSync("npm", ["ls", "@svc/errors", "--all", "--parseable", "--long"], {
    cwd: dir,
    env,
    encoding: "utf8",
  });
  return out.stdout
    .split("\n")
    .filter((l) => l.includes("@svc/errors@"))
    .map((l) => l.split(":")[1]);
}

try {
  const url = await startRegistry();
  registryUrl = url;
  console.log(`registry: verdaccio on ${url} (${seconds()})`);
  env = await registryUser(url);
  const clone = cloneCheckout();
  copyDist(clone);

  // 2. The next release, as RELEASING.md does it.
  const pending = readdirSync(join(clone, ".changeset")).filter(
    (f) => f.endsWith(".md") && f !== "README.md",
  );
  if (pending.length === 0)
    writeFileSync(
      join(clone, ".changeset/kernel-release-rehearsal.md"),
      '---\n"@svc/kernel": patch\n---\n\nA release rehearsal (registry suite).\n',
    );
  const before = versionsOf(clone);
  const release = versionAndPublish(clone, [], "release");
  const problems = checkRelease(clone, before, release.versionCommit);
  const current = versionsOf(clone);
  if (problems.length === 0)
    pass(
      `release (${pending.length > 0 ? `${pending.length} pending changesets` : "a rehearsal changeset"}): ${[
        ...current,
      ]
        .filter(([n, v]) => v !== before.get(n))
        .map(([n, v]) => `${n}@${v}`)
        .join(
          ", ",
        )}; changelogs, private apps untouched, tags on the version commit, recorded in releases.json`,
    );
  else fail("release", problems.join("\n"));
  const names = [...current.keys()];
  const pinned = names.map((n) => `${n}@${current.get(n)}`);
  const dev = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).devDependencies;
  const range = (alias) => dev[alias].replace(/^npm:[^@]+@/, "");
  const libraries = [
    `@types/node@${dev["@types/node"]}`,
    `ioredis@${range("ioredis6")}`,
    `redis@${range("redis6")}`,
    "pino@^10",
    "pg@^8", // the PostgreSQL store's example
    "@types/pg@^8",
    "zod@^4", // @svc/errors' mappers example
    "jose@^6",
    `vitest@${dev.vitest}`, // a README shows a test
    // The frameworks the READMEs show beside Express.
    `fastify@${dev.fastify}`,
    `hono@${dev.hono}`,
    `@hono/node-server@${dev["@hono/node-server"]}`,
    // @svc/otel's example starts an OpenTelemetry SDK.
    "@opentelemetry/api@^1.9.0",
    "@opentelemetry/sdk-metrics@^2.12.1",
    "@opentelemetry/sdk-trace-base@^2.12.1",
    "@opentelemetry/context-async-hooks@^2.12.1",
    // The peer libraries the migration guides (apps/docs/guides) start from.
    ...PEER_LIBRARIES,
  ];

  // 3. Consumers.
  const express5 = consumer("express5", [
    ...pinned,
    `express@${dev.express}`,
    `@types/express@${dev["@types/express"]}`,
    ...libraries,
  ]);
  loadEverywhere(express5, "Express 5");
  await readmes(express5, "Express 5", true, 5);
  const express4 = consumer("express4.17", [
    ...pinned,
    "express@4.17.3",
    "@types/express@4.17.21",
    ...libraries,
  ]);
  loadEverywhere(express4, "Express 4.17.3");
  await readmes(express4, "Express 4.17.3", false, 4);

  // A team on Hono installs every package and no Express (nor Fastify): every framework is an
  // optional peer, and no entry, the Express ones included, loads its framework at run time.
  const hono = consumer("hono", [
    ...pinned,
    `hono@${dev.hono}`,
    `@hono/node-server@${dev["@hono/node-server"]}`,
  ]);
  const pulled = ["express", "fastify"].filter((name) => existsSync(join(hono, "node_modules", name)));
  if (pulled.length === 0) pass("Hono only: installing every package pulled in neither Express nor Fastify");
  else fail("Hono only", `installing the packages for Hono also installed ${pulled.join(" and ")}`);
  loadEverywhere(hono, "Hono only");

  // 4. The kernel rule: a second kernel minor and the dependents it leaves.
  writeFileSync(
    join(clone, ".changeset/errors-second-minor.md"),
    '---\n"@svc/errors": minor\n---\n\nA second minor of the kernel (registry suite).\n',
  );
  const second = versionAndPublish(clone, [], "kernel minor", ["errors", "auth", "ratelimit"]);
  const next = versionsOf(clone);
  const [errors1, auth1, ratelimit1] = ["errors", "auth", "ratelimit"].map((n) => current.get(`@svc/${n}`));
  const [errors2, auth2, ratelimit2] = ["errors", "auth", "ratelimit"].map((n) => next.get(`@svc/${n}`));
  const ratelimit = JSON.parse(readFileSync(join(clone, "packages/ratelimit/package.json"), "utf8"));
  const minor = (v) => v.split(".").slice(0, 2).join(".");
  if (
    minor(errors2) === minor(errors1) ||
    minor(ratelimit2) === minor(ratelimit1) ||
    ratelimit.peerDependencies["@svc/errors"] !== `^${errors2}`
  )
    fail(
      "kernel minor",
      `@svc/errors ${errors1} → ${errors2}; @svc/ratelimit ${ratelimit1} → ${ratelimit2} with peer @svc/errors ${ratelimit.peerDependencies["@svc/errors"]}, not a minor with ^${errors2}\n${second.out}`,
    );
  const kernel = consumer("kernel", [`@svc/errors@${errors1}`, `@svc/auth@${auth1}`]);
  const mixed = spawnSync(
    "npm",
    ["install", "--save-exact", "--no-audit", "--no-fund", `@svc/ratelimit@${ratelimit2}`],
    {
      cwd: kernel,
      env,
      encoding: "utf8",
    },
  );
  const refused = mixed.status !== 0 && /ERESOLVE/.test(mixed.stderr) && /@svc\/errors/.test(mixed.stderr);
  const afterRefusal = errorsCopies(kernel);
  if (refused && afterRefusal.length === 1)
    pass(
      `kernel: @svc/ratelimit ${ratelimit2} (kernel ^${errors2}) beside @svc/auth ${auth1} (kernel ${errors1}) is refused with ERESOLVE, one copy stays`,
    );
  else
    fail(
      "kernel: a second kernel minor was not refused",
      `${mixed.stderr.slice(0, 800)}\ncopies: ${afterRefusal.join(", ")}`,
    );
  run(
    "npm",
    [
      "install",
      "--save-exact",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      `@svc/ratelimit@${ratelimit1}`,
    ],
    kernel,
  );
  const old = errorsCopies(kernel);
  run(
    "npm",
    [
      "install",
      "--save-exact",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      `@svc/errors@${errors2}`,
      `@svc/auth@${auth2}`,
      `@svc/ratelimit@${ratelimit2}`,
    ],
    kernel,
  );
  const updated = errorsCopies(kernel);
  const agree = spawnSync(
    "node",
    [
      "-e",
      'const { HttpError } = require("@svc/errors"); const r = require("@svc/ratelimit"); const a = require("@svc/auth"); if (!r || !a || !(new HttpError(429) instanceof HttpError)) process.exit(1);',
    ],
    { cwd: kernel, encoding: "utf8" },
  );
  if (
    old.join() === `@svc/errors@${errors1}` &&
    updated.join() === `@svc/errors@${errors2}` &&
    agree.status === 0
  )
    pass(
      `kernel: auth and ratelimit on @svc/errors ${errors1}, then both on ${errors2}, share one @svc/errors`,
    );
  else
    fail(
      "kernel: copies",
      `${errors1} set: ${old.join(", ")}; ${errors2} set: ${updated.join(", ")}; ${agree.stderr}`,
    );
} catch (err) {
  fail("suite", err.stack ?? String(err));
  if (err.stdout || err.stderr) console.error(`${err.stdout ?? ""}${err.stderr ?? ""}`.slice(-3000));
} finally {
  verdaccio?.kill();
  if (keep) console.log(`registry: kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
console.log(`registry: ${results.passed} passed, ${results.failed} failed (${seconds()})`);
process.exit(results.failed === 0 ? 0 : 1);
