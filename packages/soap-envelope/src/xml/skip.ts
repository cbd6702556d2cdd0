import type { HeldContent, ParsedElement, XmlParse } from "./model.js";

// Markup read without building it. A node that decides on credentials before it parses a message
// (envelope/envelope.ts) needs the header blocks it processes, and of the others only their start tags
// (a name to check against mustUnderstand, a role): their content, which a sender can make a
// megabyte of nested elements, is held as text and parsed only when it is read. This scanner
// finds where such content ends: it tells tags, comments, CDATA sections, processing
// instructions and quoted attribute values apart (XML 1.0 §2.4-§2.7, §3.1), counts elements and
// their depth for the limits, and resolves nothing. It reads text as it arrives, in any pieces.
// Where it reads well-formed XML its answer is the parser's; where it is wrong the document is
// not well-formed, which the parser says when the held content is parsed.

const TEXT = 0;
/** After `<`. */
const OPEN = 1;
const START_TAG = 2;
const QUOTED = 3;
const END_TAG = 4;
/** After `<!`: a comment, a CDATA section or a declaration, not yet told apart. */
const BANG = 5;
const COMMENT = 6;
const CDATA = 7;
const INSTRUCTION = 8;
const DECLARATION = 9;

const GT = 0x3e;
const SLASH = 0x2f;
const BANG_MARK = 0x21;
const QUESTION = 0x3f;
const DASH = 0x2d;
const BRACKET = 0x5d;
const QUOT = 0x22;
const APOS = 0x27;

/**
 * A lexical reader of markup. `depth` counts the open elements (the document's, when it reads
 * from the start); {@link MarkupScanner.scan} stops where its caller asked, and resumes there
 * with the next piece of text.
 */
export class MarkupScanner {
  depth: number;
  /** Start tags read since {@link MarkupScanner.skip} (or since the scanner was made). */
  elements = 0;
  /** The depth of the deepest element read since then, as `depth` counts. */
  deepest = 0;
  /** While skipping: the depth of the element whose content is skipped; its end tag stops the scan. */
  private closing = -1;
  /** Without skipping: the depth of the elements after whose start tag the scan stops. */
  private readonly pauseDepth: number;
  private state = TEXT;
  private quote = 0;
  /** The last character of the tag being read (a `/` before `>` makes it an empty-element tag). */
  private last = 0;
  /** Dashes, brackets or a question mark read at the end of a comment, CDATA section or instruction. */
  private run = 0;
  private bang = "";

  constructor(depth: number, pauseDepth = -1) {
    this.depth = depth;
    this.pauseDepth = pauseDepth;
  }

  /** From here on, skips the content of the element just opened, to its end tag. */
  skip(): void {
    this.closing = this.depth;
    this.elements = 0;
    this.deepest = this.depth;
  }

  /** Whether a skip is in progress (its end tag not yet reached). */
  get skipping(): boolean {
    return this.closing !== -1;
  }

