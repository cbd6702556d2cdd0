import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
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

  // The runtime scenarios bundle the built packages: without a build they are "skipped".
  const built = existsSync(fileURLToPath(new URL("../../../packages/kernel/dist/fetch.js", import.meta.url)));
  if (!built && !process.env.CI)
    console.warn("[skip] the runtime scenarios of run.mjs: run npm run build first");
  it.skipIf(!built && !process.env.CI)(
    "--only packages-hono@node,hono-peers@node → both bundled, served, and compared",
    async () => {
      const out = await mkdtemp(join(tmpdir(), "svc-bench-"));
      outDirs.push(out);
      await run(
        process.execPath,
        [runner, "--quick", "--duration", "1", "--connections", "10"].concat([
          "--only",
          "packages-hono@node,hono-peers@node",
          "--out",
          out,
        ]),
        { timeout: 60_000 },
      );
      const report = JSON.parse(await readFile(join(out, "quick.json"), "utf8")) as {
        results: ScenarioResult[];
      };
      expect(report.results.map((r) => [r.id, r.status])).toEqual([
        ["packages-hono@node", "ok"],
        ["hono-peers@node", "ok"],
      ]);
      for (const result of report.results) expect(result.summary?.unexpectedStatus).toBe(0);
      expect(await readFile(join(out, "quick.md"), "utf8")).toContain("× hono-peers@node");
    },
    90_000,
  );

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
