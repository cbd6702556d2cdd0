import { defineConfig } from "tsup";

/** The soak run is a script: one ESM entry; the fleet launcher and test helpers are bundled in. */
export default defineConfig({
  entry: ["src/soak.ts"],
  format: ["esm"],
  dts: false,
  sourcemap: true,
  clean: true,
  target: "node20",
  platform: "node",
  splitting: false,
  noExternal: ["@svc/test-utils"],
});
