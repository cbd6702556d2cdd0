import { defineConfig } from "tsup";
import { presetOptions } from "../../tooling/tsup-preset.js";

// One entry: it subscribes to the packages' channels, whatever framework they run on.
export default defineConfig({
  ...presetOptions,
  entry: ["src/index.ts"],
});
