import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { defineConfig } from "vitest/config";

/**
 * One root config; every workspace (packages/*, apps/*) is a vitest project named after its
 * package. Tests import sibling packages by their public name (`@svc/errors`); the alias points
 * that name at the sibling's `src/index.ts`, so the suite needs no prior build. The built
 * artefacts are checked separately by `check:pkg` and the consumer smoke test.
 */
const root = import.meta.dirname;

interface Workspace {
  name: string;
  dir: string;
}

function workspaces(group: string): Workspace[] {
  const base = join(root, group);
  if (!existsSync(base)) return [];
  return readdirSync(base)
    .map((entry) => join(base, entry))
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => ({
      dir,
      name: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).name as string,
    }));
}

const packages = workspaces("packages");
const apps = workspaces("apps");

const alias = packages
  .filter((p) => existsSync(join(p.dir, "src/index.ts")))
  .map((p) => ({
    find: new RegExp(`^${p.name.replace("/", "\\/")}$`),
    replacement: resolve(p.dir, "src/index.ts"),
  }));

// Subpath entries (`@svc/hal/testing`) point at `src/<subpath>.ts` the same way.
for (const p of packages) {
  const manifest = JSON.parse(readFileSync(join(p.dir, "package.json"), "utf8"));
  for (const subpath of Object.keys(manifest.exports ?? {})) {
    const source = join(p.dir, "src", `${subpath.slice(2)}.ts`);
    if (subpath === "." || !existsSync(source)) continue;
    alias.push({
      find: new RegExp(`^${`${p.name}/${subpath.slice(2)}`.replaceAll("/", "\\/")}$`),
      replacement: source,
    });
  }
}

const timeouts = { testTimeout: 20_000, hookTimeout: 30_000 };

/**
 * The floors of the packages' peer ranges beside the current majors. A test file that loads one of
 * `names` runs a second time in a project named `<package> (<label>)`, where each name resolves to
 * its aliased install (root dev dependencies), pinned to the lowest version the ranges admit:
 * `express` to Express 4.17.0 (`^4.17.0 || ^5.0.0`), `ioredis` to ioredis 5.4.0 (`^5.4.0 ||
 * ^6.0.0`; before 5.9.0 a cluster client sends a command named in upper case to a random master,
 * so the stores name theirs in lower case), `redis` to node-redis 4.6.15 (`^4.6.15 || ^5.0.0 ||
 * ^6.0.0`; before 4.6.15 a cluster client does not reach a restarted master again) and `pg` to pg
 * 8.0.3 (`^8.0.3`; before 8.0.3 a client never connects on Node 14 and later).
 * `test/redis-clients.test.ts` still runs a smoke test on every major. A pin moves with the floor
 * of the range it tests. A Redis client or `pg` counts when the file loads it itself or through a
 * local helper such as `test/helpers.ts` or `test/postgres.ts` (the stores' suites make their
 * clients there); Express only when
 * the file imports it itself, as the files that test an Express adapter do: a suite whose helper
 * happens to serve its subject through Express (a WSDL, a type generator) tests that subject, the
 * same on either major. Files that load none of them would only repeat themselves, so they are
 * left out; so is `express4.test.ts` (pinned to 4 already).
 *
 * Of the files that load the peer, a floor runs those whose subject is the peer, not every one
 * that uses it as a harness: each package's conformance table (`conformance`, every adapter's
 * rows), the suites of the adapter itself (a name with `express` or `fastify`), the stores'
 * suites for the clients (`redis`, `cluster`, `store`, `postgres`), and any file that reads the
 * floor's variable (`EXPRESS_MAJOR`, `FASTIFY_FLOOR`, `IOREDIS_MAJOR`, `REDIS_MAJOR`) because a
 * row of it differs there. A block-duration or a body-limit suite that serves its core through
 * Express proves the core, the same on either major; running every such suite again on the
 * floors took two fifths of the packages' test time (278 of 690 s of test files in one run) and
 * proved nothing the conformance tables do not.
 * The Redis Cluster suites (`*cluster.test.ts`) run on both, as the cluster clients differ most
 * between majors. A test of behaviour only the newer major has skips there
 * (`process.env.EXPRESS_MAJOR === "4"`; `IOREDIS_MAJOR`, `REDIS_MAJOR` likewise).
 *
 * `fastify` resolves to Fastify 5.0.0 (`^5.0.0`: a floor within the only major) in the
 * `(fastify 5.0)` projects. A file counts when it loads Fastify itself or through a local helper
 * (soap-envelope's `test/mounts.ts`), or imports a module named in `via`: a workspace package that
 * loads it for the file, which `loads` does not follow (`@svc/test-utils/conformance`, whose
 * `serve` and `fastifyPipelineApp` make the Fastify servers of every conformance suite). A row
 * that relies on a later 5.x's own behaviour (an option, Fastify's message, Fastify's own reading
 * of a request it cross-checks) takes the floor's form or leaves that part out there
 * (`process.env.FASTIFY_FLOOR === "1"`), naming the release that changed it.
 */
