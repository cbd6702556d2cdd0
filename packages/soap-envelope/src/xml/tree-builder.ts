import { XmlReadError, XmlReader, type XmlReadRules, type XmlTag } from "@svc/kernel/internal";
import type { XmlCheckpoint } from "./checkpoint.js";
import {
  type ParsedElement,
  type ResolvedXmlLimits,
  resolveLimits,
  setAttribute,
  XmlError,
} from "./model.js";
import { cutCharacters } from "./shown.js";
import { Pacer } from "./skip.js";
import { XML_NON_WHITESPACE } from "./space.js";

const XMLNS_URI = "http://www.w3.org/2000/xmlns/";

/** Characters written to the streaming parser at once when it may stop: how far past a stop it parses. */
const STOP_SLICE = 4096;

/**
 * Builds the element tree from the events of the XML reader the @svc packages share
 * (`@svc/kernel/internal`), which applies the rules: no DTD, no processing instruction unless
 * skipped, and the limits' depth, element, attribute and namespace bounds. Creating a reader and
 * attaching its handlers costs more than parsing a small envelope, so builders are pooled: a
 * builder goes back to the pool only after a document parsed to the end (the reader resets itself
 * in `close()`); one that failed midway is dropped with whatever state it was in.
 */
export class TreeBuilder {
  private readonly parser: XmlReader<true>;
  private readonly stack: ParsedElement[] = [];
  /**
   * Per open element, whether its text so far holds character data (not only XML white space).
   * Kept as a flag so a child's start tag need not re-scan the parent's accumulated text: that
   * re-scan was quadratic in the children (5,000 children each after 100 spaces: 1.25e9
   * characters scanned for a 0.5 MB message).
   */
  private readonly textShown: boolean[] = [];
  private root: ParsedElement | undefined;
  private limits: ResolvedXmlLimits = DEFAULT_LIMITS;
  private checkpoint: XmlCheckpoint | undefined;
  /** Whether the checkpoint may still stop this parse, and whether it did. */
  private mayStop = false;
  private stopped = false;
  /** How many children the open child of the document element may have. */
  private childLimit = Number.POSITIVE_INFINITY;
  /** Whether processing instructions are skipped rather than refused (contracts, not messages). */
  set allowInstructions(allow: boolean) {
    this.parser.rules = readRules(this.limits, allow);
  }
  /** The namespaces in scope around the document: an element's, when its content is parsed alone. */
  private baseScope = BASE_SCOPE;
  /**
   * While the checkpoint may stop the parse and skip content ({@link XmlCheckpoint.skipContent}):
   * what writes saxes the text up to each header block's start tag, so that the block's content
   * can be held instead of parsed (xml/skip.ts).
   */
  pacer: Pacer | undefined;
  /** The element whose content the checkpoint would skip, and saxes' position after its start tag. */
  private skip: { element: ParsedElement; at: number } | undefined;

  constructor() {
    const onText = (text: string) => {
      const depth = this.stack.length - 1;
      const top = this.stack[depth];
      if (top === undefined) return;
      top.text += text;
      // Only this chunk is scanned, once; the flag remembers it for the children still to come.
      if (!this.textShown[depth] && XML_NON_WHITESPACE.test(text)) this.textShown[depth] = true;
      if (top.children.length > 0 && this.textShown[depth]) top.mixed = true;
    };
    // XML 1.0 (Fifth Edition) §2.8: a 1.0 processor "will process [a document declaring another
    // 1.x version] as a 1.0 document"; SOAP 1.2 Part 1 §5 requires a message serializable as XML
    // 1.0. Read as XML 1.1, `&#1;` would hand a C0 control character to a handler and
    // `xmlns:p=""` would undeclare a prefix.
    this.parser = new XmlReader(
      {
        namespaces: true,
        otherVersions: "read-as-1.0",
        // Asked only for a prefix the document does not declare.
        resolvePrefix: (prefix) => this.baseScope[prefix],
      },
      {
        open: (tag) => this.open(tag),
        text: onText,
        close: () => {
          this.stack.pop();
        },
      },
    );
  }

  /** A builder ready for a new document under `limits`, from the pool when one is free. */
  static acquire(limits: ResolvedXmlLimits, checkpoint?: XmlCheckpoint): TreeBuilder {
    const builder = BUILDER_POOL.pop() ?? new TreeBuilder();
    builder.limits = limits;
    builder.parser.rules = readRules(limits, false);
    if (checkpoint !== undefined) {
      builder.checkpoint = checkpoint;
      builder.mayStop = checkpoint.stops;
      if (checkpoint.stops && checkpoint.skipContent !== undefined) builder.pacer = new Pacer();
    }
    return builder;
  }

