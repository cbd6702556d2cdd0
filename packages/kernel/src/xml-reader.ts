import { SaxesParser, type SaxesTagNS, type SaxesTagPlain } from "saxes";

// The one XML reader of the @svc packages: saxes, configured and bounded once. What a document
// may hold and how far it may go (no document type declaration, no processing instruction unless
// the caller skips them, the XML version read, the depth, element, attribute and namespace
// bounds) is decided here, as the document is read; what the packages build from it (a SOAP
// element tree, a request body's plain objects) is theirs, from the events below. Every refusal
// is an XmlReadError naming its problem, which each package words in its own vocabulary.

/**
 * Why the reader refused a document: a well-formedness error, or a rule of its own.
 *
 * @internal
 */
export type XmlReadProblem =
  /** Not well-formed (XML 1.0 §2.1) or not namespace-well-formed (Namespaces in XML 1.0 §7). */
  | "malformed"
  /** A document type declaration (XML 1.0 §2.8). */
  | "dtd"
  /** A processing instruction (XML 1.0 §2.6), where the caller refuses them. */
  | "pi"
  /** An XML declaration naming a version other than 1.0, where the caller refuses them. */
  | "version"
  /** Elements nested deeper than `maxDepth`. */
  | "depth"
  /** More than `maxElements` elements. */
  | "elements"
  /** More than `maxAttributes` attributes (namespace declarations included) on one element. */
  | "attributes"
  /** More than `maxNamespaces` namespace declarations in scope at once. */
  | "namespaces";

/**
 * A document the reader refused. `position` is set for a `"malformed"` one: where (1-based line
 * and column) and what the parser found, without quoting the document; `cause` is then the
 * parser's own error (its message may quote the document: for logs only).
 *
 * @internal
 */
export class XmlReadError extends Error {
  override name = "XmlReadError";
  readonly problem: XmlReadProblem;
  /** The bound that was passed, for the limit problems. */
  readonly limit: number | undefined;
  readonly position: { line: number; column: number; problem: string } | undefined;
  constructor(
    problem: XmlReadProblem,
    message: string,
    details: {
      limit?: number;
      position?: { line: number; column: number; problem: string };
      cause?: unknown;
    } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.problem = problem;
    this.limit = details.limit;
    this.position = details.position;
  }
}

/**
 * The bounds and rules of one document; set before it is read ({@link XmlReader.rules}).
 *
 * @internal
 */
export interface XmlReadRules {
  /** Deepest element nesting accepted (`Infinity`: none). */
  readonly maxDepth: number;
  /** Most elements in one document. */
  readonly maxElements: number;
  /** Most attributes on one element, namespace declarations included. */
  readonly maxAttributes: number;
  /** Most namespace declarations in scope at once (on an element and its ancestors). */
  readonly maxNamespaces: number;
  /**
   * `"refuse"`: a processing instruction is an {@link XmlReadError} (`"pi"`); `"skip"`: it is
   * read past (XML 1.0 §2.6: they are for applications).
   */
  readonly instructions: "refuse" | "skip";
}

/**
 * Rules that bound nothing, processing instructions refused: a start to spread bounds over.
 *
 * @internal
 */
export const UNBOUNDED_XML_RULES: XmlReadRules = Object.freeze({
  maxDepth: Number.POSITIVE_INFINITY,
  maxElements: Number.POSITIVE_INFINITY,
  maxAttributes: Number.POSITIVE_INFINITY,
  maxNamespaces: Number.POSITIVE_INFINITY,
  instructions: "refuse",
});

/**
 * An attribute of a start tag read with namespaces resolved (Namespaces in XML 1.0 §6.3).
 *
 * @internal
 */
export interface XmlAttributeNS {
  /** As written: prefix and local name (`a:b`). */
  name: string;
  prefix: string;
  local: string;
  /** The namespace the prefix is bound to; `""` for an unprefixed attribute. */
  uri: string;
  value: string;
}

/**
 * A start tag read with namespaces resolved. The reader's own shape rather than its parser's
 * types, so that the declarations this entry ships name no other package's types.
 *
 * @internal
 */
export interface XmlTagNS {
  name: string;
  attributes: Record<string, XmlAttributeNS>;
  /** The bindings this tag declares (`xmlns:p`), by prefix. */
  ns: Record<string, string>;
  prefix: string;
  local: string;
  uri: string;
  isSelfClosing: boolean;
}

