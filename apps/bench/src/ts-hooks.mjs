// Module hooks that let Node run the workspaces' TypeScript sources in place: `.ts` files are
// transpiled with esbuild (what tsup builds the packages with), `@svc/<name>` resolves to
// `packages/<name>/src/index.ts` and `@svc/<name>/<entry>` to `packages/<name>/src/<entry>.ts`
// (as the root vitest config aliases them, see workspace-sources.mjs), and a `./x.js` specifier
// written for NodeNext resolves to `./x.ts`. Files keep their own location, so `import.meta.url`
// and dependency resolution behave as in the built app.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, resolve as resolvePath } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { transform } from "esbuild";
import { workspaceSources } from "./workspace-sources.mjs";

const root = resolvePath(dirname(fileURLToPath(import.meta.url)), "../../..");
const sources = workspaceSources(root);

export async function resolve(specifier, context, nextResolve) {
  const source = specifier.startsWith("@svc/") ? sources.get(specifier) : undefined;
  if (source !== undefined) return { url: pathToFileURL(source).href, shortCircuit: true };
  const parent = context.parentURL;
  if (parent?.endsWith(".ts") && /^\.{1,2}\//.test(specifier) && /\.[cm]?js$/.test(specifier)) {
    const candidate = new URL(specifier.replace(/\.([cm]?)js$/, ".$1ts"), parent);
    if (existsSync(fileURLToPath(candidate))) return { url: candidate.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!/\.[cm]?ts$/.test(url) || !url.startsWith("file:")) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const { code } = await transform(await readFile(path, "utf8"), {
    loader: "ts",
    format: "esm",
    target: "node20",
    sourcemap: "inline",
    sourcefile: path,
  });
  return { format: "module", source: code, shortCircuit: true };
}
