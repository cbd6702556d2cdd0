import { defineConfig } from "tsup";
import { presetOptions } from "../../tooling/tsup-preset.js";

// The library and one entry per framework, each importing the library by its name (README,
// "Frameworks").
export default defineConfig({
  ...presetOptions,
  entry: [
    "src/index.ts",
    "src/express.ts",
    "src/node.ts",
    "src/fastify.ts",
    "src/fetch.ts",
    "src/durable-object.ts",
  ],
});
