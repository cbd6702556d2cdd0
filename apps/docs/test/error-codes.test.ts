import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogue, notThrown } from "../errors/index.mjs";
import { problems } from "../errors/problems.mjs";
import { appOf, docs, entries, moduleOf, published, root, writeExamples } from "./error-codes-examples.ts";

const exec = promisify(execFile);

/** A code's page in Markdown: the sections every one of them must have. */
const SECTIONS = ["## What raised it", "## Why", "## How to fix it", "### Wrong", "### Right"];

/** The published packages' sources (tests left out), by path. */
const sources = new Map<string, string>();
const scan = (dir: string) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) scan(path);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts"))
      sources.set(path, readFileSync(path, "utf8"));
  }
};
for (const dir of published) scan(join(root, "packages", dir, "src"));

/** The error record codes the site has a page for (`/problems/<code>`). */
const recordPages = (out: string) =>
  readdirSync(join(out, "problems"))
    .filter((f) => f !== "index.md")
    .map((f) => f.replace(/\.md$/, ""));

// The examples, written for the runs below; `error-codes-compile.test.ts` compiles its own copy.
let examples: string;
beforeAll(() => {
  examples = writeExamples("run");
});

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
    const codes = catalogue();
    for (const [code, { instead }] of Object.entries(notThrown)) {
      expect(
        [...sources.values()].some((text) => new RegExp(`\\b${code}\\b`).test(text)),
        code,
      ).toBe(false);
      for (const other of instead) expect(codes.has(other), `${code} → ${other}`).toBe(true);
      const page = readFileSync(join(out, "errors", `${code}.md`), "utf8");
      for (const other of instead) expect(page).toContain(`(/errors/${other})`);
    }
  });

  it("give a page to each error record code a package answers with, and to nothing else", () => {
    const pages = recordPages(out);
    expect(pages.length).toBeGreaterThan(30);
    // The codes of the HttpErrors the sources build: `code: "..."` in the error's options, a code
    // a function that builds one takes as its last argument, a value of an `*_ERROR_CODES` table.
    const raised = new Set<string>();
    const literals = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].map((m) => m[1] ?? "");
    for (const text of sources.values()) {
      if (!/\bHttpError\b/.test(text)) continue;
      for (const code of literals(text, /\bcode:\s*"([a-z][a-z0-9_]*)"/g)) raised.add(code);
      for (const code of literals(text, /,\s*"([a-z][a-z0-9_]*)",?\s*\)/g)) raised.add(code);
      for (const table of literals(text, /_ERROR_CODES = \{([^}]*)\}/g))
        for (const code of literals(table, /:\s*"([a-z][a-z0-9_]*)"/g)) raised.add(code);
    }
    expect(pages.filter((code) => !raised.has(code))).toEqual([]);
  });

  it("say of every error record code when it is answered and what to do, with an example", () => {
    const pages = recordPages(out);
    expect(pages.filter((code) => problems[code] === undefined)).toEqual([]);
    expect(Object.keys(problems).filter((code) => !pages.includes(code))).toEqual([]);
    for (const code of pages)
      expect(readFileSync(join(out, "problems", `${code}.md`), "utf8"), code).toContain("\n## Example\n");
  });

  it("have an entry for a code only the packages raise", () => {
    const pages = new Set(readdirSync(join(out, "errors")).map((f) => f.replace(/\.md$/, "")));
    expect(entries.map((e) => e.code).filter((code) => !pages.has(code))).toEqual([]);
  });
});

describe("the wrong and right modules of the code pages", () => {
  // Concurrently: each import waits mostly on its module's transform.
  describe.concurrent.each(entries)("$code", (entry) => {
    it("the wrong module throws it, with a message saying what is accepted", async () => {
      const thrown = await import(pathToFileURL(moduleOf(examples, entry, "wrong")).href).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(thrown).toBeInstanceOf(TypeError);
      expect(thrown).toMatchObject({ code: entry.code });
      expect((thrown as Error).message).toContain(entry.accepted);
    });
    it("the right module does not", async () => {
      await expect(import(pathToFileURL(moduleOf(examples, entry, "right")).href)).resolves.toBeDefined();
    });
  });
});

describe("the error record code pages' examples", () => {
  // The apps are written with the ERR_SVC_* modules above.
  describe.concurrent.each(Object.entries(problems))("%s", (code, problem) => {
    it("answer the request with the code, the status and the fields the page shows", async () => {
      const app = await import(pathToFileURL(appOf(examples, code)).href);
      let response: Response | undefined;
      for (const { method = "GET", path, headers = {}, body } of problem.requests) {
        const fields: Record<string, string> = { accept: "application/problem+json" };
        for (const [name, value] of Object.entries(headers))
          fields[name] = value.replace(/\{(\w+)\}/g, (_, exported: string) => app[exported]);
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
