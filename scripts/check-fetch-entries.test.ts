import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
// A plain .mjs script: CI runs it with node right after the build.
import { builtinImports, fetchEntries, findingKey, isBuiltin } from "./check-fetch-entries.mjs";

/**
 * The Fetch-entry guard (scripts/check-fetch-entries.mjs) on a throw-away module graph: an entry
 * whose import chain reaches Node.js modules and globals, and one that reaches none.
 */
const dir = mkdtempSync(join(tmpdir(), "svc-fetch-entries-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
}

describe("check-fetch-entries", () => {
  write({
    "entry.js": 'import { code } from "./coder.js";\nexport const run = () => code();\n',
    "coder.js":
      'import { gzipSync } from "node:zlib";\nimport { isIP } from "net";\nexport const code = () => [gzipSync(Buffer.from("x")), isIP("1.2.3.4")];\n',
    "clean.js": 'export const run = () => new CompressionStream("gzip") && new TextEncoder().encode("x");\n',
  });

  it("node:zlib, bare net and a Buffer two modules down → each named with its chain", async () => {
    const found = await builtinImports(join(dir, "entry.js"));
    const byName = Object.fromEntries(
      found.map((f) => [f.builtin, f.chain.map((file) => file.split("/").at(-1))]),
    );
    expect(byName).toEqual({
      "node:zlib": ["entry.js", "coder.js"],
      net: ["entry.js", "coder.js"],
      "global Buffer": ["entry.js", "coder.js"],
    });
    expect(found.map(findingKey).every((key) => key.endsWith("coder.js"))).toBe(true);
  });

  it("Web APIs only → nothing", async () => {
    expect(await builtinImports(join(dir, "clean.js"))).toEqual([]);
  });

  it("the kernel's main entry is checked beside its ./fetch entry: a Worker composes createPipeline from it", () => {
    const titles = fetchEntries(["kernel"]).map((e) => e.title);
    expect(titles).toEqual(["@svc/kernel/fetch", "@svc/kernel (main)"]);
  });

  it.each([
    ["node:zlib", true],
    ["fs/promises", true],
    ["stream", true],
    ["hono", false],
    ["@svc/kernel", false],
  ])("isBuiltin(%s) → %s", (specifier, builtin) => {
    expect(isBuiltin(specifier)).toBe(builtin);
  });
});
