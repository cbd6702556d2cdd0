#!/usr/bin/env node
// The version step of a release (npm run version-packages; RELEASING.md): turns the pending
// changesets into versions and CHANGELOG entries, and leaves the result for the maintainer to
// review and commit as the version commit.
//
//   node scripts/version-packages.mjs                   the usual release
//   node scripts/version-packages.mjs --first-release   the first one: every pending changeset
//        describes a fix to code never released, so they are all replaced by one changeset per
//        package, a minor (0.0.0 → 0.1.0) whose entry says what the package does (its
//        package.json description). Refused once any package has a version.
//   --root <dir>    another checkout (the registry suite versions a temporary clone)
//   --no-install    leave package-lock.json alone (otherwise refreshed with --package-lock-only)
//   --no-build      write the footprint tables from the dist/ there is (otherwise npm run build
//        first): the README of each package versioned states the footprint of that version
//        (scripts/footprint.mjs), which its new CHANGELOG entry changes
//   --base <ref>    the release the kernel rule compares the kernels' API reports with
//   --dry-run       says what it would do (the kernel rule's ranges, every package's next
//        version) and writes nothing: the same steps, on a throw-away copy (RELEASING.md step 2)
//   --no-stage      leave what it wrote unstaged (otherwise `git add` of exactly those files)
//
// It stages every file it (and `changeset version`) wrote or deleted, new CHANGELOG.md files of
// packages released for the first time included, and nothing else: `git commit -m "Version
// packages"` then makes the version commit, and any other change stays out of it.
//
// Then, before `changeset version`, the kernel rule (CONTRIBUTING.md): when a kernel (root
// package.json `svc.kernels`) has a pending bump, a dependent's peer range on it (and its
// devDependency) moves to `^<new version>`, and the dependent gets a changeset of its own, minor
// below 1.0.0 (major from 1.0.0, or the higher bump already pending), saying so, when
//   - the new version is outside the range (a breaking kernel release), or
//   - the dependent's shipped source (src/, no tests, benchmarks or fixtures) imports, as a value
//     or a type, a name the kernel entry exports now and did not at the last release: its API
//     report (packages/<kernel>/api/<entry>.api.md) at the last release tag or version commit
//     (release-guard.mjs `lastRelease`; `--base <ref>` to choose) against the working tree. The
//     kernel versions the old range admits lack that name: with one of them, the dependent
//     fails at import (or, for a type, at the application's type check).
// An application that updates the dependent must then update the kernel too, which npm enforces
// (ERESOLVE). Changesets alone would either leave the range (two copies, or a missing export) or,
// for a peer, release the dependent as 1.0.0.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { entryPoints, reportPath } from "./api-report.mjs";
import { entryFiles } from "./check-package.mjs";
import { hasTable, writeTables } from "./footprint.mjs";
import { lastRelease, pendingBumps, publishedPackages } from "./release-guard.mjs";

const toolingRoot = resolve(import.meta.dirname, "..");
const semver = createRequire(join(toolingRoot, "package.json"))("semver");
const BUMPS = ["none", "patch", "minor", "major"];

const slug = (name) => name.replace(/^@/, "").replace(/[^a-z0-9]+/gi, "-");
const changeset = (releases, text) =>
  `---\n${Object.entries(releases)
    .map(([name, bump]) => `"${name}": ${bump}`)
    .join("\n")}\n---\n\n${text}\n`;

/** Replaces every pending changeset with one first-release changeset per published package. */
export function firstRelease(root) {
  const packages = publishedPackages(root);
  const versioned = packages.filter(({ manifest }) => manifest.version !== "0.0.0");
  if (versioned.length > 0)
    throw new Error(
      `--first-release: ${versioned.map((p) => `${p.manifest.name}@${p.manifest.version}`).join(", ")} already released`,
    );
  const dir = join(root, ".changeset");
  let removed = 0;
  for (const file of readdirSync(dir)) {
    if (file.endsWith(".md") && file !== "README.md") {
      rmSync(join(dir, file));
      removed++;
    }
  }
  for (const { manifest } of packages) {
    const what = (manifest.description ?? "").replace(/\.?$/, ".");
    writeFileSync(
      join(dir, `first-release-${slug(manifest.name)}.md`),
      changeset({ [manifest.name]: "minor" }, `First release. ${what}`),
    );
  }
  return { removed, written: packages.length };
}

// The declaration keywords of an API report line, `export [declare] <kind> <name>`.
const DECLARATION_KINDS = new Set([
  "function",
  "class",
  "interface",
  "type",
  "const",
  "let",
  "var",
  "enum",
  "namespace",
]);

