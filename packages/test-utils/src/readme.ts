import { readFileSync } from "node:fs";

/**
 * The lines of a test file between `// #region readme-core` and `// #endregion readme-core`: the
 * README example as the test runs it, with each `[test text, README text]` replacement applied
 * once (a relative import the README shows as the package name, a port the test picks itself).
 */
export function readmeRegion(
  testFileUrl: string,
  replacements: ReadonlyArray<readonly [string, string]> = [],
): string {
  const source = readFileSync(new URL(testFileUrl), "utf8");
  const region = /\/\/ #region readme-core\n([\s\S]*?)\/\/ #endregion readme-core/.exec(source)?.[1];
  if (region === undefined) throw new Error(`${testFileUrl} has no // #region readme-core`);
  return replacements.reduce((code, [from, to]) => code.replace(from, to), region);
}

/**
 * Throws unless the README of the package the test belongs to (`../README.md` from the test's
 * folder) shows `code` as a whole ```ts block (or, with `whole: false`, as the start of one), so
 * the example a README shows is the code a test runs.
 */
export function assertReadmeShows(testFileUrl: string, code: string, { whole = true } = {}): void {
  const readmeUrl = new URL("../README.md", testFileUrl);
  const readme = readFileSync(readmeUrl, "utf8");
  if (!readme.includes(`\`\`\`ts\n${code}${whole ? "```" : ""}`)) {
    throw new Error(`${readmeUrl.pathname} does not show the tested example as a ts block:\n${code}`);
  }
}
