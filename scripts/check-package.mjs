#!/usr/bin/env node
// What a published package's tarball must carry, checked before it is packed: every package's
// `prepack` runs this in its own directory (so `npm pack` and `npm publish` of an unbuilt package
// stop here instead of shipping three files), and scripts/release-guard.mjs runs it on the list
// `npm pack --dry-run` gives.
//
// It also holds every published package to the links of the repository (repository with its
// directory, homepage, bugs), derived from the root package.json `repository.url`.
//
//   node ../../scripts/check-package.mjs     (in a package directory) the files on disk, the links
//   node scripts/check-package.mjs [--fix]   (at the root) every package's links; --fix writes them
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, posix, relative, resolve } from "node:path";

/** Node.js builtins by their bare names (`crypto`, `fs/promises`), none of the internal `_` ones. */
const BARE_BUILTINS = new Set(builtinModules.filter((name) => !name.startsWith("_")));

/** `from "x"`, `import("x")`, `require("x")` of a shipped script: the specifiers it loads. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)["']([^"']+)["']/g;

/**
 * The builtins a shipped script loads by a bare name (`crypto`) instead of `node:crypto`: workerd
 * (`nodejs_compat`) and Deno resolve builtins only by the `node:` scheme, so a bare one fails to
 * load there although Node.js and Bun take both.
 */
export function bareBuiltins(text) {
  const found = new Set();
  for (const match of text.matchAll(SPECIFIER)) {
    const specifier = match[1];
    if (BARE_BUILTINS.has(specifier) || BARE_BUILTINS.has(specifier.split("/")[0])) found.add(specifier);
  }
  return [...found];
}

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
 * The links a published package's npm page and provenance statement need, derived from the root
 * package.json `repository.url`, the one line a fork changes: `repository` (that URL, and the
 * package's folder as `directory`), `homepage` (the package's folder on the default branch) and
 * `bugs` (the repository's issues). Undefined when the root names no repository.
 */
export function expectedLinks(rootManifest, directory, branch = "main") {
  const repo = rootManifest.repository;
  const url = typeof repo === "string" ? repo : repo?.url;
  if (!url) return undefined;
  const web = url.replace(/^git\+/, "").replace(/\.git$/, "");
  return {
    homepage: `${web}/tree/${branch}/${directory}#readme`,
    bugs: `${web}/issues`,
    repository: { type: "git", url, directory },
  };
}

/** What is wrong with `manifest`'s links against `links` (expectedLinks). */
export function linkProblems(manifest, links) {
  if (!links)
    return [
      "the root package.json has no repository.url, from which every published package's repository, homepage and bugs derive",
    ];
  const fix =
    "from the root package.json's repository (node scripts/check-package.mjs --fix, at the root, writes them)";
  const repo = manifest.repository;
  const bugs = typeof manifest.bugs === "string" ? manifest.bugs : manifest.bugs?.url;
  const found = { homepage: manifest.homepage, bugs, repository: repo };
  const missing = Object.keys(links).filter((key) => found[key] === undefined);
  const wrong = [];
  if (
    repo !== undefined &&
    (repo.url !== links.repository.url || repo.directory !== links.repository.directory)
  )
    wrong.push(`repository ${JSON.stringify(repo)}, not ${JSON.stringify(links.repository)}`);
  if (manifest.homepage !== undefined && manifest.homepage !== links.homepage)
    wrong.push(`homepage ${manifest.homepage}, not ${links.homepage}`);
  if (manifest.bugs !== undefined && bugs !== links.bugs) wrong.push(`bugs ${bugs}, not ${links.bugs}`);
  return [
    ...(missing.length > 0
      ? [`no ${missing.join(", ")}: give ${JSON.stringify(pick(links, missing))}, ${fix}`]
      : []),
    ...wrong.map((w) => `${w}, ${fix}`),
  ];
}

const pick = (object, keys) => Object.fromEntries(keys.map((key) => [key, object[key]]));

/** `manifest` with `links` set, new fields after `keywords` (else `description`), as npm lists them. */
export function withLinks(manifest, links) {
  const after = "keywords" in manifest ? "keywords" : "description";
  const out = {};
  let placed = false;
  for (const [key, value] of Object.entries(manifest)) {
    if (key in links) continue;
    out[key] = value;
    if (key === after) {
      Object.assign(out, links);
      placed = true;
    }
  }
  return placed ? out : { ...out, ...links };
}

/**
 * What is wrong with the files `shipped` (paths relative to the package, as npm packs them) of
 * the package whose manifest is `manifest`; `read(path)` returns a shipped file's text. With
 * `links` (expectedLinks), the manifest's repository, homepage and bugs are checked too.
 */
export function packageProblems(manifest, shipped, read, links) {
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
  if (links !== undefined) problems.push(...linkProblems(manifest, links));
  for (const file of shipped.filter((f) => /\.(?:m|c)?js$/.test(f))) {
    const bare = bareBuiltins(read(file));
    if (bare.length > 0)
      problems.push(
        `${file} loads ${bare.map((b) => `"${b}"`).join(", ")} without the node: scheme, which workerd and Deno require: build with removeNodeProtocol: false`,
      );
  }
  // A map is worth its bytes only with the sources it names: shipped, or embedded.
  for (const file of shipped.filter((f) => f.endsWith(".map"))) {
    const map = JSON.parse(read(file));
    const missing = (map.sources ?? []).filter(
      (source, i) =>
        map.sourcesContent?.[i] == null &&
        !has.has(posix.join(posix.dirname(file), map.sourceRoot ?? "", source)),
    );
    if (missing.length > 0)
      problems.push(
        `${file} names sources that are not in the tarball (${missing.slice(0, 3).join(", ")}${missing.length > 3 ? ", ..." : ""}): a stack trace through it names missing files; ship them or no map`,
      );
  }
  return problems;
}

/** The workspace root above `dir` (the package.json with `workspaces`), and its manifest. */
export function workspaceRoot(dir) {
  for (let at = resolve(dir); ; at = dirname(at)) {
    const file = join(at, "package.json");
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, "utf8"));
      if (manifest.workspaces) return { root: at, manifest };
    }
    if (dirname(at) === at) return undefined;
  }
}

