import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The source's layout, folded by specification (README, "Source layout"): no import cycle among
 * the modules of src/, and one module alone touching the file system.
 */
const SRC = resolve(import.meta.dirname, "../src");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return entry === "__fixtures__" ? [] : sources(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

const files = sources(SRC);
const text = new Map(files.map((f) => [f, readFileSync(f, "utf8")]));
/** Each module's relative imports and re-exports, type-only ones included. */
const imports = new Map(
  files.map((f) => [
    f,
    [...(text.get(f) as string).matchAll(/(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/g)].map((m) =>
      resolve(dirname(f), (m[1] as string).replace(/\.js$/, ".ts")),
    ),
  ]),
);

describe("source layout", () => {
  it("no module imports itself through others (no import cycle)", () => {
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (f: string) => {
      state.set(f, "open");
      stack.push(f);
      for (const d of imports.get(f) ?? []) {
        if (state.get(d) === "open") {
          cycles.push([...stack.slice(stack.indexOf(d)), d].map((x) => relative(SRC, x)).join(" → "));
        } else if (!state.has(d)) visit(d);
      }
      stack.pop();
      state.set(f, "done");
    };
    for (const f of files) if (!state.has(f)) visit(f);
    expect(cycles).toEqual([]);
  });

  it("every relative import names a module of src/", () => {
    const missing = [...imports].flatMap(([f, deps]) =>
      deps.filter((d) => !text.has(d)).map((d) => `${relative(SRC, f)} → ${relative(SRC, d)}`),
    );
    expect(missing).toEqual([]);
  });

  it("one module does file I/O: wsdl/files.ts", () => {
    const io = files.filter((f) => /from "(?:node:)?fs(?:\/promises)?"/.test(text.get(f) as string));
    expect(io.map((f) => relative(SRC, f))).toEqual(["wsdl/files.ts"]);
  });

  it("outside xml/, the XML reader is reached through xml/reader.ts alone", () => {
    const deep = [...imports].flatMap(([f, deps]) =>
      relative(SRC, f).startsWith("xml/")
        ? []
        : deps
            .map((d) => relative(SRC, d))
            .filter((d) =>
              /^xml\/(?:fast-scan|fast-parse|templates|checkpoint|plain-text|skip|model|read-deadline)\.ts$/.test(
                d,
              ),
            )
            .map((d) => `${relative(SRC, f)} → ${d}`),
    );
    expect(deep).toEqual([]);
  });

  // SOAP 1.2 Part 1 §5 (and SOAP 1.1 §4) is the envelope's grammar, Part 1 §2 the processing a
  // node gives a message, Part 2 §7 the HTTP binding: each folder reads only those below it, so
  // the grammar holds whatever carries a message and the processor whatever transport delivers it.
  it("envelope/ reads neither processor/ nor binding/; processor/ does not read binding/", () => {
    const below: Record<string, readonly string[]> = {
      "envelope/": ["processor/", "binding/"],
      "processor/": ["binding/"],
    };
    const upward = [...imports].flatMap(([f, deps]) => {
      const from = relative(SRC, f);
      const folder = Object.keys(below).find((d) => from.startsWith(d));
      if (folder === undefined) return [];
      return deps
        .map((d) => relative(SRC, d))
        .filter((d) => (below[folder] as readonly string[]).some((up) => d.startsWith(up)))
        .map((d) => `${from} → ${d}`);
    });
    expect(upward).toEqual([]);
  });

  it("no source module is longer than 500 lines", () => {
    const long = files
      .map((f) => [relative(SRC, f), (text.get(f) as string).split("\n").length - 1] as const)
      .filter(([, lines]) => lines > 500)
      .map(([f, lines]) => `${f}: ${lines} lines`);
    expect(long).toEqual([]);
  });
});
