import { writeFileSync } from "node:fs";
import { defineConfig } from "tsup";
import { presetOptions } from "../../tooling/tsup-preset.js";

// The library, `@svc/kernel/internal` (what the @svc packages share; README, "The internal
// entry") and one entry per framework, each importing the library by its name (README,
// "Frameworks").
export default defineConfig({
  ...presetOptions,
  // Classes keep their names: a logger names an error by its constructor (pino's `err.type`), and
  // the bundler would otherwise rename `HttpError` to `_HttpError`.
  keepNames: true,
  entry: [
    "src/index.ts",
    "src/internal.ts",
    "src/express.ts",
    "src/node.ts",
    "src/fastify.ts",
    "src/fetch.ts",
  ],
  // The main entry holds per-request state (the exchanges): one module in a process, whichever
  // way it is loaded. Its CommonJS build loads the ES module (`require(esm)`, Node.js >= 20.19,
  // the `engines` floor) instead of being a second copy with a second table.
  async onSuccess() {
    writeFileSync("dist/index.cjs", '"use strict";\nmodule.exports = require("./index.js");\n');
  },
});
