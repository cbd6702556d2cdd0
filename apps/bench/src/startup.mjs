// Start-up and footprint of every published @svc package beside the peer packages it replaces:
// the time a fresh `node` takes to load its built entry (`import("@svc/x")` and `require`, resolved
// as a consumer's code resolves it, through node_modules and `exports`), and what installing it
// adds to node_modules (its tarball, unpacked size, and the closure of what it needs installed),
// from the workspace's node_modules only: nothing is fetched. Writes startup.md and startup.json.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { publishedPackages } from "../../../scripts/footprint.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "../../..");
const probe = join(here, "startup-probe.mjs");

/**
 * The peer packages each published package replaces in a stack assembled from npm, with one line
 * of why. `peers` are loaded and sized together; `alternatives` are the other natural peers (the
 * packages' "Coming from" sections), named in the report as not installed when they are not.
 * Only packages already in the workspace's node_modules are measured.
 */
export const pairings = {
  "@svc/auth": {
    peers: ["jose"],
    alternatives: ["express-oauth2-jwt-bearer", "passport-http"],
    why: "the peer stack verifies Bearer tokens with jose's `jwtVerify` in its own middleware (as the bench's `peer-stack` does); the README's \"Coming from\" peers are the alternatives",
  },
  "@svc/conditional": {
    peers: ["etag", "fresh"],
    alternatives: [],
    why: "what Express's own weak ETag and `req.fresh` (its 304) are built on; an Express app loads both already",
  },
  "@svc/errors": {
    peers: ["http-errors"],
    alternatives: [],
    why: "the error objects an Express app throws (`createError(404)`); rendering them is Express's own final handler, loaded with Express",
  },
  "@svc/hal": {
    peers: ["halson"],
    alternatives: [],
    why: "builds and reads HAL documents only: links behind proxies (`hrefFor`), `allowedHosts` and pages have no common peer",
  },
  "@svc/otel": {
    peers: ["@opentelemetry/api"],
    alternatives: [],
    why: "the OpenTelemetry API it records through, which an application with an SDK loads already; no peer maps the packages' decisions",
  },
  "@svc/idempotency": {
    peers: [],
    alternatives: ["express-idempotency"],
    why: "no common peer: a stack from npm writes its own `Idempotency-Key` middleware",
  },
  "@svc/kernel": {
    peers: [],
    alternatives: [],
    why: "the response pipeline the other packages are steps of, and the header grammar they share: a peer stack has no counterpart (Express's response methods), and every other @svc row loads it",
  },
  "@svc/negotiate": {
    peers: ["accepts", "compression", "cors"],
    alternatives: [],
    why: "the peer stack's 406 (`accepts`, on negotiator), response compression and CORS; its request bodies are Express's own `express.json()`",
  },
  "@svc/ratelimit": {
    peers: ["express-rate-limit"],
    alternatives: ["rate-limit-redis"],
    why: "the peer stack's limiter; a fleet adds a Redis store (rate-limit-redis) to it",
  },
  "@svc/soap-envelope": {
    peers: ["soap"],
    alternatives: [],
    why: "node-soap, the server of the bench's `node-soap` scenarios",
  },
  "@svc/versioning": {
    peers: [],
    alternatives: ["express-version-route"],
    why: "no common peer: a stack from npm mounts a router per version prefix by hand",
  },
};

/** What the peer stack loads that no @svc package replaces, named under the table. */
export const unpaired = ["helmet", "pino-http"];

/** Peers an application installs itself, whatever middleware it picks: never counted in a closure. */
const hosts = new Set(["express", "fastify", "hono", "@hono/node-server"]);

/** Where `name` resolves from `fromDir` through node_modules, as Node looks for it. */
export function findInstalled(name, fromDir) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name, "package.json");
    if (existsSync(candidate)) return dirname(candidate);
    if (dirname(dir) === dir) return undefined;
  }
}

/** Bytes and files of an installed package's directory, without the packages nested in it. */
function directorySize(dir) {
  let bytes = 0;
  let files = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const sub = directorySize(path);
      bytes += sub.bytes;
      files += sub.files;
    } else if (entry.isFile()) {
      bytes += readFileSync(path).byteLength;
      files += 1;
    }
  }
  return { bytes, files };
}

const readManifest = (dir) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));

