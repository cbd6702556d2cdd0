// Micro-benchmarks live next to the code they measure (packages/<name>/bench/*.bench.ts); this
// gathers them: one `vitest bench --run --project <package>` per package that has any.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Packages with at least one `bench/*.bench.ts`, as `{ name, dir, files }`. */
export function benchPackages(repoRoot) {
  const packagesDir = join(repoRoot, "packages");
  if (!existsSync(packagesDir)) return [];
  return readdirSync(packagesDir)
    .map((entry) => join(packagesDir, entry))
    .filter((dir) => existsSync(join(dir, "package.json")) && existsSync(join(dir, "bench")))
    .map((dir) => ({
      name: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).name,
      dir,
      files: readdirSync(join(dir, "bench")).filter((f) => /\.bench\.[cm]?[jt]s$/.test(f)),
    }))
    .filter((p) => p.files.length > 0);
}

function run(command, args, cwd) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0", CI: process.env.CI ?? "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.on("close", (code) => resolve({ code, output }));
  });
}

/** Runs every package's micro-benchmarks and writes `micro.md` and `micro.json` into `outDir`. */
export async function runMicro({ repoRoot, outDir, only }) {
  const packages = benchPackages(repoRoot).filter((p) => !only || only.includes(p.name));
  await mkdir(outDir, { recursive: true });
  const results = [];
  for (const pkg of packages) {
    console.log(`micro: ${pkg.name} (${pkg.files.join(", ")})`);
    const jsonFile = join(outDir, `.micro-${pkg.name.replace(/[@/]/g, "_")}.json`);
    const { code, output } = await run(
      "npx",
      ["vitest", "bench", "--run", "--project", pkg.name, "--outputJson", jsonFile],
      repoRoot,
    );
    let json;
    if (existsSync(jsonFile)) {
      json = JSON.parse(await readFile(jsonFile, "utf8"));
      await rm(jsonFile);
    }
    // npm's own configuration warnings are noise in a benchmark report.
    const text = output
      .split("\n")
      .filter((line) => !line.startsWith("npm warn"))
      .join("\n")
      .trim();
    results.push({ package: pkg.name, files: pkg.files, exitCode: code, output: text, json });
    if (code !== 0) console.error(`micro: ${pkg.name} exited with ${code}`);
  }
  const md = [
    "# Micro-benchmarks",
    "",
    "`npx vitest bench --run --project <package>` for each package with a `bench/` folder.",
  ];
  if (results.length === 0) md.push("", "No package has a `bench/*.bench.ts` file yet.");
  for (const r of results) {
    md.push(
      "",
      `## ${r.package}${r.exitCode === 0 ? "" : ` (exit code ${r.exitCode})`}`,
      "",
      "```",
      r.output,
      "```",
    );
  }
  await writeFile(join(outDir, "micro.md"), `${md.join("\n")}\n`);
  await writeFile(join(outDir, "micro.json"), `${JSON.stringify(results, null, 2)}\n`);
  return results;
}
