// The mapping of each package's decisions is written against the union the package publishes: a
// decision kind a package adds must not compile in @svc/otel until it is mapped. Here each union
// gets one more kind, and `src/index.ts` is compiled against them as a strict consumer compiles.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");
const SUBJECT = join(ROOT, "packages/otel/src/index.ts");
const dir = mkdtempSync(join(tmpdir(), "otel-exhaustive-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each package @svc/otel maps: its name, the union of its channel's messages, the kind added to it. */
const UNIONS = [
  ["@svc/ratelimit", "RateLimitDiagnostic"],
  ["@svc/auth", "AuthDiagnostic"],
  ["@svc/idempotency", "IdempotencyDiagnostic"],
  ["@svc/conditional", "ConditionalDiagnostic"],
  ["@svc/negotiate", "NegotiateDiagnostic"],
  ["@svc/versioning", "VersioningDiagnostic"],
  ["@svc/soap-envelope", "SoapDiagnostic"],
  ["@svc/errors", "ErrorDiagnostic"],
].map(([name, union]) => ({
  name: name as string,
  union: union as string,
  added: `added-${(name as string).slice("@svc/".length)}-kind`,
}));

/** Every workspace package's source, by its name: `@svc/x` → `src/index.ts`, `@svc/x/y` → `src/y.ts`. */
const SOURCES: Record<string, string[]> = {};
for (const entry of readdirSync(join(ROOT, "packages"))) {
  const manifest = join(ROOT, "packages", entry, "package.json");
  let name: string;
  try {
    name = JSON.parse(readFileSync(manifest, "utf8")).name;
  } catch {
    continue;
  }
  SOURCES[name] = [join(ROOT, "packages", entry, "src/index.ts")];
  SOURCES[`${name}/*`] = [join(ROOT, "packages", entry, "src/*.ts")];
}

/** Source files parsed once for both programs. */
const parsed = new Map<string, ts.SourceFile | undefined>();

/** The diagnostics of `src/index.ts`, with the packages named in `paths` resolved there. */
function diagnostics(paths: Record<string, string[]>): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ["node"],
    typeRoots: [join(ROOT, "node_modules/@types")],
    noEmit: true,
    skipLibCheck: true,
    paths,
  };
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, language, onError) => {
    if (fileName.startsWith(dir)) return read(fileName, language, onError);
    if (!parsed.has(fileName)) parsed.set(fileName, read(fileName, language, onError));
    return parsed.get(fileName);
  };
  const program = ts.createProgram([SUBJECT], options, host);
  const subject = program.getSourceFile(SUBJECT);
  return [...program.getSyntacticDiagnostics(subject), ...program.getSemanticDiagnostics(subject)].map((d) =>
    ts.flattenDiagnosticMessageText(d.messageText, "\n"),
  );
}

describe("@svc/otel maps every decision kind of every package's union", () => {
  it("the packages' unions as published → src/index.ts compiles", () => {
    expect(diagnostics(SOURCES)).toEqual([]);
  });

  it("each union with one kind more → a compile error naming each added kind", () => {
    const paths = { ...SOURCES };
    for (const { name, union, added } of UNIONS) {
      const published = JSON.stringify(SOURCES[name]?.[0]?.replace(/\.ts$/, ".js"));
      const fixture = join(dir, `${added}.ts`);
      writeFileSync(
        fixture,
        [
          `export * from ${published};`,
          `import type { ${union} as Published } from ${published};`,
          `export type ${union} = Published | { readonly request: object | undefined; readonly decision: "${added}" };`,
        ].join("\n"),
      );
      paths[name] = [fixture];
    }
    const found = diagnostics(paths).join("\n");
    expect(UNIONS.filter(({ added }) => !found.includes(`"${added}"`)).map((u) => u.name)).toEqual([]);
  });
});
