// Where a workspace package's public name points when the bench runs the packages from their
// TypeScript sources, as the root vitest config aliases them: `@svc/<name>` to
// `packages/<name>/src/index.ts`, an entry of its `exports` (`@svc/kernel/fastify`) to
// `packages/<name>/src/<entry>.ts`. Entries resolved through the built `dist/` instead would load
// a second copy of each package beside the one from its sources.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Every `@svc/...` specifier a package exports, mapped to its source file under `root`.
 * @param {string} root the repository checkout
 * @returns {Map<string, string>}
 */
export function workspaceSources(root) {
  const sources = new Map();
  const packagesDir = join(root, "packages");
  for (const dir of readdirSync(packagesDir)) {
    const manifestPath = join(packagesDir, dir, "package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
    const index = join(packagesDir, dir, "src/index.ts");
    if (existsSync(index)) sources.set(manifest.name, index);
    for (const entry of Object.keys(manifest.exports ?? {})) {
      if (entry === "." || !entry.startsWith("./")) continue;
      const source = join(packagesDir, dir, "src", `${entry.slice(2)}.ts`);
      if (existsSync(source)) sources.set(`${manifest.name}/${entry.slice(2)}`, source);
    }
  }
  return sources;
}
