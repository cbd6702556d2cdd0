import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const runner = fileURLToPath(new URL("../src/run.mjs", import.meta.url));

interface ScenarioResult {
  id: string;
  status: string;
  peakRssBytes?: number;
  summary?: { requests: number; requestsPerSecond: number; errors: number; unexpectedStatus: number };
}

// Proves the harness end to end (spawn, readiness, warm-up, load, RSS, report files); the figures
// themselves are never asserted: timings on a shared machine are not a test.
describe("run.mjs --quick", () => {
  const outDirs: string[] = [];
  afterAll(async () => {
    await Promise.all(outDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it("--only raw-node,express-bare → quick.json and quick.md with requests and no errors", async () => {
    const out = await mkdtemp(join(tmpdir(), "svc-bench-"));
    outDirs.push(out);
    await run(
      process.execPath,
      [
        runner,
        "--quick",
        "--duration",
        "1",
        "--connections",
        "10",
        "--only",
        "raw-node,express-bare",
        "--out",
        out,
      ],
      { timeout: 30_000 },
    );

    const report = JSON.parse(await readFile(join(out, "quick.json"), "utf8")) as {
      results: ScenarioResult[];
    };
    expect(report.results.map((r) => r.id)).toEqual(["raw-node", "express-bare"]);
    for (const result of report.results) {
      expect(result.status).toBe("ok");
      expect(result.summary?.requests).toBeGreaterThan(0);
      expect(result.summary?.errors).toBe(0);
      expect(result.summary?.unexpectedStatus).toBe(0);
      expect(result.peakRssBytes).toBeGreaterThan(0);
    }
    const markdown = await readFile(join(out, "quick.md"), "utf8");
    expect(markdown).toMatch(/\| raw-node: .* \| 1\.00 \|/);
    expect(markdown).toContain("express-bare: bare Express 5 route");
  });

  it("--only no-such-scenario → exit code 2 and no report", async () => {
    const out = await mkdtemp(join(tmpdir(), "svc-bench-"));
    outDirs.push(out);
    const failure = await run(process.execPath, [
      runner,
      "--quick",
      "--only",
      "no-such-scenario",
      "--out",
      out,
    ]).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toContain("unknown scenario(s): no-such-scenario");
    await expect(readFile(join(out, "quick.json"), "utf8")).rejects.toThrow(/ENOENT/);
  });
});
