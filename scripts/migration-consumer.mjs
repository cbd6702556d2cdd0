#!/usr/bin/env node
// The "Migrating from 0.1" check (RELEASING.md step 3): an application written against 0.1.0
// (scripts/fixtures/consumer-0.1/app.0.1.ts, the packages composed as their 0.1.0 READMEs showed
// on Express 5) and the same application migrated by following only the migration lines
// (app.ts). Three checks:
//
//   1. every change between the two files is one a migration line names: each import that moved
//      to another entry has a line naming the import and its new entry, and each other changed
//      line's new words (an option, a function) appear in a line. The lines are the `Migration:`
//      paragraphs of the pending changesets and, once they are consumed, the "Migrating from 0.1"
//      sections of the packages' CHANGELOG.md;
//   2. the packages packed as they are (`npm pack`, as scripts/smoke-consumers.mjs packs them),
//      installed into a throw-away project with Express 5: app.ts and its test type-check
//      strictly (`module: nodenext`, `strict`, `exactOptionalPropertyTypes`,
//      `noUncheckedIndexedAccess`) and the test (app.test.ts, node:test) passes against a real
//      port;
//   3. app.0.1.ts, unmigrated, does not compile against them: the release does break 0.1.0 code,
//      so check 1 has something to check.
//
//   node scripts/migration-consumer.mjs           all three (needs the build)
//   node scripts/migration-consumer.mjs --lines   check 1 alone (no build, no install)
//   --keep                                         leave the throw-away project in place
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { publishedPackages } from "./release-guard.mjs";
import { pendingMigrations } from "./version-packages.mjs";

const root = resolve(import.meta.dirname, "..");
const fixture = join(root, "scripts/fixtures/consumer-0.1");
const FROM = "0.1";

/** Every migration line: the pending changesets' and the released CHANGELOG sections'. */
export function migrationLines(repo = root) {
  const lines = pendingMigrations(repo).flatMap((m) => m.lines);
  const heading = `### Migrating from ${FROM}`;
  for (const { dir } of publishedPackages(repo)) {
    const path = join(dir, "CHANGELOG.md");
    if (!existsSync(path)) continue;
    const text = readFileSync(path, "utf8");
    for (let at = text.indexOf(heading); at >= 0; at = text.indexOf(heading, at + 1)) {
      const body = text.slice(at + heading.length).split(/\n#{2,3} /)[0];
      for (const item of body.split(/\n- /).slice(1)) lines.push(item.replace(/\s*\n\s*/g, " ").trim());
    }
  }
  return lines;
}

/** `Map<name, specifier>` of a module's import declarations. */
function importsOf(text) {
  const names = new Map();
  for (const m of text.matchAll(
    /^import\s+(type\s+)?(?:(\w+)\s*,?\s*)?(?:\{([^}]*)\})?\s*from\s+"([^"]+)";/gm,
  )) {
    if (m[2]) names.set(m[2], m[4]);
    for (const item of (m[3] ?? "").split(",")) {
      const name = item
        .trim()
        .replace(/^type\s+/, "")
        .split(/\s+as\s+/)[0];
      if (name) names.set(name, m[4]);
    }
  }
  return names;
}

/** The changed lines of `b` against `a`, by hunk (`git diff --no-index`), comments left out. */
function hunks(a, b) {
  const r = spawnSync("git", ["diff", "--no-index", "--unified=0", "--no-color", a, b], { encoding: "utf8" });
  if (r.status !== 0 && r.status !== 1) throw new Error(`git diff --no-index failed: ${r.stderr}`);
  const found = [];
  for (const hunk of r.stdout.split(/^@@[^\n]*\n/m).slice(1)) {
    const lines = hunk.split("\n");
    const code = (sign) =>
      lines
        .filter((l) => l.startsWith(sign))
        .map((l) => l.slice(1))
        .filter((l) => !/^\s*(\/\/|$)/.test(l));
    const removed = code("-");
    const added = code("+");
    if (removed.length > 0 || added.length > 0) found.push({ removed, added });
  }
  return found;
}

const words = (lines) => new Set(lines.join("\n").match(/[A-Za-z_$][\w$]*/g) ?? []);

/**
 * Check 1: what the migration from `before` to `after` changes that no line of `lines` names.
 * Returns one problem per unnamed change (empty when every change is named).
 */
