import { readFileSync } from "node:fs";
import { defineConfig, type Options } from "tsup";

/**
 * The package being built (tsup runs in its folder). Its framework entries (`src/fastify.ts`)
 * import the package's core by its own name, which stays an import: the core then exists once in
 * a process whichever entries an application loads (one `Reply` class, one cache, one store of
 * per-request decisions), instead of a copy bundled into each entry.
 */
const own = JSON.parse(readFileSync("package.json", "utf8")).name as string;

/**
 * The one tsup preset every published package builds with: ESM + CJS, `.d.ts` and `.d.cts`,
 * sourcemaps, a clean `dist/`. Dependencies (and peer dependencies) are never bundled.
 *
 * `treeshake` stays off: esbuild already drops unused code when it bundles, and tsup's extra
 * Rollup pass appended a second `//# sourceMappingURL` line to every file (Rollup's `generate`
 * writes one, then tsup writes its own) while changing nothing but import placement.
 *
 * Every declaration file starts with `/// <reference types="node" />`: the types import
 * `node:http`, `node:stream` and `node:crypto`, and a consumer whose tsconfig says `"types": []`
 * (the TypeScript 7 default) would otherwise not load `@types/node` and fail with TS2591.
 * `@types/node` is an optional peer dependency of each package, as vite and vitest declare it.
 *
 * Source maps ship without `sourcesContent`: they still map every frame of a stack trace
 * (`node --enable-source-maps`) to the file, line and column of `src/` in the repository, which
 * is what a consumer reads them for, and they no longer carry a second copy of the source, which
 * made them about two thirds of each tarball (4.3 MB of the 6.8 MB the nine packages unpacked).
 */
export const presetOptions = {
  entry: ["src/index.ts"],
  external: [own, new RegExp(`^${own.replace("/", "\\/")}\\/`)],
  format: ["esm", "cjs"],
  dts: { banner: '/// <reference types="node" />' },
  sourcemap: true,
  clean: true,
  target: "node20",
  platform: "node",
  splitting: false,
  treeshake: false,
  tsconfig: "tsconfig.build.json",
  esbuildOptions(options) {
    options.sourcesContent = false;
  },
} satisfies Options;

export default defineConfig(presetOptions);
