import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { defineConfig } from "vitest/config";

/**
 * One root config; every workspace (packages/*, apps/*) is a vitest project named after its
 * package. Tests import sibling packages by their public name (`@svc/errors`); the alias points
 * that name at the sibling's `src/index.ts`, so the suite needs no prior build. The built
 * artefacts are checked separately by `check:pkg` and the consumer smoke test.
 */
const root = import.meta.dirname;

interface Workspace {
  name: string;
  dir: string;
}

function workspaces(group: string): Workspace[] {
  const base = join(root, group);
  if (!existsSync(base)) return [];
  return readdirSync(base)
    .map((entry) => join(base, entry))
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => ({
      dir,
      name: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).name as string,
    }));
}

const packages = workspaces("packages");
const apps = workspaces("apps");

const alias = packages
  .filter((p) => existsSync(join(p.dir, "src/index.ts")))
  .map((p) => ({
    find: new RegExp(`^${p.name.replace("/", "\\/")}$`),
    replacement: resolve(p.dir, "src/index.ts"),
  }));

// Subpath entries (`@svc/hal/testing`) point at `src/<subpath>.ts` the same way.
for (const p of packages) {
  const manifest = JSON.parse(readFileSync(join(p.dir, "package.json"), "utf8"));
  for (const subpath of Object.keys(manifest.exports ?? {})) {
    const source = join(p.dir, "src", `${subpath.slice(2)}.ts`);
    if (subpath === "." || !existsSync(source)) continue;
    alias.push({
      find: new RegExp(`^${`${p.name}/${subpath.slice(2)}`.replaceAll("/", "\\/")}$`),
      replacement: source,
    });
  }
}

const include = ["src/**/*.test.ts", "test/**/*.test.ts"];
const timeouts = { testTimeout: 20_000, hookTimeout: 30_000 };

/**
 * Express 4 beside Express 5: every package's test file that loads `express` (itself or through a
 * local helper such as `test/helpers.ts`) runs a second time in a project named
 * `<package> (express 4)`, where `express` resolves to the `express4` install (the oldest major of
 * the packages' `^4.21 || ^5` peer range). Files that never load `express` would only repeat
 * themselves, so they are left out; so are the `express4.test.ts` files, which pin 4 already, and
 * the Redis Cluster suites (`*cluster.test.ts`), which test a store against a cluster through the
 * same middleware the single-node suites already run on 4.
 * A test of Express-5-only behaviour skips there on `process.env.EXPRESS_MAJOR === "4"`.
 */
const express4Entry = createRequire(import.meta.url).resolve("express4");
const valueImportOfExpress = /^\s*import\s+(?!type\s)[^;]*?\bfrom\s+["']express["']/m;
const relativeImport = /\bfrom\s+["'](\.{1,2}\/[^"']+)["']/g;

function loadsExpress(file: string, seen = new Set<string>()): boolean {
  if (seen.has(file) || !existsSync(file)) return false;
  seen.add(file);
  const source = readFileSync(file, "utf8");
  if (valueImportOfExpress.test(source)) return true;
  for (const [, spec] of source.matchAll(relativeImport)) {
    if (loadsExpress(resolve(dirname(file), (spec as string).replace(/\.js$/, ".ts")), seen)) return true;
  }
  return false;
}

function testFiles(dir: string): string[] {
  return ["src", "test"].flatMap((sub) => {
    const base = join(dir, sub);
    if (!existsSync(base)) return [];
    return readdirSync(base, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".test.ts"))
      .map((f) => relative(dir, join(base, f)));
  });
}

const onExpress4 = packages
  .map((p) => ({
    ...p,
    files: testFiles(p.dir).filter(
      (f) => !/(?:express4|cluster)\.test\.ts$/.test(f) && loadsExpress(join(p.dir, f)),
    ),
  }))
  .filter((p) => p.files.length > 0);

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      ...[...packages, ...apps].map((w) => ({
        extends: true,
        test: { name: w.name, root: w.dir, include, ...timeouts },
      })),
      ...onExpress4.map((p) => ({
        extends: true,
        resolve: { alias: [{ find: /^express$/, replacement: express4Entry }] },
        test: {
          name: `${p.name} (express 4)`,
          root: p.dir,
          include: p.files,
          env: { EXPRESS_MAJOR: "4" },
          ...timeouts,
        },
      })),
      // The repository's own scripts (the README example checker).
      { extends: true, test: { name: "scripts", root: join(root, "scripts"), include: ["*.test.ts"] } },
    ],
  },
});