  /**
   * Reads `s[from, to)`. Skipping, it stops at the `/` of the skipped element's end tag (its `<`
   * is the character before, in this piece or the last one) and the skip is over; otherwise just
   * after the `>` of a start tag of an element at the pause depth. Returns where it stopped, or
   * `to`.
   */
  scan(s: string, from: number, to: number): number {
    let i = from;
    while (i < to) {
      switch (this.state) {
        case TEXT: {
          const lt = s.indexOf("<", i);
          if (lt === -1 || lt >= to) return to;
          this.state = OPEN;
          i = lt + 1;
          break;
        }
        case OPEN: {
          const c = s.charCodeAt(i);
          if (c === SLASH) {
            this.state = END_TAG;
            if (this.depth === this.closing) {
              this.closing = -1;
              return i;
            }
            i++;
          } else if (c === BANG_MARK) {
            this.state = BANG;
            this.bang = "";
            i++;
          } else if (c === QUESTION) {
            this.state = INSTRUCTION;
            this.run = 0;
            i++;
          } else {
            this.state = START_TAG;
            this.last = 0;
            this.elements++;
            if (this.depth + 1 > this.deepest) this.deepest = this.depth + 1;
          }
          break;
        }
        case START_TAG: {
          for (; i < to; i++) {
            const c = s.charCodeAt(i);
            if (c === QUOT || c === APOS) {
              this.state = QUOTED;
              this.quote = c;
              i++;
              break;
            }
            if (c === GT) {
              this.state = TEXT;
              const empty = this.last === SLASH;
              i++;
              if (!empty) this.depth++;
              if (this.closing === -1 && (empty ? this.depth + 1 : this.depth) === this.pauseDepth) return i;
              break;
            }
            this.last = c;
          }
          break;
        }
        case QUOTED: {
          const end = s.indexOf(this.quote === QUOT ? '"' : "'", i);
          if (end === -1 || end >= to) return to;
          this.state = START_TAG;
          this.last = this.quote;
          i = end + 1;
          break;
        }
        case END_TAG:
        case DECLARATION: {
          const gt = s.indexOf(">", i);
          if (gt === -1 || gt >= to) return to;
          if (this.state === END_TAG) this.depth--;
          this.state = TEXT;
          i = gt + 1;
          break;
        }
        case BANG: {
          this.bang += s[i];
          i++;
          if (this.bang === "--") {
            this.state = COMMENT;
            this.run = 0;
          } else if (this.bang === "[CDATA[") {
            this.state = CDATA;
            this.run = 0;
          } else if (!"--".startsWith(this.bang) && !"[CDATA[".startsWith(this.bang)) {
            this.state = DECLARATION;
          }
          break;
        }
        default: {
          // COMMENT ends at `-->`, CDATA at `]]>`, INSTRUCTION at `?>`.
          const mark = this.state === COMMENT ? DASH : this.state === CDATA ? BRACKET : QUESTION;
          const needed = this.state === INSTRUCTION ? 1 : 2;
          for (; i < to; i++) {
            const c = s.charCodeAt(i);
            if (c === GT && this.run >= needed) {
              this.state = TEXT;
              i++;
              break;
            }
            this.run = c === mark ? this.run + 1 : 0;
          }
        }
      }
    }
    return i;
  }
}

/** The parser a {@link Pacer} writes to (saxes behind the tree builder, xml/reader.ts). */
export interface PacedParser {
  /** Parses the next text of the document. */
  parse(text: string): void;
  /** Whether the checkpoint has stopped the parse. */
  readonly hasStopped: boolean;
  /**
   * The element whose content the checkpoint skips, asked as its start tag was parsed, and the
   * parser's position then (in characters parsed); taken, so asked once.
   */
  takeSkip(): { element: ParsedElement; at: number } | undefined;
  /** Counts `elements` skipped, the deepest at `deepest`, against the limits; throws past them. */
  countSkipped(elements: number, deepest: number): void;
}

/**
 * Writes a document to a streaming parser that cannot be paused mid-text: the scanner reads
 * ahead and hands it the text up to the end of each start tag of a header block (depth 3), so
 * that when the checkpoint skips that block's content, the parser has read nothing of it; the
 * content up to the block's end tag is then held, not parsed (content of text alone is parsed
 * after all). Text arrives in any pieces: a tag, a comment or the end tag's `</` may be cut.
 */
export class Pacer {
  private readonly scanner = new MarkupScanner(0, 3);
  /** Characters handed to the parser. */
  private written = 0;
  /** The element whose content is being skipped, the pieces of it that arrived, its elements. */
  private skipping: ParsedElement | undefined;
  private pieces: string[] = [];
  private elements = 0;
  /** The content held so far. */
  held: HeldContent[] | undefined;

