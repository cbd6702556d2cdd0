#!/usr/bin/env node
// Consumer smoke test: packs every published package with `npm pack`, installs the tarballs into
// a throw-away project outside the workspace, and loads each one through ESM `import` and CJS
// `require`, handing the module (and every subpath entry of its `exports`) to the package's own
// `smoke.mjs`. A broken `exports` map, a missing file in `files`, or a dependency that only
// resolves inside the workspace fails here.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const root = resolve(import.meta.dirname, "..");
const only = process.argv.slice(2);
const published = readdirSync(join(root, "packages"))
  .map((name) => join(root, "packages", name))
  .filter((dir) => existsSync(join(dir, "package.json")))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) }))
  .filter(({ manifest }) => !manifest.private);
// Naming packages checks just those, plus the @svc packages they depend on (packed too, since
// they are not on the registry until released).
const wanted = new Set(only);
for (let grew = true; grew && only.length > 0; ) {
  grew = false;
  for (const { manifest } of published) {
    if (!wanted.has(manifest.name)) continue;
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })) {
      if (dep.startsWith("@svc/") && !wanted.has(dep)) {
        wanted.add(dep);
        grew = true;
      }
    }
  }
}
const packages = published.filter(({ manifest }) => only.length === 0 || wanted.has(manifest.name));

if (packages.length === 0) {
  console.error("smoke: no published package found");
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), "svc-smoke-"));
const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
let failed = 0;
try {
  const tarballs = [];
  for (const { dir, manifest } of packages) {
    if (!existsSync(join(dir, "dist")))
      throw new Error(`${manifest.name} is not built: run npm run build first`);
    const out = run("npm", ["pack", "--silent", "--pack-destination", work], dir).trim().split("\n").pop();
    tarballs.push(join(work, out));
  }
  // Peer dependencies a consumer would install next to the packages (Express apps).
  const peers = new Set();
  for (const { manifest } of packages) {
    for (const peer of Object.keys(manifest.peerDependencies ?? {})) {
      if (!peer.startsWith("@svc/") && !manifest.peerDependenciesMeta?.[peer]?.optional) peers.add(peer);
    }
  }
  const consumer = join(work, "consumer");
  run("mkdir", ["-p", consumer], work);
  writeFileSync(
    join(consumer, "package.json"),
    JSON.stringify({ name: "svc-smoke-consumer", private: true }),
  );
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...tarballs, ...peers], consumer);

  for (const { dir, manifest } of packages) {
    const check = join(dir, "smoke.mjs");
    if (!existsSync(check)) {
      console.error(`smoke: ${manifest.name} has no smoke.mjs`);
      failed++;
      continue;
    }
    for (const kind of ["esm", "cjs"]) {
      const file = join(
        consumer,
        `check-${manifest.name.replace("/", "-")}.${kind === "esm" ? "mjs" : "cjs"}`,
      );
      const load = (specifier) =>
        kind === "esm"
          ? `await import(${JSON.stringify(specifier)})`
          : `require(${JSON.stringify(specifier)})`;
      // Every subpath entry of `exports` (`@svc/hal/testing`) is loaded too, the same way, and
      // handed to the check as a third argument keyed by subpath.
      const subpaths = Object.keys(manifest.exports ?? {}).filter(
        (key) => key.startsWith("./") && key !== "./package.json",
      );
      const entries = `{ ${subpaths
        .map((key) => `${JSON.stringify(key)}: ${load(`${manifest.name}/${key.slice(2)}`)}`)
        .join(", ")} }`;
      const call = `smoke(${load(manifest.name)}, ${JSON.stringify(kind)}, ${entries})`;
      const body =
        kind === "esm"
          ? `const smoke = (await import(${JSON.stringify(pathToFileURL(check).href)})).default;\nawait ${call};\n`
          : `(async () => {\n  const smoke = (await import(${JSON.stringify(pathToFileURL(check).href)})).default;\n  await ${call};\n})().catch((e) => { console.error(e); process.exit(1); });\n`;
      writeFileSync(file, body);
      try {
        run("node", [file], consumer);
        console.log(`smoke: ${manifest.name} (${kind}) ok`);
      } catch {
        console.error(`smoke: ${manifest.name} (${kind}) FAILED`);
        failed++;
      }
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(`smoke: ${packages.length * 2 - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
