import { XmlReader } from "@svc/kernel/internal";
import type { ResolvedXmlLimits } from "./model.js";
import { asXmlError, BASE_SCOPE, readRules } from "./tree-builder.js";

/** An element of a document's text, found by its expanded name. */
export interface ElementSpan {
  /** Where its start tag's `<` is. */
  start: number;
  /** Just past the `>` of its end tag (of its start tag, when empty). */
  end: number;
  /** Its unqualified attributes, by local name (namespace declarations aside). */
  attributes: Readonly<Record<string, string>>;
}

/**
 * The elements named `{namespace}localName` in `text`, in document order, as the XML reader the
 * @svc packages share reads it under `limits` (one found inside another is part of it, not listed).
 * Namespace-aware: an element matches by the namespace its prefix is bound to where it stands, so
 * the same characters in a CDATA section, a comment or an attribute value, or an element of that
 * local name in another namespace, are not elements of that name. A document the reader refuses
 * throws the {@link XmlError} its parse would.
 * @see https://www.w3.org/TR/xml-names/#scoping-defaulting Namespaces in XML 1.0 §6
 */
export function findElements(
  text: string,
  limits: ResolvedXmlLimits,
  namespace: string,
  localName: string,
): ElementSpan[] {
  // XML 1.0 §4.3.3: a byte order mark is no character of the document.
  const offset = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const body = offset === 0 ? text : text.slice(1);
  const found: ElementSpan[] = [];
  let depth = 0;
  let open: { start: number; depth: number; attributes: Record<string, string> } | undefined;
  const reader: XmlReader<true> = new XmlReader(
    { namespaces: true, otherVersions: "read-as-1.0", resolvePrefix: (prefix) => BASE_SCOPE[prefix] },
    {
      open: (tag) => {
        if (open === undefined && tag.uri === namespace && tag.local === localName) {
          const attributes: Record<string, string> = Object.create(null);
          for (const key in tag.attributes) {
            const a = tag.attributes[key];
            if (a !== undefined && a.uri === "" && a.name !== "xmlns") attributes[a.local] = a.value;
          }
          // Reported after the start tag's `>`: its `<` is the last before (XML 1.0 §3.1 allows
          // no `<` in an attribute value).
          const start = body.lastIndexOf("<", reader.position - 1);
          open = { start: start + offset, depth, attributes };
        }
        depth++;
      },
      text: () => {},
      close: () => {
        depth--;
        if (open !== undefined && open.depth === depth) {
          found.push({ start: open.start, end: reader.position + offset, attributes: open.attributes });
          open = undefined;
        }
      },
    },
  );
  reader.rules = readRules(limits, false);
  try {
    reader.write(body);
    reader.close();
  } catch (err) {
    throw asXmlError(err);
  }
  return found;
}
