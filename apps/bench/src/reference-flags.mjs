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

/**
 * The environment the bench runs the reference server in (the svc-stack scenario): the demo
 * users, SQLite in memory, the largest rate limit the server accepts per second (counted on every
 * request, never hit), CORS for one origin, access lines at info. No Redis: each caller leaves
 * `REDIS_URL` out in its own way.
 */
export const REFERENCE_ENV = Object.freeze({
  NODE_ENV: "production",
  DEMO_USERS: "admin:admin:admin",
  DATABASE_URL: "sqlite::memory:",
  RATE_LIMIT_MAX: "1000000",
  RATE_LIMIT_WINDOW_SECONDS: "1",
  CORS_ORIGINS: "https://app.example.com",
  LOG_LEVEL: "info",
});
