import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gitIn, json, writeIn } from "./fake-repo.js";
// Plain .mjs scripts: the release runs them with node, without a build step.
import {
  readmeTable,
  statedFootprint,
  TABLE_END,
  TABLE_START,
  tableProblems,
  writeTables,
} from "./footprint.mjs";

/**
 * The README footprint tables (scripts/footprint.mjs): written from `npm pack --dry-run` of the
 * built package, checked against it, and rewritten by the version step, whose CHANGELOG entry
 * changes the tarball, on throw-away workspaces.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const README = `# @fake/lib\n\nA library.\n\n## Install footprint\n\n${TABLE_START}\n${TABLE_END}\n\n## License\n\nMIT\n`;

/** A workspace with one built package, `@fake/lib` 0.1.0, its README holding an empty table. */
function workspace() {
  const root = mkdtempSync(join(tmpdir(), "svc-footprint-"));
  dirs.push(root);
  writeIn(root, "package.json", json({ name: "fake", private: true, workspaces: ["packages/*"] }));
  writeIn(root, ".changeset/config.json", json({ baseBranch: "main" }));
  writeIn(
    root,
    "packages/lib/package.json",
    json({ name: "@fake/lib", version: "0.1.0", main: "./dist/index.js", files: ["dist", "CHANGELOG.md"] }),
  );
  // Random, so that the tarball is about as large as the code (20 kB): the figures are rounded
  // to 100 bytes, and the check allows 1%.
  writeIn(
    root,
    "packages/lib/dist/index.js",
    `export const data = "${randomBytes(15_000).toString("base64")}";\n`,
  );
  writeIn(root, "packages/lib/README.md", README);
  writeIn(root, "packages/lib/LICENSE", "MIT\n");
  writeIn(root, "packages/lib/CHANGELOG.md", "# @fake/lib\n\n## 0.1.0\n\n- First release.\n");
  const dir = join(root, "packages/lib");
  return { root, pkg: { dir, manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) } };
}

describe("footprint tables", () => {
  it("a table states what it was written from (statedFootprint reads readmeTable back)", () => {
    const figures = {
      tarball: 93_400,
      unpacked: 328_400,
      files: 24,
      dependencies: 1,
      withDependencies: 392_800,
    };
    expect(statedFootprint(`text\n${readmeTable(figures)}\nmore`)).toEqual(figures);
    expect(readmeTable({ ...figures, dependencies: 0 })).toContain(
      "| 93.4 kB | 328.4 kB | 24 | 392.8 kB (0 packages) |",
    );
    expect(statedFootprint("# no table\n")).toBeUndefined();
  });

  it("an empty table → refused; --write fills it, the README's own growth included; 5 kB more in dist → refused again, naming the figures", () => {
    const { pkg } = workspace();
    expect(tableProblems([pkg])).toEqual([
      expect.stringMatching(
        /^@fake\/lib: README\.md's footprint table is empty; this build: tarball \d+, unpacked \d+/,
      ),
    ]);
    expect(writeTables([pkg])).toEqual(["@fake/lib"]);
    expect(tableProblems([pkg])).toEqual([]);
    const stated = statedFootprint(readFileSync(join(pkg.dir, "README.md"), "utf8"));
    expect(stated).toMatchObject({ files: 5, dependencies: 0 });
    expect(writeTables([pkg])).toEqual([]); // stable: written again, nothing changes
    appendFileSync(
      join(pkg.dir, "dist/index.js"),
      `export const more = "${randomBytes(4_000).toString("base64")}";\n`,
    );
    expect(tableProblems([pkg])).toEqual([
      expect.stringMatching(
        /^@fake\/lib: README\.md states tarball \d+, unpacked \d+, withDependencies \d+; this build: tarball \d+, unpacked \d+, withDependencies \d+$/,
      ),
    ]);
  }, 60_000);

  it("the version step (version-packages.mjs) writes the table of the package it versions, with its new CHANGELOG entry", () => {
    const { root, pkg } = workspace();
    writeTables([pkg]);
    const before = readFileSync(join(pkg.dir, "README.md"), "utf8");
    writeIn(
      root,
      ".changeset/lib-fix.md",
      `---\n"@fake/lib": patch\n---\n\n${"A fix, told at length. ".repeat(400)}\n`,
    );
    gitIn(root, "init", "-q", "-b", "main");
    gitIn(root, "add", "-A");
    gitIn(root, "commit", "-q", "-m", "a fix");
    expect(tableProblems([pkg])).toEqual([]);
    const out = execFileSync(
      "node",
      [resolve(import.meta.dirname, "version-packages.mjs"), "--root", root, "--no-install", "--no-build"],
      { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );
    expect(out).toContain("version: footprint tables written: @fake/lib");
    const after = readFileSync(join(pkg.dir, "README.md"), "utf8");
    expect(JSON.parse(readFileSync(join(pkg.dir, "package.json"), "utf8")).version).toBe("0.1.1");
    expect(statedFootprint(after)?.unpacked).toBeGreaterThan(
      (statedFootprint(before)?.unpacked ?? 0) + 8_000,
    );
    expect(tableProblems([pkg])).toEqual([]);
  }, 60_000);
});