/**
 * The names an API report (scripts/api-report.mjs) says its entry exports: its top-level
 * `export [declare] <kind> <name>` and `export { a, b as c }` lines. Forgotten exports (no
 * `export`) and members (indented) are not exported.
 */
export function reportedExports(report) {
  const names = new Set();
  const lines = report.split("\n");
  const word = (text) => /^[\w$]+/.exec(text)?.[0] ?? "";
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith("export ")) continue;
    let rest = lines[i].slice("export ".length).trimStart();
    if (rest.startsWith("{")) {
      while (!rest.includes("}") && i + 1 < lines.length) rest += ` ${lines[++i]}`;
      const end = rest.indexOf("}");
      // `a`, `a as b`, `type a`: the exported name is the last word.
      for (const item of rest.slice(1, end < 0 ? undefined : end).split(",")) {
        const last = item.trim().split(/\s+/).at(-1);
        if (last) names.add(last);
      }
      continue;
    }
    for (;;) {
      const w = word(rest);
      rest = rest.slice(w.length).trimStart();
      if (w === "declare" || w === "abstract" || w === "async") continue;
      if (w === "default") names.add("default");
      else if (DECLARATION_KINDS.has(w)) {
        if (rest.startsWith("*")) rest = rest.slice(1).trimStart(); // function*
        let name = word(rest);
        if (w === "const" && name === "enum") name = word(rest.slice(name.length).trimStart());
        if (name) names.add(name);
      }
      break;
    }
  }
  return names;
}

/** Every name of a kernel entry: what `export * from` and `export * as` reach. */
const ALL = "*";

/**
 * What the shipped source of a package (`src/**`, no tests, benchmarks or fixtures: the
 * `changedFilePatterns` of .changeset/config.json) imports from the packages `wanted` (names):
 * `Map<specifier, Set<name>>`, from `import` and `export ... from` (values and types), `import
 * type`, `import("x").Name` types, and `ns.name` of a namespace import. `export *` and dynamic
 * imports count as every name (ALL).
 */
export function importedNames(dir, wanted) {
  const ts = createRequire(join(toolingRoot, "package.json"))("typescript");
  const found = new Map();
  const src = join(dir, "src");
  if (!existsSync(src)) return found;
  const ofKernel = (specifier) => wanted.some((k) => specifier === k || specifier.startsWith(`${k}/`));
  const add = (specifier, name) => {
    if (!found.has(specifier)) found.set(specifier, new Set());
    found.get(specifier).add(name);
  };
  const files = readdirSync(src, { recursive: true })
    .map((f) => String(f).replaceAll("\\", "/"))
    .filter(
      (f) =>
        /\.[cm]?tsx?$/.test(f) &&
        !/\.(test|bench)\.[cm]?tsx?$/.test(f) &&
        !`/${f}`.includes("/__fixtures__/"),
    );
  for (const file of files) {
    const text = readFileSync(join(src, file), "utf8");
    if (!wanted.some((k) => text.includes(k))) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
    const namespaces = new Map(); // local name → specifier
    const visit = (node) => {
      const specifier =
        node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier) ? node.moduleSpecifier.text : "";
      if (ts.isImportDeclaration(node) && ofKernel(specifier)) {
        const clause = node.importClause;
        if (clause?.name) add(specifier, "default");
        const bindings = clause?.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings)) namespaces.set(bindings.name.text, specifier);
        else for (const e of bindings?.elements ?? []) add(specifier, (e.propertyName ?? e.name).text);
      } else if (ts.isExportDeclaration(node) && ofKernel(specifier)) {
        const clause = node.exportClause;
        if (clause && ts.isNamedExports(clause))
          for (const e of clause.elements) add(specifier, (e.propertyName ?? e.name).text);
        else add(specifier, ALL);
      } else if (
        ts.isImportEqualsDeclaration(node) &&
        ts.isExternalModuleReference(node.moduleReference) &&
        ts.isStringLiteral(node.moduleReference.expression) &&
        ofKernel(node.moduleReference.expression.text)
      ) {
        namespaces.set(node.name.text, node.moduleReference.expression.text);
      } else if (ts.isImportTypeNode(node)) {
        const literal = ts.isLiteralTypeNode(node.argument) ? node.argument.literal : undefined;
        if (literal && ts.isStringLiteral(literal) && ofKernel(literal.text)) {
          let first = node.qualifier;
          while (first && ts.isQualifiedName(first)) first = first.left;
          add(literal.text, first ? first.text : ALL);
        }
      } else if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] &&
        ts.isStringLiteral(node.arguments[0]) &&
        ofKernel(node.arguments[0].text)
      ) {
        add(node.arguments[0].text, ALL);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    if (namespaces.size === 0) continue;
    // `ns.name` and the type `ns.Name` of a namespace import.
    const members = (node) => {
      if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
        const specifier = namespaces.get(node.expression.text);
        if (specifier) add(specifier, node.name.text);
      } else if (ts.isQualifiedName(node) && ts.isIdentifier(node.left)) {
        const specifier = namespaces.get(node.left.text);
        if (specifier) add(specifier, node.right.text);
      }
      ts.forEachChild(node, members);
    };
    members(source);
  }
  return found;
}

