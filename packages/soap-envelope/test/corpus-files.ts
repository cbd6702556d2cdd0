import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import type { LoadContractOptions } from "../src/wsdl/contract.js";

/** Real-world contracts from public projects' test fixtures (test/corpus/LICENSES.md). */
export const CORPUS = join(import.meta.dirname, "corpus");

/** Every `.wsdl` below `dir`, in a stable order. */
export function wsdlFiles(dir = CORPUS): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) return wsdlFiles(path);
      return path.endsWith(".wsdl") ? [path] : [];
    });
}

/** The location a `wsdl:import`, `xs:import` or `xs:include` names. */
const IMPORTED = /<(?:[\w.-]+:)?(?:import|include)\b[^>]*?\s(?:schemaLocation|location)="([^"]*)"/g;

/** The local files a contract file imports or includes, transitively, itself first. */
function localImports(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file) || !existsSync(file)) return seen;
  seen.add(file);
  for (const [, location] of readFileSync(file, "utf8").matchAll(IMPORTED)) {
    if (location && !/^[a-z][a-z0-9+.-]*:/i.test(location)) localImports(join(dirname(file), location), seen);
  }
  return seen;
}

/**
 * The loader options a team would give a corpus contract: none, or the corpus folder (`root`) as
 * `importRoot` for one whose schemas are in a sibling folder (`platform/`, shared by node-soap's
 * `test/wsdl/strict/` and its samples, as in node-soap's `test/`).
 */
export function contractOptions(wsdl: string, root = CORPUS): LoadContractOptions {
  const shares = [...localImports(wsdl)].some((file) => relative(dirname(wsdl), file).startsWith(".."));
  return shares ? { importRoot: root } : {};
}