const requireRoot = createRequire(import.meta.url);
const notInVariants = /express4\.test\.ts$/;
const variants = [
  {
    label: "express 4",
    names: ["express"],
    installs: { express: "express4" },
    env: { EXPRESS_MAJOR: "4" },
    direct: true,
    subject: /conformance|express/,
  },
  {
    label: "ioredis 5, redis 4",
    names: ["ioredis", "redis"],
    installs: { ioredis: "ioredis5", redis: "redis4" },
    env: { IOREDIS_MAJOR: "5", REDIS_MAJOR: "4" },
    subject: /redis|cluster|store/,
  },
  {
    label: "fastify 5.0",
    names: ["fastify"],
    via: ["@svc/test-utils/conformance"],
    installs: { fastify: "fastify50" },
    env: { FASTIFY_FLOOR: "1" },
    subject: /conformance|fastify/,
  },
  { label: "pg 8.0.3", names: ["pg"], installs: { pg: "pg8" }, env: {}, subject: /postgres|store/ },
];
const relativeImport = /\bfrom\s+["'](\.{1,2}\/[^"']+)["']/g;

/** What {@link loads} reads of one file: its relative imports, and which patterns it matches. */
interface FileFacts {
  mtime: number;
  source: string;
  imports: string[];
  matches: Map<string, boolean>;
}

/**
 * Each file's facts, kept by path and modification time across the config's evaluations: Vitest
 * evaluates this file again for every project that `extends` it (some sixty), and reading and
 * matching every suite's import graph each time was most of a run's start-up (minutes on a loaded
 * two-core machine).
 */
const shared = globalThis as { svcTestFacts?: Map<string, FileFacts> };
shared.svcTestFacts ??= new Map();
const facts: Map<string, FileFacts> = shared.svcTestFacts;

function factsOf(file: string): FileFacts | undefined {
  if (!existsSync(file)) return undefined;
  const mtime = statSync(file).mtimeMs;
  const kept = facts.get(file);
  if (kept !== undefined && kept.mtime === mtime) return kept;
  const source = readFileSync(file, "utf8");
  const imports = [...source.matchAll(relativeImport)].map(([, spec]) =>
    resolve(dirname(file), (spec as string).replace(/\.js$/, ".ts")),
  );
  const read = { mtime, source, imports, matches: new Map<string, boolean>() };
  facts.set(file, read);
  return read;
}

/** Whether `file` has a value import of one of `names`: itself, or unless `direct`, through relative imports. */
function loads(file: string, names: RegExp, direct = false, seen = new Set<string>()): boolean {
  if (seen.has(file)) return false;
  seen.add(file);
  const read = factsOf(file);
  if (read === undefined) return false;
  let matches = read.matches.get(names.source);
  if (matches === undefined) {
    matches = names.test(read.source);
    read.matches.set(names.source, matches);
  }
  if (matches) return true;
  if (direct) return false;
  for (const imported of read.imports) if (loads(imported, names, false, seen)) return true;
  return false;
}

