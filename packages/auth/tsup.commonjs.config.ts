import { defineConfig } from "tsup";
import { presetOptions } from "../../tooling/tsup-preset.js";
import { entry } from "./tsup.config.js";

// The CommonJS scripts again, over the ordinary build's, with jose (an ES module only) bundled
// in (tsup.config.ts says why). No declarations and no cleaning: the ordinary build made both.
export default defineConfig({
  ...presetOptions,
  entry,
  format: ["cjs"],
  dts: false,
  clean: false,
  noExternal: ["jose"],
});
