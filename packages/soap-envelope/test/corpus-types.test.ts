import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadContract } from "../src/wsdl/contract.js";
import { generateTypes } from "../src/wsdl/generate-types.js";
import { strictDiagnostics } from "./compile-types.js";
import { CORPUS, contractOptions, wsdlFiles } from "./corpus-files.js";
import { FIXTURES } from "./helpers.js";

/**
 * svc-soap-types for every corpus WSDL that loads (rpc style, document-style parts, wsdl:import,
 * shared Body elements, notifications left out) and for the rpc and parts fixtures: the generated
 * files compile, and handlers typed by them check the rpc payloads.
 */
const _ROOT = resolve(import.meta.dirname, "../../..");

const loading = wsdlFiles(CORPUS).filter((file) => {
  try {
    loadContract(file, contractOptions(file));
    return true;
  } catch {
    return false;
  }
});

const CALC_HANDLERS = `import type { CalcHandlers } from "./rpc.types.js";
export const handlers = {
  add: ({ a, b }) => ({ sum: a + b }),
  move: ({ from, by }) => ({ to: { x: from.x + by.x, y: from.y + by.y } }),
  reset: () => ({}),
} satisfies CalcHandlers;
// @ts-expect-error: sum is an xs:int, not a string
export const wrong: CalcHandlers["add"] = ({ a }) => ({ sum: String(a) });
`;

let dir: string;
let diagnostics: { file: string; message: string }[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "corpus-types-"));
  const files: string[] = [];
  for (const [i, wsdl] of loading.entries()) {
    const file = join(dir, `c${i}.types.ts`);
    writeFileSync(
      file,
      generateTypes(readText(wsdl), { baseDir: resolve(wsdl, ".."), ...contractOptions(wsdl) }),
    );
    files.push(file);
  }
  writeFileSync(
    join(dir, "rpc.types.ts"),
    generateTypes(readText(join(FIXTURES, "rpc.wsdl")), { baseDir: FIXTURES }),
  );
  writeFileSync(
    join(dir, "parts.types.ts"),
    generateTypes(readText(join(FIXTURES, "parts.wsdl")), { baseDir: FIXTURES }),
  );
  writeFileSync(join(dir, "calc.ts"), CALC_HANDLERS);
  files.push(join(dir, "rpc.types.ts"), join(dir, "parts.types.ts"), join(dir, "calc.ts"));
  diagnostics = strictDiagnostics(files).map((d) => ({
    file: d.file ? relative(dir, d.file.fileName) : "",
    message: ts.flattenDiagnosticMessageText(d.messageText, "\n"),
  }));
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A WSDL's text: generateTypes takes the text, as the command reads it. */
function readText(path: string): string {
  return ts.sys.readFile(path) ?? "";
}

describe("svc-soap-types for the corpus that loads", () => {
  it("66 corpus WSDLs load and each gets types", () => {
    expect(loading).toHaveLength(66);
  });

  it("every generated file and the typed rpc handlers compile", () => {
    expect(diagnostics).toEqual([]);
  });
});
