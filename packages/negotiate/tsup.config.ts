import { defineConfig } from "tsup";
import { presetOptions } from "../../tooling/tsup-preset.js";

// The library and one entry per framework, each importing the library by its name (README,
// "Frameworks").
// `#csv-stringify` (package.json `imports`) stays an import: csv-stringify's Node.js build on the
// `node` condition, its browser build (which makes no `Buffer` at load) elsewhere.
export default defineConfig({
  ...presetOptions,
  external: [...presetOptions.external, "#csv-stringify"],
  entry: ["src/index.ts", "src/express.ts", "src/node.ts", "src/fastify.ts", "src/fetch.ts"],
});
