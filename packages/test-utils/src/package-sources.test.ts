import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Published packages cite public standards (RFCs, IETF drafts, W3C), never the project's private
 * service spec nor a path of the machine they were built on: both would reach users through the
 * README, the JSDoc in the published `.d.ts`, and source maps. The reference server (an app, not a
 * package) may cite the service spec.
 */
const FORBIDDEN: readonly { name: string; pattern: RegExp }[] = [
  { name: "the service spec", pattern: /service[-_ ]?spec|service contract/i },
  { name: '"spec part N"', pattern: /\bspec\b[^\n.;]{0,12}\bpart\s*\d/i },
  { name: '"part N rule M"', pattern: /\bpart \d+(\.\d+)?,? rules? \d/i },
  {
    name: "an absolute machine path",
    pattern: /(?<![\w.:/~-])(?:\/(?:work|home|root|tmp|Users|mnt|srv|opt|var)\/[\w.-]|[A-Z]:\\[\w.-])/,
  },
];

/** The first forbidden reference in `text`, as `line N: <what> ("<excerpt>")`, else undefined. */
function forbiddenReference(text: string): string | undefined {
  const lines = text.split("\n");
  for (const [i, line] of lines.entries()) {
    for (const { name, pattern } of FORBIDDEN) {
      const m = pattern.exec(line);
      if (m) return `line ${i + 1}: ${name} ("${line.trim().slice(0, 120)}")`;
    }
  }
  return undefined;
}

const root = resolve(import.meta.dirname, "../../..");

function shippedFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (!/\.test\.ts$/.test(entry.name)) out.push(path);
    }
  };
  if (existsSync(join(dir, "src"))) walk(join(dir, "src"));
  for (const file of ["README.md", "package.json"]) {
    if (existsSync(join(dir, file))) out.push(join(dir, file));
  }
  return out;
}

const published = readdirSync(join(root, "packages"))
  .map((name) => join(root, "packages", name))
  .filter((dir) => existsSync(join(dir, "package.json")))
  .filter((dir) => !JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).private);

describe("forbiddenReference", () => {
  it.each([
    "@see /work/shared/spec/service-spec.md part 9",
    " * Reads a header (spec part 5: tokens never in the query).",
    "- Service spec part 8: 429 with Retry-After",
    "<!-- Spec part 2: id (long), name, email -->",
    "(see part 4.1, rule 9)",
    "logs go to /home/ci/build/out.log",
    'const p = "/tmp/svc-x";',
    "built in C:\\build\\svc",
  ])("%s → flagged", (line) => {
    expect(forbiddenReference(`first line\n${line}`)).toMatch(/^line 2: /);
  });

  it.each([
    "SOAP 1.2 Part 2 §7.5.2.2: env:Sender → 400",
    "XML Schema Part 2 Appendix F",
    "@see https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags",
    "@see https://www.rfc-editor.org/rfc/rfc9110#section-15.5.1",
    "for (const spec of list.split(','))",
    "a link to https://example.com/tmp/x or ./tmp/file",
    "RFC 6750 §2.3, §5.3: a token in a URI leaks",
  ])("%s → allowed", (line) => {
    expect(forbiddenReference(line)).toBeUndefined();
  });
});

describe("published packages cite public standards only", () => {
  it("finds the published packages", () => {
    expect(published.length).toBeGreaterThan(0);
  });

  it.each(published.map((dir) => [relative(root, dir), dir]))(
    "%s: src (non-test), README.md and package.json → no private spec, no machine path",
    (_name, dir) => {
      const offenders = shippedFiles(dir).flatMap((file) => {
        const found = forbiddenReference(readFileSync(file, "utf8"));
        return found ? [`${relative(root, file)} ${found}`] : [];
      });
      expect(offenders).toEqual([]);
    },
  );
});
