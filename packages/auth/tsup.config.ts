import { defineConfig } from "tsup";
import { presetOptions } from "../../tooling/tsup-preset.js";

// The library and one entry per framework, each importing the library by its name (README,
// "Frameworks"), so the core exists once per process.
export const entry = ["src/index.ts", "src/express.ts", "src/node.ts", "src/fastify.ts", "src/fetch.ts"];

// jose 6 is an ES module only. The ES build imports it, as a dependency; the CommonJS build
// carries its own copy, since a `require` of an ES module works on Node.js (>= 20.19, require(esm))
// but not in Jest's CommonJS runtime, nor in other loaders that evaluate `require` themselves.
// Only the main entry imports jose (the framework entries require `@svc/auth`), so the copy is in
// `dist/index.cjs` alone. What crosses the package boundary is not jose's: keys are JWKs, PEMs,
// `KeyObject`s and Web Crypto `CryptoKey`s (the runtime's class, whichever jose made them), key
// sets are JSON; a refusal's `cause` is the copy's error, whose `code` (`ERR_JWT_EXPIRED`) is
// what to test, not `instanceof` a class of one's own jose.
//
// The declarations name no jose type (src/jose-types.ts): TypeScript's `moduleResolution: node16`
// refuses a CommonJS declaration file (`.d.cts`) importing an ES module's types (TS1479).
//
// This is the ordinary build (ES modules, CommonJS, declarations); the package's `build` script
// then runs tsup.commonjs.config.ts, which writes the CommonJS scripts again with jose inside.
// One after the other: two configs of one run would clean and write the same `dist/` at once.
export default defineConfig({ ...presetOptions, entry });
