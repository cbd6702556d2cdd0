import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { type BuildOptions, build, type Plugin } from "esbuild";
import { placeOf, RUNTIMES, type Runtime } from "../runtimes.mjs";

/**
 * The Hono composition on the runtimes of `runtimes.json` (Node.js 22 and 24, Bun, Deno, workerd),
 * each served the way a team serves a Fetch handler there (`@hono/node-server`, `Bun.serve`,
 * `Deno.serve`, a Worker's `fetch` under miniflare). What runs is what a team installs: the
 * packages are packed with `npm pack`, and `src/runtimes/<entry>.ts` is bundled with esbuild
 * against the packed files alone (an @svc module resolved from anywhere else fails the bundle).
 */

const root = join(import.meta.dirname, "../../..");
const here = join(import.meta.dirname, "..");
const caches = join(root, "node_modules", ".cache", "svc-conformance");

/** The runtimes of `runtimes.json`, installed here or not. */
export const RUNTIME_NAMES: readonly string[] = Object.keys(RUNTIMES);

const published = readdirSync(join(root, "packages"))
  .map((name) => join(root, "packages", name))
  .filter((dir) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).private !== true);

/** Why `name` cannot run here (not installed, packages not built), or `undefined`. */
export function missing(name: string): string | undefined {
  const runtime = RUNTIMES[name];
  if (runtime === undefined) return `${name} is not in runtimes.json`;
  if (!existsSync(placeOf(name).installed))
    return `${runtime.package} is not installed (node apps/conformance/runtimes.mjs install)`;
  const unbuilt = published.filter((dir) => !existsSync(join(dir, "dist")));
  if (unbuilt.length > 0)
    return `the packages are not built (npm run build): ${unbuilt.map((d) => relative(root, d))}`;
  return undefined;
}

let bundled: Promise<string> | undefined;
let made: string | undefined;

/** Removes this module's bundles, once the servers that run them are closed. */
export function removeBundles(): void {
  if (made !== undefined) rmSync(made, { recursive: true, force: true });
  made = undefined;
  bundled = undefined;
}

/** Packs the packages and bundles every runtime entry against the packed files, once per run. */
function bundles(): Promise<string> {
  bundled ??= (async () => {
    // A folder of this module's own: the suites that bundle run in parallel workers, and a worker
    // may end without its exit handlers; a folder an hour old is no run's any more.
    mkdirSync(caches, { recursive: true });
    for (const old of readdirSync(caches, { withFileTypes: true }))
      if (old.name.startsWith("bundle-") && Date.now() - statSync(join(caches, old.name)).mtimeMs > 3_600_000)
        rmSync(join(caches, old.name), { recursive: true, force: true });
    const cache = mkdtempSync(join(caches, "bundle-"));
    made = cache;
    const packed = join(cache, "packed", "node_modules", "@svc");
    mkdirSync(packed, { recursive: true });
    const report = execFileSync(
      "npm",
      ["pack", "--json", "--pack-destination", cache, ...published.flatMap((dir) => ["-w", dir])],
      { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
    );
    for (const { name, filename } of JSON.parse(report) as { name: string; filename: string }[]) {
      const folder = join(packed, name.slice("@svc/".length));
      mkdirSync(folder, { recursive: true });
      execFileSync("tar", ["-xzf", join(cache, filename), "-C", folder, "--strip-components=1"]);
    }
    const fromPacked: Plugin = {
      name: "packed @svc packages",
      setup(b) {
        b.onResolve({ filter: /^@svc\// }, (args) =>
          args.pluginData === "packed"
            ? undefined
            : b.resolve(args.path, { kind: args.kind, resolveDir: packed, pluginData: "packed" }),
        );
      },
    };
    // Each runtime's entry; `stores`, the Redis and PostgreSQL stores run on each runtime with a
    // binary (`stores.test.ts`); and `durable-objects`, the Durable Object stores' Worker
    // (`durable-objects.test.ts`).
    const entries = (worker: boolean) =>
      Object.fromEntries(
        [
          ...new Set([
            ...Object.values(RUNTIMES)
              .filter((r) => (r.module === "miniflare") === worker)
              .map((r) => r.entry),
            ...(worker ? ["durable-objects"] : ["stores"]),
          ]),
        ].map((e) => [e, join(here, "src", "runtimes", `${e}.ts`)]),
      );
    const common: BuildOptions = {
      outdir: cache,
      outExtension: { ".js": ".mjs" },
      bundle: true,
      format: "esm",
      target: "es2022",
      metafile: true,
      logLevel: "error",
      nodePaths: [join(root, "node_modules")],
      plugins: [fromPacked],
    };
    const results = await Promise.all([
      build({
        ...common,
        entryPoints: entries(false),
        platform: "node",
        // The composition finds its WSDL beside its sources, not beside the bundle.
        define: { "import.meta.dirname": JSON.stringify(join(here, "src")) },
        // CommonJS dependencies `require` Node's modules; every runtime here has `node:module`.
        banner: {
          js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);',
        },
      }),
      // As a Worker is bundled: the conditions workerd resolves, no Node.js module but through
      // `nodejs_compat` (a `node:` import is left to the runtime, which refuses it without).
      build({
        ...common,
        entryPoints: entries(true),
        platform: "browser",
        conditions: ["workerd", "worker", "browser"],
        external: ["node:*"],
        // The SOAP contract's documents, bundled as text (`runtimes/workerd.ts`).
        loader: { ".wsdl": "text", ".xsd": "text" },
      }),
    ]);
    const elsewhere = results
      .flatMap((result) => Object.keys(result.metafile?.inputs ?? {}))
      // Modules only: the SOAP contract's documents are data, bundled as text from the fixtures
      // the other compositions read as files.
      .filter((input) => /\.[cm]?[jt]s$/.test(input))
      .filter(
        (input) => /(^|\/)packages\//.test(input) || (input.includes("@svc/") && !input.includes("packed/")),
      );
    if (elsewhere.length > 0) throw new Error(`@svc modules bundled from outside the tarballs: ${elsewhere}`);
    return cache;
  })();
  return bundled;
}

/** A server of the composition in another process. */
export interface Served {
  url: string;
  close(): Promise<void>;
}

/** Starts the composition on runtime `name` and resolves once it listens. */
export async function startRuntime(name: string): Promise<Served> {
  const runtime = RUNTIMES[name] as Runtime;
  const bundle = join(await bundles(), `${runtime.entry}.mjs`);
  return runtime.module === "miniflare" ? onMiniflare(name, runtime, bundle) : inProcess(name, bundle);
}

/** `script` run by runtime `name`'s binary (with its `args`), its output piped. */
function runOn(name: string, script: string, env: Record<string, string> = {}) {
  return spawn(placeOf(name).installed, [...(RUNTIMES[name]?.args ?? []), script], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
  });
}

