import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * A package publishes its decisions through `publishDecision` of `@svc/kernel/internal` on the
 * channel `decisionChannel` gives it, which has no `publish`: every message is then a value of
 * the package's typed union, built where the decision is made. Only the kernel calls a channel's
 * `publish` (`publishDecision`, and the tracing channels of `tracedCall`).
 */
const root = join(import.meta.dirname, "..");
const call = /\.\s*publish\s*\(/;

/** Each `<file>:<line>` under `packages/*\/src` (tests and the kernel left out) that calls `.publish(`. */
function publishCalls(): string[] {
  const found: string[] = [];
  for (const pkg of readdirSync(join(root, "packages"))) {
    const src = join(root, "packages", pkg, "src");
    if (pkg === "kernel" || !existsSync(src)) continue;
    for (const file of readdirSync(src, { recursive: true, encoding: "utf8" })) {
      if (!/\.[cm]?[jt]sx?$/.test(file) || /\.test\.[cm]?[jt]sx?$/.test(file)) continue;
      readFileSync(join(src, file), "utf8")
        .split("\n")
        .forEach((line, at) => {
          if (call.test(line)) found.push(`${relative(root, join(src, file))}:${at + 1}`);
        });
    }
  }
  return found;
}

describe("decisions", () => {
  it("no package but the kernel calls a channel's publish: each publishes with publishDecision", () => {
    expect(publishCalls()).toEqual([]);
  });
});
