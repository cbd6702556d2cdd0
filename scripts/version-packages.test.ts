import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gitIn, json, writeIn } from "./fake-repo.js";
import { releaseBase } from "./release-guard.mjs";
// A plain .mjs script: the release runs it with node, without a build step.
import { kernelPeerRanges, reportedExports } from "./version-packages.mjs";

/**
 * The kernel rule of scripts/version-packages.mjs on throw-away repositories shaped like this
 * one: `@fake/kernel` (entries `.` and `./fastify`) released at 0.1.0 and tagged, then, on main,
 * new exports in its API reports (`problem`, `Problem`, `fastifyView`); `@fake/app` peers on it
 * with `^0.1.0`. Each case clones that repository, changes the app's source and the pending
 * changesets, commits, and runs the rule with git for real.
 */
let template: string;
const clones: string[] = [];

const git = gitIn;
const write = writeIn;
const read = (root: string, path: string) => JSON.parse(readFileSync(join(root, path), "utf8"));

// API reports as scripts/api-report.mjs writes them: forgotten exports without `export`.
const INDEX_REPORT = `## API Report File for "@fake/kernel"

\`\`\`ts

// @public
export declare class HttpError extends Error {
    constructor(status: number, message?: string);
}

// @public
export function isHttpError(value: unknown): value is HttpError;

\`\`\`
`;
const FASTIFY_REPORT = `## API Report File for "@fake/kernel"

\`\`\`ts

// @public
interface RequestView {
    url: string;
}

// Warning: (ae-forgotten-export) The symbol "RequestView" needs to be exported by the entry point fastify.d.ts
//
// @public
export function fastifyGate(view: RequestView): void;

\`\`\`
`;
const NEW_INDEX_REPORT = INDEX_REPORT.replace(
  "// @public\nexport function isHttpError",
  "// @public\nexport interface Problem {\n    type: string;\n}\n\n// @public\nexport function problem(status: number): Problem;\n\n// @public\nexport function isHttpError",
);
const NEW_FASTIFY_REPORT = FASTIFY_REPORT.replace(
  "\n```\n",
  "// @public\nexport function fastifyView(request: unknown): RequestView;\n\n```\n",
);

beforeAll(() => {
  template = mkdtempSync(join(tmpdir(), "svc-version-"));
  git(template, "init", "-q", "-b", "main");
  write(
    template,
    "package.json",
    json({ name: "fake", private: true, workspaces: ["packages/*"], svc: { kernels: ["@fake/kernel"] } }),
  );
  write(template, ".changeset/config.json", json({ baseBranch: "main" }));
  write(
    template,
    "packages/kernel/package.json",
    json({
      name: "@fake/kernel",
      version: "0.1.0",
      type: "module",
      exports: {
        ".": { import: { types: "./dist/index.d.ts", default: "./dist/index.js" } },
        "./fastify": { import: { types: "./dist/fastify.d.ts", default: "./dist/fastify.js" } },
        "./package.json": "./package.json",
      },
    }),
  );
  write(template, "packages/kernel/api/index.api.md", INDEX_REPORT);
  write(template, "packages/kernel/api/fastify.api.md", FASTIFY_REPORT);
  write(
    template,
    "packages/app/package.json",
    json({
      name: "@fake/app",
      version: "0.1.0",
      type: "module",
      peerDependencies: { "@fake/kernel": "^0.1.0" },
      devDependencies: { "@fake/kernel": "^0.1.0" },
    }),
  );
  write(template, "packages/app/src/index.ts", 'import { isHttpError } from "@fake/kernel";\n');
  git(template, "add", "-A");
  git(template, "commit", "-q", "-m", "Version packages");
  git(template, "tag", "@fake/kernel@0.1.0");
  git(template, "tag", "@fake/app@0.1.0");
  // Since the release, on main: new exports, a patch of the kernel below 1.0.0.
  write(template, "packages/kernel/api/index.api.md", NEW_INDEX_REPORT);
  write(template, "packages/kernel/api/fastify.api.md", NEW_FASTIFY_REPORT);
  git(template, "add", "-A");
  git(template, "commit", "-q", "-m", "kernel: problem() and fastifyView()");
});

