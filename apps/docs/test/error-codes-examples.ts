// What the two error code test files share: the examples of the code pages, written as modules
// (`error-codes.test.ts` runs them, `error-codes-compile.test.ts` compiles them), each file into a
// folder of its own, as vitest runs the two at once.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { catalogue, type ErrorEntry, support } from "../errors/index.mjs";
import { problems } from "../errors/problems.mjs";

export const docs = resolve(import.meta.dirname, "..");
export const root = resolve(docs, "../..");

/** The published packages' folders. */
export const published = readdirSync(join(root, "packages")).filter((dir) => {
  try {
    return JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8")).private !== true;
  } catch {
    return false;
  }
});

/** The published packages not built (no `dist/`), whose types the examples cannot be compiled against. */
export const unbuilt = published.filter((dir) => !existsSync(join(root, "packages", dir, "dist")));

/** The `ERR_SVC_*` codes' entries. */
export const entries = [...catalogue().values()];

/** Where an `ERR_SVC_*` entry's wrong or right module is written in `dir`. */
export const moduleOf = (dir: string, entry: ErrorEntry, kind: "wrong" | "right") =>
  join(dir, `${entry.code}.${kind}.mts`);

/** Where an error record code's example app is written in `dir`. */
export const appOf = (dir: string, code: string) => join(dir, `problem.${code}.mts`);

/**
 * Writes every example into `test/.examples/<name>` (inside the repository, so `@svc/*` resolves)
 * afresh, and answers that folder.
 */
export function writeExamples(name: string): string {
  const dir = join(docs, "test/.examples", name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(support)) writeFileSync(join(dir, file), text);
  for (const [code, problem] of Object.entries(problems)) writeFileSync(appOf(dir, code), problem.app);
  for (const entry of entries) {
    writeFileSync(moduleOf(dir, entry, "wrong"), entry.wrong);
    writeFileSync(moduleOf(dir, entry, "right"), entry.right);
  }
  return dir;
}