/**
 * Runs `src/runtimes/stores.ts` on runtime `name` (one with a binary) with `env`, and resolves
 * with the JSON line it prints last.
 */
export async function runStores(name: string, env: Record<string, string>): Promise<Record<string, unknown>> {
  const child = runOn(name, join(await bundles(), "stores.mjs"), env);
  child.stdout.resume();
  let output = "";
  child.stderr.on("data", (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-65_536);
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  const last = output.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(last) as Record<string, unknown>;
  } catch {
    throw new Error(`${name}: stores.ts exited (${code}) without its result\n${output}`);
  }
}

/** The runtimes of `runtimes.json` that run a Worker (workerd, through miniflare). */
export const WORKER_RUNTIMES: readonly string[] = RUNTIME_NAMES.filter(
  (name) => RUNTIMES[name]?.module === "miniflare",
);

/**
 * The Durable Object stores' Worker (`src/runtimes/durable-objects.ts`) on miniflare runtime
 * `name`, its namespaces bound as a `wrangler.toml` binds them: `RATE_LIMIT` and `IDEMPOTENCY`
 * SQLite-backed (as the READMEs create them), `BROKEN` key-value backed.
 */
export async function startDurableObjects(name: string): Promise<Served> {
  const runtime = RUNTIMES[name] as Runtime;
  return onMiniflare(name, runtime, join(await bundles(), "durable-objects.mjs"), {
    durableObjects: {
      RATE_LIMIT: { className: "RateLimitObject", useSQLite: true },
      IDEMPOTENCY: { className: "IdempotencyObject", useSQLite: true },
      BROKEN: "BrokenObject",
    },
  });
}

/** The runtimes of `runtimes.json` with a binary of their own (no Worker). */
export const BINARY_RUNTIMES: readonly string[] = RUNTIME_NAMES.filter(
  (name) => RUNTIMES[name]?.bin !== undefined,
);

/** The bundle as a Worker on workerd, run by the miniflare the runtimes' folder holds. */
async function onMiniflare(
  name: string,
  runtime: Runtime,
  bundle: string,
  extra: Record<string, unknown> = {},
): Promise<Served> {
  const load = createRequire(join(placeOf(name).folder, "package.json"));
  const { Miniflare } = (await import(pathToFileURL(load.resolve("miniflare")).href)) as {
    Miniflare: new (options: Record<string, unknown>) => { ready: Promise<URL>; dispose(): Promise<void> };
  };
  const worker = new Miniflare({
    modules: true,
    scriptPath: bundle,
    compatibilityDate: runtime.compatibilityDate,
    compatibilityFlags: runtime.compatibilityFlags ?? [],
    host: "127.0.0.1",
    port: 0,
    ...extra,
  });
  const url = await worker.ready;
  return { url: url.origin, close: () => worker.dispose() };
}

/** The bundle run by the runtime's binary, in a process of its own. */
async function inProcess(name: string, bundle: string): Promise<Served> {
  const child = runOn(name, bundle);
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: not listening after 30 s\n${output}`)), 30_000);
    const read = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-16_384);
      const found = /listening (\d+)/.exec(output);
      if (found !== null) {
        clearTimeout(timer);
        resolve(Number(found[1]));
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${name}: exited (${code}) before listening\n${output}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
