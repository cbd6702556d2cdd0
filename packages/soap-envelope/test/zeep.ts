import { execFile, execFileSync } from "node:child_process";

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
 * Runs `script`, the body of a Python function `run()` that may read `url` (the endpoint's WSDL),
 * and answers what it returns, printed as one JSON line.
 */
export function runZeep(endpoint: string, script: string): Promise<Record<string, unknown>> {
  const body = script
    .trim()
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
  const program = [
    "import json, sys, zeep",
    "from zeep.helpers import serialize_object",
    "from zeep.wsse.username import UsernameToken",
    "url = sys.argv[1]",
    "def run():",
    body,
    "print(json.dumps(run(), default=str))",
    "",
  ].join("\n");
  return new Promise((resolve, reject) => {
    execFile(PYTHON, ["-c", program, `${endpoint}?wsdl`], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}"));
    });
  });
}
