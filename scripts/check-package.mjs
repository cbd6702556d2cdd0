#!/usr/bin/env node
// What a published package's tarball must carry, checked before it is packed: every package's
// `prepack` runs this in its own directory (so `npm pack` and `npm publish` of an unbuilt package
// stop here instead of shipping three files), and scripts/release-guard.mjs runs it on the list
// `npm pack --dry-run` gives.
//
//   node ../../scripts/check-package.mjs     (in a package directory) checks the files on disk
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Every file a manifest names: main, module, types, each leaf of `exports`, each `bin`. */
export function entryFiles(manifest) {
  const files = new Set();
  const add = (path) => {
    if (typeof path === "string" && !path.includes("*")) files.add(path.replace(/^\.\//, ""));
  };
  add(manifest.main);
  add(manifest.module);
  add(manifest.types);
  const walk = (value) => {
    if (typeof value === "string") add(value);
    else if (value && typeof value === "object") for (const v of Object.values(value)) walk(v);
  };
  walk(manifest.exports);
  if (typeof manifest.bin === "string") add(manifest.bin);
  else walk(manifest.bin);
  return [...files];
}

/**
 * What is wrong with the files `shipped` (paths relative to the package, as npm packs them) of
 * the package whose manifest is `manifest`; `read(path)` returns a shipped file's text.
 */
export function packageProblems(manifest, shipped, read) {
  const problems = [];
  const has = new Set(shipped);
  for (const file of entryFiles(manifest)) {
    if (!has.has(file)) problems.push(`${file} (named by package.json) is not in the tarball: build first`);
  }
  for (const file of ["package.json", "README.md", "LICENSE"]) {
    if (!has.has(file)) problems.push(`${file} is not in the tarball`);
  }
  if (manifest.version !== "0.0.0" && !has.has("CHANGELOG.md"))
    problems.push(`CHANGELOG.md is not in the tarball of version ${manifest.version}`);
  const url = typeof manifest.repository === "string" ? manifest.repository : manifest.repository?.url;
  if (url && /example\.(invalid|com|org)|localhost/.test(url))
    problems.push(`repository ${url} is a placeholder: give the true URL or none`);
  for (const file of shipped.filter((f) => f.endsWith(".map"))) {
    const map = JSON.parse(read(file));
    if (map.sourcesContent?.some((s) => s != null))
      problems.push(`${file} embeds its sources (sourcesContent): the maps ship to map stack traces only`);
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.cwd();
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  // On disk, before npm packs: the entry points exist (the rest needs the packed list).
  const missing = entryFiles(manifest).filter((file) => !existsSync(join(dir, file)));
  if (missing.length > 0) {
    console.error(
      `${manifest.name}: not packed, ${missing.join(", ")} missing: build it first (npx turbo run build --filter=${manifest.name})`,
    );
    process.exit(1);
  }
}
