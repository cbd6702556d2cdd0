import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";
import { defineConfig } from "tsup";
import { presetOptions } from "../../tooling/tsup-preset.js";

// The preset, one entry per framework (each importing the library by its name), plus the
// `svc-soap-types` command (package.json `bin`), which has no types to declare.
const entries = ["src/index.ts", "src/express.ts", "src/node.ts", "src/fastify.ts", "src/fetch.ts"];

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** `src/platform/host.ts` replaced by `host-web.ts` wherever it is imported. */
const webHost: Plugin = {
  name: "soap-envelope-web-host",
  setup(b) {
    b.onResolve({ filter: /\/platform\/host\.js$/ }, () => ({ path: source("src/platform/host-web.ts") }));
  },
};

export default defineConfig({
  ...presetOptions,
  entry: [...entries, "src/bin.ts"],
  dts: { ...presetOptions.dts, entry: entries },
  /**
   * The main entry again as `dist/index.web.js`, for the package.json `exports` conditions
   * `workerd`, `worker` and `browser`: the same modules but `src/platform/host.ts` (contract files
   * through `node:fs`, X.509 signatures through `node:crypto` and xml-crypto), replaced by
   * `host-web.ts`, so that nothing in it imports a Node.js module or names a Node.js global
   * (scripts/check-fetch-entries.mjs). Built after the preset's, which empties dist/ first; its
   * types are the main entry's.
   */
  async onSuccess() {
    await build({
      entryPoints: [source("src/index.ts")],
      outfile: source("dist/index.web.js"),
      bundle: true,
      format: "esm",
      platform: "neutral",
      target: presetOptions.target,
      // Dependencies stay imports, as the preset leaves them.
      packages: "external",
      tsconfig: source("tsconfig.build.json"),
      logLevel: "warning",
      plugins: [webHost],
    });
  },
});
