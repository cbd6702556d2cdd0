import { defineConfig } from "tsup";
import { presetOptions } from "../../tooling/tsup-preset.js";

// Two entries: the library, and `@svc/kernel/internal` (what the @svc packages share; README,
// "The internal entry").
export default defineConfig({ ...presetOptions, entry: ["src/index.ts", "src/internal.ts"] });
