#!/usr/bin/env node
// The runtimes the conformance table runs the Hono composition on, besides the Node.js running
// the tests: each from the npm registry, at the version `runtimes.json` pins, installed once into
// a cache folder outside the repository (`SVC_RUNTIMES_DIR`, default `~/.cache/svc-runtimes`).
//
//   node apps/conformance/runtimes.mjs install   installs the missing ones
//   node apps/conformance/runtimes.mjs list      prints each runtime, its version and its binary
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const pinned = JSON.parse(readFileSync(new URL("./runtimes.json", import.meta.url), "utf8"));
const base = process.env.SVC_RUNTIMES_DIR || join(homedir(), ".cache", "svc-runtimes");

/** Where `name`'s binary is once installed. */
function binaryOf(name) {
  const runtime = pinned[name];
  return join(base, runtime.package.replace("@", "-"), "node_modules", ".bin", runtime.bin);
}

function install(name) {
  const runtime = pinned[name];
  const folder = join(base, runtime.package.replace("@", "-"));
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, "package.json"), JSON.stringify({ private: true }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-save", runtime.package], {
    cwd: folder,
    stdio: ["ignore", "ignore", "inherit"],
  });
  // The binary answering is the install's check: a platform package the registry lacks leaves a
  // shim that fails here rather than in the suite.
  const version = execFileSync(binaryOf(name), ["--version"], { encoding: "utf8" }).split("\n")[0];
  process.stdout.write(`${name}: ${runtime.package} installed (${version})\n`);
}

const command = process.argv[2];
if (command === "install") {
  for (const name of Object.keys(pinned)) {
    if (existsSync(binaryOf(name)))
      process.stdout.write(`${name}: ${pinned[name].package} already in ${base}\n`);
    else install(name);
  }
} else if (command === "list") {
  for (const name of Object.keys(pinned))
    process.stdout.write(
      `${name}\t${pinned[name].package}\t${existsSync(binaryOf(name)) ? binaryOf(name) : "(not installed)"}`,
    );
} else {
  console.error("usage: node apps/conformance/runtimes.mjs install | list");
  process.exit(2);
}
