import type { ParsedElement } from "./model.js";
import type { XmlTemplates } from "./templates.js";

/**
 * What a parse asks as the document element's children (depth 1) and grandchildren (depth 2)
 * open: whether to stop there, and how many children a child of the document element may have.
 * A stopped parse reads the rest of the source but parses none of it until its `rest()` is
 * called, so a caller can decide on what came first (a SOAP envelope's header blocks) before
 * paying for the rest (its Body). The envelope's rules are in envelope/envelope.ts; the parser knows none.
 */
export interface XmlCheckpoint {
  /** Whether the parse may stop at all; when false, {@link XmlCheckpoint.stopBefore} is never asked. */
  readonly stops: boolean;
  /**
   * Whether to stop before `element`'s content: its start tag is read (name, attributes), its
   * content not. `depth` 1 is a child of the document element, 2 a grandchild.
   */
  stopBefore(element: ParsedElement, parent: ParsedElement, depth: 1 | 2): boolean;
  /** How many child elements `element`, the `index`-th child of the document element, may have. */
  maxChildren(element: ParsedElement, index: number): number;
  /** The message of the {@link XmlError} (kind `"limit"`) when `element` has more than `limit` children. */
  tooManyChildren(element: ParsedElement, limit: number): string;
  /**
   * Asked, while the parse may stop, as a grandchild of the document element opens where it
   * does not stop: whether to read past its content to its end tag without building it (held,
   * xml/skip.ts, within the element and depth limits). The content is parsed when the element's
   * `children`, `text` or `mixed` is first read, and by `rest()`. Content of text alone is built.
   */
  skipContent?(element: ParsedElement, parent: ParsedElement): boolean;
  /**
   * Where the parses asking this checkpoint keep the shapes of the documents they read, so a
   * document that repeats one's markup is built without parsing it (xml/templates.ts); none without.
   */
  readonly templates?: XmlTemplates | undefined;
}
