import { defineConfig, type Options } from "tsup";

/**
 * The one tsup preset every published package builds with: ESM + CJS, `.d.ts` and `.d.cts`,
 * sourcemaps, a clean `dist/`. Dependencies (and peer dependencies) are never bundled.
 */
export const presetOptions = {
  entry: ["src/index.ts"],
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  platform: "node",
  splitting: false,
  treeshake: true,
  tsconfig: "tsconfig.build.json",
} satisfies Options;

export default defineConfig(presetOptions);
