import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const referenceDir = resolve(dirname(fileURLToPath(import.meta.url)), "../../reference-server");

/**
 * The node flags `npm start` runs the reference server with (the `start` script of its
 * package.json, `node [flags] dist/main.js`), so the bench measures the server as it is run,
 * whatever flags that script gives node.
 *
 * @param {string} [serverDir] the reference server's directory (another checkout's, for A/B runs)
 * @returns {string[]}
 */
export function referenceNodeFlags(serverDir = referenceDir) {
  const manifest = JSON.parse(readFileSync(join(serverDir, "package.json"), "utf8"));
  const start = String(manifest.scripts?.start ?? "");
  const run = /\bnode((?:\s+--[\w-]+(?:=\S+)?)*)\s+dist\/main\.js\b/.exec(start);
  if (!run)
    throw new Error(`apps/reference-server's start script runs no "node [flags] dist/main.js": ${start}`);
  return run[1].split(/\s+/).filter(Boolean);
}
