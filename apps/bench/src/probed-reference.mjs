// The reference server as `npm start` runs it (dist/main.js, the flags of its start script, `npm
// run build` first), in the svc-stack scenario's environment, with a probe module imported before
// it: for the scripts that read the server's own state after load (tick-feedback.mjs,
// async-resources.mjs). The probe prints after a `--- probe ---` line when the server gets
// SIGUSR2, then stops it through its SIGTERM handler.
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@svc/test-utils/free-port";
import { waitReady } from "./keep-alive-load.mjs";
import { REFERENCE_ENV, referenceNodeFlags } from "./reference-flags.mjs";
import { scenarios } from "./scenarios.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const serverDir = resolve(here, "../../reference-server");
const MARKER = "--- probe ---";

/**
 * Starts the server on `framework` with `probe` (a module of this directory) imported first, runs
 * `drive({ child, url, agent, plan })` (`plan`: the svc-stack scenario's GET of one employee with a
 * token, `agent`: keep-alive, 8 sockets), signals SIGUSR2 and returns what the probe printed.
 * Throws when the server ends before the probe printed, so an empty reading never passes.
 */
export async function probeReference({ framework, probe, nodeArgs = [], drive }) {
  const port = await freePort();
  // A file, not a pipe: V8 prints with C stdio, which drops what a non-blocking pipe refuses.
  const dir = mkdtempSync(join(tmpdir(), "svc-probe-"));
  const file = join(dir, "stdout");
  const fd = openSync(file, "w");
  const child = spawn(
    process.execPath,
    [...referenceNodeFlags(serverDir), ...nodeArgs, "--import", join(here, probe), "dist/main.js"],
    {
      cwd: serverDir,
      env: {
        ...process.env,
        ...REFERENCE_ENV,
        REDIS_URL: "",
        PORT: String(port),
        HOST: "127.0.0.1",
        SERVER_FRAMEWORK: framework,
      },
      stdio: ["ignore", fd, "ignore"],
    },
  );
  closeSync(fd);
  const exited = new Promise((done) => child.on("close", done));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(child, `${url}/health`, { status: 200 });
    const plan = await scenarios.find((s) => s.id === "svc-stack").prepare(url, {});
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    await drive({ child, url, agent, plan });
    agent.destroy();
  } catch (err) {
    child.kill("SIGKILL");
    await exited;
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  child.kill("SIGUSR2");
  const code = await exited;
  const out = readFileSync(file, "utf8");
  rmSync(dir, { recursive: true, force: true });
  if (code !== 0 || !out.includes(MARKER))
    throw new Error(
      `${framework}: the server ended with ${code} before the probe printed:\n${out.slice(-2000)}`,
    );
  return out.slice(out.indexOf(MARKER) + MARKER.length);
}