  /**
   * Parses the next document as content found in place under `scope`: its prefixes resolve there
   * and its declarations count against `limits.maxNamespaces` (one per binding made on the way).
   */
  within(scope: Readonly<Record<string, string>>): void {
    this.baseScope = scope;
    for (let s: object | null = scope; s !== null && s !== BASE_SCOPE; s = Object.getPrototypeOf(s))
      this.parser.within(Object.keys(s).length);
  }

  /** The document element as far as it is built (after a stop). */
  partialRoot(): ParsedElement {
    return this.root as ParsedElement;
  }

  /** Continues a stopped parse: the checkpoint no longer stops it. */
  resume(): void {
    this.mayStop = false;
    this.stopped = false;
    this.pacer = undefined;
  }

  /** The checkpoint's questions for an element opening at depth 1 or 2. */
  private watch(
    checkpoint: XmlCheckpoint,
    element: ParsedElement,
    parent: ParsedElement,
    depth: 1 | 2,
  ): void {
    if (depth === 1) this.childLimit = checkpoint.maxChildren(element, parent.children.length - 1);
    else if (parent.children.length > this.childLimit) {
      throw new XmlError("limit", checkpoint.tooManyChildren(parent, this.childLimit));
    }
    if (this.mayStop && !this.stopped && checkpoint.stopBefore(element, parent, depth)) this.stopped = true;
  }

  private open(tag: XmlTag<true>): void {
    const parent = this.stack[this.stack.length - 1];
    const parentScope = parent?.scope ?? this.baseScope;
    let scope = parentScope;
    let own: Record<string, string> | undefined;
    for (const prefix in tag.ns) {
      // Namespaces in XML 1.0 §3: "The prefix xml is by definition bound to the namespace name
      // http://www.w3.org/XML/1998/namespace. It MAY, but need not, be declared" (saxes refuses
      // any other name for it). The base scope holds that binding, frozen: assigning it again
      // threw, and a namespace-well-formed message was refused as not well-formed.
      if (prefix === "xml") continue;
      own ??= Object.create(parentScope) as Record<string, string>;
      own[prefix] = tag.ns[prefix] ?? "";
    }
    if (own) scope = own;
    const attributes: Record<string, string> = {};
    const tagAttributes = tag.attributes;
    for (const key in tagAttributes) {
      const attr = tagAttributes[key];
      if (attr === undefined || attr.uri === XMLNS_URI || attr.name === "xmlns") continue;
      setAttribute(attributes, attr.uri ? `{${attr.uri}}${attr.local}` : attr.local, attr.value);
    }
    const element: ParsedElement = {
      namespace: tag.uri,
      localName: tag.local,
      attributes,
      children: [],
      text: "",
      scope,
      mixed: false,
    };
    if (parent) {
      if (this.textShown[this.stack.length - 1]) parent.mixed = true;
      parent.children.push(element);
      const depth = this.stack.length;
      if (depth < 3 && this.checkpoint !== undefined) {
        this.watch(this.checkpoint, element, parent, depth as 1 | 2);
        if (
          depth === 2 &&
          this.pacer !== undefined &&
          !this.stopped &&
          !tag.isSelfClosing &&
          this.checkpoint.skipContent?.(element, parent)
        ) {
          this.skip = { element, at: this.parser.position };
        }
      }
    } else {
      this.root = element;
    }
    this.textShown[this.stack.length] = false;
    this.stack.push(element); // saxes emits closetag for self-closing tags too
  }

  /**
   * Parses `text`. While the checkpoint may stop the parse, in slices of {@link STOP_SLICE}
   * characters: once it has stopped, the text not yet parsed is returned (`""` when none is left).
   */
  write(text: string): string | undefined {
    if (text.length === 0) return this.stopped ? "" : undefined;
    try {
      if (!this.mayStop) {
        this.parser.write(text);
        return undefined;
      }
      if (this.pacer !== undefined) return this.pacer.write(text, this, STOP_SLICE);
      for (let at = 0; at < text.length; at += STOP_SLICE) {
        this.parser.write(at === 0 && text.length <= STOP_SLICE ? text : text.slice(at, at + STOP_SLICE));
        if (this.stopped) return text.slice(at + STOP_SLICE);
      }
      return undefined;
    } catch (err) {
      throw asXmlError(err);
    }
  }