function testFiles(dir: string): string[] {
  return ["src", "test"].flatMap((sub) => {
    const base = join(dir, sub);
    if (!existsSync(base)) return [];
    return readdirSync(base, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".test.ts"))
      .map((f) => relative(dir, join(base, f)));
  });
}

/**
 * Most suites import their package from source once per file when each file gets a fresh module
 * graph: on a two-core machine that import was most of a package project's time (soap-envelope:
 * 151 s isolated, 67 s sharing). They test through listening servers and plain values, so a worker
 * keeps the graph between a project's files (`isolate: false`), as the reference server's do. A
 * file that replaces something for its own tests (a module, a method, a global, the environment or
 * the clock: `vi.mock`, `vi.spyOn`, ...), itself or through a local helper, runs with a fresh graph
 * in a project of its own, `<name> (isolated)`; `--project '<name>*'` runs both.
 */
const replaces = /\bvi\.(?:mock|doMock|spyOn|stubGlobal|stubEnv|useFakeTimers|resetModules)\b/;

interface ProjectTest {
  name: string;
  root: string;
  include: string[];
  [option: string]: unknown;
}

/** `test` as two projects: its files that replace nothing sharing a graph, the others isolated. */
function shareGraph(test: ProjectTest, extra: Record<string, unknown> = {}) {
  const isolated = test.include.filter((f) => loads(join(test.root, f), replaces));
  const shared = test.include.filter((f) => !isolated.includes(f));
  return [
    ...(shared.length > 0
      ? [{ ...extra, extends: true, test: { ...test, include: shared, isolate: false } }]
      : []),
    ...(isolated.length > 0
      ? [{ ...extra, extends: true, test: { ...test, name: `${test.name} (isolated)`, include: isolated } }]
      : []),
  ];
}

const variantProjects = variants.flatMap((v) => {
  const names = new RegExp(
    `^\\s*import\\s+(?!type\\s)[^;]*?\\bfrom\\s+["'](?:${[...v.names, ...(v.via ?? [])].join("|")})["']`,
    "m",
  );
  const aliases = Object.entries(v.installs).map(([name, install]) => ({
    find: new RegExp(`^${name}$`),
    replacement: requireRoot.resolve(install),
  }));
  return packages.flatMap((p) => {
    const floorAware = Object.keys(v.env).length === 0 ? undefined : new RegExp(Object.keys(v.env).join("|"));
    const files = testFiles(p.dir).filter(
      (f) =>
        !notInVariants.test(f) &&
        (v.subject.test(basename(f)) ||
          (floorAware !== undefined && loads(join(p.dir, f), floorAware, true))) &&
        loads(join(p.dir, f), names, v.direct === true),
    );
    if (files.length === 0) return [];
    return shareGraph(
      { name: `${p.name} (${v.label})`, root: p.dir, include: files, env: v.env, ...timeouts },
      { resolve: { alias: aliases } },
    );
  });
});

/**
 * The reference server's suites import the whole service from source (every package's `src/`
 * through the aliases): some 10 s a file on a two-core machine. They are black-box suites (each
 * starts its own service and talks to it over HTTP), so they share their graph as above; the hooks
 * every file needs are in `test/setup.ts`, which runs per file.
 */
const referenceServer = apps.find((a) => a.name === "@svc/reference-server");

/** The reference server's suites (`files` of them) as a project `name`, split by {@link shareGraph}. */
function referenceProjects(
  name: string,
  files: (file: string) => boolean = () => true,
  env: Record<string, string> = {},
) {
  if (referenceServer === undefined) return [];
  const { dir } = referenceServer;
  return shareGraph({
    name,
    root: dir,
    include: testFiles(dir).filter(files),
    env,
    setupFiles: ["test/setup.ts"],
    ...timeouts,
  });
}

/**
 * The reference server's black-box suites, run a second time against its Fastify composition
 * (`SERVER_FRAMEWORK=fastify`, read by `test/harness.ts`) in projects named
 * `@svc/reference-server (fastify)`: every suite that starts the service through the harness (or
 * reads `SERVER_FRAMEWORK` itself), hostile-properties and contract-fuzz with fewer generated
 * cases, so a new suite runs on both. A suite that never starts it (the OpenAPI document's lint,
 * the name pattern's Rust regex, a pure core) would run the same code twice, so it runs once.
 * Left out as well: those whose subject is behind the composition, the same code on either
 * framework: the database and its types, the store's leases and sweeps, the cluster settings,
 * scrypt's work, the documents served as files, and the fleet, which runs an Express and a
 * Fastify instance side by side already.
 */
