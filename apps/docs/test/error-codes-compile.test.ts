import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { root, unbuilt, writeExamples } from "./error-codes-examples.ts";

const exec = promisify(execFile);

if (unbuilt.length > 0 && !process.env.CI)
  console.warn(`[skip] the code pages' examples are run, not compiled: build ${unbuilt.join(", ")} first`);

// A strict consumer's settings (those of the README examples), against the packages as built:
// what an application compiles against. CI builds them first; locally, `npm run build`. A file of
// its own, so that vitest runs it beside the examples' runs (`error-codes.test.ts`).
it.skipIf(unbuilt.length > 0 && !process.env.CI)(
  "the code pages' examples (wrong and right modules, record code apps) compile as strict TypeScript",
  async () => {
    expect(unbuilt).toEqual([]);
    const examples = writeExamples("compile");
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