export function unnamedChanges(before, after, lines) {
  const problems = [];
  const mentions = (...parts) => lines.some((line) => parts.every((part) => line.includes(part)));
  const was = importsOf(readFileSync(before, "utf8"));
  const now = importsOf(readFileSync(after, "utf8"));
  for (const [name, specifier] of now) {
    const old = was.get(name);
    if (old === specifier) continue;
    if (!mentions(name, `"${specifier}"`) && !mentions(name, `\`${specifier}\``))
      problems.push(
        `${name}: imported from "${specifier}"${old ? ` instead of "${old}"` : ""}, which no migration line names`,
      );
  }
  const importLine = /^\s*import\s/;
  for (const { removed, added } of hunks(before, after)) {
    const code = added.filter((l) => !importLine.test(l));
    if (code.length === 0) continue;
    const old = words(removed);
    for (const word of words(code))
      if (!old.has(word) && !was.has(word) && !now.has(word) && !mentions(word))
        problems.push(`\`${word}\` (in "${code.join(" ").trim()}"): no migration line names it`);
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const keep = process.argv.includes("--keep");
  const started = Date.now();
  const before = join(fixture, "app.0.1.ts");
  const after = join(fixture, "app.ts");
  const lines = migrationLines();
  const problems = unnamedChanges(before, after, lines);
  if (problems.length > 0) {
    console.error(
      `migration: app.0.1.ts → app.ts changes what no migration line (${lines.length} of them) names:\n` +
        problems.map((p) => `  ${p}`).join("\n") +
        "\n  Add the line to the changeset of the change (`Migration: <old> → <new>`), or undo the change in app.ts.",
    );
    process.exit(1);
  }
  console.log(`migration: every change of app.ts is named by one of ${lines.length} migration lines`);
  if (process.argv.includes("--lines")) process.exit(0);

  const work = mkdtempSync(join(tmpdir(), "svc-migration-"));
  const run = (cmd, args, cwd) =>
    execFileSync(cmd, args, { cwd, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  let failed = false;
  try {
    const tarballs = [];
    for (const { dir, manifest } of publishedPackages(root)) {
      if (!existsSync(join(dir, "dist")))
        throw new Error(`${manifest.name} is not built: run npm run build first`);
      const out = run("npm", ["pack", "--silent", "--pack-destination", work], dir).trim().split("\n").pop();
      tarballs.push(join(work, out));
    }
    const project = join(work, "consumer");
    mkdirSync(project);
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "svc-consumer-0-1", private: true, type: "module" }),
    );
    const dev = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).devDependencies;
    run(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        "--prefer-offline",
        ...tarballs,
        `express@${dev.express}`,
        `@types/express@${dev["@types/express"]}`,
        `@types/node@${dev["@types/node"]}`,
        `typescript@${dev.typescript}`,
      ],
      project,
    );
    for (const file of ["app.ts", "app.0.1.ts", "app.test.ts"])
      cpSync(join(fixture, file), join(project, file));
    const compilerOptions = {
      strict: true,
      module: "nodenext",
      moduleResolution: "nodenext",
      target: "es2022",
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: false,
      types: ["node"],
      outDir: "out",
    };
    const tsc = (files, config) => {
      writeFileSync(join(project, config), JSON.stringify({ compilerOptions, files }, null, 2));
      return spawnSync(join(project, "node_modules/.bin/tsc"), ["-p", config], {
        cwd: project,
        encoding: "utf8",
      });
    };

    const migrated = tsc(["app.ts", "app.test.ts"], "tsconfig.json");
    if (migrated.status !== 0) {
      console.error(
        `migration: app.ts does not compile against the packed packages:\n${migrated.stdout}${migrated.stderr}`,
      );
      failed = true;
    } else {
      console.log("migration: app.ts type-checks against the packed packages (strict, nodenext)");
      const test = spawnSync(process.execPath, ["--test", "out/app.test.js"], {
        cwd: project,
        encoding: "utf8",
        timeout: 120_000,
      });
      const summary = (test.stdout.match(/^# (tests|pass|fail) \d+$/gm) ?? []).join(", ");
      if (test.status !== 0) {
        console.error(`migration: app.test.ts failed (${summary}):\n${test.stdout}${test.stderr}`);
        failed = true;
      } else console.log(`migration: app.test.ts passed on a real port (${summary.replaceAll("# ", "")})`);
    }

    compilerOptions.noEmit = true;
    const unmigrated = tsc(["app.0.1.ts"], "tsconfig.0.1.json");
    const errors = (unmigrated.stdout.match(/error TS\d+/g) ?? []).length;
    if (unmigrated.status === 0) {
      console.error(
        "migration: app.0.1.ts compiles unchanged against the packed packages: the release breaks nothing it uses, so app.ts should equal it",
      );
      failed = true;
    } else
      console.log(
        `migration: app.0.1.ts, unmigrated, does not compile against them (${errors} errors), as expected:\n` +
          unmigrated.stdout
            .split("\n")
            .filter(Boolean)
            .slice(0, 8)
            .map((l) => `  ${l}`)
            .join("\n"),
      );
  } finally {
    if (keep) console.log(`migration: kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
  console.log(`migration: ${failed ? "FAILED" : "passed"} (${Math.round((Date.now() - started) / 1000)} s)`);
  process.exit(failed ? 1 : 0);
}
