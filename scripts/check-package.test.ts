import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
// A plain .mjs script: every package's prepack runs it with node, without a build step.
import { bareBuiltins, expectedLinks, linkProblems, packageProblems } from "./check-package.mjs";
import { json, writeIn } from "./fake-repo.js";

/**
 * The links every published package carries (repository with its directory, homepage, bugs),
 * derived from the root package.json's repository: the npm page links to the source with them,
 * and `npm publish --provenance` needs `repository` to be the repository the CI builds.
 */
const scripts = import.meta.dirname;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const root = { repository: { type: "git", url: "git+https://github.com/svc-dev/svc.git" } };
const links = expectedLinks(root, "packages/hal");
const linked = {
  name: "@svc/hal",
  version: "0.1.0",
  homepage: "https://github.com/svc-dev/svc/tree/main/packages/hal#readme",
  bugs: "https://github.com/svc-dev/svc/issues",
  repository: { type: "git", url: "git+https://github.com/svc-dev/svc.git", directory: "packages/hal" },
};

describe("expectedLinks and linkProblems", () => {
  it("the root's repository → the package's repository, homepage and bugs", () => {
    expect(links).toEqual({
      homepage: linked.homepage,
      bugs: linked.bugs,
      repository: linked.repository,
    });
    expect(
      expectedLinks({ repository: "git+https://github.com/acme/fork.git" }, "packages/x", "trunk"),
    ).toEqual({
      homepage: "https://github.com/acme/fork/tree/trunk/packages/x#readme",
      bugs: "https://github.com/acme/fork/issues",
      repository: { type: "git", url: "git+https://github.com/acme/fork.git", directory: "packages/x" },
    });
  });

  it.each([
    ["all three, as the root gives them", linked, []],
    ["bugs as { url }", { ...linked, bugs: { url: linked.bugs } }, []],
    ["none of them", { name: "@svc/hal", version: "0.1.0" }, [/^no homepage, bugs, repository: give \{/]],
    [
      "no bugs",
      { ...linked, bugs: undefined },
      [/^no bugs: give \{"bugs":"https:\/\/github\.com\/svc-dev\/svc\/issues"\}/],
    ],
    [
      "another repository (a fork's root, a copied manifest)",
      { ...linked, repository: { ...linked.repository, url: "git+https://github.com/other/svc.git" } },
      [/^repository .*other\/svc\.git.*, not .*svc-dev\/svc\.git/],
    ],
    [
      "another package's directory",
      { ...linked, repository: { ...linked.repository, directory: "packages/auth" } },
      [/^repository .*packages\/auth.*, not .*packages\/hal/],
    ],
    [
      "a repository string without directory",
      { ...linked, repository: "github:svc-dev/svc" },
      [/^repository "github:svc-dev\/svc", not /],
    ],
    [
      "a homepage elsewhere",
      { ...linked, homepage: "https://svc.dev" },
      [/^homepage https:\/\/svc\.dev, not /],
    ],
  ])("%s → %i problem(s)", (_, manifest, expected) => {
    const problems = linkProblems(manifest, links);
    expect(problems).toHaveLength(expected.length);
    expected.forEach((pattern, i) => {
      expect(problems[i]).toMatch(pattern);
    });
  });

  it("a root without repository → one problem, saying where the links come from", () => {
    expect(linkProblems(linked, expectedLinks({}, "packages/hal"))).toEqual([
      "the root package.json has no repository.url, from which every published package's repository, homepage and bugs derive",
    ]);
  });

  it("packageProblems checks the links only when given them (the installed copy of a package too)", () => {
    const shipped = ["package.json", "README.md", "LICENSE", "CHANGELOG.md"];
    const bare = { name: "@svc/hal", version: "0.1.0" };
    expect(packageProblems(bare, shipped, () => "")).toEqual([]);
    expect(packageProblems(bare, shipped, () => "", links)).toHaveLength(1);
  });
});

describe("check-package.mjs: a package's prepack, and --fix at the root", () => {
  function workspace() {
    const dir = mkdtempSync(join(tmpdir(), "svc-check-package-"));
    dirs.push(dir);
    writeIn(dir, "package.json", json({ name: "fake", private: true, workspaces: ["packages/*"], ...root }));
    writeIn(
      dir,
      "packages/hal/package.json",
      json({ name: "@fake/hal", version: "0.1.0", description: "d", keywords: ["k"], license: "MIT" }),
    );
    writeIn(dir, "packages/private/package.json", json({ name: "@fake/private", private: true }));
    return dir;
  }
  const check = (cwd: string, ...args: string[]) => {
    const r = spawnSync("node", [join(scripts, "check-package.mjs"), ...args], { cwd, encoding: "utf8" });
    return { status: r.status, output: `${r.stdout}${r.stderr}` };
  };

  it("a package without the links → its prepack refuses to pack; --fix at the root writes them after keywords", () => {
    const dir = workspace();
    const pack = check(join(dir, "packages/hal"));
    expect(pack.status).toBe(1);
    expect(pack.output).toContain("@fake/hal: not packed, no homepage, bugs, repository: give {");
    expect(check(dir).status).toBe(1);
    expect(check(dir, "--fix").output).toContain("@fake/hal: repository, homepage and bugs written");
    const manifest = JSON.parse(readFileSync(join(dir, "packages/hal/package.json"), "utf8"));
    expect(Object.keys(manifest)).toEqual([
      "name",
      "version",
      "description",
      "keywords",
      "homepage",
      "bugs",
      "repository",
      "license",
    ]);
    expect(manifest.repository).toEqual({
      type: "git",
      url: "git+https://github.com/svc-dev/svc.git",
      directory: "packages/hal",
    });
    expect(check(dir).status).toBe(0);
    expect(check(join(dir, "packages/hal")).status).toBe(0);
    expect(check(join(dir, "packages/private")).status).toBe(0);
  }, 60_000);
});

describe("source maps in a tarball", () => {
  const base = ["package.json", "README.md", "LICENSE", "dist/index.js", "dist/index.js.map"];
  const manifest = { name: "@svc/hal", version: "0.0.0", main: "./dist/index.js" };
  const map = (fields: object) => () => JSON.stringify({ version: 3, mappings: "", ...fields });
  it.each([
    ["naming ../src/index.ts, which does not ship", base, { sources: ["../src/index.ts"] }, 1],
    ["naming ../src/index.ts, shipped", [...base, "src/index.ts"], { sources: ["../src/index.ts"] }, 0],
    [
      "naming ../src/index.ts, its text embedded (sourcesContent)",
      base,
      { sources: ["../src/index.ts"], sourcesContent: ["export {};"] },
      0,
    ],
    [
      "naming two sources, one embedded, one missing",
      base,
      { sources: ["../src/a.ts", "../src/b.ts"], sourcesContent: ["export {};", null] },
      1,
    ],
  ])("a map %s → %i problem(s)", (_, shipped, fields, count) => {
    const problems = packageProblems(manifest, shipped, map(fields));
    expect(problems).toHaveLength(count);
    if (count > 0)
      expect(problems[0]).toMatch(
        /^dist\/index\.js\.map names sources that are not in the tarball \(\.\.\/src\//,
      );
  });
});

describe("builtins by the node: scheme (workerd and Deno resolve no bare builtin)", () => {
  it.each([
    ['import { createHash } from "crypto";', ["crypto"]],
    ['import { setTimeout } from "timers/promises";', ["timers/promises"]],
    ['const zlib = require("zlib");', ["zlib"]],
    ['const { gzip } = await import("zlib");', ["zlib"]],
    ['import { createHash } from "node:crypto"; const z = require("node:zlib");', []],
    ['import { SaxesParser } from "saxes"; import { jwtVerify } from "jose";', []],
    ['import x from "@svc/kernel"; import y from "crypto-js";', []],
    ['const text = "from crypto";', []],
  ])("%s → %j", (text, bare) => {
    expect(bareBuiltins(text)).toEqual(bare);
  });

  it("a shipped script loading a bare builtin is a problem; .d.ts files are not scripts", () => {
    const manifest = { name: "@svc/x", version: "0.0.0", main: "dist/index.js" };
    const shipped = ["package.json", "README.md", "LICENSE", "dist/index.js", "dist/index.d.ts"];
    const files: Record<string, string> = {
      "dist/index.js": 'import { createHash } from "crypto";',
      "dist/index.d.ts": 'import type { Hash } from "crypto";',
    };
    expect(packageProblems(manifest, shipped, (file) => files[file] ?? "")).toEqual([
      'dist/index.js loads "crypto" without the node: scheme, which workerd and Deno require: build with removeNodeProtocol: false',
    ]);
  });
});