afterAll(() => {
  for (const dir of [template, ...clones]) rmSync(dir, { recursive: true, force: true });
});

/**
 * A clone of the template (its main becomes origin/main, so the commit below puts HEAD on a
 * branch ahead of it, as the guard sees a pull request), with `files` written and committed,
 * then the kernel rule run on it.
 */
function versionWith(files: Record<string, string>, { tags = true } = {}) {
  const root = mkdtempSync(join(tmpdir(), "svc-version-clone-"));
  clones.push(root);
  git(tmpdir(), "clone", "-q", ...(tags ? [] : ["--no-tags"]), template, root);
  for (const [path, text] of Object.entries(files)) write(root, path, text);
  git(root, "add", "-A");
  git(root, "commit", "-q", "--allow-empty", "-m", "since the release");
  const moved = kernelPeerRanges(root);
  const changesets = Object.fromEntries(
    readdirSync(join(root, ".changeset"))
      .filter((f) => f.endsWith(".md") && !Object.keys(files).includes(`.changeset/${f}`))
      .map((f) => [f, readFileSync(join(root, ".changeset", f), "utf8")]),
  );
  const app = read(root, "packages/app/package.json");
  return {
    root,
    moved,
    changesets,
    peer: app.peerDependencies["@fake/kernel"],
    dev: app.devDependencies["@fake/kernel"],
  };
}

const kernelPatch = { ".changeset/kernel-fix.md": '---\n"@fake/kernel": patch\n---\n\nA fix.\n' };
const kernelMinor = { ".changeset/kernel-break.md": '---\n"@fake/kernel": minor\n---\n\nA change.\n' };
const appSource = (text: string) => ({ "packages/app/src/index.ts": text });

