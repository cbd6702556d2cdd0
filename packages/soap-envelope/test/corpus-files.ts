import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

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
