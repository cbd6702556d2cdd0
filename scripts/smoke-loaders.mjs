// The loaders of the consumer smoke test (scripts/smoke-consumers.mjs), on the project it installed
// the packed tarballs into: every entry of every package (each `exports` subpath) loaded the ways
// applications load it, each handed to the package's own `smoke.mjs`:
//
// - Jest 30, default configuration (CommonJS, no transform of the packages): `require` of each
//   entry, and `@svc/idempotency/testing` run as its README shows, with Jest's `describe` and `it`;
// - Vitest: `import` of each entry (Vitest leaves node_modules to Node.js);
// - tsx: a `.ts` file (CommonJS, as the project has no `"type"`) and a `.mts` file;
// - TypeScript with `moduleResolution` node16 and bundler (`module` esnext and preserve), strict,
//   `"types": []`, `skipLibCheck: false` (nodenext is the per-package check of the smoke test);
// - esbuild (ESM and CommonJS output) and Vite's SSR build (Rollup, dependencies bundled) of an
//   app importing every entry, each bundle then run with Node.js;
// - and one `@svc/kernel` in a process that imports it and requires it: the same classes and
//   functions, and an exchange recorded through one seen through the other.
//
// What is known to fail is listed in scripts/smoke-loaders.known.json, by check and package, with
// why: it is reported and passes; anything else fails, and so does a listed failure that is gone
// (the list only shrinks).
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const exec = promisify(execFile);

/** The packages the consumer project installs to run the loaders (beside the tarballs). */
export function loaderPackages(rootManifest) {
  const dev = rootManifest.devDependencies;
  return [
    "jest@^30",
    "tsx@^4",
    `vitest@${dev.vitest}`,
    // Vite 7 builds with Rollup (and @rollup/plugin-commonjs for CommonJS modules).
    "vite@^7",
    `esbuild@${dev.esbuild}`,
  ];
}

