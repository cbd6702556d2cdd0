import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pairings, percentiles, runStartup, type StartupRow } from "../src/startup.mjs";

// The start-up table in quick mode with one process per entry and no warm-up round: its shape and its coverage, never
// its figures (speed is what the bench reports, not what a test asserts). Loads the built `dist/`
// entries, as an application does: run after a build.
const repoRoot = resolve(import.meta.dirname, "../../..");
const published = readdirSync(join(repoRoot, "packages"))
  .map((name) => join(repoRoot, "packages", name, "package.json"))
  .filter((file) => existsSync(file))
  .map((file) => JSON.parse(readFileSync(file, "utf8")) as { name: string; private?: boolean })
  .filter((manifest) => manifest.private !== true)
  .map((manifest) => manifest.name)
  .sort();

describe("start-up and footprint", () => {
  let dir = "";
  let result: Awaited<ReturnType<typeof runStartup>>;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-bench-startup-"));
    result = await runStartup({ outDir: dir, quick: true, runs: 1, warmup: false, log: () => {} });
  }, 600_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("one row per published package, each with a declared pairing and a reason", () => {
    expect(published.length).toBeGreaterThan(0);
    expect(result.report.rows.map((r) => r.package)).toEqual(published);
    for (const row of result.report.rows) {
      expect(row.undeclared, `${row.package}: add it to pairings in src/startup.mjs`).toBe(false);
      expect(row.why).not.toBe("");
    }
    expect(Object.keys(pairings).sort()).toEqual(published);
  });

  it("every entry loaded, with import and require, the package and its peer", () => {
    expect(result.failed).toBe(false);
    for (const row of result.report.rows) {
      for (const measure of [row.import, row.require, row.peer?.import, row.peer?.require]) {
        if (!measure) continue;
        expect(measure.error, row.package).toBeUndefined();
        expect(measure.ms?.runs).toBe(1);
        expect(typeof measure.cpuMs?.median).toBe("number");
      }
    }
  });

  it("sizes: the tarball, and an installed closure holding the package and the @svc peers it requires", () => {
    for (const row of result.report.rows) {
      expect(row.size.tarball).toBeGreaterThan(0);
      expect(row.size.installed).toBeGreaterThanOrEqual(row.size.unpacked);
      expect(row.size.installedPackages.some((p) => p.startsWith(`${row.package}@`))).toBe(true);
      if (row.package !== "@svc/kernel")
        expect(row.size.installedPackages.some((p) => p.startsWith("@svc/kernel@"))).toBe(true);
      if (row.peer) expect(row.peer.size.installed).toBeGreaterThan(0);
    }
  });

  it("startup.md: one table row per package, every row as wide as the header; startup.json the same rows", async () => {
    const markdown = await readFile(join(dir, "startup.md"), "utf8");
    expect(markdown).toBe(result.markdown);
    const lines = markdown.split("\n");
    const header = lines.findIndex((l) => l.startsWith("| package | import ms |"));
    expect(header).toBeGreaterThan(-1);
    const cells = (line: string) => line.split(" | ").length;
    const rows = lines.slice(header + 2, header + 2 + published.length);
    expect(rows.map((l) => l.slice(2, l.indexOf(" |")))).toEqual(published);
    for (const line of rows) expect(cells(line)).toBe(cells(lines[header] ?? ""));
    expect(lines[header + 2 + published.length]).toBe("");
    const json = JSON.parse(await readFile(join(dir, "startup.json"), "utf8"));
    expect(json.rows.map((r: StartupRow) => r.package)).toEqual(published);
  });
});

describe("percentiles", () => {
  it("median and nearest-rank p90", () => {
    expect(percentiles([5, 1, 4, 2, 3, 6, 7, 8, 9, 10])).toEqual({ median: 5.5, p90: 9, runs: 10 });
    expect(percentiles([3])).toEqual({ median: 3, p90: 3, runs: 1 });
    expect(percentiles([])).toBeUndefined();
  });
});
