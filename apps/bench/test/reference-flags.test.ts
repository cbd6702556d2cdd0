import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { referenceNodeFlags } from "../src/reference-flags.mjs";

// The bench starts the reference server with the flags its `npm start` uses, read from the script.
describe("referenceNodeFlags", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-bench-flags-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const withStart = async (start: string) => {
    await writeFile(join(dir, "package.json"), JSON.stringify({ scripts: { start } }));
    return dir;
  };

  it("the flags between node and dist/main.js, after whatever the script runs first", async () => {
    const flags = referenceNodeFlags(
      await withStart(
        "cd ../.. && turbo run build && cd app && node --max-semi-space-size=32 --enable-source-maps dist/main.js",
      ),
    );
    expect(flags).toEqual(["--max-semi-space-size=32", "--enable-source-maps"]);
    expect(referenceNodeFlags(await withStart("node dist/main.js"))).toEqual([]);
  });

  it("a start script that does not run dist/main.js → an error naming it, not a bench of something else", async () => {
    await withStart("tsx src/main.ts");
    expect(() => referenceNodeFlags(dir)).toThrow(/runs no "node \[flags\] dist\/main.js": tsx src\/main.ts/);
  });

  it("this repository's reference server: its start script parses", () => {
    expect(() => referenceNodeFlags()).not.toThrow();
  });
});
