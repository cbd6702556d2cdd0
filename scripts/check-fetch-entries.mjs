#!/usr/bin/env node
// Every published package's `./fetch` entry must run where there is no Node.js: workerd without
// `nodejs_compat`, Deno, a browser; so must its main entry (the framework-free cores a Worker
// composes with it, such as the kernel's `createPipeline`, resolved under the Fetch runtimes'
// conditions) and its `./durable-object` entry (the stores a Worker exports as Durable Objects).
// This bundles each built such entry (dist, so run it after
// the build) with esbuild as those runtimes' bundlers do (platform "browser", the conditions
// `workerd`, `worker`, `browser`, `import`), resolving the sibling @svc packages through the
// workspace and third-party packages through node_modules, and fails on any import of a Node.js
// builtin (`node:zlib`, or `zlib` bare as tsup writes it), naming the chain of imports that pulls
// it in. A builtin that a package's `browser` field maps away is not one.
//
// Node.js globals (`Buffer`, `process`, ...) that a module names are listed the same way: each
// is a place that throws where they are absent. What is known to remain is listed, by package, in
// scripts/check-fetch-entries.known.json (under the package's name for `./fetch`, `<name> (main)`
// and `<name>/durable-object` for the others); anything else fails, and so does a listed finding that
// is gone (the list only shrinks).
//
//   node scripts/check-fetch-entries.mjs              every package with a ./fetch entry (and its main and ./durable-object)
//   node scripts/check-fetch-entries.mjs auth kernel  those packages only
//   node scripts/check-fetch-entries.mjs --strict     the known ones fail too
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = resolve(fileURLToPath(import.meta.url), "../..");

/** The conditions the Fetch runtimes' bundlers resolve `exports` with (esbuild adds `import`). */
export const conditions = ["workerd", "worker", "browser"];

const builtins = new Set(builtinModules.filter((name) => !name.startsWith("_")));

/**
 * Node.js globals the Fetch runtimes lack (workerd without `nodejs_compat`, browsers): each free
 * reference is renamed to a marker, found in the bundle under the comment esbuild writes before
 * each module's code.
 */
export const nodeGlobals = ["Buffer", "process", "setImmediate", "clearImmediate", "__dirname", "__filename"];
const marker = (name) => `__node_global_${name}__`;

/** Whether `specifier` names a Node.js builtin (`node:zlib`, `zlib`, `fs/promises`). */
export function isBuiltin(specifier) {
  if (specifier.startsWith("node:")) return true;
  return builtins.has(specifier) || builtins.has(specifier.split("/")[0]);
}

/** The file an `exports` leaf resolves to under `import` (with the Fetch conditions first). */
function exportTarget(value) {
  if (typeof value === "string") return value;
  if (!value || typeof value !== "object") return undefined;
  for (const key of [...conditions, "import", "default"]) {
    if (key in value) {
      const found = exportTarget(value[key]);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * The entries that run where there is no Node.js: the Fetch API's, the main entry (the
 * framework-free cores a Worker composes with them, such as the kernel's `createPipeline`), and
 * the Durable Objects'.
 */
export const webEntries = ["./fetch", ".", "./durable-object"];

/**
 * Each published package's web entries ({@link webEntries}):
 * `{ name, title, known, dir, entry }` (entry absolute; title `@svc/x/fetch`, the key of the known list
 * being the package's name for `./fetch`, `@svc/x/durable-object` for the other).
 */
export function fetchEntries(only = []) {
  const found = [];
  for (const folder of readdirSync(join(root, "packages")).sort()) {
    const dir = join(root, "packages", folder);
    const manifestPath = join(dir, "package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
    if (manifest.private || !manifest.exports?.["./fetch"]) continue;
    if (only.length > 0 && !only.includes(folder) && !only.includes(manifest.name)) continue;
    for (const subpath of webEntries) {
      if (!manifest.exports[subpath]) continue;
      const target = exportTarget(manifest.exports[subpath]);
      if (!target) throw new Error(`${manifest.name}: "${subpath}" has no import target`);
      const title = subpath === "." ? `${manifest.name} (main)` : `${manifest.name}${subpath.slice(1)}`;
      const known = subpath === "./fetch" ? manifest.name : title;
      found.push({ name: manifest.name, title, known, dir, entry: join(dir, target) });
    }
  }
  return found;
}

/**
 * Bundles `entry` for the Fetch runtimes and returns each builtin it imports with the chain of
 * files that leads to it: `[{ builtin, chain: [entry, ..., importer] }]`, one per builtin.
 */
export async function builtinImports(entry) {
  const guard = {
    name: "node-builtins",
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === "guard" || !isBuiltin(args.path)) return undefined;
        // A package's `browser` field may map a builtin to a file or to nothing: that is no import.
        const mapped = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: "guard",
        });
        if (mapped.errors.length === 0 && !mapped.external) return mapped;
        return { path: args.path, external: true };
      });
    },
  };
  const result = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    bundle: true,
    write: false,
    metafile: true,
    platform: "browser",
    format: "esm",
    conditions,
    logLevel: "silent",
    // Not the packages' tsconfig.json files, whose `paths` point a package's own name at its
    // sources: a consumer's bundler resolves the published files.
    tsconfigRaw: {},
    define: Object.fromEntries(nodeGlobals.map((name) => [name, marker(name)])),
    plugins: [guard],
  });
  const inputs = result.metafile.inputs;
  const start = relative(root, entry);
  // Breadth first from the entry, so each chain is a shortest one.
  const parent = new Map([[start, undefined]]);
  const queue = [start];
  const found = new Map();
  while (queue.length > 0) {
    const file = queue.shift();
    for (const { path, external } of inputs[file]?.imports ?? []) {
      if (external) {
        if (isBuiltin(path) && !found.has(path)) {
          const chain = [];
          for (let at = file; at !== undefined; at = parent.get(at)) chain.unshift(at);
          found.set(path, chain);
        }
      } else if (!parent.has(path)) {
        parent.set(path, file);
        queue.push(path);
      }
    }
  }
  // esbuild writes `// <input path>` before each module's code in an unminified bundle. Every
  // module that names a Node.js global is listed: each is a place that throws where it is absent.
  const text = result.outputFiles[0]?.text ?? "";
  const globals = new Map();
  let module = start;
  for (const line of text.split("\n")) {
    const comment = line.match(/^\/\/ (\S+\.[cm]?[jt]sx?)$/);
    if (comment && inputs[comment[1]] !== undefined) module = comment[1];
    for (const name of nodeGlobals) {
      const key = `global ${name}\0${module}`;
      if (line.includes(marker(name)) && !globals.has(key)) {
        const chain = [];
        for (let at = module; at !== undefined; at = parent.get(at)) chain.unshift(at);
        globals.set(key, { builtin: `global ${name}`, chain });
      }
    }
  }
  return [...[...found].map(([builtin, chain]) => ({ builtin, chain })), ...globals.values()];
}

