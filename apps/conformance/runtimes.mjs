#!/usr/bin/env node
// The runtimes the conformance table runs the Hono composition on, besides the Node.js running
// the tests: each from the npm registry, at the version `runtimes.json` pins, installed once into
// a cache folder outside the repository (`SVC_RUNTIMES_DIR`, default `~/.cache/svc-runtimes`). A
// runtime is a binary (`bin`: Node.js, Bun, Deno) or a Node.js module that runs one (`module`:
// miniflare, which runs workerd).
//
//   node apps/conformance/runtimes.mjs install   installs the missing ones
//   node apps/conformance/runtimes.mjs list      prints each runtime, its package and where it is
//
// Imported (types in runtimes.d.mts), it is where the suites and the bench find each runtime.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The pinned runtimes of `runtimes.json`, by name. */
export const RUNTIMES = JSON.parse(readFileSync(new URL("./runtimes.json", import.meta.url), "utf8"));
const pinned = RUNTIMES;
const base = process.env.SVC_RUNTIMES_DIR || join(homedir(), ".cache", "svc-runtimes");

/** The folder `name`'s package is installed in, and the file that shows it is there. */
export function placeOf(name) {
  const runtime = pinned[name];
  const folder = join(base, runtime.package.replace("@", "-"));
  const installed =
    runtime.bin !== undefined
      ? join(folder, "node_modules", ".bin", runtime.bin)
      : join(folder, "node_modules", runtime.module, "package.json");
  return { folder, installed };
}

function install(name) {
  const runtime = pinned[name];
  const { folder, installed } = placeOf(name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, "package.json"), JSON.stringify({ private: true }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-save", runtime.package], {
    cwd: folder,
    stdio: ["ignore", "ignore", "inherit"],
  });
  // The binary answering is the install's check: a platform package the registry lacks leaves a
  // shim that fails here rather than in the suite.
  const version =
    runtime.bin !== undefined
      ? execFileSync(installed, ["--version"], { encoding: "utf8" }).split("\n")[0]
      : JSON.parse(readFileSync(installed, "utf8")).version;
  process.stdout.write(`${name}: ${runtime.package} installed (${version})\n`);
}

const command = process.argv[1] === fileURLToPath(import.meta.url) ? process.argv[2] : "imported";
if (command === "imported") {
  // Imported: nothing to run.
} else if (command === "install") {
  for (const name of Object.keys(pinned)) {
    if (existsSync(placeOf(name).installed))
      process.stdout.write(`${name}: ${pinned[name].package} already in ${base}\n`);
    else install(name);
  }
} else if (command === "list") {
  for (const name of Object.keys(pinned)) {
    const { installed } = placeOf(name);
    process.stdout.write(
      `${name}\t${pinned[name].package}\t${existsSync(installed) ? installed : "(not installed)"}\n`,
    );
  }
} else {
  console.error("usage: node apps/conformance/runtimes.mjs install | list");
  process.exit(2);
}
