import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";

// The package's only file I/O: the contract's documents read at start-up, and what the
// svc-soap-types command writes. Nothing reads or writes files while messages are handled.

/**
 * A WSDL or XSD file's text. XML 1.0 §4.3.3: a processor MUST read UTF-16 as well as UTF-8, and a
 * UTF-16 entity begins with a byte order mark (Appendix F.1); anything else is read as UTF-8. The
 * text is served as UTF-8 (`?wsdl`, `?xsd=`), so the declaration of a UTF-16 file is made to say so.
 */
export function readXmlFile(path: string): string {
  const bytes = readFileSync(path);
  const encoding =
    bytes[0] === 0xfe && bytes[1] === 0xff
      ? "utf-16be"
      : bytes[0] === 0xff && bytes[1] === 0xfe
        ? "utf-16le"
        : undefined;
  if (encoding === undefined) return bytes.toString("utf8");
  const text = new TextDecoder(encoding).decode(bytes);
  return text.replace(/^(<\?xml\s[^?]*?\bencoding\s*=\s*)(["'])[^"']*\2/, "$1$2UTF-8$2");
}

/** Writes `text` to `path` (UTF-8), making its folder first. */
export function writeTextFile(path: string, text: string): void {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  writeFileSync(path, text);
}