/**
 * What installing `names` (from `fromDir`) puts in node_modules: each package once, its
 * `dependencies` and its required `peerDependencies` (npm installs those too) but no host
 * framework. A workspace package (a symlink to `packages/`) counts as `npm pack` would publish
 * it (`sizeOfWorkspace(dir)`), not as its checkout. `missing`: names that resolve nowhere.
 */
export function installedClosure(names, fromDir, sizeOfWorkspace) {
  const seen = new Map();
  const missing = [];
  const visit = (name, from) => {
    if (hosts.has(name) || name.startsWith("@types/")) return;
    const at = findInstalled(name, from);
    if (!at) {
      missing.push(name);
      return;
    }
    const dir = realpathSync(at);
    if (seen.has(dir)) return;
    const manifest = readManifest(dir);
    const workspace = !dir.split("/").includes("node_modules");
    const size = workspace ? sizeOfWorkspace(dir) : directorySize(dir);
    seen.set(dir, { name: manifest.name, version: manifest.version, ...size });
    for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dep, dir);
    for (const peer of Object.keys(manifest.peerDependencies ?? {})) {
      if (!manifest.peerDependenciesMeta?.[peer]?.optional) visit(peer, dir);
    }
  };
  for (const name of names) visit(name, fromDir);
  const packages = [...seen.values()];
  return {
    bytes: packages.reduce((sum, p) => sum + p.bytes, 0),
    files: packages.reduce((sum, p) => sum + p.files, 0),
    packages: packages.map((p) => `${p.name}@${p.version}`),
    missing,
  };
}

/**
 * `npm pack --dry-run` of every workspace in `dirs` in one npm run (npm starts slowly):
 * `Map<realpath, { size, unpackedSize, entryCount }>`. Nothing is fetched or written.
 */
export function packSummaries(dirs) {
  const real = dirs.map((dir) => realpathSync(dir));
  const out = execFileSync(
    "npm",
    ["pack", "--dry-run", "--json", "--ignore-scripts", ...real.flatMap((dir) => ["-w", dir])],
    { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], maxBuffer: 64 * 2 ** 20 },
  );
  const byName = new Map(JSON.parse(out).map((pack) => [pack.name, pack]));
  return new Map(real.map((dir) => [dir, byName.get(readManifest(dir).name)]));
}

/** Median and 90th percentile (nearest rank) of `values`; `undefined` for none. */
export function percentiles(values) {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  const middle = sorted.length / 2;
  const median =
    sorted.length % 2 === 1 ? sorted[Math.floor(middle)] : (sorted[middle - 1] + sorted[middle]) / 2;
  return { median: round(median), p90: round(rank(90)), runs: values.length };
}

const round = (value) => Math.round(value * 100) / 100;

