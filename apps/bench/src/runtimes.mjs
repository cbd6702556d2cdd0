// The packages' Hono composition (servers/packages-hono-app.mjs) beside Hono's own middleware
// (servers/hono-peers-app.mjs) on each runtime the conformance table runs (this Node.js, and the
// Node.js, Bun and Deno of apps/conformance/runtimes.json): each app bundled with esbuild from the
// built packages (what a team installs) and served by the runtime's own server, as a team serves a
// Fetch handler there (@hono/node-server, Bun.serve, Deno.serve).
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";
import { RUNTIMES as pinned, placeOf } from "../../conformance/runtimes.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "../../..");
const out = join(repoRoot, "node_modules", ".cache", "svc-bench-runtimes");

/** The runtimes measured: this Node.js first, then those of runtimes.json with a binary of their own. */
export const RUNTIMES = ["node", ...Object.keys(pinned).filter((name) => pinned[name].bin !== undefined)];

/** How each kind of runtime serves `app` (the entry of runtimes.json names the kind). */
const SERVE = {
  node: `import { serve } from "@hono/node-server";
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: "127.0.0.1" });
process.on("SIGTERM", () => process.exit(0));`,
  bun: `Bun.serve({ port: Number(process.env.PORT), hostname: "127.0.0.1", fetch: app.fetch });`,
  deno: `Deno.serve({ port: Number(process.env.PORT), hostname: "127.0.0.1", onListen() {} }, app.fetch);`,
};

function binaryOf(name) {
  if (name === "node") return { command: [process.execPath], entry: "node" };
  const runtime = pinned[name];
  const binary = placeOf(name).installed;
  if (!existsSync(binary))
    return {
      unavailable: `${runtime.package} is not installed (node apps/conformance/runtimes.mjs install)`,
    };
  return { command: [binary, ...(runtime.args ?? [])], entry: runtime.entry };
}

/**
 * The server definition of `app` (a module of servers/ exporting `app`) on runtime `name`, for
 * harness.mjs's startServer: the bundle and the command that runs it, or why it cannot run here.
 */
export function onRuntime(name, app) {
  const runtime = binaryOf(name);
  if (runtime.unavailable) return runtime;
  const unbuilt = readdirSync(join(repoRoot, "packages")).filter(
    (p) =>
      existsSync(join(repoRoot, "packages", p, "tsup.config.ts")) &&
      !existsSync(join(repoRoot, "packages", p, "dist")),
  );
  if (unbuilt.length > 0)
    return { unavailable: `the packages are not built (npm run build): ${unbuilt.join(", ")}` };
  mkdirSync(out, { recursive: true });
  const outfile = join(out, `${app.replace(/\.mjs$/, "")}@${name}.mjs`);
  buildSync({
    stdin: {
      contents: `import { app } from ${JSON.stringify(join(here, "servers", app))};\n${SERVE[runtime.entry]}\n`,
      resolveDir: join(here, "servers"),
      loader: "js",
    },
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "es2022",
    logLevel: "error",
    banner: {
      js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);',
    },
  });
  return { script: outfile, command: runtime.command };
}
