import { defineConfig } from "tsup";
import { presetOptions } from "../../tooling/tsup-preset.js";

// The preset, plus the `svc-soap-types` command (package.json `bin`).
export default defineConfig({ ...presetOptions, entry: ["src/index.ts", "src/bin.ts"] });