  /**
   * Parses `text` with `parser` in slices of at most `slice` characters; once the parser has
   * stopped, returns the text it was not given (`""` when none is left), else undefined.
   */
  write(text: string, parser: PacedParser, slice: number): string | undefined {
    const scanner = this.scanner;
    let at = 0;
    while (at < text.length) {
      if (this.skipping !== undefined) {
        const end = scanner.scan(text, at, text.length);
        this.elements += scanner.elements;
        parser.countSkipped(scanner.elements, scanner.deepest);
        scanner.elements = 0;
        if (scanner.skipping) {
          this.pieces.push(at === 0 ? text : text.slice(at));
          return undefined;
        }
        // `end` is the `/` of the end tag; its `<` is just before, perhaps ending the last piece.
        const lt = end - 1;
        if (lt >= at) this.pieces.push(text.slice(at, lt));
        else this.pieces.push((this.pieces.pop() as string).slice(0, -1));
        this.release(this.skipping, parser);
        if (lt >= at) at = lt;
        else this.pass("<", parser);
        continue;
      }
      const to = scanner.scan(text, at, Math.min(text.length, at + slice));
      this.pass(at === 0 && to === text.length ? text : text.slice(at, to), parser);
      at = to;
      if (parser.hasStopped) return text.slice(at);
      const skip = parser.takeSkip();
      // Only from right after its start tag: the parser has read whatever it was given past that.
      if (skip !== undefined && skip.at === this.written) {
        scanner.skip();
        this.skipping = skip.element;
        this.pieces = [];
        this.elements = 0;
      }
    }
    return undefined;
  }

  /** The skipped content of `element` held, or parsed when it is text alone. */
  private release(element: ParsedElement, parser: PacedParser): void {
    const content = this.pieces.join("");
    this.skipping = undefined;
    this.pieces = [];
    if (this.elements === 0) this.pass(content, parser);
    else if (this.held === undefined) this.held = [{ element, content }];
    else this.held.push({ element, content });
  }

  private pass(text: string, parser: PacedParser): void {
    this.written += text.length;
    parser.parse(text);
  }
}

/**
 * The parse with its held content parsed when first read ({@link deferContent}) and in `rest()`,
 * defined then whether the parse stopped or not, before the rest of the document: what the
 * content holds is refused before anything reads the tree whole.
 */
export function deferHeld(parse: XmlParse, held: readonly HeldContent[], read: ReadContent): XmlParse {
  const loads = held.map((h) => deferContent(h, read));
  const { root, rest } = parse;
  return {
    root,
    rest: () => {
      for (const load of loads) load();
      return rest === undefined ? root : rest();
    },
  };
}

/**
 * Parses an element's content, found in place under the namespaces of `scope`, as the content of
 * an element it returns; throws what the parser throws.
 */
export type ReadContent = (content: string, scope: Readonly<Record<string, string>>) => ParsedElement;

const DEFERRED = ["children", "text", "mixed"] as const;

/**
 * Makes the `children`, `text` and `mixed` of a held element its content's, parsed when one of
 * them is first read (a hook that looks at the block) or when `load` is called (the rest of the
 * parse, before anything else reads the tree); what `read` throws is thrown at each read.
 */
export function deferContent(held: HeldContent, read: ReadContent): () => void {
  const { element, content } = held;
  let failure: { error: unknown } | undefined;
  let loaded = false;
  const load = (): void => {
    if (loaded) return;
    if (failure !== undefined) throw failure.error;
    let made: ParsedElement;
    try {
      made = read(content, element.scope);
    } catch (error) {
      failure = { error };
      throw error;
    }
    loaded = true;
    // A property assigned meanwhile keeps what was assigned.
    for (const key of DEFERRED) {
      if (Object.getOwnPropertyDescriptor(element, key)?.get !== undefined) settle(element, key, made[key]);
    }
  };
  for (const key of DEFERRED) {
    Object.defineProperty(element, key, {
      get() {
        load();
        return element[key];
      },
      set(value: unknown) {
        settle(element, key, value);
      },
      enumerable: true,
      configurable: true,
    });
  }
  return load;
}

function settle(element: ParsedElement, key: (typeof DEFERRED)[number], value: unknown): void {
  Object.defineProperty(element, key, { value, writable: true, enumerable: true, configurable: true });
}