/** One fresh `node` loading `specifiers`: the probe's figures plus the whole process's wall time. */
function probeOnce(mode, specifiers) {
  return new Promise((resolvePromise) => {
    const start = performance.now();
    const child = spawn(process.execPath, [probe, mode, ...specifiers], {
      cwd: here,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NODE_OPTIONS: "" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("close", (code) => {
      const processMs = performance.now() - start;
      const line = stdout.trim().split("\n").at(-1);
      if (code !== 0 || !line) {
        const why =
          stderr
            .trim()
            .split("\n")
            .find((l) => /Error|error/.test(l)) ?? stderr.trim();
        resolvePromise({ error: `exited with ${code}: ${why.slice(0, 300)}` });
        return;
      }
      resolvePromise({ ...JSON.parse(line), processMs });
    });
  });
}

/** Collects `runs` probes per entry and mode, the entries interleaved so drift hits all alike. */
async function measureEntries(entries, runs, warmup, log) {
  const samples = new Map(entries.map((e) => [e.key, { esm: [], cjs: [] }]));
  const errors = new Map();
  // One discarded round first: the files in the page cache, as on every later start.
  for (let round = warmup ? -1 : 0; round < runs; round++) {
    for (const entry of entries) {
      for (const mode of ["esm", "cjs"]) {
        if (errors.has(`${entry.key} ${mode}`)) continue;
        const result = await probeOnce(mode, entry.specifiers);
        if (result.error) errors.set(`${entry.key} ${mode}`, result.error);
        else if (round >= 0) samples.get(entry.key)[mode].push(result);
      }
    }
    if (round >= 0) log?.(`startup: run ${round + 1}/${runs}`);
  }
  const summary = new Map();
  for (const entry of entries) {
    const { esm, cjs } = samples.get(entry.key);
    const of = (list, field) => percentiles(list.map((s) => s[field]));
    summary.set(entry.key, {
      import: errors.has(`${entry.key} esm`)
        ? { error: errors.get(`${entry.key} esm`) }
        : {
            ms: of(esm, "loadMs"),
            cpuMs: of(esm, "cpuMs"),
            processMs: of(esm, "processMs"),
            rssBytes: of(esm, "rssBytes"),
            heapBytes: of(esm, "heapBytes"),
          },
      require: errors.has(`${entry.key} cjs`)
        ? { error: errors.get(`${entry.key} cjs`) }
        : { ms: of(cjs, "loadMs"), cpuMs: of(cjs, "cpuMs"), processMs: of(cjs, "processMs") },
    });
  }
  return summary;
}

/**
 * @typedef {{ median: number, p90: number, runs: number }} Percentiles
 * @typedef {{ error?: string, ms?: Percentiles, cpuMs?: Percentiles, processMs?: Percentiles,
 *   rssBytes?: Percentiles, heapBytes?: Percentiles }} Measure
 * @typedef {{ installed: number, installedFiles: number, installedPackages: string[] }} Installed
 * @typedef {{
 *   package: string, version: string, import: Measure, require: Measure,
 *   size: Installed & { tarball: number, unpacked: number, files: number },
 *   peer?: { key: string, packages: string[], import: Measure, require: Measure,
 *     size: Installed & { unpacked: number } },
 *   ratios: { import?: number, importCpu?: number, require?: number, installed?: number },
 *   notInstalled: string[], why: string, undeclared: boolean,
 * }} StartupRow
 * @typedef {{
 *   startedAt: string, settings: { quick: boolean, runs: number, warmup: boolean },
 *   machine: { node: string, cpus: number, cpuModel: string,
 *     loadAverage: { start: string[], end: string[] } },
 *   baseline?: { import: Measure, require: Measure },
 *   shared: { packages: string[], installed: number },
 *   unpaired: { name: string, installed: boolean }[], rows: StartupRow[],
 * }} StartupReport
 */

/**
 * Measures every published package and its peers and writes `startup.md` / `startup.json` into
 * `outDir`. `runs` fresh processes per entry and mode (20; 3 with `quick`). Returns
 * `{ failed, markdown, report }`: failed when a package's built entry does not load.
 * @param {{ outDir: string, quick?: boolean, runs?: number, warmup?: boolean,
 *   log?: (line: string) => void }} options
 * @returns {Promise<{ failed: boolean, markdown: string, report: StartupReport }>}
 */
export async function runStartup({
  outDir,
  quick = false,
  runs = quick ? 3 : 20,
  warmup = true,
  log = console.log,
}) {
  const started = { at: new Date().toISOString(), loadAverage: loadavg().map((l) => l.toFixed(2)) };
  const packages = publishedPackages(repoRoot).sort((a, b) => a.manifest.name.localeCompare(b.manifest.name));
  const packs = packSummaries(packages.map((p) => p.dir));
  const packOf = (dir) => {
    const pack = packs.get(dir);
    if (!pack) throw new Error(`${dir}: not a published workspace package, so not packed`);
    return pack;
  };
  const sizeOfWorkspace = (dir) => {
    const pack = packOf(dir);
    return { bytes: pack.unpackedSize, files: pack.entryCount };
  };
  // The @svc packages others require as peers: installed once per application, whatever it uses.
  const required = new Set(
    packages.flatMap(({ manifest }) =>
      Object.keys(manifest.peerDependencies ?? {}).filter(
        (peer) => peer.startsWith("@svc/") && !manifest.peerDependenciesMeta?.[peer]?.optional,
      ),
    ),
  );
  const shared = installedClosure([...required].sort(), here, sizeOfWorkspace);
  const entries = [{ key: "(node alone)", specifiers: [] }];
  const rows = packages.map(({ dir, manifest }) => {
    const pairing = pairings[manifest.name] ?? {
      peers: [],
      alternatives: [],
      why: "no pairing declared in apps/bench/src/startup.mjs yet",
      undeclared: true,
    };
    const installedPeers = pairing.peers.filter((p) => findInstalled(p, here));
    const notInstalled = [
      ...pairing.peers.filter((p) => !installedPeers.includes(p)),
      ...pairing.alternatives.filter((p) => !findInstalled(p, here)),
    ];
    const pack = packOf(realpathSync(dir));
    const closure = installedClosure([manifest.name], here, sizeOfWorkspace);
    entries.push({ key: manifest.name, specifiers: [manifest.name] });
    const peerKey = installedPeers.join(" + ");
    if (installedPeers.length > 0) entries.push({ key: peerKey, specifiers: installedPeers });
    return {
      package: manifest.name,
      version: manifest.version,
      size: {
        tarball: pack.size,
        unpacked: pack.unpackedSize,
        files: pack.entryCount,
        installed: closure.bytes,
        installedFiles: closure.files,
        installedPackages: closure.packages,
      },
      peer:
        installedPeers.length > 0
          ? {
              key: peerKey,
              packages: installedPeers,
              size: (() => {
                const own = installedClosure(installedPeers, here, sizeOfWorkspace);
                const roots = installedPeers.map((p) => directorySize(realpathSync(findInstalled(p, here))));
                return {
                  unpacked: roots.reduce((sum, r) => sum + r.bytes, 0),
                  installed: own.bytes,
                  installedFiles: own.files,
                  installedPackages: own.packages,
                };
              })(),
            }
          : undefined,
      notInstalled,
      why: pairing.why,
      undeclared: pairing.undeclared === true,
    };
  });

  log(
    `startup: ${entries.length} entries × ${runs} runs × import and require, fresh node each` +
      (warmup ? " (+1 warm-up round)" : ""),
  );
  const measured = await measureEntries(entries, runs, warmup, quick ? undefined : log);
  let failed = false;
  for (const row of rows) {
    Object.assign(row, measured.get(row.package));
    if (row.import.error || row.require.error) failed = true;
    if (row.peer) Object.assign(row.peer, measured.get(row.peer.key));
    const ratio = (a, b) => (a && b ? round(a / b) : undefined);
    row.ratios = {
      import: ratio(row.import.ms?.median, row.peer?.import.ms?.median),
      importCpu: ratio(row.import.cpuMs?.median, row.peer?.import.cpuMs?.median),
      require: ratio(row.require.ms?.median, row.peer?.require.ms?.median),
      installed: ratio(row.size.installed, row.peer?.size.installed),
    };
  }
  const report = {
    startedAt: started.at,
    settings: { quick, runs, warmup },
    machine: {
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? "unknown",
      loadAverage: { start: started.loadAverage, end: loadavg().map((l) => l.toFixed(2)) },
    },
    baseline: measured.get("(node alone)"),
    shared: { packages: shared.packages, installed: shared.bytes },
    unpaired: unpaired.map((name) => ({ name, installed: findInstalled(name, here) !== undefined })),
    rows,
  };
  const markdown = startupMarkdown(report);
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, "startup.md"), markdown);
  await writeFile(join(outDir, "startup.json"), `${JSON.stringify(report, null, 2)}\n`);
  return { failed, markdown, report };
}

