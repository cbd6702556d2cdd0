import { defineConfig } from "tsup";
import { presetOptions } from "../../tooling/tsup-preset.js";

// Two entries: the library, and `@svc/hal/testing` (the link crawler for a service's own tests).
export default defineConfig({ ...presetOptions, entry: ["src/index.ts", "src/testing.ts"] });