/**
 * A start tag read as written, without namespace processing.
 *
 * @internal
 */
export interface XmlTagPlain {
  name: string;
  attributes: Record<string, string>;
  isSelfClosing: boolean;
}

/**
 * A start tag as the reader hands it on: with namespaces resolved, or as written.
 *
 * @internal
 */
export type XmlTag<NS extends boolean> = NS extends true ? XmlTagNS : XmlTagPlain;

/**
 * What a builder receives as a document is read. A builder may throw from any of them to
 * abandon the document; its error reaches the caller of `write` or `close` as it is.
 *
 * @internal
 */
export interface XmlEvents<NS extends boolean> {
  /** A start tag, its attributes read (a self-closing one is followed by `close`). */
  open(tag: XmlTag<NS>): void;
  /** Character data (a CDATA section's too), in pieces as it arrives. */
  text(text: string): void;
  /** An end tag. */
  close(): void;
}

/**
 * How a reader reads, fixed for its life.
 *
 * @internal
 */
export interface XmlReaderOptions {
  /**
   * Namespaces in XML 1.0: tags come with their prefixes resolved, and a document that is not
   * namespace-well-formed (an undeclared prefix, `xmlns:p=""`) is malformed. Off, names are the
   * qualified names as written and a prefix binds nothing.
   */
  namespaces: boolean;
  /**
   * An XML declaration naming another version than 1.0 (XML 1.1 has line ends and character
   * references of its own): `"refuse"` it ({@link XmlReadError} `"version"`), or `"read-as-1.0"`
   * (XML 1.0 §2.8: a 1.0 processor "will process [such a document] as a 1.0 document").
   */
  otherVersions: "refuse" | "read-as-1.0";
  /** Namespace-aware only: the URI of a prefix the document does not declare, if any. */
  resolvePrefix?: ((prefix: string) => string | undefined) | undefined;
}

/**
 * Reads XML documents, one after another, into `events`: saxes with the shared rules applied as
 * the document arrives. Reusable after a document {@link close}d; one that failed midway is in
 * whatever state it was left, to be dropped.
 *
 * A document type declaration is always refused (XML 1.0 §2.8 allows one; it is where entities
 * are declared, so refusing it shuts out entity expansion and external entities before they
 * start), and so is whatever passes a bound of {@link XmlReader.rules}, as the start tag or the
 * attribute that passes it is read, before anything of it is built.
 *
 * @example
 * const reader = new XmlReader({ namespaces: false, otherVersions: "refuse" }, { open, text, close });
 * reader.rules = { ...UNBOUNDED_XML_RULES, maxDepth: 32 };
 * reader.write("<a><b>1</b></a>");
 * reader.close();
 * @see https://www.w3.org/TR/xml/#sec-prolog-dtd
 * @internal
 */
export class XmlReader<NS extends boolean> {
  private readonly parser: SaxesParser<{ xmlns: boolean }>;
  /** The rules of the document being read. */
  rules: XmlReadRules = UNBOUNDED_XML_RULES;
  /** Open elements, elements seen, attributes of the tag being read, declarations in scope. */
  private depth = 0;
  private elements = 0;
  private attributes = 0;
  private namespaces = 0;
  /** Declarations each open element made, by depth. */
  private readonly declared: number[] = [];

