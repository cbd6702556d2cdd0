import { defineConfig } from "tsup";
import { presetOptions } from "../../tooling/tsup-preset.js";

// The preset, plus the `svc-soap-types` command (package.json `bin`), which has no types to declare.
export default defineConfig({
  ...presetOptions,
  entry: ["src/index.ts", "src/bin.ts"],
  dts: { ...presetOptions.dts, entry: "src/index.ts" },
});
