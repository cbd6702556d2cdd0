import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { defineConfig, type Options } from "tsup";

/**
 * The package being built (tsup runs in its folder). Its framework entries (`src/fastify.ts`)
 * import the package's core by its own name, which stays an import: the core then exists once in
 * a process whichever entries an application loads (one `Reply` class, one cache, one store of
 * per-request decisions), instead of a copy bundled into each entry.
 */
const own = JSON.parse(readFileSync("package.json", "utf8")).name as string;

/**
 * The one tsup preset every published package builds with: ESM + CJS, `.d.ts` and `.d.cts`, a
 * clean `dist/`. Dependencies (and peer dependencies) are never bundled.
 *
 * `treeshake` stays off: esbuild already drops unused code when it bundles, and tsup's extra
 * Rollup pass appended a second `//# sourceMappingURL` line to every file (Rollup's `generate`
 * writes one, then tsup writes its own) while changing nothing but import placement.
 *
 * Every declaration file starts with `/// <reference types="node" />`: the types import
 * `node:http`, `node:stream` and `node:crypto`, and a consumer whose tsconfig says `"types": []`
 * (the TypeScript 7 default) would otherwise not load `@types/node` and fail with TS2591.
 * `@types/node` is an optional peer dependency of each package, as vite and vitest declare it.
 *
 * Builtins keep the `node:` scheme (`removeNodeProtocol: false`; tsup 8 strips it by default):
 * workerd (`nodejs_compat`) and Deno load builtins only by it, and Node.js and Bun take both.
 * `scripts/check-package.mjs` refuses a tarball whose scripts load a bare builtin.
 *
 * No source maps: the built files are not minified (each function keeps its name and reads as its
 * source does, less types and comments), so a stack trace through `dist/` reads as it is, and a
 * map is only worth shipping with the sources it names. Maps without them named `../src/*.ts`, which is not in
 * the tarball: under `node --enable-source-maps` every frame pointed at a missing file. With
 * `sourcesContent` they were two thirds of each tarball, and shipping `src/` beside them would
 * add the sources a second time.
 */
export const presetOptions = {
  entry: ["src/index.ts"],
  external: [own, new RegExp(`^${own.replace("/", "\\/")}\\/`)],
  format: ["esm", "cjs"],
  dts: { banner: '/// <reference types="node" />' },
  sourcemap: false,
  clean: true,
  target: "node20",
  platform: "node",
  splitting: false,
  treeshake: false,
  tsconfig: "tsconfig.build.json",
  removeNodeProtocol: false,
} satisfies Options;

export default defineConfig(presetOptions);

/**
 * The main entry and one entry per framework, each importing the library by its name (each
 * package's README, "Frameworks"): a package's `entry`, with any entries of its own after them.
 */
export const frameworkEntries = [
  "src/index.ts",
  "src/express.ts",
  "src/node.ts",
  "src/fastify.ts",
  "src/fetch.ts",
];

/**
 * The options of a second build, run after the preset's: the CommonJS scripts of `entry` again,
 * with `esmOnly` (dependencies published as ES modules only) bundled in, for the loaders that
 * cannot `require` an ES module (Jest's CommonJS runtime). No declarations and no cleaning: the
 * first build made both.
 */
export function commonJsWith(entry: string[], esmOnly: string[]): Options {
  return { ...presetOptions, entry, format: ["cjs"], dts: false, clean: false, noExternal: esmOnly };
}

/**
 * Makes the ES module of the entry `name` (`dist/<name>.js`, as the preset built it) a wrapper of
 * its CommonJS build (`dist/<name>.cjs`): it re-exports the names the ES build exported, from the
 * CommonJS module. Called from `onSuccess`, once both formats are written.
 *
 * For an entry that holds module state (per-request tables, classes checked with `instanceof`):
 * with two builds, a process that imports the package and also requires it (an ES application
 * with a CommonJS dependency that loads it, a test runner's CommonJS module system beside
 * Node.js's) would hold two copies, two tables. With the wrapper, `import` and `require` reach the
 * same CommonJS module, and so does every loader that cannot load an ES module through `require`
 * (Jest's CommonJS runtime), which the converse (a CommonJS file requiring the ES build,
 * `require(esm)`) leaves out.
 *
 * Node.js finds the CommonJS module's names with cjs-module-lexer, which reads the annotation
 * esbuild writes at the end of a CommonJS build (`0 && (module.exports = { ... })`); the wrapper is
 * imported here once, so a name the lexer misses fails the build rather than an application.
 *
 * @see https://nodejs.org/api/packages.html#approach-1-use-an-es-module-wrapper
 */
export async function wrapCommonJs(name: string): Promise<void> {
  const file = resolve("dist", `${name}.js`);
  const built = readFileSync(file, "utf8");
  // esbuild ends an ES module with one `export { a, b as c };` statement listing its exports.
  const list = /\nexport \{([^}]*)\};\s*$/.exec(built)?.[1];
  if (list === undefined) throw new Error(`dist/${name}.js does not end with an export list`);
  const names = list
    .split(",")
    .map(
      (item) =>
        item
          .trim()
          .split(/\s+as\s+/)
          .pop() as string,
    )
    .filter((item) => item !== "");
  if (names.includes("default"))
    throw new Error(`dist/${name}.js has a default export, which the wrapper cannot forward`);
  writeFileSync(
    file,
    `// The package's CommonJS build is its one implementation; this ES module re-exports it, so that\n` +
      `// \`import\` and \`require\` share one module in a process.\n` +
      `export {\n${names.map((n) => `  ${n},`).join("\n")}\n} from "./${name}.cjs";\n`,
  );
  await import(`${pathToFileURL(file).href}?built=${Date.now()}`);
}
