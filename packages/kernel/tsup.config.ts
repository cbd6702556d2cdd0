import { defineConfig } from "tsup";
import { presetOptions, wrapCommonJs } from "../../tooling/tsup-preset.js";

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
  // The main entry holds per-request state (the exchanges) and the classes checked with
  // `instanceof` (HttpError): one module in a process, whichever way it is loaded. Its ES module
  // re-exports the CommonJS build, which every loader can load (Jest's CommonJS runtime too), so
  // `import` and `require` reach the same one.
  async onSuccess() {
    await wrapCommonJs("index");
  },
});