/**
 * The names of each entry of a kernel that its API reports list now and did not at `base`
 * (`Map<entry, Set<name>>`, entries named as scripts/api-report.mjs names them): an entry
 * without a report at the base is new as a whole.
 */
function newExports(root, own, base) {
  const fresh = new Map();
  const dir = relative(root, own.dir).replaceAll("\\", "/");
  for (const { entry } of entryPoints(own.manifest)) {
    const file = join(own.dir, reportPath(entry));
    if (!existsSync(file)) continue;
    const now = reportedExports(readFileSync(file, "utf8"));
    const before = showAt(root, base, `${dir}/${reportPath(entry).replaceAll("\\", "/")}`);
    const was = before === undefined ? new Set() : reportedExports(before);
    const added = [...now].filter((n) => !was.has(n));
    if (added.length > 0) fresh.set(entry, new Set(added));
  }
  return fresh;
}

function showAt(root, ref, path) {
  try {
    return execFileSync("git", ["show", `${ref}:${path}`], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch {
    return undefined;
  }
}

/** `[{ specifier, names }]`: what `imported` (importedNames) takes from `fresh` of `kernel`. */
function newNamesUsed(imported, kernel, fresh) {
  const used = [];
  for (const [specifier, names] of imported) {
    if (specifier !== kernel && !specifier.startsWith(`${kernel}/`)) continue;
    // The entry of a specifier as scripts/api-report.mjs `entryPoints` names it: `index` for
    // the package itself, `a-b` for `<kernel>/a/b`.
    const subpath = specifier.slice(kernel.length + 1);
    const added = fresh.get(subpath === "" ? "index" : subpath.replaceAll("/", "-"));
    if (!added) continue;
    const hit = names.has(ALL) ? [...added] : [...names].filter((n) => added.has(n));
    if (hit.length > 0) used.push({ specifier, names: hit.sort() });
  }
  return used;
}

const code = (names) => names.map((n) => `\`${n}\``).join(", ");

/**
 * The kernel rule: moves the peer (and dev) range of a dependent on a kernel being released to
 * `^<next>`, with a changeset saying so, when the next version is outside the range, or when the
 * dependent's shipped source imports a name the kernel exports now and did not at the last
 * release (`base`, default `lastRelease`): the versions the range admits lack that name.
 */
export function kernelPeerRanges(root, { first = false, base } = {}) {
  const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const kernels = rootManifest.svc?.kernels ?? [];
  const packages = publishedPackages(root);
  const bumps = pendingBumps(root);
  let since = base;
  const imports = new Map(); // dir → importedNames
  const moved = [];
  for (const kernel of kernels) {
    const own = packages.find(({ manifest }) => manifest.name === kernel);
    const bump = bumps.get(kernel);
    if (!own || !bump || bump === "none") continue;
    const next = semver.inc(own.manifest.version, bump);
    // Never released (0.0.0): no version lacks a name; every range moves anyway.
    let fresh = new Map();
    if (own.manifest.version !== "0.0.0") {
      since ??= releasedAt(root, packages);
      fresh = newExports(root, own, since);
    }
    for (const { dir, manifest } of packages) {
      const range = manifest.peerDependencies?.[kernel];
      if (!range || manifest.name === kernel) continue;
      const outside = !semver.satisfies(next, range);
      let needs = [];
      if (!outside && fresh.size > 0 && admitsBelow(range, next)) {
        if (!imports.has(dir)) imports.set(dir, importedNames(dir, kernels));
        needs = newNamesUsed(imports.get(dir), kernel, fresh);
      }
      if (!outside && needs.length === 0) continue;
      const file = join(dir, "package.json");
      const edited = JSON.parse(readFileSync(file, "utf8"));
      edited.peerDependencies[kernel] = `^${next}`;
      if (edited.devDependencies?.[kernel]) edited.devDependencies[kernel] = `^${next}`;
      writeFileSync(file, `${JSON.stringify(edited, null, 2)}\n`);
      const imported = needs
        .map(({ specifier, names }) => `${code(names)} from \`${specifier}\``)
        .join(" and ");
      moved.push(
        `${manifest.name}: peer ${kernel} ${range} → ^${next}${outside ? "" : ` (imports ${imported.replaceAll("`", "")}, new in ${next})`}`,
      );
      // A first release has no earlier kernel to update from: its own entry says it all.
      if (first) continue;
      const needed = semver.major(manifest.version) === 0 ? "minor" : "major";
      const given = bumps.get(manifest.name) ?? "none";
      const type = BUMPS.indexOf(given) > BUMPS.indexOf(needed) ? given : needed;
      const why = outside
        ? "a peer dependency: update it together with this package; npm refuses a second copy"
        : `it imports ${imported}, new in ${next}; a peer dependency: update it together with this package`;
      writeFileSync(
        join(root, ".changeset", `${slug(manifest.name)}-peer-${slug(kernel)}-${next}.md`),
        changeset({ [manifest.name]: type }, `Needs \`${kernel}\` ^${next} (${why}).`),
      );
      // A kernel after this one in svc.kernels sees the dependent's release.
      bumps.set(manifest.name, type);
    }
  }
  return moved;
}

function releasedAt(root, packages) {
  try {
    return lastRelease(
      root,
      packages.map(({ manifest }) => manifest.name),
    ).ref;
  } catch (err) {
    throw new Error(
      `the kernel rule compares the kernels' API reports with the last release, which needs the git history of ${root}: ${err.message}`,
    );
  }
}

/** Whether `range` admits a version below `version` (one that lacks what `version` adds). */
function admitsBelow(range, version) {
  try {
    const lowest = semver.minVersion(range);
    return lowest !== null && semver.lt(lowest, version);
  } catch {
    return false;
  }
}

/**
 * Every path of `root`'s working tree or index that differs from HEAD (untracked ones included),
 * with a hash of its content (`null` when deleted): `git status --porcelain`, no renames.
 */
export function changedPaths(root) {
  const out = execFileSync(
    "git",
    ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"],
    { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  const paths = new Map();
  for (const entry of out.split("\0")) {
    if (entry.length < 4) continue;
    const path = entry.slice(3);
    const file = join(root, path);
    paths.set(path, existsSync(file) ? createHash("sha1").update(readFileSync(file)).digest("hex") : null);
  }
  return paths;
}

/**
 * Stages what changed between `before` and now (changedPaths): the files the version step wrote
 * or deleted, and no other. Returns `{ staged, dirtyBefore }`, the latter the staged files that
 * had changes of their own before the step (they are in the version commit with them).
 */
export function stageWritten(root, before) {
  const after = changedPaths(root);
  const touched = [...new Set([...after.keys(), ...before.keys()])].filter(
    (path) => before.get(path) !== after.get(path),
  );
  // A path neither on disk nor in the index (an untracked changeset the step consumed) has
  // nothing to stage, and `git add` would refuse its pathspec.
  const tracked = new Set(
    touched.length === 0
      ? []
      : execFileSync("git", ["ls-files", "-z", "--cached", "--", ...touched], {
          cwd: root,
          encoding: "utf8",
        })
          .split("\0")
          .filter(Boolean),
  );
  const staged = touched.filter((path) => tracked.has(path) || existsSync(join(root, path))).sort();
  if (staged.length > 0)
    execFileSync("git", ["add", "--all", "--", ...staged], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  return { staged, dirtyBefore: staged.filter((path) => before.has(path)) };
}

/**
 * The version step on `root`: the first-release changesets when `first`, the kernel rule, then
 * `changeset version` (and the lockfile, unless `install` is false). `log` gets each line to say.
 */
export function versionPackages(
  root,
  {
    first = false,
    base,
    install = true,
    footprints = true,
    build = true,
    stage = false,
    log = console.log,
    quiet = false,
  },
) {
  if (!existsSync(join(root, ".changeset"))) throw new Error(`${root} has no .changeset folder`);
  const dirty = stage ? changedPaths(root) : undefined;
  const before = new Map(publishedPackages(root).map(({ manifest }) => [manifest.name, manifest.version]));
  if (first) {
    const { removed, written } = firstRelease(root);
    log(`version: first release: ${removed} pending changesets replaced by ${written}, one per package`);
  }
  for (const line of kernelPeerRanges(root, { first, base })) log(`version: kernel rule: ${line}`);
  const migrations = pendingMigrations(root); // before `changeset version` consumes them
  execFileSync("node", [join(toolingRoot, "node_modules/@changesets/cli/bin.js"), "version"], {
    cwd: root,
    stdio: quiet ? ["ignore", "pipe", "pipe"] : "inherit",
  });
  for (const line of writeMigrationSections(root, migrations, before)) log(`version: migration: ${line}`);
  if (install) {
    // The lockfile records each workspace's version and ranges; changesets leaves it stale.
    execFileSync("npm", ["install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"], {
      cwd: root,
      stdio: quiet ? ["ignore", "pipe", "pipe"] : "inherit",
    });
  }
  if (footprints) {
    // The README a version ships with states that version's footprint (scripts/footprint.mjs),
    // which its new CHANGELOG entry has just changed.
    const versioned = publishedPackages(root).filter(
      (pkg) => pkg.manifest.version !== before.get(pkg.manifest.name) && hasTable(pkg),
    );
    if (versioned.length > 0 && build)
      execFileSync("npm", ["run", "build"], {
        cwd: root,
        stdio: quiet ? ["ignore", "pipe", "pipe"] : "inherit",
      });
    const unbuilt = versioned.filter(({ dir, manifest }) =>
      entryFiles(manifest).some((file) => !existsSync(join(dir, file))),
    );
    for (const { manifest } of unbuilt)
      log(`version: ${manifest.name} is not built: its README's footprint table is left as it was`);
    const written = writeTables(versioned.filter((pkg) => !unbuilt.includes(pkg)));
    if (written.length > 0) log(`version: footprint tables written: ${written.join(", ")}`);
  }
  if (!stage) return { staged: [] };
  const { staged, dirtyBefore } = stageWritten(root, dirty);
  log(`version: staged the ${staged.length} files it wrote or deleted: ${staged.join(", ")}`);
  if (dirtyBefore.length > 0)
    log(
      `version: ${dirtyBefore.join(", ")} had changes before the version step, staged with them: review them in git diff --cached`,
    );
  return { staged };
}

/**
 * The `Migration:` paragraphs of the pending changesets (`.changeset/*.md`), read before
 * `changeset version` consumes them: `[{ file, packages, summary, lines }]`, `lines` each line
 * that starts with `Migration:` and the rest of its paragraph, joined into one line, without the
 * prefix. A changeset naming several packages gives its lines to each.
 */
export function pendingMigrations(root) {
  const dir = join(root, ".changeset");
  if (!existsSync(dir)) return [];
  const found = [];
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith(".md") || file === "README.md") continue;
    const text = readFileSync(join(dir, file), "utf8").replaceAll("\r\n", "\n");
    const match = /^---\n([\s\S]*?)\n---\n?([\s\S]*)$/.exec(text);
    if (!match) continue;
    const packages = [...match[1].matchAll(/^\s*["']?([^"':\s]+)["']?\s*:\s*(major|minor|patch|none)\s*$/gm)]
      .filter((m) => m[2] !== "none")
      .map((m) => m[1]);
    // A line that starts with `Migration:`, through the end of its paragraph.
    const lines = [];
    for (const line of match[2].split("\n")) {
      if (line.startsWith("Migration:")) lines.push(line.slice("Migration:".length).trim());
      else if (line.trim() === "") lines.push(undefined);
      else if (typeof lines.at(-1) === "string") lines[lines.length - 1] += ` ${line.trim()}`;
    }
    const summary = match[2].trim().split(/\n\s*\n/)[0];
    const migrations = lines.filter(Boolean);
    if (migrations.length > 0) found.push({ file, packages, summary, lines: migrations });
  }
  return found;
}

/**
 * After `changeset version`: into the new CHANGELOG entry of each package it moved across a
 * minor boundary (0.1.x → 0.2.0, 1.x → 2.0.0; not a first release from 0.0.0), just under the
 * version heading, `### Migrating from <previous minor>` with the `Migration:` lines of the
 * changesets consumed for it (`migrations`, from pendingMigrations), in the order the entry lists
 * those changesets. A package without one gets no section: nothing in the release asks a
 * change of its users. Returns the lines to say, `<name>: <line>`, which the dry run prints too.
 */
export function writeMigrationSections(root, migrations, before) {
  const said = [];
  for (const { dir, manifest } of publishedPackages(root)) {
    const from = before.get(manifest.name);
    const to = manifest.version;
    if (!from || from === to || from === "0.0.0" || !semver.valid(from) || !semver.valid(to)) continue;
    // Below 1.0.0 a minor is the breaking step (0.1.x → 0.2.0), from 1.0.0 a major.
    const crossed =
      semver.major(from) !== semver.major(to) ||
      (semver.major(from) === 0 && semver.minor(from) !== semver.minor(to));
    if (!crossed) continue;
    const own = migrations.filter((m) => m.packages.includes(manifest.name));
    const path = join(dir, "CHANGELOG.md");
    if (own.length === 0 || !existsSync(path)) continue;
    const changelog = readFileSync(path, "utf8");
    const heading = new RegExp(`^## ${to.replaceAll(".", "\\.")}[ \\t]*$`, "m").exec(changelog);
    if (!heading) continue;
    const next = changelog.indexOf("\n## ", heading.index + heading[0].length);
    const entry = changelog.slice(heading.index, next < 0 ? undefined : next);
    // The entry's order: where the first line of each changeset's text appears in it.
    const at = (m) => {
      const i = entry.indexOf(m.summary.split("\n")[0].trim());
      return i < 0 ? Number.MAX_SAFE_INTEGER : i;
    };
    const lines = own
      .map((m, i) => ({ m, i }))
      .sort((a, b) => at(a.m) - at(b.m) || a.i - b.i)
      .flatMap(({ m }) => m.lines);
    const title = `Migrating from ${semver.major(from)}.${semver.minor(from)}`;
    const section = `### ${title}\n\n${lines.map((line) => `- ${line}`).join("\n")}\n\n`;
    const end = heading.index + heading[0].length;
    const rest = changelog.slice(end).replace(/^\n+/, "");
    writeFileSync(path, `${changelog.slice(0, end)}\n\n${section}${rest}`);
    for (const line of lines) said.push(`${manifest.name} ${title}: ${line}`);
  }
  return said;
}

/**
 * What the version step would make of `root`, without touching it: the step runs on a copy (a
 * clone sharing `root`'s history and tags, with `root`'s working files, changed and untracked
 * ones included), and this returns the kernel rule's lines and `[{ name, from, to }]` for every
 * published package, then removes the copy. RELEASING.md step 2: `changeset status` alone
 * predicts what changesets would do without the kernel rule (a dependent on a kernel minor
 * becomes 1.0.0), not what this script does.
 */
export function dryRun(root, options = {}) {
  const copy = mkdtempSync(join(tmpdir(), "svc-version-dry-"));
  try {
    execFileSync("git", ["clone", "--quiet", "--shared", "--no-checkout", root, copy], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      cwd: root,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    })
      .split("\0")
      .filter((f) => f !== "" && existsSync(join(root, f)));
    for (const file of new Set(files)) {
      mkdirSync(dirname(join(copy, file)), { recursive: true });
      copyFileSync(join(root, file), join(copy, file));
    }
    const lines = [];
    versionPackages(copy, {
      ...options,
      install: false,
      footprints: false,
      quiet: true,
      log: (line) => lines.push(line),
    });
    const after = new Map(publishedPackages(copy).map(({ manifest }) => [manifest.name, manifest.version]));
    const versions = publishedPackages(root).map(({ manifest }) => ({
      name: manifest.name,
      from: manifest.version,
      to: after.get(manifest.name),
    }));
    return { lines, versions };
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const root = resolve(option("--root") ?? toolingRoot);
  const options = {
    first: args.includes("--first-release"),
    base: option("--base"),
    install: !args.includes("--no-install"),
    build: !args.includes("--no-build"),
  };
  if (args.includes("--dry-run")) {
    const { lines, versions } = dryRun(root, options);
    for (const line of lines) console.log(line);
    console.log("version: --dry-run: the versions npm run version-packages would make (nothing written):");
    for (const { name, from, to } of versions)
      console.log(`version: ${name} ${from === to ? `${from} (unchanged)` : `${from} → ${to}`}`);
  } else {
    const stage = !args.includes("--no-stage");
    versionPackages(root, { ...options, stage });
    console.log(
      `version: done. Review ${stage ? "git diff --cached" : "git diff"} (versions, CHANGELOG.md, package-lock.json), then commit it alone:\n` +
        `  ${stage ? "" : "git add <each file it wrote or deleted> && "}git commit -m "Version packages" && npm run release`,
    );
  }
}
