import { join, resolve } from "node:path";
import ts from "typescript";

const ROOT = resolve(import.meta.dirname, "../../..");

/**
 * `files` compiled as a team's strict project would compile them (`strict`,
 * `noUncheckedIndexedAccess`, `exactOptionalPropertyTypes`, NodeNext), with the @svc packages
 * resolved to their sources: the diagnostics of files that import generated types.
 */
export function strictDiagnostics(files: readonly string[]): readonly ts.Diagnostic[] {
  const program = ts.createProgram(files, {
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ["lib.es2023.d.ts"],
    types: ["node"],
    typeRoots: [join(ROOT, "node_modules/@types")],
    noEmit: true,
    skipLibCheck: true,
    paths: {
      ...Object.fromEntries(
        ["soap-envelope", "errors", "conditional", "kernel"].map((name) => [
          `@svc/${name}`,
          [join(ROOT, `packages/${name}/src/index.ts`)],
        ]),
      ),
      "@svc/soap-envelope/express": [join(ROOT, "packages/soap-envelope/src/express.ts")],
    },
  });
  return ts.getPreEmitDiagnostics(program);
}
