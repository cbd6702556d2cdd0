#!/usr/bin/env node
// Import circles inside a package's shipped source: a module that, through its own imports,
// imports itself. Type-only imports count too: a circle of types still says two files hold one
// concept between them, and a later value import along it makes a module see another half-loaded.
// Tests are left out (a test may import what imports it). Exits 1 naming each circle.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+["'](\.{1,2}\/[^"']+)["']/g;

/** The shipped `.ts` files under `dir` (tests left out). */
function sources(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** The file a relative specifier names, as TypeScript resolves `./x.js` to `./x.ts`. */
function resolveSpecifier(from, specifier) {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts")])
    if (existsSync(candidate)) return candidate;
  return undefined;
}

/**
 * Every circle among the source files under `dir`: the strongly connected components (Tarjan)
 * of more than one file, or of one file importing itself, each as its files relative to `dir`.
 */
export function importCycles(dir) {
  const files = sources(dir);
  const known = new Set(files);
  const edges = new Map(
    files.map((file) => [
      file,
      [...readFileSync(file, "utf8").matchAll(IMPORT)]
        .map((match) => resolveSpecifier(file, match[1]))
        .filter((target) => target !== undefined && known.has(target)),
    ]),
  );
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  let next = 0;
  const visit = (file) => {
    index.set(file, next);
    low.set(file, next);
    next++;
    stack.push(file);
    onStack.add(file);
    for (const target of edges.get(file)) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file), low.get(target)));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file), index.get(target)));
    }
    if (low.get(file) !== index.get(file)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || edges.get(file).includes(file))
      cycles.push(component.map((path) => relative(dir, path)).sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return cycles;
}

if (process.argv[1] && resolve(process.argv[1]) === import.meta.filename) {
  const root = resolve(import.meta.dirname, "..");
  let found = 0;
  for (const name of readdirSync(join(root, "packages"))) {
    const src = join(root, "packages", name, "src");
    if (!existsSync(src)) continue;
    for (const cycle of importCycles(src)) {
      found++;
      console.error(`import circle in packages/${name}/src: ${cycle.join(" → ")}`);
    }
  }
  if (found > 0) process.exit(1);
  console.log("import-cycles: no import circle in any package's source");
}
