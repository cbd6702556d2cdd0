#!/usr/bin/env node
// Consumer smoke test: packs every published package with `npm pack`, installs the tarballs into
// a throw-away project outside the workspace, and loads each one through ESM `import` and CJS
// `require`, handing the module (and every subpath entry of its `exports`) to the package's own
// `smoke.mjs`. A broken `exports` map, a missing file in `files`, or a dependency that only
// resolves inside the workspace fails here.
//
// Then, on the installed files: each package ships its LICENSE, no built script names a source
// map (none ships: tooling/tsup-preset.ts), and every declaration file loads `@types/node` itself. Last, each package alone (and each subpath entry) is type-checked
// from a fresh consumer project as strict as TypeScript's own `tsc --init`: `module: nodenext`,
// `strict`, `"types": []` (nothing global loaded unless the package asks for it, the TypeScript
// 7 default) and `skipLibCheck: false`, once through `import` (.mts) and once through `require`
// (.cts). One compiler run per package, so one package's `/// <reference types="node" />` cannot
// make another's declarations pass. And the peer ranges must resolve (no ERESOLVE) beside the
// oldest and the newest supported majors of Express, ioredis and node-redis. Then, in the same
// project, every entry through the loaders applications use (scripts/smoke-loaders.mjs): Jest's
// CommonJS runtime, Vitest, tsx, TypeScript's node16 and bundler resolutions, esbuild's and Vite's
// bundles run with Node.js, and one @svc/kernel for `import` and `require` in a process.
//
// `--readmes` does only the README examples instead, in a second consumer project (with Express 5,
// @types/express, ioredis, redis and pino, which the first one must not have): every
// TypeScript/JavaScript block of every README is type-checked and the runnable ones are run (see
// scripts/readme-examples.mjs for the markers). CI runs them in scripts/registry-suite.mjs, on
// installs from a registry, with Express 5 and with Express 4.17.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  checkReadmeExamples,
  PEER_LIBRARIES,
  printSummary,
  readmeFiles,
  typescriptCompiler,
} from "./readme-examples.mjs";
import { checkLoaders, loaderPackages } from "./smoke-loaders.mjs";

const root = resolve(import.meta.dirname, "..");
const readmesOnly = process.argv.includes("--readmes");
// `--keep` leaves the consumer projects in place, to rerun a check by hand.
const keep = process.argv.includes("--keep");
const only = process.argv.slice(2).filter((arg) => arg !== "--readmes" && arg !== "--keep");
const published = readdirSync(join(root, "packages"))
  .map((name) => join(root, "packages", name))
  .filter((dir) => existsSync(join(dir, "package.json")))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) }))
  .filter(({ manifest }) => !manifest.private);
// Naming packages checks just those, plus the @svc packages they depend on (packed too, since
// they are not on the registry until released).
const wanted = new Set(only);
for (let grew = true; grew && only.length > 0; ) {
  grew = false;
  for (const { manifest } of published) {
    if (!wanted.has(manifest.name)) continue;
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })) {
      if (dep.startsWith("@svc/") && !wanted.has(dep)) {
        wanted.add(dep);
        grew = true;
      }
    }
  }
}
const packages = published.filter(({ manifest }) => only.length === 0 || wanted.has(manifest.name));

