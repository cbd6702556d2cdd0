import { defineConfig } from "tsup";
import { presetOptions } from "../../tooling/tsup-preset.js";

// The library, `@svc/hal/testing` (the link crawler for a service's own tests) and one entry per
// framework, each importing the library by its name (README, "Frameworks").
export const entry = [
  "src/index.ts",
  "src/testing.ts",
  "src/express.ts",
  "src/node.ts",
  "src/fastify.ts",
  "src/fetch.ts",
];

// url-template 3 is an ES module only. The ES build imports it, as a dependency; the CommonJS
// build carries its own copy, since a `require` of an ES module works on Node.js (>= 20.19,
// require(esm)) but not in Jest's CommonJS runtime, where `@svc/hal/testing` is most used. The
// main entry and `testing` both expand templates, so each has a copy (4 kB, stateless: nothing of
// url-template crosses the package boundary, templates and values are strings and objects).
//
// This is the ordinary build (ES modules, CommonJS, declarations); the package's `build` script
// then runs tsup.commonjs.config.ts, which writes the CommonJS scripts again with url-template inside.
// One after the other: two configs of one run would clean and write the same `dist/` at once.
export default defineConfig({ ...presetOptions, entry });