const kB = (bytes) => (bytes === undefined ? "–" : `${(bytes / 1000).toFixed(1)} kB`);
const MB = (bytes) => (bytes === undefined ? "–" : `${(bytes / 1e6).toFixed(1)}`);
const times = (ratio) => (ratio === undefined ? "–" : `${ratio.toFixed(2)} ×`);
const fmt = (value) => (value === undefined ? "–" : value.toFixed(value < 10 ? 2 : 1));
const pair = (measure, field = "ms") =>
  measure?.error
    ? "fails"
    : measure?.[field]
      ? `${fmt(measure[field].median)} / ${fmt(measure[field].p90)}`
      : "–";

/** The report's Markdown: the table, the process figures, and why each peer is the one. */
export function startupMarkdown(report) {
  const { machine, settings, baseline } = report;
  const lines = [
    `# Start-up and footprint: each @svc package against the peer it replaces${settings.quick ? " (--quick)" : ""}`,
    "",
    `${report.startedAt} · Node ${machine.node} · ${machine.cpus} × ${machine.cpuModel} · load average ` +
      `${machine.loadAverage.start.join(" / ")} at the start, ${machine.loadAverage.end.join(" / ")} at the end · ` +
      `${settings.runs} fresh process${settings.runs === 1 ? "" : "es"} per entry for \`import()\` and as many for \`require()\`${settings.warmup ? " (after one discarded round)" : ""}`,
    "",
    "Import ms: `performance.now()` around the `import()` of the built entry in a fresh `node`, " +
      "resolved as an application resolves it (node_modules, `exports`), median / p90; CPU ms: the " +
      "process's user + system CPU time over the same load, which what else runs on the machine " +
      "changes far less; require ms: the same with `require()` (the CommonJS entry). An @svc " +
      "package's time includes the @svc packages it loads (`@svc/kernel`, `@svc/errors`). × peer: " +
      "the package's median over the peer's (below 1: the package loads faster, or installs smaller). " +
      "Installed: the unpacked tarball (`npm pack`), plus every package it needs installed (its " +
      "`dependencies` and the @svc packages it requires as peers, each once; host frameworks such as " +
      "Express left out), with the number of packages; a peer's the same from node_modules.",
    "",
    "| package | import ms | CPU ms | require ms | replaces | peer import ms | peer CPU ms | peer require ms | import × peer | CPU × peer | tarball | unpacked | installed | peer installed | installed × peer |",
    "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const row of report.rows) {
    const peer = row.peer;
    lines.push(
      `| ${row.package} | ${pair(row.import)} | ${pair(row.import, "cpuMs")} | ${pair(row.require)} | ` +
        `${peer ? peer.packages.join(" + ") : "none"} | ${pair(peer?.import)} | ${pair(peer?.import, "cpuMs")} | ` +
        `${pair(peer?.require)} | ${times(row.ratios.import)} | ${times(row.ratios.importCpu)} | ${kB(row.size.tarball)} | ` +
        `${kB(row.size.unpacked)} | ` +
        `${kB(row.size.installed)} (${row.size.installedPackages.length}) | ` +
        `${peer ? `${kB(peer.size.installed)} (${peer.size.installedPackages.length})` : "–"} | ${times(row.ratios.installed)} |`,
    );
  }
  lines.push(
    "",
    "The installed figures include the @svc packages each one requires as peers; those, with what " +
      `they need (${report.shared.packages.map((p) => `\`${p}\``).join(", ")}), take ` +
      `${kB(report.shared.installed)}, installed once per application however many @svc packages it uses.`,
    "",
    `A fresh \`node\` that loads nothing: ${fmt(baseline?.import.processMs?.median)} ms from spawn to exit (median).`,
    "",
    "Whole process (spawn to exit, with `import()`), and what the load added to the resident set and the used heap, medians:",
    "",
    "| entry | process ms | RSS + MB | heap + MB |",
    "|---|---:|---:|---:|",
  );
  const processRow = (name, m) =>
    `| ${name} | ${fmt(m?.import.processMs?.median)} | ${MB(m?.import.rssBytes?.median)} | ${MB(m?.import.heapBytes?.median)} |`;
  for (const row of report.rows) {
    lines.push(processRow(row.package, row));
    if (row.peer) lines.push(processRow(row.peer.packages.join(" + "), row.peer));
  }
  lines.push("", "Why each peer:", "");
  for (const row of report.rows) {
    const absent =
      row.notInstalled.length > 0
        ? ` Not in node_modules, so not measured: ${row.notInstalled.map((n) => `\`${n}\``).join(", ")}.`
        : "";
    lines.push(
      `- **${row.package}** ↔ ${row.peer ? row.peer.packages.map((p) => `\`${p}\``).join(" + ") : "none"}: ${row.why}.${absent}`,
    );
  }
  const others = report.unpaired.filter((u) => u.installed).map((u) => `\`${u.name}\``);
  if (others.length > 0)
    lines.push(
      "",
      `The peer stack also loads ${others.join(" and ")}; no @svc package does their work, so they pair with none.`,
    );
  const failures = report.rows.flatMap((row) =>
    [
      ["import", row.package, row.import],
      ["require", row.package, row.require],
      ["import", row.peer?.key, row.peer?.import],
      ["require", row.peer?.key, row.peer?.require],
    ]
      .filter(([, , m]) => m?.error)
      .map(([mode, name, m]) => `- ${mode} ${name}: ${m.error}`),
  );
  if (failures.length > 0) lines.push("", "Loads that failed:", "", ...failures);
  return `${lines.join("\n")}\n`;
}
