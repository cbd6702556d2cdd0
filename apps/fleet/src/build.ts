import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT, SERVER_MAIN } from "./instance.js";

/**
 * Builds the reference server and the packages it runs on (`turbo run build
 * --filter=@svc/reference-server...`). Turbo's cache makes this a second or two when nothing
 * changed, and `flock` keeps two suites of one run from building at the same time. Outside CI, a
 * build that fails while an earlier one exists (a package being edited) is a warning, and the
 * suites run on the earlier build.
 */
let built = false;

export function ensureBuilt(): void {
  if (built) return;
  built = true;
  const lock = join(tmpdir(), "svc-fleet-build.lock");
  try {
    execFileSync(
      "flock",
      [
        lock,
        "npx",
        "turbo",
        "run",
        "build",
        "--filter=@svc/reference-server...",
        "--output-logs=errors-only",
      ],
      {
        cwd: REPO_ROOT,
        stdio: ["ignore", "ignore", "pipe"],
        env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1", TURBO_NO_UPDATE_NOTIFIER: "1" },
        timeout: 240_000,
      },
    );
  } catch (err) {
    if (process.env.CI || !existsSync(SERVER_MAIN)) throw err;
    console.warn(
      `[warn] building @svc/reference-server failed; the fleet suites use the existing ${SERVER_MAIN}\n${String((err as { stderr?: unknown }).stderr ?? err).slice(-1500)}`,
    );
  }
}
