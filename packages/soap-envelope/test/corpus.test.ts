import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { SchemaCompileError } from "../src/schema.js";
import { loadContract } from "../src/wsdl.js";

/** Real-world contracts from public projects' test fixtures (test/corpus/LICENSES.md). */
const CORPUS = join(import.meta.dirname, "corpus");

function wsdlFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) return wsdlFiles(path);
      return path.endsWith(".wsdl") ? [path] : [];
    });
}

describe("the corpus of real-world WSDLs", () => {
  const files = wsdlFiles(CORPUS);
  const outcomes = files.map((file) => {
    try {
      loadContract(file);
      return { file, loaded: true as const };
    } catch (err) {
      return { file, loaded: false as const, err };
    }
  });
  const loaded = outcomes.filter((o) => o.loaded);

  it("75 WSDLs from node-soap and python-zeep", () => {
    expect(files).toHaveLength(75);
  });

  it("each loads or is refused with a SchemaCompileError naming its file: never a crash", () => {
    for (const o of outcomes) {
      if (o.loaded) continue;
      expect(o.err, relative(CORPUS, o.file)).toBeInstanceOf(SchemaCompileError);
      const problems = (o.err as SchemaCompileError).problems;
      expect(problems.length, relative(CORPUS, o.file)).toBeGreaterThan(0);
      // Each problem says where it is: the WSDL's path, or the schema file and construct.
      for (const problem of problems) expect(problem).toMatch(/^\S+(?:\s+wsdl:types)?[: ]/);
    }
  });

  it("the fraction that loads, and why the rest do not (README: Real-world contracts)", () => {
    const reasons = new Map<string, number>();
    for (const o of outcomes) {
      if (o.loaded) continue;
      const first = (o.err as SchemaCompileError).problems[0] ?? "";
      const reason = /SOAP 1\.1 bindings/.test(first)
        ? "SOAP 1.1-only binding"
        : /not well-formed/.test(first)
          ? "not namespace-well-formed"
          : /no wsdl:service port with a soap12:binding/.test(first)
            ? "no SOAP 1.2 port"
            : "other";
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
    // At least what loads today; raise it as the compiler learns more.
    expect(loaded.length).toBeGreaterThanOrEqual(1);
    expect(reasons.get("SOAP 1.1-only binding")).toBe(57);
    expect(reasons.get("not namespace-well-formed")).toBe(5);
  });
});
