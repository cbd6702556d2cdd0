import { defineConfig } from "tsup";
import { presetOptions } from "../../tooling/tsup-preset.js";

// The library, `@svc/hal/testing` (the link crawler for a service's own tests) and one entry per
// framework, each importing the library by its name (README, "Frameworks").
const entry = [
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
// Two builds write into one `dist/` at the same time: each removes only its own scripts first.
export default defineConfig([
  {
    ...presetOptions,
    entry,
    format: ["esm"],
    clean: ["!**/*.cjs"],
  },
  {
    ...presetOptions,
    entry,
    format: ["cjs"],
    clean: ["!**/*.js"],
    noExternal: ["url-template"],
  },
]);
