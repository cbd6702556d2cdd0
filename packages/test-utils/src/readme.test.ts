import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { assertReadmeShows, readmeRegion } from "./readme.js";

describe("README example checks", () => {
  const dir = mkdtempSync(join(tmpdir(), "readme-"));
  mkdirSync(join(dir, "test"));
  writeFileSync(join(dir, "README.md"), "# x\n\n```ts\nconst a = 1;\nconst b = 2;\n```\n");
  const testFile = join(dir, "test", "x.test.ts");
  writeFileSync(testFile, "// #region readme-core\nconst a = 1;\n// #endregion readme-core\n");
  const url = pathToFileURL(testFile).href;

  it("a whole block, or its start with whole: false, passes; anything else throws naming the README", () => {
    expect(() => assertReadmeShows(url, "const a = 1;\nconst b = 2;\n")).not.toThrow();
    expect(() => assertReadmeShows(url, "const a = 1;\n")).toThrow(/README\.md does not show/);
    expect(() => assertReadmeShows(url, readmeRegion(url), { whole: false })).not.toThrow();
    expect(() => assertReadmeShows(url, "const c = 3;\n", { whole: false })).toThrow();
  });

  it("a test file without the region throws", () => {
    writeFileSync(join(dir, "test", "y.test.ts"), "nothing\n");
    expect(() => readmeRegion(pathToFileURL(join(dir, "test", "y.test.ts")).href)).toThrow(/no \/\/ #region/);
  });
});
