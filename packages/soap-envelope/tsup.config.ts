import { defineConfig } from "tsup";
import { presetOptions } from "../../tooling/tsup-preset.js";

// The preset, one entry per framework (each importing the library by its name), plus the
// `svc-soap-types` command (package.json `bin`), which has no types to declare.
const entries = ["src/index.ts", "src/express.ts", "src/node.ts", "src/fastify.ts", "src/fetch.ts"];

export default defineConfig({
  ...presetOptions,
  entry: [...entries, "src/bin.ts"],
  dts: { ...presetOptions.dts, entry: entries },
});