if (packages.length === 0) {
  console.error("smoke: no published package found");
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), "svc-smoke-"));
const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
let failed = 0;
let passed = 0;
const started = Date.now();
try {
  const tarballs = [];
  for (const { dir, manifest } of packages) {
    if (!existsSync(join(dir, "dist")))
      throw new Error(`${manifest.name} is not built: run npm run build first`);
    const out = run("npm", ["pack", "--silent", "--pack-destination", work], dir).trim().split("\n").pop();
    tarballs.push(join(work, out));
  }
  const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  // The README examples run in CI against installs from a registry (scripts/registry-suite.mjs);
  // `--readmes` runs them here, from the tarballs, which is quicker while editing a README.
  if (readmesOnly) failed += await readmeExamples(tarballs, rootManifest);
  else failed += await smokeConsumer(tarballs, rootManifest);
} finally {
  if (keep) console.log(`smoke: kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
if (readmesOnly) passed = failed === 0 ? 1 : 0;
console.log(`smoke: ${passed} passed, ${failed} failed (${Math.round((Date.now() - started) / 1000)} s)`);
process.exit(failed === 0 ? 0 : 1);

/**
 * The README examples, in a consumer project of their own: the tarballs, Express 5 with its
 * types, both Redis clients, pino, pg, vitest and the OpenTelemetry SDK (the libraries the
 * examples import), @types/node.
 */
async function readmeExamples(tarballs, rootManifest) {
  const project = join(work, "readme");
  run("mkdir", ["-p", project], work);
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "svc-readme-consumer", private: true }),
  );
  const dev = rootManifest.devDependencies;
  const range = (alias) => dev[alias].replace(/^npm:[^@]+@/, "");
  const libraries = [
    `express@${dev.express}`,
    `@types/express@${dev["@types/express"]}`,
    `@types/node@${dev["@types/node"]}`,
    `ioredis@${range("ioredis6")}`,
    `redis@${range("redis6")}`,
    "pino@^10",
    "pg@^8", // the PostgreSQL store's example
    "@types/pg@^8",
    "zod@^4", // @svc/errors' mappers example
    "jose@^6",
    `vitest@${dev.vitest}`, // a README shows a test
    // The frameworks the READMEs show beside Express.
    `fastify@${dev.fastify}`,
    `hono@${dev.hono}`,
    `@hono/node-server@${dev["@hono/node-server"]}`,
    // @svc/otel's example starts an OpenTelemetry SDK.
    "@opentelemetry/api@^1.9.0",
    "@opentelemetry/sdk-metrics@^2.12.1",
    "@opentelemetry/sdk-trace-base@^2.12.1",
    "@opentelemetry/context-async-hooks@^2.12.1",
    // The peer libraries the migration guides (apps/docs/guides) start from.
    ...PEER_LIBRARIES,
  ];
  const installStart = Date.now();
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...tarballs, ...libraries], project);
  console.log(`readme: consumer project installed (${((Date.now() - installStart) / 1000).toFixed(1)} s)`);
  const result = await checkReadmeExamples({
    readmes: readmeFiles(root, packages),
    project,
    root,
    tsc: typescriptCompiler(root),
    // biome-ignore lint/suspicious/noUndeclaredEnvVars: CI sets it; the runnable examples read it
    env: { REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" },
  });
  printSummary(result);
  passed += result.failures.length === 0 ? 1 : 0;
  return result.failures.length === 0 ? 0 : 1;
}

async function smokeConsumer(tarballs, rootManifest) {
  let failed = 0;
  // Peer dependencies a consumer would install next to the packages (Express apps).
  const peers = new Set();
  for (const { manifest } of packages) {
    for (const peer of Object.keys(manifest.peerDependencies ?? {})) {
      if (!peer.startsWith("@svc/") && !manifest.peerDependenciesMeta?.[peer]?.optional) peers.add(peer);
    }
  }
  const consumer = join(work, "consumer");
  run("mkdir", ["-p", consumer], work);
  writeFileSync(
    join(consumer, "package.json"),
    JSON.stringify({ name: "svc-smoke-consumer", private: true }),
  );
  // A TypeScript consumer installs `@types/node` (each package's optional peer) itself; the
  // workspace's own range keeps the check deterministic.
  peers.add(`@types/node@${rootManifest.devDependencies["@types/node"]}`);
  // The Fastify entries' declarations name Fastify's types, as a Fastify app has them; the
  // consumer of the types check below installs it. That no entry loads Fastify (or Express) at
  // run time is the registry suite's Hono-only consumer.
  peers.add(`fastify@${rootManifest.devDependencies.fastify}`);
  // The loaders (Jest, Vitest, tsx, Vite, esbuild) in the same install: one for every check.
  const installStart = Date.now();
  run(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      ...tarballs,
      ...peers,
      ...loaderPackages(rootManifest),
    ],
    consumer,
  );
  console.log(`smoke: consumer project installed (${((Date.now() - installStart) / 1000).toFixed(1)} s)`);

  for (const { dir, manifest } of packages) {
    const check = join(dir, "smoke.mjs");
    if (!existsSync(check)) {
      console.error(`smoke: ${manifest.name} has no smoke.mjs`);
      failed++;
      continue;
    }
    for (const kind of ["esm", "cjs"]) {
      const file = join(
        consumer,
        `check-${manifest.name.replace("/", "-")}.${kind === "esm" ? "mjs" : "cjs"}`,
      );
      const load = (specifier) =>
        kind === "esm"
          ? `await import(${JSON.stringify(specifier)})`
          : `require(${JSON.stringify(specifier)})`;
      // Every subpath entry of `exports` (`@svc/hal/testing`) is loaded too, the same way, and
      // handed to the check as a third argument keyed by subpath.
      const subpaths = Object.keys(manifest.exports ?? {}).filter(
        (key) => key.startsWith("./") && key !== "./package.json",
      );
      const entries = `{ ${subpaths
        .map((key) => `${JSON.stringify(key)}: ${load(`${manifest.name}/${key.slice(2)}`)}`)
        .join(", ")} }`;
      const call = `smoke(${load(manifest.name)}, ${JSON.stringify(kind)}, ${entries})`;
      const body =
        kind === "esm"
          ? `const smoke = (await import(${JSON.stringify(pathToFileURL(check).href)})).default;\nawait ${call};\n`
          : `(async () => {\n  const smoke = (await import(${JSON.stringify(pathToFileURL(check).href)})).default;\n  await ${call};\n})().catch((e) => { console.error(e); process.exit(1); });\n`;
      writeFileSync(file, body);
      try {
        run("node", [file], consumer);
        console.log(`smoke: ${manifest.name} (${kind}) ok`);
      } catch {
        console.error(`smoke: ${manifest.name} (${kind}) FAILED`);
        failed++;
      }
    }
  }

  for (const { manifest } of packages) {
    const problems = installedFileProblems(join(consumer, "node_modules", manifest.name));
    for (const problem of problems) console.error(`smoke: ${manifest.name}: ${problem}`);
    console.log(`smoke: ${manifest.name} (files) ${problems.length === 0 ? "ok" : "FAILED"}`);
    if (problems.length > 0) failed++;
  }

  // The peer ranges against the oldest and the newest majors a project may have: npm resolves the
  // tree (--dry-run installs nothing) and fails with ERESOLVE when a range leaves one out.
  for (const majors of [
    ["express@4.17.3", "ioredis@^5", "redis@^4.6"],
    ["express@^5", "ioredis@^6", "redis@^6"],
  ]) {
    const project = join(work, `peers-${majors.join("-").replace(/[^a-z0-9.-]/gi, "_")}`);
    run("mkdir", ["-p", project], work);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "svc-smoke-peers", private: true }));
    try {
      run(
        "npm",
        ["install", "--dry-run", "--no-audit", "--no-fund", "--loglevel=error", ...tarballs, ...majors],
        project,
      );
      console.log(`smoke: peers (${majors.join(", ")}) ok`);
    } catch {
      console.error(`smoke: peers (${majors.join(", ")}) FAILED`);
      failed++;
    }
  }

  const tsc = createRequire(join(root, "package.json")).resolve("typescript/bin/tsc");
  for (const { manifest } of packages) {
    const specifiers = [
      manifest.name,
      ...Object.keys(manifest.exports ?? {})
        .filter((key) => key.startsWith("./") && key !== "./package.json")
        .map((key) => `${manifest.name}/${key.slice(2)}`),
    ];
    const base = `types-${manifest.name.replace("/", "-")}`;
    // The file imports nothing but the package: no node:http, no express, no global types.
    writeFileSync(
      join(consumer, `${base}.mts`),
      `${specifiers.map((s, i) => `import * as entry${i} from ${JSON.stringify(s)};`).join("\n")}\n` +
        `export type Surface = [${specifiers.map((_, i) => `typeof entry${i}`).join(", ")}];\n`,
    );
    writeFileSync(
      join(consumer, `${base}.cts`),
      `${specifiers.map((s, i) => `import entry${i} = require(${JSON.stringify(s)});`).join("\n")}\n` +
        `export type Surface = [${specifiers.map((_, i) => `typeof entry${i}`).join(", ")}];\n`,
    );
    writeFileSync(
      join(consumer, `tsconfig.${base}.json`),
      JSON.stringify({
        compilerOptions: {
          module: "nodenext",
          target: "esnext",
          strict: true,
          types: [],
          skipLibCheck: false,
          noEmit: true,
        },
        files: [`${base}.mts`, `${base}.cts`],
      }),
    );
    try {
      run("node", [tsc, "-p", `tsconfig.${base}.json`], consumer);
      console.log(`smoke: ${manifest.name} (types, "types": []) ok`);
    } catch (err) {
      console.error(err.stdout);
      console.error(`smoke: ${manifest.name} (types, "types": []) FAILED`);
      failed++;
    }
  }
  passed += packages.length * 4 + 2 - failed;

  const loaders = await checkLoaders({ consumer, packages, tsc });
  passed += loaders.passed.length;
  return failed + loaders.failed.length;
}

/**
 * What is wrong with an installed package's files: a missing LICENSE, a built script with a
 * `//# sourceMappingURL` comment (the maps do not ship: tooling/tsup-preset.ts), a declaration
 * file that does not load `@types/node` itself.
 */
function installedFileProblems(dir) {
  const problems = [];
  if (!existsSync(join(dir, "LICENSE"))) problems.push("no LICENSE in the tarball");
  const dist = join(dir, "dist");
  for (const file of readdirSync(dist)) {
    const text = readFileSync(join(dist, file), "utf8");
    if (/\.(c|m)?js$/.test(file)) {
      const comments = text.match(/\/\/# sourceMappingURL=\S*/g) ?? [];
      if (comments.length > 0)
        problems.push(`dist/${file} names a source map (${comments[0]}), and none ships`);
    } else if (/\.d\.(c|m)?ts$/.test(file) && !text.startsWith('/// <reference types="node" />'))
      problems.push(`dist/${file} does not start with /// <reference types="node" />`);
  }
  return problems;
}
