import { defineConfig } from "tsup";
import { frameworkEntries, presetOptions } from "../../tooling/tsup-preset.js";

// The library, one entry per framework, and `@svc/idempotency/testing` (the store contract for a
// store's own tests) (README, "Frameworks", "Writing a store").
export default defineConfig({
  ...presetOptions,
  entry: [...frameworkEntries, "src/durable-object.ts", "src/testing.ts"],
});