/** A finding's name in the list of known ones: what, and the module that imports or names it. */
export function findingKey({ builtin, chain }) {
  return `${builtin} ← ${label(chain.at(-1))}`;
}

/** `packages/kernel/dist/index.js` → `@svc/kernel (dist/index.js)`; node_modules paths shortened. */
function label(file) {
  const workspace = file.match(/^packages\/([^/]+)\/(.*)$/);
  if (workspace) return `@svc/${workspace[1]} (${workspace[2]})`;
  const dependency = file.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/);
  if (dependency) return `${dependency[1]} (${dependency[2]})`;
  return file;
}

/**
 * What is known still to be there, by package: each finding's key (`findingKey`), in
 * scripts/check-fetch-entries.known.json. A finding not listed fails; so does a listed one no
 * longer found (remove it: the list only shrinks).
 */
const knownPath = join(root, "scripts/check-fetch-entries.known.json");

async function main() {
  const args = process.argv.slice(2);
  const strict = args.includes("--strict");
  const only = args.filter((arg) => !arg.startsWith("--"));
  const known = strict || !existsSync(knownPath) ? {} : JSON.parse(readFileSync(knownPath, "utf8"));
  const started = Date.now();
  const entries = fetchEntries(only);
  if (entries.length === 0) {
    console.error(`no package with a ./fetch entry${only.length > 0 ? ` among ${only.join(", ")}` : ""}`);
    process.exit(1);
  }
  const missing = entries.filter(({ entry }) => !existsSync(entry));
  if (missing.length > 0) {
    for (const { title, entry } of missing)
      console.error(`${title}: ${relative(root, entry)} is not built (npm run build first)`);
    process.exit(1);
  }
  const results = await Promise.all(
    entries.map(async (entry) => ({ ...entry, imports: await builtinImports(entry.entry) })),
  );
  let failed = 0;
  let remaining = 0;
  for (const { title, known: listedAs, imports } of results) {
    const listed = new Set(known[listedAs] ?? []);
    const fresh = imports.filter((finding) => !listed.has(findingKey(finding)));
    const found = new Set(imports.map(findingKey));
    const gone = [...listed].filter((key) => !found.has(key));
    remaining += imports.length - fresh.length;
    if (fresh.length === 0 && gone.length === 0) {
      const note = imports.length > 0 ? ` (${imports.length} known, in ${relative(root, knownPath)})` : "";
      console.log(`ok    ${title}${note}`);
      continue;
    }
    failed++;
    const names = [...new Set(fresh.map((finding) => finding.builtin))];
    console.log(`FAIL  ${title}${names.length > 0 ? ` imports ${names.join(", ")}` : ""}`);
    for (const { builtin, chain } of fresh)
      console.log(`        ${builtin}: ${[...chain.map(label), builtin].join(" → ")}`);
    for (const key of gone)
      console.log(`        no longer found, remove it from ${relative(root, knownPath)}: ${key}`);
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (failed > 0) {
    console.error(
      `\n${failed} of ${results.length} web entries (./fetch, main, ./durable-object) failed (${seconds} s): such an entry runs on workerd without nodejs_compat, Deno and browsers, so it imports no Node.js module and names no Node.js global; use the Web APIs there, or put what only Node.js can do behind a Node entry or a "node" condition.`,
    );
    process.exit(1);
  }
  console.log(
    `\n${results.length} web entries (./fetch, main, ./durable-object) import no Node.js builtin${remaining > 0 ? ` but the ${remaining} known ones (--strict to fail on them)` : ""} (${seconds} s)`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
