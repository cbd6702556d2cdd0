import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
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

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      ...[...packages, ...apps].map((w) => ({
        extends: true,
        test: {
          name: w.name,
          root: w.dir,
          include: ["src/**/*.test.ts", "test/**/*.test.ts"],
          testTimeout: 20_000,
          hookTimeout: 30_000,
        },
      })),
      // The repository's own scripts (the README example checker).
      { extends: true, test: { name: "scripts", root: join(root, "scripts"), include: ["*.test.ts"] } },
    ],
  },
});