  // What the pacer asks (PacedParser).
  parse(text: string): void {
    this.parser.write(text);
  }

  get hasStopped(): boolean {
    return this.stopped;
  }

  takeSkip(): { element: ParsedElement; at: number } | undefined {
    const skip = this.skip;
    this.skip = undefined;
    return skip;
  }

  countSkipped(elements: number, deepest: number): void {
    try {
      this.parser.countSkipped(elements, deepest);
    } catch (err) {
      throw asXmlError(err);
    }
  }

  /** Ends the document and returns its root; the builder goes back to the pool. */
  close(): ParsedElement {
    try {
      this.parser.close();
    } catch (err) {
      throw asXmlError(err);
    }
    const root = this.root;
    if (!root) throw new XmlError("malformed", "The message is not an XML document");
    // saxes has reset itself (close() ends with its own init); reset what is ours.
    this.root = undefined;
    this.stack.length = 0;
    this.textShown.length = 0;
    this.limits = DEFAULT_LIMITS;
    this.checkpoint = undefined;
    this.mayStop = false;
    this.stopped = false;
    this.childLimit = Number.POSITIVE_INFINITY;
    this.pacer = undefined;
    this.skip = undefined;
    this.baseScope = BASE_SCOPE;
    if (BUILDER_POOL.length < BUILDER_POOL_SIZE) BUILDER_POOL.push(this);
    return root;
  }
}

const DEFAULT_LIMITS: ResolvedXmlLimits = resolveLimits();

/** Idle builders kept for reuse; more than this many concurrent parses create fresh ones. */
const BUILDER_POOL_SIZE = 64;

const BUILDER_POOL: TreeBuilder[] = [];

export const BASE_SCOPE: Readonly<Record<string, string>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, string>, {
    xml: "http://www.w3.org/XML/1998/namespace",
  }),
);

/** The reader's rules for `limits`, made once per limits object (a service's, a contract's). */
export function readRules(limits: ResolvedXmlLimits, instructions: boolean): XmlReadRules {
  const memo = instructions ? RULES_SKIPPING : RULES;
  let rules = memo.get(limits);
  if (rules === undefined) {
    rules = Object.freeze({
      maxDepth: limits.maxDepth,
      maxElements: limits.maxElements,
      maxAttributes: limits.maxAttributes,
      maxNamespaces: limits.maxNamespaces,
      instructions: instructions ? "skip" : "refuse",
    });
    memo.set(limits, rules);
  }
  return rules;
}

const RULES = new WeakMap<ResolvedXmlLimits, XmlReadRules>();
const RULES_SKIPPING = new WeakMap<ResolvedXmlLimits, XmlReadRules>();

/** What the reader refused, in this package's words: the Reason of the fault it becomes. */
function refused(err: XmlReadError): XmlError {
  switch (err.problem) {
    case "dtd":
      return new XmlError("dtd", "A document type declaration is not allowed in a SOAP message");
    case "pi":
      return new XmlError("pi", "A processing instruction is not allowed in a SOAP message");
    case "elements":
      return new XmlError("limit", `The message has more than ${err.limit} elements`);
    case "depth":
      return new XmlError("limit", `The message nests elements deeper than ${err.limit}`);
    case "attributes":
      return new XmlError("limit", `An element has more than ${err.limit} attributes`);
    case "namespaces":
      return new XmlError("limit", `The message has more than ${err.limit} namespace declarations in scope`);
    default:
      // "malformed" (and "version", which a reader reading other versions as 1.0 never gives):
      // saxes' own error, as it was reported.
      return asXmlError(err.cause ?? new Error(err.message));
  }
}

/** What the reader or its events threw, as this package's {@link XmlError}. */
export function asXmlError(err: unknown): XmlError {
  if (err instanceof XmlError) return err;
  if (err instanceof XmlReadError) return refused(err);
  const message = cutCharacters(err instanceof Error ? err.message : String(err), 200);
  // saxes reports "line:column: message"; the text is safe to echo (no document content).
  const at = /^(\d+):(\d+): (.*)$/s.exec(message);
  const position = at ? { line: Number(at[1]), column: Number(at[2]), problem: at[3] as string } : undefined;
  return new XmlError("malformed", `The message is not well-formed XML: ${message}`, position);
}
