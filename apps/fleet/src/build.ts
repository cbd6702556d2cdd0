import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "./instance.js";

/**
 * Builds the reference server and the packages it runs on (`turbo run build
 * --filter=@svc/reference-server...`). Turbo's cache makes this a second or two when nothing
 * changed, and `flock` keeps two suites of one run from building at the same time.
 */
export function ensureBuilt(): void {
  const lock = join(tmpdir(), "svc-fleet-build.lock");
  execFileSync(
    "flock",
    [lock, "npx", "turbo", "run", "build", "--filter=@svc/reference-server...", "--output-logs=errors-only"],
    {
      cwd: REPO_ROOT,
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1", TURBO_NO_UPDATE_NOTIFIER: "1" },
      timeout: 240_000,
    },
  );
}
