import { defineConfig } from "tsup";

/** The server is an application, not a library: one ESM entry, dependencies left to node_modules. */
export default defineConfig({
  entry: ["src/main.ts"],
  format: ["esm"],
  dts: false,
  sourcemap: true,
  clean: true,
  target: "node20",
  platform: "node",
  splitting: false,
});
