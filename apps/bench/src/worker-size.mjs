// The size of a Cloudflare Worker made of each bench app on Hono: servers/packages-hono-app.mjs
// (the packages' composition) and servers/hono-peers-app.mjs (Hono's own middleware), bundled as
// workerd resolves them (conditions workerd, worker, browser), minified, then gzipped: the
// compressed size is what Cloudflare's plans limit (3 MB on the free plan). Node.js modules a
// bundle still imports are listed (a Worker without nodejs_compat cannot load them).
//
//   node apps/bench/src/worker-size.mjs

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const LIMIT = 3 * 1024 * 1024;

async function workerOf(app) {
  const result = await build({
    stdin: {
      contents: `import { app } from ${JSON.stringify(join(here, "servers", app))};\nexport default { fetch: app.fetch };\n`,
      resolveDir: join(here, "servers"),
      loader: "js",
    },
    bundle: true,
    minify: true,
    write: false,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    external: ["node:*"],
    target: "es2022",
    metafile: true,
    logLevel: "error",
  });
  const bytes = result.outputFiles[0].contents;
  const node = new Set();
  for (const output of Object.values(result.metafile.outputs))
    for (const imported of output.imports) if (imported.path.startsWith("node:")) node.add(imported.path);
  return {
    minified: bytes.byteLength,
    gzip: gzipSync(bytes, { level: 9 }).byteLength,
    node: [...node].sort(),
  };
}

const kB = (n) => `${(n / 1024).toFixed(1)} kB`;
console.log("| Worker | minified | minified + gzip | of the 3 MB free plan | Node.js modules imported |");
console.log("|---|---:|---:|---:|---|");
for (const [label, app] of [
  ["the packages on Hono (packages-hono-app.mjs)", "packages-hono-app.mjs"],
  ["Hono's own middleware (hono-peers-app.mjs)", "hono-peers-app.mjs"],
]) {
  const size = await workerOf(app);
  console.log(
    `| ${label} | ${kB(size.minified)} | ${kB(size.gzip)} | ${((size.gzip / LIMIT) * 100).toFixed(1)} % | ${size.node.join(", ") || "none"} |`,
  );
}
