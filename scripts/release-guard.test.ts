import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gitEnv, gitIn, json, writeIn } from "./fake-repo.js";
// The guard is a plain .mjs script: CI runs it with node, without a build step.
import { kernelProblems, neededBump, pendingBumps } from "./release-guard.mjs";

/**
 * The guards of scripts/release-guard.mjs and scripts/api-report.mjs on a throw-away repository
 * shaped like this one (a kernel and a package that depends on it, released once and tagged),
 * with git, the changesets CLI and API Extractor for real.
 */
const scripts = import.meta.dirname;
const realConfig = readFileSync(resolve(scripts, "../.changeset/config.json"), "utf8");
let repo: string;

const env = gitEnv;
const git = (...args: string[]) => gitIn(repo, ...args);
const write = (path: string, text: string) => writeIn(repo, path, text);
function run(script: string, ...args: string[]) {
  const r = spawnSync("node", [join(scripts, script), "--root", repo, ...args], { encoding: "utf8", env });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}
const guard = () => run("release-guard.mjs", "--no-pack");

const KERNEL_DTS = `export declare class HttpError extends Error {
    readonly status: number;
    constructor(status: number, message?: string);
}
export declare function isHttpError(value: unknown): value is HttpError;
`;

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "svc-guard-"));
  git("init", "-q", "-b", "main");
  write(
    "package.json",
    json({ name: "fake", private: true, workspaces: ["packages/*"], svc: { kernels: ["@fake/kernel"] } }),
  );
  write(".changeset/config.json", realConfig);
  write(
    "packages/kernel/package.json",
    json({
      name: "@fake/kernel",
      version: "0.1.0",
      type: "module",
      exports: { ".": { import: { types: "./dist/index.d.ts", default: "./dist/index.js" } } },
      files: ["dist", "CHANGELOG.md"],
    }),
  );
  write("packages/kernel/src/index.ts", "export class HttpError extends Error {}\n");
  write("packages/kernel/dist/index.d.ts", KERNEL_DTS);
  write(
    "packages/app/package.json",
    json({
      name: "@fake/app",
      version: "0.1.0",
      peerDependencies: { "@fake/kernel": "^0.1.0" },
      devDependencies: { "@fake/kernel": "^0.1.0" },
    }),
  );
  write("packages/app/src/index.ts", "export const app = 1;\n");
  expect(run("api-report.mjs", "--update").status).toBe(0);
  git("add", "-A");
  git("commit", "-q", "-m", "release");
  git("tag", "@fake/kernel@0.1.0");
  git("tag", "@fake/app@0.1.0");
}, 120_000);

afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe("release guard on a repository released once", () => {
  it("nothing changed since the release tag → passes, naming the tag as base", () => {
    const r = guard();
    expect(r.output).toContain("the release tag @fake/");
    expect(r.status).toBe(0);
  }, 60_000);

  it("a test file changed without a changeset → passes (tests do not ship)", () => {
    write("packages/kernel/src/index.test.ts", "// a test\n");
    git("add", "-A");
    git("commit", "-q", "-m", "test");
    expect(guard().status).toBe(0);
  }, 60_000);

  it("an API report out of date with the declarations → api:check fails naming the package and the command", () => {
    write("packages/kernel/dist/index.d.ts", KERNEL_DTS.replace("message?: string", "message: string"));
    const r = run("api-report.mjs", "--check");
    expect(r.status).toBe(1);
    expect(r.output).toContain(
      "@fake/kernel index: the public API differs from packages/kernel/api/index.api.md",
    );
    expect(r.output).toContain("npm run api:update -- @fake/kernel");
  }, 60_000);

  it("a breaking API change (report updated) with no changeset → fails: changeset status naming the file, and the bump", () => {
    write(
      "packages/kernel/src/index.ts",
      "export class HttpError extends Error { constructor(m: string) { super(m); } }\n",
    );
    expect(run("api-report.mjs", "--update").status).toBe(0);
    git("add", "-A");
    git("commit", "-q", "-m", "a deliberate API change");
    const r = guard();
    expect(r.status).toBe(1);
    expect(r.output).toContain("guard: changesets: changeset status");
    // The files that need the changeset, named: the shipped source, not its API report.
    expect(r.output).toContain(
      "Changed since the base, without a pending changeset:\n  @fake/kernel: packages/kernel/src/index.ts\n",
    );
    expect(r.output).toMatch(
      /@fake\/kernel: its public API changed since the base .*1 line\(s\) removed or changed/,
    );
    expect(r.output).toContain(
      "needs a minor bump at 0.1.0 (a breaking change); the pending changesets give it none",
    );
  }, 60_000);

  it("the same change with a patch changeset → still fails: below 1.0.0 a breaking change is a minor", () => {
    write(".changeset/kernel-message.md", '---\n"@fake/kernel": patch\n---\n\nmessage is required.\n');
    git("add", "-A");
    git("commit", "-q", "-m", "a patch changeset");
    const r = guard();
    expect(r.status).toBe(1);
    expect(r.output).toContain("guard: changesets ok");
    expect(r.output).toContain("the pending changesets give it patch");
  }, 60_000);

  it("the same change with a minor changeset → passes", () => {
    write(".changeset/kernel-message.md", '---\n"@fake/kernel": minor\n---\n\nmessage is required.\n');
    git("add", "-A");
    git("commit", "-q", "-m", "a minor changeset");
    expect(guard().status).toBe(0);
  }, 60_000);

  it("a kernel in dependencies instead of peerDependencies → fails, naming the rule", () => {
    const path = "packages/app/package.json";
    const before = readFileSync(join(repo, path), "utf8");
    write(path, json({ name: "@fake/app", version: "0.1.0", dependencies: { "@fake/kernel": "^0.1.0" } }));
    const r = guard();
    write(path, before);
    expect(r.status).toBe(1);
    expect(r.output).toContain("@fake/app: @fake/kernel is a kernel, so it is a peer dependency");
  }, 60_000);

  it("an unbuilt package → npm pack stops in prepack (check-package.mjs), the tarball guard names the entry point", () => {
    unlinkSync(join(repo, "packages/kernel/dist/index.d.ts"));
    const prepack = spawnSync("node", [join(scripts, "check-package.mjs")], {
      cwd: join(repo, "packages/kernel"),
      encoding: "utf8",
    });
    expect(prepack.status).toBe(1);
    expect(prepack.stderr).toMatch(
      /@fake\/kernel: not packed, dist\/index\.d\.ts, dist\/index\.js missing: build it first/,
    );
    const r = run("release-guard.mjs");
    expect(r.status).toBe(1);
    expect(r.output).toContain(
      "@fake/kernel: dist/index.js (named by package.json) is not in the tarball: build first",
    );
    expect(r.output).toContain("@fake/kernel: CHANGELOG.md is not in the tarball of version 0.1.0");
  }, 60_000);
});