describe("the kernel rule: a dependent that imports a name new since the last release", () => {
  it("a new name of the main entry, kernel patch pending → peer and dev range ^0.1.1, a minor changeset naming it", () => {
    const r = versionWith({
      ...kernelPatch,
      ...appSource('import { isHttpError, problem } from "@fake/kernel";\nexport const p = problem(400);\n'),
    });
    expect(r.peer).toBe("^0.1.1");
    expect(r.dev).toBe("^0.1.1");
    expect(r.moved).toEqual([
      "@fake/app: peer @fake/kernel ^0.1.0 → ^0.1.1 (imports problem from @fake/kernel, new in 0.1.1)",
    ]);
    expect(r.changesets).toEqual({
      "fake-app-peer-fake-kernel-0.1.1.md":
        '---\n"@fake/app": minor\n---\n\nNeeds `@fake/kernel` ^0.1.1 (it imports `problem` from `@fake/kernel`, new in 0.1.1; a peer dependency: update it together with this package).\n',
    });
  });

  it("only names released at 0.1.0 → unchanged, no changeset", () => {
    const r = versionWith({
      ...kernelPatch,
      ...appSource(
        'import { HttpError, isHttpError } from "@fake/kernel";\nimport { fastifyGate } from "@fake/kernel/fastify";\n',
      ),
    });
    expect([r.peer, r.dev, r.moved, r.changesets]).toEqual(["^0.1.0", "^0.1.0", [], {}]);
  });

  it.each([
    ["import type", 'import type { Problem } from "@fake/kernel";\nexport type P = Problem;\n'],
    ["an inline type import", 'import { isHttpError, type Problem } from "@fake/kernel";\n'],
    ["a type re-export", 'export type { Problem as AppProblem } from "@fake/kernel";\n'],
    ["an import type node", 'export type P = import("@fake/kernel").Problem;\n'],
  ])("a new type, by %s → moved", (_, source) => {
    const r = versionWith({ ...kernelPatch, ...appSource(source) });
    expect([r.peer, r.dev]).toEqual(["^0.1.1", "^0.1.1"]);
    expect(Object.values(r.changesets)[0]).toContain(
      "it imports `Problem` from `@fake/kernel`, new in 0.1.1",
    );
  });

  it("a new name of a subpath entry (fastify.api.md ↔ @fake/kernel/fastify), over lines → moved", () => {
    const r = versionWith({
      ...kernelPatch,
      ...appSource(
        'import {\n  fastifyGate,\n  // the view\n  fastifyView,\n} from "@fake/kernel/fastify";\nexport { problem } from "@fake/kernel";\n',
      ),
    });
    expect(r.peer).toBe("^0.1.1");
    expect(Object.values(r.changesets)).toEqual([
      '---\n"@fake/app": minor\n---\n\nNeeds `@fake/kernel` ^0.1.1 (it imports `fastifyView` from `@fake/kernel/fastify` and `problem` from `@fake/kernel`, new in 0.1.1; a peer dependency: update it together with this package).\n',
    ]);
  });

  it.each([
    [
      "a namespace import using a new name",
      'import * as k from "@fake/kernel";\nk.problem(400);\n',
      "^0.1.1",
    ],
    [
      "a namespace import using old names",
      'import * as k from "@fake/kernel";\nk.isHttpError(1);\n',
      "^0.1.0",
    ],
    ["export * of an entry with new names", 'export * from "@fake/kernel/fastify";\n', "^0.1.1"],
    [
      "the new name in a comment or a string",
      '// problem from "@fake/kernel"\nexport const s = "fastifyView";\n',
      "^0.1.0",
    ],
    [
      "the new name imported from another package",
      'import { problem } from "@fake/kernel-extra";\n',
      "^0.1.0",
    ],
  ])("%s → %s", (_, source, range) => {
    expect(versionWith({ ...kernelPatch, ...appSource(source) }).peer).toBe(range);
  });

  it("a new name imported only by a test, a benchmark or a fixture → unchanged (they do not ship)", () => {
    const r = versionWith({
      ...kernelPatch,
      "packages/app/src/index.test.ts": 'import { problem } from "@fake/kernel";\n',
      "packages/app/src/index.bench.ts": 'import { problem } from "@fake/kernel";\n',
      "packages/app/src/__fixtures__/view.ts": 'import { fastifyView } from "@fake/kernel/fastify";\n',
    });
    expect([r.peer, r.moved]).toEqual(["^0.1.0", []]);
  });

  it("the kernel not being released (only the app has a changeset) → nothing moved", () => {
    const r = versionWith({
      ".changeset/app-fix.md": '---\n"@fake/app": patch\n---\n\nA fix.\n',
      ...appSource('import { problem } from "@fake/kernel";\n'),
    });
    expect([r.peer, r.dev, r.moved, r.changesets]).toEqual(["^0.1.0", "^0.1.0", [], {}]);
  });

  it("a kernel minor (outside ^0.1.0) with a new name imported → moved once, the out-of-range changeset alone", () => {
    const r = versionWith({ ...kernelMinor, ...appSource('import { problem } from "@fake/kernel";\n') });
    expect([r.peer, r.dev]).toEqual(["^0.2.0", "^0.2.0"]);
    expect(r.moved).toEqual(["@fake/app: peer @fake/kernel ^0.1.0 → ^0.2.0"]);
    expect(r.changesets).toEqual({
      "fake-app-peer-fake-kernel-0.2.0.md":
        '---\n"@fake/app": minor\n---\n\nNeeds `@fake/kernel` ^0.2.0 (a peer dependency: update it together with this package; npm refuses a second copy).\n',
    });
  });

  it("a higher bump already pending for the app (major) → its changeset keeps major", () => {
    const r = versionWith({
      ...kernelPatch,
      ".changeset/app-break.md": '---\n"@fake/app": major\n---\n\nA break.\n',
      ...appSource('import { problem } from "@fake/kernel";\n'),
    });
    expect(r.peer).toBe("^0.1.1");
    expect(Object.values(r.changesets)[0]).toMatch(/^---\n"@fake\/app": major\n---/);
  });

  it("a range that already starts at the next version → unchanged", () => {
    const r = versionWith({
      ...kernelPatch,
      ...appSource('import { problem } from "@fake/kernel";\n'),
      "packages/app/package.json": json({
        name: "@fake/app",
        version: "0.1.0",
        peerDependencies: { "@fake/kernel": "^0.1.1" },
        devDependencies: { "@fake/kernel": "^0.1.1" },
      }),
    });
    expect([r.peer, r.moved]).toEqual(["^0.1.1", []]);
  });

  it("compares with the release tag, not the merge base with origin/main the guard takes on a branch", () => {
    const r = versionWith({ ...kernelPatch, ...appSource('import { problem } from "@fake/kernel";\n') });
    const released = git(r.root, "rev-list", "-n", "1", "@fake/kernel@0.1.0");
    expect(releaseBase(r.root, ["@fake/kernel", "@fake/app"]).ref).not.toBe(released);
    expect(r.peer).toBe("^0.1.1");
  });

  it("a clone without the tags → the version commit is the base: moved the same", () => {
    const r = versionWith(
      { ...kernelPatch, ...appSource('import { fastifyView } from "@fake/kernel/fastify";\n') },
      { tags: false },
    );
    expect(git(r.root, "tag")).toBe("");
    expect(r.peer).toBe("^0.1.1");
  });

  it("a second kernel the first one's rule releases → its dependents move by the out-of-range rule", () => {
    // @fake/errors, a kernel too, imports the new name; @fake/app peers on it.
    const r = versionWith({
      ...kernelPatch,
      "package.json": json({
        name: "fake",
        private: true,
        workspaces: ["packages/*"],
        svc: { kernels: ["@fake/kernel", "@fake/errors"] },
      }),
      "packages/errors/package.json": json({
        name: "@fake/errors",
        version: "0.1.0",
        peerDependencies: { "@fake/kernel": "^0.1.0" },
        devDependencies: { "@fake/kernel": "^0.1.0" },
      }),
      "packages/errors/src/index.ts": 'export { problem } from "@fake/kernel";\n',
      "packages/app/package.json": json({
        name: "@fake/app",
        version: "0.1.0",
        peerDependencies: { "@fake/kernel": "^0.1.0", "@fake/errors": "^0.1.0" },
        devDependencies: { "@fake/kernel": "^0.1.0", "@fake/errors": "^0.1.0" },
      }),
    });
    expect(r.moved).toEqual([
      "@fake/errors: peer @fake/kernel ^0.1.0 → ^0.1.1 (imports problem from @fake/kernel, new in 0.1.1)",
      "@fake/app: peer @fake/errors ^0.1.0 → ^0.2.0",
    ]);
    expect(read(r.root, "packages/app/package.json").peerDependencies).toEqual({
      "@fake/kernel": "^0.1.0",
      "@fake/errors": "^0.2.0",
    });
  });

  it("no git history → says the rule needs it", () => {
    const root = mkdtempSync(join(tmpdir(), "svc-version-nogit-"));
    clones.push(root);
    execFileSync("cp", ["-R", `${template}/.`, root]);
    rmSync(join(root, ".git"), { recursive: true, force: true });
    write(root, ".changeset/kernel-fix.md", kernelPatch[".changeset/kernel-fix.md"]);
    expect(existsSync(join(root, ".git"))).toBe(false);
    expect(() => kernelPeerRanges(root)).toThrow(/needs the git history/);
  });
});

