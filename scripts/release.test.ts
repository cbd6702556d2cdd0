import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gitEnv, gitIn, json, writeIn } from "./fake-repo.js";
import { provenanceCI } from "./release.mjs";
import { lastRelease } from "./release-guard.mjs";

/**
 * The release record (releases.json, scripts/release-record.mjs) and the checks of
 * scripts/release.mjs on throw-away repositories shaped like this one: `@fake/kernel` and
 * `@fake/app` versioned 0.1.0 in a version commit, the release recorded in the commit after it,
 * then more work on main. No tag anywhere, as in a fresh clone of a repository whose tags were
 * never pushed. Publishing itself runs in the registry suite (npm run test:registry).
 */
const scripts = import.meta.dirname;
const dirs: string[] = [];
let template: string;
let versionCommit: string;

const names = ["@fake/kernel", "@fake/app"];
// No user config of the machine running the tests: only the repository's own settings count.
const env = { ...gitEnv, npm_config_userconfig: join(tmpdir(), "svc-release-test-no-npmrc") };

function run(root: string, script: string, args: string[] = [], extraEnv: Record<string, string> = {}) {
  const r = spawnSync("node", [join(scripts, script), "--root", root, ...args], {
    encoding: "utf8",
    env: { ...env, ...extraEnv },
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

function manifest(name: string, version: string) {
  return json({ name, version, type: "module", files: ["dist", "CHANGELOG.md"] });
}

beforeAll(() => {
  template = mkdtempSync(join(tmpdir(), "svc-release-"));
  dirs.push(template);
  const git = (...args: string[]) => gitIn(template, ...args);
  const write = (path: string, text: string) => writeIn(template, path, text);
  git("init", "-q", "-b", "main");
  write("package.json", json({ name: "fake", private: true, workspaces: ["packages/*"] }));
  write(".gitignore", "node_modules/\ndist/\n.npmrc\n");
  write(".changeset/config.json", json({ baseBranch: "main" }));
  write(".changeset/README.md", "# Changesets\n");
  for (const dir of ["kernel", "app"]) {
    write(`packages/${dir}/package.json`, manifest(`@fake/${dir}`, "0.0.0"));
    write(`packages/${dir}/src/index.ts`, "export const x = 1;\n");
  }
  git("add", "-A");
  git("commit", "-q", "-m", "before the first release");
  for (const dir of ["kernel", "app"]) {
    write(`packages/${dir}/package.json`, manifest(`@fake/${dir}`, "0.1.0"));
    write(`packages/${dir}/CHANGELOG.md`, `# @fake/${dir}\n\n## 0.1.0\n\n- First release.\n`);
  }
  git("add", "-A");
  git("commit", "-q", "-m", "Version packages");
  versionCommit = git("rev-parse", "HEAD");
  write(
    "releases.json",
    json({ "@fake/app": { "0.1.0": versionCommit }, "@fake/kernel": { "0.1.0": versionCommit } }),
  );
  git("add", "-A");
  git("commit", "-q", "-m", "Release record");
  write("packages/kernel/src/index.ts", "export const x = 2;\n");
  git("add", "-A");
  git("commit", "-q", "-m", "work after the release");
}, 60_000);

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A clone of the template (which has no tags), `edit`ed and committed when it changed anything. */
function clone(edit: (root: string) => void = () => {}) {
  const root = mkdtempSync(join(tmpdir(), "svc-release-clone-"));
  dirs.push(root);
  gitIn(tmpdir(), "clone", "-q", template, root);
  edit(root);
  if (gitIn(root, "status", "--porcelain") !== "") {
    gitIn(root, "add", "-A");
    gitIn(root, "commit", "-q", "-m", "edit");
  }
  return root;
}

const editRecord = (root: string, change: (record: Record<string, Record<string, string>>) => void) => {
  const record = JSON.parse(readFileSync(join(root, "releases.json"), "utf8"));
  change(record);
  writeFileSync(join(root, "releases.json"), json(record));
};

describe("the release record in a clone without tags", () => {
  it("release:tags → makes each recorded tag on its commit, annotated and dated as the commit; again → nothing to make", () => {
    const root = clone();
    expect(gitIn(root, "tag")).toBe("");
    const r = run(root, "release-record.mjs", ["--tags"]);
    expect(r.output).toContain("record: made 2 tags from releases.json: @fake/app@0.1.0, @fake/kernel@0.1.0");
    expect(r.status).toBe(0);
    for (const tag of ["@fake/app@0.1.0", "@fake/kernel@0.1.0"]) {
      expect(gitIn(root, "rev-parse", `${tag}^{commit}`)).toBe(versionCommit);
      expect(gitIn(root, "cat-file", "-t", tag)).toBe("tag");
      expect(gitIn(root, "for-each-ref", "--format=%(creatordate:iso-strict)", `refs/tags/${tag}`)).toBe(
        gitIn(root, "show", "-s", "--format=%cI", versionCommit),
      );
    }
    expect(run(root, "release-record.mjs", ["--tags"]).output).toContain(
      "record: all 2 recorded releases are tagged here",
    );
  }, 60_000);

  it("then `git switch --detach @fake/kernel@0.1.0` and release --dry-run → HEAD is the version commit", () => {
    const root = clone();
    expect(run(root, "release-record.mjs", ["--tags"]).status).toBe(0);
    gitIn(root, "switch", "-q", "--detach", "@fake/kernel@0.1.0");
    const r = run(root, "release.mjs", ["--dry-run"]);
    expect(r.output).toContain("release: HEAD is the version commit");
    expect(r.status).toBe(0);
  }, 60_000);

  it("main, after the release, without tags → release --dry-run finds 0.1.0 released in the record", () => {
    const r = run(clone(), "release.mjs", ["--dry-run"]);
    expect(r.output).toContain(
      "release: HEAD is the version commit; publishing to https://registry.npmjs.org/",
    );
    expect(r.status).toBe(0);
  }, 60_000);

  it("a version neither recorded nor made by HEAD → release refuses: HEAD is not the version commit", () => {
    const root = clone((dir) => {
      writeIn(dir, "packages/app/package.json", manifest("@fake/app", "0.1.1"));
      writeIn(dir, "packages/app/CHANGELOG.md", "# @fake/app\n\n## 0.1.1\n\n- A fix.\n\n## 0.1.0\n");
    });
    gitIn(root, "commit", "-q", "--allow-empty", "-m", "more work");
    const r = run(root, "release.mjs", ["--dry-run"]);
    expect(r.status).toBe(1);
    expect(r.output).toContain(
      "release: @fake/app@0.1.1 is neither tagged nor in releases.json, and HEAD did not version it (HEAD does not change packages/app/package.json): HEAD is not the version commit",
    );
  }, 60_000);

  it.each([
    [
      "a version the recorded commit does not give",
      (r: Record<string, Record<string, string>>) => {
        r["@fake/app"] = { "0.2.0": versionCommit };
      },
      /@fake\/app@0\.2\.0: commit \w{12} gives @fake\/app 0\.1\.0, not 0\.2\.0/,
    ],
    [
      "a short hash",
      (r: Record<string, Record<string, string>>) => {
        r["@fake/app"] = { "0.1.0": versionCommit.slice(0, 7) };
      },
      /@fake\/app@0\.1\.0: "\w{7}" is not a full commit hash/,
    ],
    [
      "a commit not in the history",
      (r: Record<string, Record<string, string>>) => {
        r["@fake/app"] = { "0.1.0": "0".repeat(40) };
      },
      /@fake\/app@0\.1\.0: commit 0{40} is not in this clone's history/,
    ],
    [
      "a package that is not published here",
      (r: Record<string, Record<string, string>>) => {
        r["@fake/gone"] = { "0.1.0": versionCommit };
      },
      /@fake\/gone@0\.1\.0: @fake\/gone is not a published package here/,
    ],
  ])(
    "%s → release-record, release and the release guard refuse it",
    (_, change, message) => {
      const root = clone((dir) => editRecord(dir, change));
      for (const [script, args] of [
        ["release-record.mjs", ["--tags"]],
        ["release.mjs", ["--dry-run"]],
        ["release-guard.mjs", ["--no-pack"]],
      ] as const) {
        const r = run(root, script, [...args]);
        expect(r.status, `${script}: ${r.output}`).toBe(1);
        expect(r.output).toMatch(message);
      }
      expect(gitIn(root, "tag")).toBe("");
    },
    120_000,
  );

  it("a tag of a recorded release on another commit → refused, naming both", () => {
    const root = clone();
    gitIn(root, "tag", "-a", "@fake/kernel@0.1.0", "-m", "@fake/kernel@0.1.0", "HEAD");
    const r = run(root, "release-record.mjs", ["--tags"]);
    expect(r.status).toBe(1);
    expect(r.output).toMatch(
      /@fake\/kernel@0\.1\.0 is recorded on \w{12}, but the tag @fake\/kernel@0\.1\.0 names \w{12}/,
    );
  }, 60_000);

  it("the last release (the guards' base) is the recorded commit, not a newer unreleased version commit", () => {
    const root = clone((dir) => {
      writeIn(dir, "packages/app/package.json", manifest("@fake/app", "0.1.1"));
    });
    expect(lastRelease(root, names)).toEqual({
      ref: versionCommit,
      why: "the release record (releases.json): @fake/app@0.1.0",
    });
    expect(run(root, "release-record.mjs", ["--tags"]).status).toBe(0);
    expect(lastRelease(root, names)).toEqual({ ref: versionCommit, why: "the release tag @fake/app@0.1.0" });
  }, 60_000);
});

describe("where release publishes", () => {
  it("a .npmrc (ignored, as a rehearsal leaves it) sends the scope elsewhere → refused, naming the registry", () => {
    const root = clone();
    writeFileSync(join(root, ".npmrc"), "@fake:registry=http://127.0.0.1:9/\n");
    expect(gitIn(root, "status", "--porcelain")).toBe("");
    const r = run(root, "release.mjs", ["--dry-run"]);
    expect(r.status).toBe(1);
    expect(r.output).toContain(
      "release: npm would publish @fake/* to http://127.0.0.1:9/, not the npm registry (a .npmrc or npm_config_* setting): remove that setting, or pass --registry http://127.0.0.1:9/ to publish there",
    );
  }, 60_000);

  it("the same with --registry naming it → passes, without provenance even on GitHub Actions with id-token", () => {
    const root = clone();
    writeFileSync(join(root, ".npmrc"), "@fake:registry=http://127.0.0.1:9/\n");
    const r = run(root, "release.mjs", ["--dry-run", "--registry", "http://127.0.0.1:9"], {
      GITHUB_ACTIONS: "true",
      ACTIONS_ID_TOKEN_REQUEST_URL: "http://127.0.0.1:9/token",
    });
    expect(r.output).toContain("publishing to http://127.0.0.1:9/ without provenance");
    expect(r.status).toBe(0);
  }, 60_000);

  it("--registry naming another registry than npm would use → refused", () => {
    const r = run(clone(), "release.mjs", ["--dry-run", "--registry", "http://127.0.0.1:9/"]);
    expect(r.status).toBe(1);
    expect(r.output).toContain(
      "release: --registry http://127.0.0.1:9/, but npm would publish @fake/* to https://registry.npmjs.org/",
    );
  }, 60_000);

  it("to npm on GitHub Actions with id-token: write → with provenance", () => {
    const r = run(clone(), "release.mjs", ["--dry-run"], {
      GITHUB_ACTIONS: "true",
      ACTIONS_ID_TOKEN_REQUEST_URL: "http://127.0.0.1:9/token",
    });
    expect(r.output).toContain("publishing to https://registry.npmjs.org/ with provenance (GitHub Actions)");
    expect(r.status).toBe(0);
  }, 60_000);

  it.each([
    [{ GITHUB_ACTIONS: "true", ACTIONS_ID_TOKEN_REQUEST_URL: "https://token" }, "GitHub Actions"],
    [{ GITHUB_ACTIONS: "true" }, undefined], // no id-token: write permission
    [{ GITLAB_CI: "true", SIGSTORE_ID_TOKEN: "eyJ" }, "GitLab CI"],
    [{ GITLAB_CI: "true" }, undefined], // no sigstore id token
    [{ CI: "true", CIRCLECI: "true" }, undefined],
    [{}, undefined],
  ])("provenanceCI(%j) → %s", (vars, ci) => {
    expect(provenanceCI(vars)).toBe(ci);
  });
});

describe("the version step, then release (RELEASING.md steps 3 to 6)", () => {
  /**
   * A clone where `@fake/otel`, never released (0.0.0, no CHANGELOG.md), has a pending minor, and
   * an unrelated file `notes.txt` is left untracked; then the version step, and the commit command
   * it prints, run as a maintainer runs them.
   */
  function versionFirstRelease() {
    const root = clone((dir) => {
      writeIn(dir, "packages/otel/package.json", manifest("@fake/otel", "0.0.0"));
      writeIn(dir, "packages/otel/src/index.ts", "export const otel = 1;\n");
      writeIn(dir, ".changeset/otel-first.md", '---\n"@fake/otel": minor\n---\n\nFirst release.\n');
    });
    writeFileSync(join(root, "notes.txt"), "not for the release\n");
    const v = run(root, "version-packages.mjs", ["--no-install", "--no-build"]);
    expect(v.status, v.output).toBe(0);
    const staged = gitIn(root, "diff", "--cached", "--name-status").split("\n");
    const command = /^ {2}git commit (.+?) "Version packages"/m.exec(v.output);
    expect(command, v.output).not.toBeNull();
    gitIn(root, "commit", "-q", ...(command?.[1].split(" ") ?? []), "Version packages");
    return { root, version: v.output, staged };
  }

  it("a package's first release: the version step stages its new CHANGELOG.md, its commit command makes the version commit, release --dry-run passes", () => {
    const { root, version, staged } = versionFirstRelease();
    expect(staged).toEqual([
      "D\t.changeset/otel-first.md",
      "A\tpackages/otel/CHANGELOG.md",
      "M\tpackages/otel/package.json",
    ]);
    expect(version).toContain("version: staged the 3 files it wrote or deleted");
    expect(version).not.toContain("commit -am");
    expect(gitIn(root, "show", "HEAD:packages/otel/CHANGELOG.md")).toContain("## 0.1.0");
    // The unrelated file stays out of the version commit; once it is gone, the release is ready.
    expect(gitIn(root, "status", "--porcelain")).toBe("?? notes.txt");
    rmSync(join(root, "notes.txt"));
    const r = run(root, "release.mjs", ["--dry-run"]);
    expect(r.output).toContain("release: HEAD is the version commit");
    expect(r.status).toBe(0);
  }, 60_000);

  it("a working tree that differs from HEAD → release refuses, naming each file, and never says stash", () => {
    const { root } = versionFirstRelease();
    writeFileSync(join(root, "packages/otel/CHANGELOG.md"), "# @fake/otel\n\n## 0.1.0\n\n- Edited.\n");
    const r = run(root, "release.mjs", ["--dry-run"]);
    expect(r.status).toBe(1);
    expect(r.output).toContain("the working tree differs from HEAD");
    expect(r.output).toContain("\n     M packages/otel/CHANGELOG.md\n");
    expect(r.output).toContain("\n    ?? notes.txt\n");
    expect(r.output).not.toMatch(/stash/i);
  }, 60_000);

  it("a pending changeset → release refuses, naming it", () => {
    const root = clone((dir) =>
      writeIn(dir, ".changeset/app-fix.md", '---\n"@fake/app": patch\n---\n\nA fix.\n'),
    );
    const r = run(root, "release.mjs", ["--dry-run"]);
    expect(r.status).toBe(1);
    expect(r.output).toContain("1 changesets are pending (.changeset/app-fix.md)");
  }, 60_000);
});
