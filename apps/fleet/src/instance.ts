import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@svc/test-utils";
import { call } from "./http.js";

/** The repository root and the reference server's build, wherever this module runs from (src or dist). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const SERVER_DIR = join(REPO_ROOT, "apps", "reference-server");
export const SERVER_MAIN = join(SERVER_DIR, "dist", "main.js");

/** How a process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** `performance.now()` when it ended. */
  at: number;
}

/** One reference-server process. */
export interface Instance {
  readonly name: string;
  readonly port: number;
  /** `http://127.0.0.1:<port>`: the instance itself, not through the proxy. */
  readonly url: string;
  readonly env: Readonly<Record<string, string>>;
  /** The running process's id (undefined while stopped). */
  readonly pid: number | undefined;
  /** Everything the process wrote to stdout and stderr, over all its starts (the last 8 MB). */
  output(): string;
  /**
   * Starts the process (again) on the same port and waits until it prints that it listens and
   * then `/ready` answers 200, at most `readyTimeoutMs` (30 s by default; a restart on a loaded
   * machine, under load, may need more).
   */
  start(readyTimeoutMs?: number): Promise<void>;
  /** Sends a signal; resolves with how the process ended. */
  kill(signal: NodeJS.Signals): Promise<Exit>;
  /** Resolves when the process has ended. */
  exited(): Promise<Exit>;
}

const MAX_OUTPUT = 8 * 1024 * 1024;

/** The environment an instance starts with: only what the service reads, nothing of the test runner's. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["PATH", "HOME", "TZ", "LANG"]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/**
 * Prepares one reference-server process from the built `dist/main.js` (see {@link ensureBuilt}),
 * listening on 127.0.0.1 and a free port. `start()` launches it.
 */
export async function createInstance(name: string, env: Record<string, string>): Promise<Instance> {
  if (!existsSync(SERVER_MAIN))
    throw new Error(`${SERVER_MAIN} is missing: build @svc/reference-server first`);
  const port = await freePort();
  const fullEnv = { ...baseEnv(), HOST: "127.0.0.1", ...env, PORT: String(port) };
  let child: ChildProcess | undefined;
  let exit: Promise<Exit> | undefined;
  let out = "";
  const append = (chunk: Buffer) => {
    out += chunk.toString("utf8");
    if (out.length > MAX_OUTPUT) out = out.slice(out.length - MAX_OUTPUT);
  };
  const instance: Instance = {
    name,
    port,
    url: `http://127.0.0.1:${port}`,
    env: fullEnv,
    get pid() {
      return child?.pid;
    },
    output: () => out,
    async start(readyTimeoutMs = 30_000) {
      if (child) throw new Error(`${name} is already running`);
      const proc = spawn(process.execPath, ["--enable-source-maps", SERVER_MAIN], {
        cwd: SERVER_DIR,
        env: fullEnv,
        stdio: ["ignore", "pipe", "pipe"],
      });
      child = proc;
      // Until this process says it listens, whatever answers on the port is another process's
      // server (the port was free when it was picked, not reserved), so /ready is not asked.
      const banner = `listening on ${instance.url} (`;
      let said = "";
      let listening = false;
      proc.stdout?.on("data", (chunk: Buffer) => {
        if (listening) return;
        said = (said + chunk.toString("utf8")).slice(-4096);
        listening = said.includes(banner);
      });
      proc.stdout?.on("data", append);
      proc.stderr?.on("data", append);
      exit = new Promise<Exit>((resolveExit) => {
        proc.once("exit", (code, signal) => {
          if (child === proc) child = undefined;
          resolveExit({ code, signal, at: performance.now() });
        });
      });
      const deadline = Date.now() + readyTimeoutMs;
      for (;;) {
        if (child !== proc) {
          const ended = await exit;
          throw new Error(
            `${name} exited (code ${ended.code}, signal ${ended.signal}) before it was ready:\n${out.slice(-4000)}`,
          );
        }
        if (listening) {
          try {
            const res = await call(`${instance.url}/ready`, { timeoutMs: 2000 });
            if (res.status === 200) return;
          } catch {
            // not ready yet
          }
        }
        if (Date.now() > deadline) {
          proc.kill("SIGKILL");
          throw new Error(`${name} was not ready within ${readyTimeoutMs} ms:\n${out.slice(-4000)}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async kill(signal) {
      const proc = child;
      const ended = exit;
      if (!proc || !ended) return { code: null, signal: null, at: performance.now() };
      proc.kill(signal);
      return ended;
    },
    exited() {
      return exit ?? Promise.resolve({ code: null, signal: null, at: performance.now() });
    },
  };
  return instance;
}
