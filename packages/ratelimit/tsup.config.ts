import { defineConfig } from "tsup";
import { frameworkEntries, presetOptions } from "../../tooling/tsup-preset.js";

// The library and one entry per framework, each importing the library by its name (README,
// "Frameworks").
export default defineConfig({
  ...presetOptions,
  entry: [...frameworkEntries, "src/durable-object.ts"],
});
