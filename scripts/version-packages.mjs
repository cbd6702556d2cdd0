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
//
// Then, before `changeset version`, the kernel rule (CONTRIBUTING.md): when a kernel (root
// package.json `svc.kernels`) is released at a version outside a dependent's peer range, the
// dependent's peer range (and devDependency) moves to `^<new version>` and the dependent gets a
// changeset of its own, minor below 1.0.0 (major from 1.0.0), saying so: an application that
// updates it must update the kernel too, which npm enforces. Changesets alone would either leave
// the range (two copies) or, for a peer, release the dependent as 1.0.0.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { pendingBumps, publishedPackages } from "./release-guard.mjs";

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

/** The kernel rule: moves the peer ranges a kernel release leaves, with changesets saying so. */
export function kernelPeerRanges(root, { first = false } = {}) {
  const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const kernels = rootManifest.svc?.kernels ?? [];
  const packages = publishedPackages(root);
  const bumps = pendingBumps(root);
  const moved = [];
  for (const kernel of kernels) {
    const own = packages.find(({ manifest }) => manifest.name === kernel);
    const bump = bumps.get(kernel);
    if (!own || !bump || bump === "none") continue;
    const next = semver.inc(own.manifest.version, bump);
    for (const { dir, manifest } of packages) {
      const range = manifest.peerDependencies?.[kernel];
      if (!range || semver.satisfies(next, range)) continue;
      const file = join(dir, "package.json");
      const text = readFileSync(file, "utf8");
      const edited = JSON.parse(text);
      edited.peerDependencies[kernel] = `^${next}`;
      if (edited.devDependencies?.[kernel]) edited.devDependencies[kernel] = `^${next}`;
      writeFileSync(file, `${JSON.stringify(edited, null, 2)}\n`);
      moved.push(`${manifest.name}: peer ${kernel} ${range} → ^${next}`);
      // A first release has no earlier kernel to update from: its own entry says it all.
      if (first) continue;
      const needed = semver.major(manifest.version) === 0 ? "minor" : "major";
      const given = bumps.get(manifest.name) ?? "none";
      const type = BUMPS.indexOf(given) > BUMPS.indexOf(needed) ? given : needed;
      writeFileSync(
        join(root, ".changeset", `${slug(manifest.name)}-peer-${slug(kernel)}-${next}.md`),
        changeset(
          { [manifest.name]: type },
          `Needs \`${kernel}\` ^${next} (a peer dependency: update it together with this package; npm refuses a second copy).`,
        ),
      );
    }
  }
  return moved;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--root");
  const root = resolve(at >= 0 ? args[at + 1] : toolingRoot);
  if (!existsSync(join(root, ".changeset"))) throw new Error(`${root} has no .changeset folder`);
  if (args.includes("--first-release")) {
    const { removed, written } = firstRelease(root);
    console.log(
      `version: first release: ${removed} pending changesets replaced by ${written}, one per package`,
    );
  }
  const first = args.includes("--first-release");
  for (const line of kernelPeerRanges(root, { first })) console.log(`version: kernel rule: ${line}`);
  execFileSync("node", [join(toolingRoot, "node_modules/@changesets/cli/bin.js"), "version"], {
    cwd: root,
    stdio: "inherit",
  });
  if (!args.includes("--no-install")) {
    // The lockfile records each workspace's version and ranges; changesets leaves it stale.
    execFileSync("npm", ["install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"], {
      cwd: root,
      stdio: "inherit",
    });
  }
  console.log(
    "version: done. Review `git diff` (versions, CHANGELOG.md, package-lock.json), then commit it alone:\n" +
      '  git commit -am "Version packages" && npm run release',
  );
}
