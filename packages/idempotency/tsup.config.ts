import { defineConfig } from "tsup";
import { presetOptions } from "../../tooling/tsup-preset.js";

// The library, one entry per framework, and `@svc/idempotency/testing` (the store contract for a
// store's own tests) (README, "Frameworks", "Writing a store").
export default defineConfig({
  ...presetOptions,
  entry: [
    "src/index.ts",
    "src/express.ts",
    "src/node.ts",
    "src/fastify.ts",
    "src/fetch.ts",
    "src/durable-object.ts",
    "src/testing.ts",
  ],
});