describe("neededBump", () => {
  const report = "export function a(): void;\nexport function b(): void;\n";
  it.each([
    { change: "unchanged", after: report, version: "0.3.0", bump: "none" },
    {
      change: "a line added",
      after: `${report}export function c(): void;\n`,
      version: "0.3.0",
      bump: "patch",
    },
    { change: "a line removed", after: "export function a(): void;\n", version: "0.3.0", bump: "minor" },
    {
      change: "a line changed",
      after: report.replace("b()", "b(x: string)"),
      version: "0.3.0",
      bump: "minor",
    },
    {
      change: "a line added",
      after: `${report}export function c(): void;\n`,
      version: "1.2.0",
      bump: "minor",
    },
    { change: "a line removed", after: "export function a(): void;\n", version: "1.2.0", bump: "major" },
    { change: "only a comment changed", after: `// note\n${report}`, version: "1.2.0", bump: "none" },
  ])("$change at $version → $bump", ({ after, version, bump }) => {
    expect(neededBump(report, after, version).bump).toBe(bump);
  });
});

describe("pendingBumps and kernelProblems", () => {
  it("the highest bump of every changeset per package", () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-bumps-"));
    mkdirSync(join(dir, ".changeset"));
    writeFileSync(join(dir, ".changeset/a.md"), "---\n\"@svc/a\": patch\n'@svc/b': minor\n---\n\ntext\n");
    writeFileSync(join(dir, ".changeset/b.md"), '---\n"@svc/a": major\n---\n\ntext\n');
    writeFileSync(join(dir, ".changeset/README.md"), "# not a changeset\n");
    expect(Object.fromEntries(pendingBumps(dir))).toEqual({ "@svc/a": "major", "@svc/b": "minor" });
    rmSync(dir, { recursive: true, force: true });
  });

  const kernel = { manifest: { name: "@svc/k", version: "0.2.0" } };
  const dependent = (fields: object) => ({ manifest: { name: "@svc/d", version: "0.1.0", ...fields } });
  it.each([
    [
      "a peer and a devDependency",
      { peerDependencies: { "@svc/k": "^0.2.0" }, devDependencies: { "@svc/k": "^0.2.0" } },
      0,
    ],
    ["in dependencies", { dependencies: { "@svc/k": "^0.2.0" } }, 1],
    [
      "an optional peer",
      {
        peerDependencies: { "@svc/k": "^0.2.0" },
        peerDependenciesMeta: { "@svc/k": { optional: true } },
        devDependencies: { "@svc/k": "^0.2.0" },
      },
      1,
    ],
    [
      "a peer range that leaves the kernel out",
      { peerDependencies: { "@svc/k": "^0.1.0" }, devDependencies: { "@svc/k": "*" } },
      1,
    ],
  ])("kernel %s → %i problem(s)", (_, fields, count) => {
    expect(kernelProblems({ svc: { kernels: ["@svc/k"] } }, [kernel, dependent(fields)])).toHaveLength(count);
  });
});