describe("--dry-run: RELEASING.md step 2 shows what step 3 makes", () => {
  const script = resolve(import.meta.dirname, "version-packages.mjs");
  const versionsOf = (root: string) =>
    Object.fromEntries(
      ["kernel", "app"].map((dir) => {
        const manifest = read(root, `packages/${dir}/package.json`);
        return [manifest.name, manifest.version];
      }),
    );

  /** A clone of the template with `files` written, committed or left in the working tree. */
  function cloneWith(files: Record<string, string>, { commit }: { commit: boolean }) {
    const root = mkdtempSync(join(tmpdir(), "svc-version-dry-"));
    clones.push(root);
    git(tmpdir(), "clone", "-q", template, root);
    for (const [path, text] of Object.entries(files)) write(root, path, text);
    if (commit) {
      git(root, "add", "-A");
      git(root, "commit", "-q", "-m", "since the release");
    }
    return root;
  }

  /** `{ name: version }` from the dry run's `version: <name> <from> → <to>` lines. */
  function dryRunVersions(root: string) {
    const r = spawnSync("node", [script, "--root", root, "--dry-run"], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    return Object.fromEntries(
      [...r.stdout.matchAll(/^version: (@\S+) (\S+)(?: → (\S+)| \(unchanged\))$/gm)].map((m) => [
        m[1],
        m[3] ?? m[2],
      ]),
    );
  }

  it.each([
    [
      "a kernel patch, the app importing a name new since 0.1.0",
      { ...kernelPatch, ...appSource('import { problem } from "@fake/kernel";\n') },
    ],
    ["a kernel minor, outside the app's peer range", kernelMinor],
    ["an app patch alone", { ".changeset/app-fix.md": '---\n"@fake/app": patch\n---\n\nA fix.\n' }],
  ])(
    "%s → the dry run names the versions the real run makes, and writes nothing",
    (_, files) => {
      for (const commit of [true, false]) {
        const root = cloneWith(files, { commit });
        const status = git(root, "status", "--porcelain");
        const predicted = dryRunVersions(root);
        expect(git(root, "status", "--porcelain")).toBe(status);
        execFileSync("node", [script, "--root", root, "--no-install"], { stdio: "ignore" });
        expect(predicted).toEqual(versionsOf(root));
      }
    },
    60_000,
  );

  it("a kernel minor: changeset status predicts 1.0.0 for the app, the dry run 0.2.0 as the real run", () => {
    const root = cloneWith(kernelMinor, { commit: true });
    const out = join(root, "status.json");
    execFileSync(
      "node",
      [resolve(import.meta.dirname, "../node_modules/@changesets/cli/bin.js"), "status", `--output=${out}`],
      {
        cwd: root,
        stdio: "ignore",
      },
    );
    const status = JSON.parse(readFileSync(out, "utf8")) as {
      releases: { name: string; newVersion: string }[];
    };
    rmSync(out);
    expect(status.releases.find((r) => r.name === "@fake/app")?.newVersion).toBe("1.0.0");
    expect(dryRunVersions(root)).toEqual({ "@fake/kernel": "0.2.0", "@fake/app": "0.2.0" });
  }, 60_000);
});

describe('the "Migrating from 0.1" section of each CHANGELOG entry (RELEASING.md step 3)', () => {
  const script = resolve(import.meta.dirname, "version-packages.mjs");
  const migration = '`import { problem } from "@fake/app"` → `from "@fake/app/express"`.';
  const files = {
    ".changeset/app-moved-export.md":
      '---\n"@fake/app": minor\n---\n\nThe Express middleware moved to `@fake/app/express`.\n\n' +
      `Migration: ${migration}\n`,
    ".changeset/app-new-option.md": '---\n"@fake/app": minor\n---\n\nA new option.\n',
    ".changeset/kernel-fix.md": '---\n"@fake/kernel": patch\n---\n\nA fix.\n',
  };

  function cloneWith() {
    const root = mkdtempSync(join(tmpdir(), "svc-version-migrating-"));
    clones.push(root);
    git(tmpdir(), "clone", "-q", template, root);
    for (const [path, text] of Object.entries(files)) write(root, path, text);
    git(root, "add", "-A");
    git(root, "commit", "-q", "-m", "since the release");
    return root;
  }

  /** The entry of `version` in a CHANGELOG: from its heading to the next one. */
  const entryOf = (changelog: string, version: string) => {
    const start = changelog.indexOf(`## ${version}\n`);
    const next = changelog.indexOf("\n## ", start + 1);
    return changelog.slice(start, next < 0 ? undefined : next);
  };

  it("a breaking changeset with a Migration line and one without → the minor's entry has the section with exactly that line", () => {
    const root = cloneWith();
    const dry = spawnSync("node", [script, "--root", root, "--dry-run"], { encoding: "utf8" });
    expect(dry.status, dry.stderr).toBe(0);
    execFileSync("node", [script, "--root", root, "--no-install", "--no-stage"], { stdio: "ignore" });

    const entry = entryOf(readFileSync(join(root, "packages/app/CHANGELOG.md"), "utf8"), "0.2.0");
    expect(
      entry.startsWith(`## 0.2.0\n\n### Migrating from 0.1\n\n- ${migration}\n\n### Minor Changes\n`),
    ).toBe(true);
    const section = entry.slice(entry.indexOf("### Migrating"), entry.indexOf("### Minor Changes"));
    expect(section.match(/^- .*$/gm)).toEqual([`- ${migration}`]);
    // Both changesets are entries of their own under Minor Changes, the Migration line as written.
    expect(entry).toContain("A new option.");
    expect(entry).toContain("The Express middleware moved to `@fake/app/express`.");

    // A patch (0.1.0 → 0.1.1) crosses no minor: no section.
    const kernel = readFileSync(join(root, "packages/kernel/CHANGELOG.md"), "utf8");
    expect(kernel).toContain("## 0.1.1");
    expect(kernel).not.toContain("Migrating from");

    // The dry run names the same line for the same package, and wrote nothing.
    const said = [...dry.stdout.matchAll(/^version: migration: (\S+) Migrating from (\S+): (.*)$/gm)].map(
      (m) => m.slice(1),
    );
    expect(said).toEqual([["@fake/app", "0.1", migration]]);
  }, 60_000);

  it("the lines are listed in the order the entry lists their changesets, one changeset naming two packages counts for each", () => {
    const root = cloneWith();
    write(
      root,
      ".changeset/both-renamed.md",
      '---\n"@fake/app": minor\n"@fake/kernel": minor\n---\n\nA renamed option.\n\nMigration: `old: 1` → `renamed: 1`.\n',
    );
    execFileSync("node", [script, "--root", root, "--no-install", "--no-stage"], { stdio: "ignore" });
    const app = entryOf(readFileSync(join(root, "packages/app/CHANGELOG.md"), "utf8"), "0.2.0");
    const lines = app.slice(0, app.indexOf("### Minor Changes")).match(/^- .*$/gm);
    const order = ["A renamed option.", "The Express middleware moved"].sort(
      (a, b) => app.indexOf(a) - app.indexOf(b),
    );
    const byText = {
      "A renamed option.": "- `old: 1` → `renamed: 1`.",
      "The Express middleware moved": `- ${migration}`,
    };
    expect(lines).toEqual(order.map((text) => byText[text as keyof typeof byText]));
    const kernel = entryOf(readFileSync(join(root, "packages/kernel/CHANGELOG.md"), "utf8"), "0.2.0");
    expect(kernel).toContain("### Migrating from 0.1\n\n- `old: 1` → `renamed: 1`.\n\n### Minor Changes");
  }, 60_000);
});

describe("reportedExports", () => {
  it.each([
    ["export function fastifyView(request: FastifyRequest): RequestView;", ["fastifyView"]],
    ["export declare class HttpError extends Error {", ["HttpError"]],
    ["export abstract class Store {", ["Store"]],
    ["export interface ReplyInit {", ["ReplyInit"]],
    ["export type Fields = Record<string, FieldValue | null>;", ["Fields"]],
    ["export type Gate<Native = unknown> = (view: RequestView) => void;", ["Gate"]],
    ["export const MEDIA_TYPE: string;", ["MEDIA_TYPE"]],
    ["export declare const enum Mode {", ["Mode"]],
    ["export enum Level {", ["Level"]],
    ["export namespace reply {", ["reply"]],
    ["export { HttpError }", ["HttpError"]],
    ["export { ErrorOptions_2 as ErrorOptions }", ["ErrorOptions"]],
    ["export { a, type B, c as d }", ["a", "B", "d"]],
    ["export {\n    a,\n    b as c\n}", ["a", "c"]],
    ["export default function (): void;", ["default"]],
    ["interface FactsRequest {", []],
    ["type FactsHeaders = Readonly<Record<string, string>>;", []],
    ["    export const member: 1;", []],
    ["// export function commented(): void;", []],
    ["export function windows(): void;\r", ["windows"]],
  ])("%j → %j", (line, names) => {
    expect([...reportedExports(line)]).toEqual(names);
  });
});