const startsTheService = /\bfrom\s+["']\.\/harness\.js["']/;
const readsTheFramework = /\bSERVER_FRAMEWORK\b/;
const notOnFastify = [
  "auth-timing",
  "cart-total",
  "data-types",
  "database-startup",
  "docs-browser",
  "fleet",
  "idempotency-lease",
  "lazy-logger",
  "read-isolation",
  "redis-cluster",
  "statement-cache",
  "transfer-sweep",
].map((name) => `test/${name}.test.ts`);
const onFastify = (dir: string, file: string): boolean =>
  file.startsWith("test/") &&
  !notOnFastify.includes(file) &&
  (loads(join(dir, file), startsTheService) || loads(join(dir, file), readsTheFramework, true));
const serverProjects = [
  ...referenceProjects("@svc/reference-server"),
  ...referenceProjects(
    "@svc/reference-server (fastify)",
    (f) => referenceServer !== undefined && onFastify(referenceServer.dir, f),
    // A thinner layer on the second framework: what the generated suites prove about the
    // packages' cores they proved on Express already, so here they check the Fastify
    // composition's wiring with a quarter of hostile-properties' cases (2,500 and more) and half
    // of contract-fuzz's per operation, fresh random input each run.
    { SERVER_FRAMEWORK: "fastify", HOSTILE_SCALE: "0.25", CONTRACT_RUNS: "6" },
  ),
];

/**
 * Most suites wait on sockets (listening servers, Redis, PostgreSQL, child processes) rather than
 * compute, and vitest's default of one worker per core minus one runs them one file at a time on
 * a two-core machine. There, with Redis and PostgreSQL: about 11 min with one worker, 4 min 23 s
 * with three, 4 min 3 s with four. One worker more than the cores, at most eight.
 */
const maxWorkers = Math.min(availableParallelism() + 1, 8);

/**
 * Suites that run whole processes of their own, many at once: the fleet (three reference servers
 * behind nginx, Prometheus, throw-away Redis servers) and the docs site (a VitePress build and
 * chromium). Beside the rest of the suite on two cores, a reference server that starts in 3 s
 * idle took over 30 s, and the fleet failed on its start-up limits. They run after the rest
 * (`sequence.groupOrder`), two files at a time, each with the machine to itself.
 */
const afterTheRest = new Set(["@svc/fleet", "@svc/docs"]);
const lastGroup = { sequence: { groupOrder: 1 }, maxWorkers: Math.min(availableParallelism(), 2) };

/**
 * Where vitest keeps each file's last duration, which its sequencer reads to start the longest
 * files first (and, in the last group, the docs site's build before the fleet's shorter suites):
 * `node_modules/.vite` by default, so a fresh clone (CI's) started them in an arbitrary order and
 * waited on a two-minute file started last. `.ci/run` keeps it outside the clone
 * (`SVC_TEST_CACHE_DIR`); its keys are relative paths, the same in every clone.
 */
const cacheDir = process.env.SVC_TEST_CACHE_DIR || undefined;

export default defineConfig({
  ...(cacheDir === undefined ? {} : { cacheDir }),
  resolve: { alias },
  test: {
    maxWorkers,
    projects: [
      ...[...packages, ...apps]
        .filter((w) => w !== referenceServer)
        .flatMap((w) =>
          shareGraph({
            name: w.name,
            root: w.dir,
            include: testFiles(w.dir),
            ...timeouts,
            ...(afterTheRest.has(w.name) ? lastGroup : {}),
          }),
        ),
      ...variantProjects,
      ...serverProjects,
      // The repository's own scripts (the README example checker).
      { extends: true, test: { name: "scripts", root: join(root, "scripts"), include: ["*.test.ts"] } },
    ],
  },
});
