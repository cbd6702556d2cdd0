import { ABSOLUTE_URI, optionError } from "../options.js";
import type { DocumentTree } from "../platform/host-types.js";
import * as posix from "./posix-path.js";

/**
 * The contract's documents given in memory (`contract.documents`: `{ "service.wsdl": text,
 * "types.xsd": text }`) as a folder tree: each name a `/`-separated path from the tree's root, which
 * the WSDL's `wsdl:import`s and `xs:import`/`xs:include`s name relative to the document they are in,
 * as they would name files. Read where there is no file system (workerd, browsers) and wherever a
 * contract is bundled with the code. The same rules hold as for files: nothing outside `importRoot`
 * (the WSDL's folder by default) is read, and a name that is not among the documents is refused,
 * never fetched.
 *
 * @param option the option's name, for messages (`contract.documents`, `documents`)
 */
export function memoryDocuments(value: unknown, option: string, label?: string): DocumentTree {
  const accepted =
    'an object mapping document names to their text ({ "service.wsdl": wsdlText, "types.xsd": xsdText })';
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw optionError(option, value, accepted, label);
  }
  const texts = new Map<string, string>();
  for (const [name, text] of Object.entries(value)) {
    // A relative path inside the tree: `/`-separated, no `..` above the root, no URL (a copy of a
    // remote document is named by `schemaLocations`, as a file would be).
    const normal = posix.normalize(name);
    if (
      name === "" ||
      name.includes("\\") ||
      ABSOLUTE_URI.test(name) ||
      posix.isAbsolute(name) ||
      normal === "." ||
      normal === ".." ||
      normal.startsWith("../")
    ) {
      throw optionError(option, name, `${accepted}: a name is not a relative path inside the tree`, label);
    }
    if (typeof text !== "string" || text.trim() === "") {
      throw optionError(option, text, `${accepted}: the text of ${name} is not a non-empty string`, label);
    }
    const path = `/${normal}`;
    if (texts.has(path)) throw optionError(option, name, `${accepted}: ${normal} is named twice`, label);
    texts.set(path, text);
  }
  const names = () => [...texts.keys()].map((path) => path.slice(1)).join(", ");
  return {
    resolve: posix.resolve,
    dirname: posix.dirname,
    relative: posix.relative,
    normalize: posix.normalize,
    join: posix.join,
    isAbsolute: posix.isAbsolute,
    sep: posix.sep,
    cwd: () => "/",
    read(path) {
      const text = texts.get(path);
      if (text === undefined) throw new Error(`not one of the documents given: ${names() || "none"}`);
      return text;
    },
    shown: (path) => (path === "/" ? "." : path.slice(1)),
  };
}