  constructor(options: XmlReaderOptions & { namespaces: NS }, events: XmlEvents<NS>) {
    const parser = new SaxesParser({
      xmlns: options.namespaces,
      ...(options.otherVersions === "read-as-1.0"
        ? { defaultXMLVersion: "1.0" as const, forceXMLVersion: true }
        : {}),
      ...(options.resolvePrefix === undefined ? {} : { resolvePrefix: options.resolvePrefix }),
    });
    this.parser = parser as SaxesParser<{ xmlns: boolean }>;
    const where = () => ({ line: parser.line, column: parser.column });
    // saxes' own well-formedness errors: "line:column: what" in its message, where and what kept.
    parser.on("error", (err) => {
      const at = /^\d+:\d+: (.*)$/s.exec(err.message);
      throw new XmlReadError(
        "malformed",
        `not well-formed XML (line ${parser.line}, column ${parser.column})`,
        {
          position: { ...where(), problem: at ? (at[1] as string) : err.message },
          cause: err,
        },
      );
    });
    parser.on("doctype", () => {
      throw new XmlReadError("dtd", "a document type declaration is not accepted");
    });
    parser.on("processinginstruction", () => {
      if (this.rules.instructions === "skip") return;
      throw new XmlReadError("pi", "a processing instruction is not accepted");
    });
    if (options.otherVersions === "refuse") {
      // saxes has checked `1.[0-9]+`; it reads any 1.x but 1.0 by XML 1.1's rules.
      parser.on("xmldecl", ({ version }) => {
        if (version !== undefined && version !== "1.0") {
          throw new XmlReadError(
            "version",
            "only XML 1.0 is accepted; the XML declaration names another version",
          );
        }
      });
    }
    parser.on("opentagstart", () => {
      const { rules } = this;
      if (++this.elements > rules.maxElements) throw limit("elements", rules.maxElements);
      if (this.depth >= rules.maxDepth) throw limit("depth", rules.maxDepth);
    });
    parser.on("attribute", () => {
      if (++this.attributes > this.rules.maxAttributes) throw limit("attributes", this.rules.maxAttributes);
    });
    parser.on("opentag", (tag) => {
      this.attributes = 0;
      const declared = options.namespaces
        ? nsDeclared(tag as SaxesTagNS)
        : plainDeclared(tag as SaxesTagPlain);
      this.namespaces += declared;
      this.declared[this.depth] = declared;
      this.depth++;
      if (this.namespaces > this.rules.maxNamespaces) throw limit("namespaces", this.rules.maxNamespaces);
      events.open(tag as XmlTag<NS>);
    });
    parser.on("closetag", () => {
      this.depth--;
      this.namespaces -= this.declared[this.depth] ?? 0;
      events.close();
    });
    parser.on("text", (text) => events.text(text));
    parser.on("cdata", (text) => events.text(text));
  }

  /** Characters read so far. */
  get position(): number {
    return this.parser.position;
  }

  /** Where the parser is: 1-based line, 0-based column of the last character read. */
  get line(): number {
    return this.parser.line;
  }

  get column(): number {
    return this.parser.column;
  }

  /**
   * The next document is content found in place where `namespaces` declarations are already in
   * scope: they count against `maxNamespaces`.
   */
  within(namespaces: number): void {
    this.namespaces += namespaces;
  }

  /**
   * Counts `elements` read past without this reader (content held unparsed), the deepest at
   * depth `deepest`, against the bounds.
   */
  countSkipped(elements: number, deepest: number): void {
    this.elements += elements;
    if (this.elements > this.rules.maxElements) throw limit("elements", this.rules.maxElements);
    if (deepest > this.rules.maxDepth) throw limit("depth", this.rules.maxDepth);
  }

  /** Reads the next text of the document. */
  write(text: string): void {
    this.parser.write(text);
  }

  /** Ends the document (a well-formedness error if it is not complete); the reader is ready for another. */
  close(): void {
    this.parser.close();
    // saxes has reset itself (close() ends with its own init); reset what is ours.
    this.depth = 0;
    this.elements = 0;
    this.attributes = 0;
    this.namespaces = 0;
    this.rules = UNBOUNDED_XML_RULES;
  }
}

function limit(problem: "depth" | "elements" | "attributes" | "namespaces", max: number): XmlReadError {
  const message =
    problem === "depth"
      ? `nesting deeper than ${max} levels is not accepted`
      : problem === "elements"
        ? `more than ${max} elements are not accepted`
        : problem === "attributes"
          ? `more than ${max} attributes on one element are not accepted`
          : `more than ${max} namespace declarations in scope are not accepted`;
  return new XmlReadError(problem, message, { limit: max });
}

/**
 * Namespaces in XML 1.0 §3: "The prefix xml is by definition bound to the namespace name
 * http://www.w3.org/XML/1998/namespace. It MAY, but need not, be declared": declaring it binds
 * nothing new, so it is not counted.
 */
function nsDeclared(tag: SaxesTagNS): number {
  let declared = 0;
  for (const prefix in tag.ns) if (prefix !== "xml") declared++;
  return declared;
}

/** The declarations (`xmlns`, `xmlns:p`; names are case-sensitive, XML 1.0 §2.3) of a tag read as written. */
function plainDeclared(tag: SaxesTagPlain): number {
  let declared = 0;
  for (const name in tag.attributes) {
    if (name === "xmlns" || (name.startsWith("xmlns:") && name !== "xmlns:xml")) declared++;
  }
  return declared;
}
