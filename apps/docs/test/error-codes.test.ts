import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogue, type ErrorEntry, notThrown, support } from "../errors/index.mjs";
import { problems } from "../errors/problems.mjs";

const exec = promisify(execFile);
const docs = resolve(import.meta.dirname, "..");
const root = resolve(docs, "../..");
/** Where the wrong and right modules are written: inside the repository, so `@svc/*` resolves. */
const examples = join(docs, "test/.examples");

/** A code's page in Markdown: the sections every one of them must have. */
const SECTIONS = ["## What raised it", "## Why", "## How to fix it", "### Wrong", "### Right"];

/** The published packages' folders, for the compiler's paths to their sources. */
const published = readdirSync(join(root, "packages")).filter((dir) => {
  try {
    return JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8")).private !== true;
  } catch {
    return false;
  }
});

const entries = [...catalogue().values()];
/** The published packages not built (no `dist/`), whose types the examples cannot be compiled against. */
const unbuilt = published.filter((dir) => !existsSync(join(root, "packages", dir, "dist")));
if (unbuilt.length > 0 && !process.env.CI)
  console.warn(`[skip] the code pages' examples are run, not compiled: build ${unbuilt.join(", ")} first`);
const file = (entry: ErrorEntry, kind: "wrong" | "right") => join(examples, `${entry.code}.${kind}.mts`);

describe("the ERR_SVC_* code pages", () => {
  let out: string;
  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), "svc-docs-errors-"));
    await exec(process.execPath, [join(docs, "scripts/generate.mjs"), "--out", out], { cwd: docs });
  }, 60_000);
  afterAll(async () => {
    if (out) await rm(out, { recursive: true, force: true });
  });

  it("say, for every code, what raised it, why, how to fix it, and give a wrong and a right module", () => {
    const pages = readdirSync(join(out, "errors")).filter((f) => f.startsWith("ERR_SVC_"));
    expect(pages.length).toBeGreaterThan(200);
    const lacking = pages.filter((page) => {
      if (notThrown[page.replace(/\.md$/, "")] !== undefined) return false;
      const text = readFileSync(join(out, "errors", page), "utf8");
      return !SECTIONS.every((s) => text.includes(`\n${s}\n`));
    });
    expect(lacking.map((p) => p.replace(/\.md$/, ""))).toEqual([]);
  });

  it("send a code named but never thrown to the codes thrown instead", () => {
    // Named nowhere in the packages' sources (tests and READMEs aside), so no function throws it.
    const sources: string[] = [];
    const scan = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) scan(path);
        else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts"))
          sources.push(readFileSync(path, "utf8"));
      }
    };
    for (const dir of published) scan(join(root, "packages", dir, "src"));
    const codes = catalogue();
    for (const [code, { instead }] of Object.entries(notThrown)) {
      expect(
        sources.some((text) => new RegExp(`\\b${code}\\b`).test(text)),
        code,
      ).toBe(false);
      for (const other of instead) expect(codes.has(other), `${code} → ${other}`).toBe(true);
      const page = readFileSync(join(out, "errors", `${code}.md`), "utf8");
      for (const other of instead) expect(page).toContain(`(/errors/${other})`);
    }
  });

  it("have an entry for a code only the packages raise", () => {
    const pages = new Set(readdirSync(join(out, "errors")).map((f) => f.replace(/\.md$/, "")));
    expect(entries.map((e) => e.code).filter((code) => !pages.has(code))).toEqual([]);
  });
});

describe("the wrong and right modules of the code pages", () => {
  beforeAll(() => {
    rmSync(examples, { recursive: true, force: true });
    mkdirSync(examples, { recursive: true });
    for (const [name, text] of Object.entries(support)) writeFileSync(join(examples, name), text);
    for (const [code, problem] of Object.entries(problems))
      writeFileSync(join(examples, `problem.${code}.mts`), problem.app);
    for (const entry of entries) {
      writeFileSync(file(entry, "wrong"), entry.wrong);
      writeFileSync(file(entry, "right"), entry.right);
    }
  });

  // A strict consumer's settings (those of the README examples), against the packages as built:
  // what an application compiles against. CI builds them first; locally, `npm run build`.
  it.skipIf(unbuilt.length > 0 && !process.env.CI)(
    "compile as strict TypeScript",
    async () => {
      expect(unbuilt).toEqual([]);
      writeFileSync(
        join(examples, "tsconfig.json"),
        JSON.stringify({
          extends: relative(examples, join(root, "tsconfig.base.json")),
          compilerOptions: { noEmit: true, declaration: false, sourceMap: false },
          include: ["*.mts"],
        }),
      );
      const tsc = createRequire(join(root, "package.json")).resolve("typescript/bin/tsc");
      const result = await exec(process.execPath, [tsc, "-p", examples, "--pretty", "false"], {
        cwd: examples,
        maxBuffer: 16 * 1024 * 1024,
      }).then(
        () => "",
        (err: { stdout?: string }) => err.stdout ?? String(err),
      );
      expect(result.split("\n").filter((line) => line.includes("error TS"))).toEqual([]);
    },
    180_000,
  );

  // Concurrently: each import waits mostly on its module's transform.
  describe.concurrent.each(entries)("$code", (entry) => {
    it("the wrong module throws it, with a message saying what is accepted", async () => {
      const thrown = await import(pathToFileURL(file(entry, "wrong")).href).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(thrown).toBeInstanceOf(TypeError);
      expect(thrown).toMatchObject({ code: entry.code });
      expect((thrown as Error).message).toContain(entry.accepted);
    });
    it("the right module does not", async () => {
      await expect(import(pathToFileURL(file(entry, "right")).href)).resolves.toBeDefined();
    });
  });
});

describe("the error record code pages' examples", () => {
  // The apps are written (and compiled) with the ERR_SVC_* modules above.
  describe.concurrent.each(Object.entries(problems))("%s", (code, problem) => {
    it("answer the request with the code, the status and the fields the page shows", async () => {
      const app = await import(pathToFileURL(join(examples, `problem.${code}.mts`)).href);
      let response: Response | undefined;
      for (const { method = "GET", path, headers = {}, body } of problem.requests) {
        const fields: Record<string, string> = { accept: "application/problem+json" };
        for (const [name, value] of Object.entries(headers))
          fields[name] = value.replace("{token}", app.token);
        response = await app.default.fetch(
          new Request(`https://api.example${path}`, { method, headers: fields, body: body ?? null }),
        );
      }
      expect(response?.status).toBe(problem.status);
      for (const [name, value] of Object.entries(problem.response.headers ?? {}))
        if (value === "…") expect(response?.headers.get(name), name).not.toBeNull();
        else expect(response?.headers.get(name), name).toBe(value);
      const received = await response?.json();
      for (const [name, value] of Object.entries(problem.response.body))
        if (value === "…") expect(received, name).toHaveProperty(name);
        else expect(received[name], name).toEqual(value);
      // A 5xx's record leaves the code out (it says nothing a client can act on); the type names it.
      expect(received.type).toBe(`https://api.example.com/problems/${code}`);
      if (problem.status < 500) expect(received.code).toBe(code);
    });
  });
});