/** The entries of each package: its name and every `exports` subpath (`@svc/hal/testing`). */
function entriesOf(packages) {
  return packages.map(({ dir, manifest }) => ({
    name: manifest.name,
    dir,
    short: manifest.name.replace(/^@svc\//, ""),
    subpaths: Object.keys(manifest.exports ?? {}).filter(
      (key) => key.startsWith("./") && key !== "./package.json",
    ),
  }));
}

/**
 * Runs every loader in `consumer` (where the tarballs and `loaderPackages` are installed). Returns
 * the names of the checks that passed and of those that failed. The compilers (single-threaded,
 * the slowest) run beside the rest.
 */
export async function checkLoaders({ consumer, packages, tsc }) {
  const known = JSON.parse(readFileSync(new URL("./smoke-loaders.known.json", import.meta.url), "utf8"));
  const results = { passed: [], failed: [] };
  const pkgs = entriesOf(packages);
  mkdirSync(join(consumer, "out"), { recursive: true });
  const runs = [];
  const compilers = [];
  const bin = (name, file) => join(consumer, "node_modules", name, file);
  // What each failing check failed on, by package: the known ones (smoke-loaders.known.json) are
  // reported and pass; any other fails, and so does a known one that no longer fails.
  const check = async (label, cmd, args, failing) => {
    const started = Date.now();
    const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
    let output;
    try {
      await exec(cmd, args, { cwd: consumer, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    } catch (err) {
      output = `${err.stdout ?? ""}${err.stderr ?? ""}`;
    }
    // Only the packages of this run (`smoke-consumers.mjs @svc/kernel` checks fewer).
    const listed = Object.keys(known[label] ?? {}).filter((subject) =>
      pkgs.some((p) => subject === p.name || subject.startsWith(`${p.name}/`)),
    );
    let found = [];
    if (output !== undefined) {
      try {
        found = failing?.(output) ?? ["(all)"];
      } catch {
        found = ["(all)"];
      }
    }
    const unknown = found.filter((subject) => !listed.includes(subject));
    const gone = listed.filter((subject) => !found.includes(subject));
    if (unknown.length === 0 && gone.length === 0) {
      const also = found.length > 0 ? `, known to fail: ${found.join(", ")}` : "";
      console.log(`smoke: ${label} ok (${seconds()} s${also})`);
      results.passed.push(label);
      return;
    }
    if (unknown.length > 0) console.error(output.trim().split("\n").slice(-60).join("\n"));
    for (const subject of gone)
      console.error(
        `smoke: ${label}: ${subject} passes now: remove it from scripts/smoke-loaders.known.json`,
      );
    console.error(`smoke: ${label} FAILED${unknown.length > 0 ? ` (${unknown.join(", ")})` : ""}`);
    results.failed.push(label);
  };
  // Jest's report (--json): a test named after its package, or the store contract's file.
  const jestFailures = () => {
    const report = JSON.parse(readFileSync(join(consumer, "out", "jest.json"), "utf8"));
    const subjects = new Set();
    for (const file of report.testResults) {
      if (file.status !== "failed") continue;
      if (file.name.endsWith("store-contract.test.cjs")) subjects.add("@svc/idempotency/testing");
      else {
        const failed = file.assertionResults.filter((t) => t.status === "failed");
        if (failed.length === 0) subjects.add("(all)");
        for (const t of failed) subjects.add(t.title.split(":")[0]);
      }
    }
    return [...subjects];
  };
  // tsc's errors, by the package whose files they are in (anything else counts as "(all)").
  const compilerFailures = (output) => [
    ...new Set(
      output
        .split("\n")
        .filter((line) => /error TS\d+/.test(line))
        .map((line) => /node_modules\/(@svc\/[^/]+)\//.exec(line)?.[1] ?? "(all)"),
    ),
  ];

  // Each package's smoke check, as an ES module and as a CommonJS one (Jest's runtime loads no
  // ES module); the checks export one function and import nothing.
  mkdirSync(join(consumer, "smoke"), { recursive: true });
  for (const p of pkgs) {
    const text = readFileSync(join(p.dir, "smoke.mjs"), "utf8");
    writeFileSync(join(consumer, "smoke", `${p.short}.mjs`), text);
    writeFileSync(
      join(consumer, "smoke", `${p.short}.cjs`),
      text.replace(/^export default /m, "module.exports = "),
    );
  }
  const listed = JSON.stringify(pkgs.map(({ name, short, subpaths }) => ({ name, short, subpaths })));

  // Jest: default configuration, test files found by its default `testMatch` under jest/.
  mkdirSync(join(consumer, "jest"), { recursive: true });
  writeFileSync(
    join(consumer, "jest", "entries.test.cjs"),
    `const packages = ${listed};
for (const p of packages) {
  test(\`\${p.name}: every entry through require\`, async () => {
    const entries = {};
    for (const subpath of p.subpaths) entries[subpath] = require(\`\${p.name}/\${subpath.slice(2)}\`);
    await require(\`../smoke/\${p.short}.cjs\`)(require(p.name), "cjs", entries);
  });
}
`,
  );
  if (pkgs.some((p) => p.name === "@svc/idempotency")) {
    // packages/idempotency/README.md, "The store contract": the contract on Jest's describe and it.
    writeFileSync(
      join(consumer, "jest", "store-contract.test.cjs"),
      `const { MemoryStore } = require("@svc/idempotency");
const { describeStoreContract } = require("@svc/idempotency/testing");

describeStoreContract("MemoryStore", { store: () => new MemoryStore() }, { describe, it });
`,
    );
  }
  runs.push([
    "Jest 30 (CommonJS, default configuration)",
    process.execPath,
    [bin("jest", "bin/jest.js"), "--ci", "--json", "--outputFile=out/jest.json", "jest/"],
    jestFailures,
  ]);

  // Vitest: every entry through import, and one kernel beside require.
  mkdirSync(join(consumer, "vitest"), { recursive: true });
  writeFileSync(
    join(consumer, "vitest", "entries.test.mjs"),
    `import { createRequire } from "node:module";
import { expect, test } from "vitest";

const packages = ${listed};
for (const p of packages) {
  test(\`\${p.name}: every entry through import\`, async () => {
    const entries = {};
    for (const subpath of p.subpaths) entries[subpath] = await import(\`\${p.name}/\${subpath.slice(2)}\`);
    const { default: smoke } = await import(\`../smoke/\${p.short}.mjs\`);
    await smoke(await import(p.name), "esm", entries);
  });
}
if (packages.some((p) => p.name === "@svc/kernel")) {
  test("@svc/kernel is one module through import and require", async () => {
    const esm = await import("@svc/kernel");
    const cjs = createRequire(import.meta.url)("@svc/kernel");
    expect(esm.HttpError).toBe(cjs.HttpError);
    expect(esm.exchangeOf).toBe(cjs.exchangeOf);
  });
}
`,
  );
  // No configuration file: Vitest's defaults, the tests under vitest/.
  runs.push(["Vitest", process.execPath, [bin("vitest", "vitest.mjs"), "run", "--dir", "vitest"]]);

  // tsx: static imports of every entry, from a CommonJS .ts file and from an .mts file.
  const imports = [];
  const calls = [];
  pkgs.forEach((p, i) => {
    imports.push(`import * as p${i} from ${JSON.stringify(p.name)};`);
    const entries = p.subpaths.map((subpath, j) => {
      imports.push(`import * as p${i}e${j} from ${JSON.stringify(`${p.name}/${subpath.slice(2)}`)};`);
      return `${JSON.stringify(subpath)}: p${i}e${j}`;
    });
    calls.push({
      short: p.short,
      call: (smoke, kind) => `  await ${smoke}(p${i}, "${kind}", { ${entries.join(", ")} });`,
    });
  });
  const program = (kind, extension) =>
    `${imports.join("\n")}\n${pkgs.map((p, i) => `import smoke${i} from "../smoke/${p.short}.${extension}";`).join("\n")}\n\n` +
    `async function main(): Promise<void> {\n${calls.map(({ call }, i) => call(`smoke${i}`, kind)).join("\n")}\n}\n` +
    `main().catch((error: unknown) => {\n  console.error(error);\n  process.exit(1);\n});\n`;
  mkdirSync(join(consumer, "tsx"), { recursive: true });
  writeFileSync(join(consumer, "tsx", "entries.ts"), program("cjs", "cjs"));
  writeFileSync(join(consumer, "tsx", "entries.mts"), program("esm", "mjs"));
  runs.push(["tsx (.ts, CommonJS)", process.execPath, [bin("tsx", "dist/cli.mjs"), "tsx/entries.ts"]]);
  runs.push(["tsx (.mts)", process.execPath, [bin("tsx", "dist/cli.mjs"), "tsx/entries.mts"]]);

  // TypeScript: node16 (an .mts and a .cts file) and bundler (a .ts file).
  mkdirSync(join(consumer, "types"), { recursive: true });
  const specifiers = pkgs.flatMap((p) => [p.name, ...p.subpaths.map((s) => `${p.name}/${s.slice(2)}`)]);
  const surface = `export type Surface = [${specifiers.map((_, i) => `typeof entry${i}`).join(", ")}];\n`;
  const esmImports = `${specifiers.map((s, i) => `import * as entry${i} from ${JSON.stringify(s)};`).join("\n")}\n`;
  writeFileSync(join(consumer, "types", "entries.mts"), esmImports + surface);
  writeFileSync(
    join(consumer, "types", "entries.cts"),
    `${specifiers.map((s, i) => `import entry${i} = require(${JSON.stringify(s)});`).join("\n")}\n${surface}`,
  );
  writeFileSync(join(consumer, "types", "entries.ts"), esmImports + surface);
  const strict = { target: "esnext", strict: true, types: [], skipLibCheck: false, noEmit: true };
  for (const [label, options, files] of [
    ["node16", { module: "node16", moduleResolution: "node16" }, ["entries.mts", "entries.cts"]],
    ["bundler, module esnext", { module: "esnext", moduleResolution: "bundler" }, ["entries.ts"]],
    ["bundler, module preserve", { module: "preserve", moduleResolution: "bundler" }, ["entries.ts"]],
  ]) {
    const config = `tsconfig.${label.replace(/[^a-z0-9]+/g, "-")}.json`;
    writeFileSync(
      join(consumer, "types", config),
      JSON.stringify({ compilerOptions: { ...strict, ...options }, files }),
    );
    compilers.push([
      `TypeScript (moduleResolution ${label})`,
      process.execPath,
      [tsc, "-p", `types/${config}`],
      compilerFailures,
    ]);
  }

  // Bundlers: an app importing every entry, bundled with its dependencies, then run.
  mkdirSync(join(consumer, "bundle"), { recursive: true });
  writeFileSync(
    join(consumer, "bundle", "app.mjs"),
    program("esm", "mjs")
      .replace("async function main(): Promise<void>", "async function main()")
      .replace("(error: unknown)", "(error)"),
  );
  runs.push([
    "esbuild bundle (ESM) run",
    "sh",
    [
      "-c",
      `${JSON.stringify(bin(".bin", "esbuild"))} bundle/app.mjs --bundle --platform=node --format=esm --log-level=warning --outfile=out/esbuild.mjs ` +
        // An ES bundle of CommonJS dependencies that load Node.js builtins needs `require`: the
        // banner esbuild's documentation gives for it.
        `"--banner:js=import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" && node out/esbuild.mjs`,
    ],
  ]);
  runs.push([
    "esbuild bundle (CommonJS) run",
    "sh",
    [
      "-c",
      `${JSON.stringify(bin(".bin", "esbuild"))} bundle/app.mjs --bundle --platform=node --format=cjs --log-level=warning --outfile=out/esbuild.cjs && node out/esbuild.cjs`,
    ],
  ]);
  writeFileSync(
    join(consumer, "vite.ssr.config.mjs"),
    `export default {
  logLevel: "warn",
  // Every dependency in the bundle, as a server bundled to run without node_modules.
  ssr: { noExternal: true, target: "node" },
  build: {
    ssr: "bundle/app.mjs",
    outDir: "out/vite",
    emptyOutDir: true,
    minify: false,
    rollupOptions: { output: { format: "esm", entryFileNames: "app.mjs" } },
  },
};
`,
  );
  runs.push([
    "Vite SSR build (Rollup) run",
    "sh",
    [
      "-c",
      `${JSON.stringify(bin(".bin", "vite"))} build --config vite.ssr.config.mjs && node out/vite/app.mjs`,
    ],
  ]);

  // One kernel in a process that imports it and requires it.
  if (pkgs.some((p) => p.name === "@svc/kernel")) {
    writeFileSync(
      join(consumer, "kernel-once.mjs"),
      `import { createRequire } from "node:module";
import * as esm from "@svc/kernel";

const require = createRequire(import.meta.url);
const cjs = require("@svc/kernel");
const fail = (what) => {
  console.error(\`@svc/kernel through import and through require: \${what}\`);
  process.exit(1);
};
for (const name of ["HttpError", "exchangeOf", "recordAuthentication", "createPipeline"])
  if (esm[name] !== cjs[name]) fail(\`two \${name}\`);
if (!(cjs.HttpError.notFound("gone") instanceof esm.HttpError)) fail("an HttpError is not an HttpError");
const request = { headers: { authorization: "Basic YTpi" } };
esm.recordAuthentication(request, { id: "alice" });
cjs.exchangeOf(request).passages.push({ fields: { "x-test": "1" } });
if (cjs.principalFor(request, "smoke", "")?.id !== "alice") fail("the exchange made through import is not seen through require");
if (esm.exchangeOf(request).passages.length !== 1) fail("the exchange made through require is not seen through import");
`,
    );
    runs.push([
      "@svc/kernel is one module through import and require",
      process.execPath,
      ["kernel-once.mjs"],
    ]);
  }
  const lane = async (list) => {
    for (const [label, cmd, args, failing] of list) await check(label, cmd, args, failing);
  };
  await Promise.all([lane(runs), lane(compilers)]);
  return results;
}
