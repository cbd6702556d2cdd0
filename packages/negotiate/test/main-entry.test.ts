import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import * as main from "../src/index.js";

// The main entry is framework-free: Express middleware and Express's app settings live in
// `src/express.ts` (and files only it imports). This walks the relative imports of
// `src/index.ts` and reads each file's code, comments left out.
const SRC = resolve(import.meta.dirname, "../src");

/** What the main entry exported before it was framework-free. */
const MOVED = ["parseBody", "crossOrigin"];

function code(file: string): string {
  return readFileSync(file, "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "");
}

function mainEntryFiles(): string[] {
  const seen = new Set<string>();
  const queue = [resolve(SRC, "index.ts")];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const [, spec] of code(file).matchAll(/\bfrom\s+"(\.{1,2}\/[^"]+)"/g)) {
      queue.push(resolve(dirname(file), (spec as string).replace(/\.js$/, ".ts")));
    }
  }
  return [...seen];
}

describe("the main entry is framework-free", () => {
  const files = mainEntryFiles().map((file) => [file.slice(SRC.length + 1), code(file)] as const);

  it.each(files)("%s imports no Express adapter", (_name, text) => {
    expect(text).not.toMatch(
      /from\s+"(?:express|@svc\/[\w-]+\/express|\.{1,2}\/(?:[\w-]+\/)*express(?:-[\w-]+)?\.js)"/,
    );
  });

  it.each(files)("%s reads no Express app setting", (_name, text) => {
    expect(text).not.toMatch(/\.app\b|"trust proxy|"(?:case sensitive|strict) routing"/);
  });

  it.each(MOVED)("%s is not exported by the main entry (it is in ./express)", (name) => {
    expect(Object.keys(main)).not.toContain(name);
  });
});
