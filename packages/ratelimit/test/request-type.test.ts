import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");
const dir = mkdtempSync(join(import.meta.dirname, ".request-type-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The diagnostics of each of `sources`, Express application modules, compiled in one program as a
 * strict consumer compiles them (`strict`, `exactOptionalPropertyTypes`, NodeNext) with
 * `@types/express` installed and the @svc packages resolved to their sources.
 */
function diagnostics(sources: Record<string, string>): Record<string, string[]> {
  const files = Object.keys(sources).map((name) => join(dir, `${name}.ts`));
  for (const [name, source] of Object.entries(sources)) writeFileSync(join(dir, `${name}.ts`), source);
  const program = ts.createProgram(files, {
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
    paths: Object.fromEntries(
      [
        ["@svc/ratelimit", "packages/ratelimit/src/index.ts"],
        ["@svc/ratelimit/express", "packages/ratelimit/src/express.ts"],
        ...["errors", "kernel"].map((name) => [`@svc/${name}`, `packages/${name}/src/index.ts`]),
        ["@svc/kernel/*", "packages/kernel/src/*.ts"],
        ["@svc/errors/*", "packages/errors/src/*.ts"],
      ].map(([name, path]) => [name, [join(ROOT, path as string)]]),
    ),
  });
  const all = ts.getPreEmitDiagnostics(program);
  return Object.fromEntries(
    Object.keys(sources).map((name) => [
      name,
      all
        .filter((d) => d.file?.fileName === join(dir, `${name}.ts`))
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n")),
    ]),
  );
}

describe("req.rateLimit on Express's Request", () => {
  let found: Record<string, string[]>;
  beforeAll(() => {
    found = diagnostics({
      handler: `
import express from "express";
import { rateLimit } from "@svc/ratelimit/express";

const app = express();
app.use(rateLimit({ limit: 10, windowMs: 60_000 }));
app.get("/quota", (req, res) => {
  const info = req.rateLimit;
  const remaining: number | undefined = info?.remaining;
  const reset: Date | undefined = info?.resetTime;
  const policy: string | undefined = info?.policy;
  // @ts-expect-error: set only once a limiter ran, so possibly undefined
  const limit: number = req.rateLimit.limit;
  res.json({ remaining, reset, policy, limit });
});
`,
      info: `
import type { Request } from "express";
import type { RateLimitInfo } from "@svc/ratelimit";
import "@svc/ratelimit/express";

declare const req: Request;
const info: RateLimitInfo | undefined = req.rateLimit;
// @ts-expect-error: no such member of RateLimitInfo
req.rateLimit?.remainingRequests;
export { info };
`,
    });
  }, 120_000);

  it("is RateLimitInfo | undefined in a handler, with nothing but the Express entry imported", () => {
    expect(found.handler).toEqual([]);
  });

  it("is the package's RateLimitInfo, not any", () => {
    expect(found.info).toEqual([]);
  });
});

describe("Express's Request with the main entry alone", () => {
  it("has no rateLimit: only @svc/ratelimit/express declares it; requestState(req).rateLimit is typed", () => {
    const found = diagnostics({
      main: `
import type { Request } from "express";
import { requestState } from "@svc/kernel";
import { createRateLimiter } from "@svc/ratelimit";

declare const req: Request;
// @ts-expect-error: the framework-free entry declares nothing on Express's Request
req.rateLimit;
const remaining: number | undefined = requestState(req).rateLimit?.remaining;
export { createRateLimiter, remaining };
`,
    });
    expect(found.main).toEqual([]);
  }, 120_000);
});
