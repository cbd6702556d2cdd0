import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { importCycles } from "./import-cycles.mjs";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A throw-away `src/` holding the given files. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "svc-cycles-"));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

describe("importCycles", () => {
  it.each([
    [
      "a type-only circle of two files",
      { "a.ts": 'import type { B } from "./b.js";\n', "b.ts": 'import { a } from "./a.js";\n' },
      [["a.ts", "b.ts"]],
    ],
    [
      "a circle of three through a re-export",
      {
        "a.ts": 'export { b } from "./b.js";\n',
        "b.ts": 'import {\n  c,\n} from "./c.js";\n',
        "c.ts": 'import type { A } from "./a.js";\n',
      },
      [["a.ts", "b.ts", "c.ts"]],
    ],
    [
      "a folder's index",
      { "a.ts": 'import { x } from "./x/index.js";\n', "x/index.ts": 'import { a } from "../a.js";\n' },
      [["a.ts", "x/index.ts"]],
    ],
    [
      "a chain without a circle",
      { "a.ts": 'import { b } from "./b.js";\n', "b.ts": 'import { c } from "@svc/kernel";\n' },
      [],
    ],
    [
      "a test importing what imports it (tests are left out)",
      { "a.ts": 'import { b } from "./a.test.js";\n', "a.test.ts": 'import { a } from "./a.js";\n' },
      [],
    ],
  ])("%s", (_, files, expected) => {
    expect(importCycles(tree(files))).toEqual(expected);
  });

  it("no package's shipped source imports itself in a circle", () => {
    const packages = join(import.meta.dirname, "..", "packages");
    const found = readdirSync(packages).flatMap((name) =>
      importCycles(join(packages, name, "src")).map((cycle) => `${name}: ${cycle.join(" → ")}`),
    );
    expect(found).toEqual([]);
  });
});
