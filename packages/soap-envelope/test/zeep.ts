import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import type { Socket } from "node:net";
import { createInterface } from "node:readline";

/** python3-zeep is Debian's: the system Python, where `.ci/run` installs it. */
export const PYTHON = "/usr/bin/python3";

/**
 * Whether zeep can be imported, for `suite`'s zeep tests. In CI its absence is an error, so no
 * interop test passes there by skipping; elsewhere those tests are skipped, saying so.
 */
export function zeepAvailable(suite: string): boolean {
  try {
    execFileSync(PYTHON, ["-c", "import zeep"], { stdio: "ignore" });
    return true;
  } catch {
    const why = `python3-zeep is not installed (${PYTHON} -c 'import zeep')`;
    if (process.env.CI) throw new Error(`${why}: CI installs it for ${suite}`);
    console.warn(`${suite}: ${why}: its zeep tests are skipped`);
    return false;
  }
}

/**
 * The Python side of {@link runZeep}: one process per test file, so zeep is imported once, not
 * once per call. Each stdin line is a call, `{"url", "program"}` (the program defines `run()`);
 * each stdout line its outcome, `{"result"}` or `{"error": the traceback}`, in the same order.
 */
const WORKER = `
import json, sys, traceback, zeep
from zeep.helpers import serialize_object
from zeep.wsse.username import UsernameToken
for line in sys.stdin:
    call = json.loads(line)
    scope = {"zeep": zeep, "serialize_object": serialize_object, "UsernameToken": UsernameToken, "url": call["url"]}
    try:
        exec(call["program"], scope)
        outcome = {"result": scope["run"]()}
    except Exception:
        outcome = {"error": traceback.format_exc()}
    sys.stdout.write(json.dumps(outcome, default=str) + "\\n")
    sys.stdout.flush()
`;

interface Pending {
  resolve: (value: Record<string, unknown>) => void;
  reject: (err: Error) => void;
}

let worker: { child: ChildProcess; pending: Pending[] } | undefined;

function zeepWorker(): { child: ChildProcess; pending: Pending[] } {
  if (worker !== undefined) return worker;
  const child = spawn(PYTHON, ["-u", "-c", WORKER], { stdio: ["pipe", "pipe", "pipe"] });
  const started = { child, pending: [] as Pending[] };
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
    const outcome = JSON.parse(line) as { result?: Record<string, unknown>; error?: string };
    const call = started.pending.shift();
    if (outcome.error !== undefined) call?.reject(new Error(outcome.error));
    else call?.resolve(outcome.result ?? {});
  });
  child.on("exit", (code, signal) => {
    if (worker === started) worker = undefined;
    for (const call of started.pending.splice(0))
      call.reject(new Error(`${PYTHON} exited (${code ?? signal})\n${stderr}`));
  });
  // Not what keeps the test process alive (a call under way is, by its timer): left running, the
  // process ends when its stdin closes with the test process.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as Socket | null)?.unref();
  worker = started;
  return started;
}

/** Ends the zeep process {@link runZeep} started, if any (a test file's `afterAll`). */
export function stopZeep(): Promise<void> {
  const current = worker;
  if (current === undefined) return Promise.resolve();
  worker = undefined;
  return new Promise((resolve) => {
    current.child.once("exit", () => resolve());
    current.child.stdin?.end();
  });
}

/**
 * Runs `script`, the body of a Python function `run()` that may read `url` (the endpoint's WSDL),
 * and answers what it returns; zeep, `serialize_object` and `UsernameToken` are in scope. The
 * calls of a test file share one Python process, one call at a time.
 */
export function runZeep(endpoint: string, script: string): Promise<Record<string, unknown>> {
  const body = script
    .trim()
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
  const program = `def run():\n${body}\n`;
  const { child, pending } = zeepWorker();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // A call that hangs leaves the process unusable: the next call starts another.
      child.kill();
      reject(new Error(`zeep did not answer within 60 s:\n${script}`));
    }, 60_000);
    pending.push({
      resolve: (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      reject: (err) => {
        clearTimeout(timer);
        reject(err);
      },
    });
    child.stdin?.write(`${JSON.stringify({ url: `${endpoint}?wsdl`, program })}\n`);
  });
}