/** The links of the package in `dir` of the workspace at `root` (the default branch from changesets). */
export function linksFor(root, rootManifest, dir) {
  const config = join(root, ".changeset/config.json");
  const branch = existsSync(config)
    ? (JSON.parse(readFileSync(config, "utf8")).baseBranch ?? "main")
    : "main";
  return expectedLinks(rootManifest, relative(root, dir).replaceAll("\\", "/"), branch);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.cwd();
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const workspace = workspaceRoot(dir);
  if (manifest.workspaces) {
    // At the root: every published package's links, written with --fix.
    const problems = [];
    for (const name of readdirSync(join(dir, "packages"))) {
      const file = join(dir, "packages", name, "package.json");
      if (!existsSync(file)) continue;
      const own = JSON.parse(readFileSync(file, "utf8"));
      if (own.private) continue;
      const links = linksFor(dir, manifest, dirname(file));
      const found = linkProblems(own, links);
      if (found.length === 0) continue;
      if (process.argv.includes("--fix") && links) {
        writeFileSync(file, `${JSON.stringify(withLinks(own, links), null, 2)}\n`);
        console.log(`${own.name}: repository, homepage and bugs written`);
      } else problems.push(...found.map((p) => `${own.name}: ${p}`));
    }
    for (const p of problems) console.error(p);
    process.exit(problems.length === 0 ? 0 : 1);
  }
  // In a package (its prepack), before npm packs: the entry points exist on disk (the rest needs
  // the packed list) and the links are the repository's.
  const missing = entryFiles(manifest).filter((file) => !existsSync(join(dir, file)));
  const problems = [];
  if (missing.length > 0)
    problems.push(
      `not packed, ${missing.join(", ")} missing: build it first (npx turbo run build --filter=${manifest.name})`,
    );
  if (!manifest.private && workspace)
    problems.push(
      ...linkProblems(manifest, linksFor(workspace.root, workspace.manifest, dir)).map(
        (p) => `not packed, ${p}`,
      ),
    );
  for (const p of problems) console.error(`${manifest.name}: ${p}`);
  if (problems.length > 0) process.exit(1);
}
