#!/usr/bin/env node
// The public API of every published package, recorded in a reviewed file: API Extractor's report
// of each entry point's declarations (`exports` → `types`), at `packages/<name>/api/<entry>.api.md`
// (`index` for ".", `testing` for "./testing"). Reads the built `dist/`, so build first.
//
//   node scripts/api-report.mjs --check    (npm run api:check) fails, naming the package and
//                                          the command to run, when a report differs from the
//                                          declarations or is missing
//   node scripts/api-report.mjs --update   (npm run api:update) rewrites the reports
//   ... @svc/errors @svc/kernel            just the packages named
//
// A report lists what a consumer can import and every type those exports reach (forgotten
// exports included), sorted and normalised, so a diff of it is a diff of the API. Which bump a
// change to it needs is checked by scripts/release-guard.mjs against the last release.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";

const toolingRoot = resolve(import.meta.dirname, "..");
const require = createRequire(join(toolingRoot, "package.json"));

/** The entry points of a manifest: `[{ entry: "index" | "testing", types: "./dist/x.d.ts" }]`. */
export function entryPoints(manifest) {
  const entries = [];
  const exportsMap = manifest.exports ?? { ".": { types: manifest.types } };
  for (const [subpath, target] of Object.entries(exportsMap)) {
    if (subpath === "./package.json") continue;
    const types =
      typeof target === "string"
        ? undefined
        : (target.import?.types ?? target.types ?? target.default?.types);
    if (!types) continue;
    entries.push({ entry: subpath === "." ? "index" : subpath.slice(2).replaceAll("/", "-"), types });
  }
  return entries;
}

/** The report file of one entry point, relative to the package directory. */
export const reportPath = (entry) => join("api", `${entry}.api.md`);

/**
 * Runs API Extractor on each entry point of the package in `dir`. With `update`, writes the
 * reports; otherwise compares. Returns `[{ entry, file, status: "same" | "changed" | "missing" |
 * "unbuilt" | "error", detail }]`.
 */
export function apiReports(dir, { update = false } = {}) {
  const { Extractor, ExtractorConfig } = require("@microsoft/api-extractor");
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const results = [];
  for (const { entry, types } of entryPoints(manifest)) {
    const file = reportPath(entry);
    const declarations = join(dir, types);
    if (!existsSync(declarations)) {
      results.push({ entry, file, status: "unbuilt", detail: `${types} does not exist: build first` });
      continue;
    }
    const temp = mkdtempSync(join(tmpdir(), "svc-api-"));
    const existed = existsSync(join(dir, file));
    if (update) mkdirSync(join(dir, "api"), { recursive: true });
    const messages = [];
    try {
      const config = ExtractorConfig.prepare({
        configObject: {
          projectFolder: dir,
          mainEntryPointFilePath: declarations,
          compiler: {
            overrideTsconfig: {
              compilerOptions: {
                target: "ES2022",
                lib: ["ES2023"],
                module: "NodeNext",
                moduleResolution: "NodeNext",
                types: ["node"],
                typeRoots: [join(toolingRoot, "node_modules/@types")],
                strict: true,
                skipLibCheck: true,
              },
              files: [declarations],
            },
          },
          apiReport: {
            enabled: true,
            reportFileName: entry,
            reportFolder: join(dir, "api"),
            reportTempFolder: temp,
            includeForgottenExports: true,
          },
          docModel: { enabled: false },
          dtsRollup: { enabled: false },
          tsdocMetadata: { enabled: false },
          messages: {
            compilerMessageReporting: { default: { logLevel: "warning" } },
            extractorMessageReporting: {
              default: { logLevel: "none", addToApiReportFile: false },
              "ae-forgotten-export": { logLevel: "none", addToApiReportFile: true },
            },
            tsdocMessageReporting: { default: { logLevel: "none", addToApiReportFile: false } },
          },
        },
        configObjectFullPath: undefined,
        packageJsonFullPath: join(dir, "package.json"),
      });
      const result = Extractor.invoke(config, {
        localBuild: update,
        showVerboseMessages: false,
        messageCallback(message) {
          // The console-* messages narrate the comparison this script reports itself.
          const narration = String(message.messageId ?? "").startsWith("console-");
          if (!narration && (message.logLevel === "warning" || message.logLevel === "error"))
            messages.push(message.text);
          message.handled = true;
        },
      });
      const status = !existed && !update ? "missing" : result.apiReportChanged ? "changed" : "same";
      results.push({ entry, file, status, detail: messages.join("\n") });
    } catch (err) {
      results.push({ entry, file, status: "error", detail: String(err?.message ?? err) });
    } finally {
      rmSync(temp, { recursive: true, force: true });
    }
  }
  return results;
}

/** The published workspace packages under `root`: `[{ dir, manifest }]`. */
export function publishedPackages(root) {
  return readdirSync(join(root, "packages"))
    .map((name) => join(root, "packages", name))
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) }))
    .filter(({ manifest }) => !manifest.private);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const update = args.includes("--update");
  const rootArg = args.indexOf("--root");
  const root = rootArg >= 0 ? resolve(args[rootArg + 1]) : toolingRoot;
  const names = args.filter((a, i) => !a.startsWith("--") && args[i - 1] !== "--root");
  const packages = publishedPackages(root).filter(
    ({ manifest }) => names.length === 0 || names.includes(manifest.name),
  );
  let failed = 0;
  for (const { dir, manifest } of packages) {
    for (const r of apiReports(dir, { update })) {
      const where = relative(root, join(dir, r.file));
      if (r.status === "same" || (update && r.status === "changed")) {
        console.log(
          `api: ${manifest.name} ${r.entry}: ${update && r.status === "changed" ? "updated" : "unchanged"} (${where})`,
        );
        continue;
      }
      failed++;
      if (r.status === "unbuilt" || r.status === "error")
        console.error(`api: ${manifest.name} ${r.entry}: ${r.detail}`);
      else
        console.error(
          `api: ${manifest.name} ${r.entry}: the public API differs from ${where}${r.status === "missing" ? " (no report yet)" : ""}.\n` +
            `     Run \`npm run api:update -- ${manifest.name}\`, review the diff of ${where}, commit it, and add a\n` +
            `     changeset for ${manifest.name} with the bump the change needs (CONTRIBUTING.md, "Public API").`,
        );
      if (r.detail && r.status !== "unbuilt" && r.status !== "error") console.error(r.detail);
    }
  }
  console.log(`api: ${packages.length} packages, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}
