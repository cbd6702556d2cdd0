import type { XmlCheckpoint } from "./checkpoint.js";
import { type HeldContent, type ParsedElement, type ResolvedXmlLimits, setAttribute } from "./model.js";
import { NOT_BLANK, NOT_PLAIN_IN_TEXT } from "./plain-text.js";
import { MarkupScanner } from "./skip.js";
import { XML_NON_WHITESPACE } from "./space.js";
import { OP_CLOSE, OP_TEXT, TEMPLATE_OPS } from "./templates.js";

// The parser of the fast path (xml/fast-scan.ts). One pass over the text with a cursor: names are
// compared in place (no string is cut for a prefix or an end tag), prefixes resolve against a
// stack of the declarations in scope, and the scope objects of the tree are built only on the
// elements that declare namespaces.

const XMLNS_URI = "http://www.w3.org/2000/xmlns/";
const XML_URI = "http://www.w3.org/XML/1998/namespace";

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const EQ = 0x3d;
const COLON = 0x3a;
const QUOT = 0x22;
const APOS = 0x27;

/**
 * NCName characters (Namespaces §3), restricted to ASCII: bit 1 marks those that may start a
 * name (letters, `_`), bit 2 those that may follow (also digits, `-`, `.`). One table lookup.
 */
const NAME_CHARS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const letter = (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
  const other = (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e;
  NAME_CHARS[c] = letter ? 3 : other ? 2 : 0;
}

function isNameStart(c: number): boolean {
  return ((NAME_CHARS[c] as number) & 1) !== 0;
}

function isNameChar(c: number): boolean {
  return ((NAME_CHARS[c] as number) & 2) !== 0;
}

/** XML 1.0 §2.3 S without #xD (a carriage return goes to saxes for line-end handling, §2.11). */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09;
}

/** In an attribute value: `<`, references, any white space but #x20 (§3.3.3), controls, surrogates and above. */
const NOT_PLAIN_IN_VALUE = /[^\x20-\x25\x27-\x3b\x3d-\ud7ff]/;

/** The end of the QName (`prefix:local` or `local`) at `i`, or -1; `colon` gets the colon's offset. */
function qnameEnd(s: string, i: number, at: { colon: number }): number {
  at.colon = -1;
  if (!isNameStart(s.charCodeAt(i))) return -1;
  i++;
  while (isNameChar(s.charCodeAt(i))) i++;
  if (s.charCodeAt(i) === COLON) {
    at.colon = i;
    i++;
    if (!isNameStart(s.charCodeAt(i))) return -1;
    i++;
    while (isNameChar(s.charCodeAt(i))) i++;
  }
  return i;
}

/** Whether `s[a, a + len)` and `s[b, b + len)` hold the same code units. */
function sameRange(s: string, a: number, b: number, len: number): boolean {
  for (let k = 0; k < len; k++) if (s.charCodeAt(a + k) !== s.charCodeAt(b + k)) return false;
  return true;
}

/**
 * The parser's state: the cursor, the open elements and the declarations in scope. Parsing is
 * synchronous and calls out to nothing, so one instance serves every document in turn; its
 * stacks are arrays with explicit tops, reset by {@link FastParse.reset}.
 */
export class FastParse {
  s = "";
  limits!: ResolvedXmlLimits;
  baseScope!: Readonly<Record<string, string>>;
  pos = 0;
  elements = 0;
  root: ParsedElement | undefined;
  /** The open elements, their QNames' offsets and lengths, whether their text has character data (XML 1.0 §2.3). */
  depth = 0;
  readonly stack: (ParsedElement | undefined)[] = [];
  readonly nameAt: number[] = [];
  readonly nameLength: number[] = [];
  readonly textShown: boolean[] = [];
  /** How many namespace declarations each open element made. */
  readonly declared: number[] = [];
  /** Namespace declarations in scope, innermost last: prefix and URI. */
  bindings = 0;
  readonly prefixes: string[] = [];
  readonly uris: string[] = [];
  /** Attribute names and values of the tag being read, in document order. */
  rawCount = 0;
  readonly raw: string[] = [];
  readonly at = { colon: -1 };
  /** The checkpoint asked as the first levels open (xml/reader.ts), whether it may stop and did. */
  checkpoint: XmlCheckpoint | undefined;
  mayStop = false;
  stopped = false;
  childLimit = Number.POSITIVE_INFINITY;
  /** Whether the checkpoint skips the content of the element opening ({@link FastParse.skip}), and what was held. */
  skipNext = false;
  held: HeldContent[] | undefined;
  /**
   * Whether the parse writes down its document's shape for a template (xml/templates.ts): the
   * elements in the order they open, the ops (an element opening, closing, a text run) and the
   * text runs' offsets. Off once the document is past what a template keeps.
   */
  recording = false;
  readonly opened: (ParsedElement | undefined)[] = [];
  openedCount = 0;
  readonly ops: number[] = [];
  opCount = 0;
  /** Each text run's start and end offsets. */
  readonly runs: number[] = [];
  runCount = 0;

  reset(s: string, limits: ResolvedXmlLimits, baseScope: Readonly<Record<string, string>>): void {
    this.s = s;
    this.limits = limits;
    this.baseScope = baseScope;
    this.pos = 0;
    this.elements = 0;
    this.root = undefined;
    for (let k = 0; k < this.depth; k++) this.stack[k] = undefined;
    this.depth = 0;
    this.bindings = 0;
    this.rawCount = 0;
    this.checkpoint = undefined;
    this.mayStop = false;
    this.stopped = false;
    this.childLimit = Number.POSITIVE_INFINITY;
    this.skipNext = false;
    this.held = undefined;
    this.recording = false;
    // Counts, not `length = 0`: shrinking an array calls into the runtime.
    for (let k = 0; k < this.openedCount; k++) this.opened[k] = undefined;
    this.openedCount = 0;
    this.opCount = 0;
    this.runCount = 0;
  }

  /** One more op of the shape being recorded; past {@link TEMPLATE_OPS} the recording stops. */
  note(op: number): void {
    if (this.opCount >= TEMPLATE_OPS) this.recording = false;
    else this.ops[this.opCount++] = op;
  }

  skipSpace(): number {
    const start = this.pos;
    while (isSpace(this.s.charCodeAt(this.pos))) this.pos++;
    return this.pos - start;
  }

  /** Text up to the next `<`, appended as saxes' text event would be; false to give up. */
  text(): boolean {
    const s = this.s;
    const start = this.pos;
    let i = s.indexOf("<", start);
    if (i === -1) i = s.length;
    const text = s.slice(start, i);
    if (NOT_PLAIN_IN_TEXT.test(text)) return false;
    const blank = !NOT_BLANK.test(text);
    const depth = this.depth;
    this.pos = i;
    if (this.recording) {
      this.note(OP_TEXT);
      this.runs[this.runCount++] = start;
      this.runs[this.runCount++] = i;
    }
    if (depth === 0) return blank; // outside the root only white space
    if (i === s.length) return false; // an element left open
    if (!blank && text.includes("]]>")) return false; // §2.4
    const top = this.stack[depth - 1] as ParsedElement;
    top.text += text;
    if (!blank) {
      if (top.children.length > 0) top.mixed = true;
      // As the general parser does (xml/reader.ts): text that is not all XML white space makes a parent mixed.
      if (!this.textShown[depth - 1] && XML_NON_WHITESPACE.test(text)) this.textShown[depth - 1] = true;
    }
    return true;
  }

  /** A start tag at `pos` (just after `<`); false to give up. */
  startTag(): boolean {
    const s = this.s;
    const nameAt = this.pos;
    const end = qnameEnd(s, nameAt, this.at);
    if (end === -1) return false;
    const colon = this.at.colon;
    this.pos = end;
    this.elements++;
    const depth = this.depth;
    if (this.elements > this.limits.maxElements || depth >= this.limits.maxDepth) return false;
    this.rawCount = 0;
    let selfClosing = false;
    for (;;) {
      const spaced = this.skipSpace() > 0;
      const c = s.charCodeAt(this.pos);
      if (c === GT) {
        this.pos++;
        break;
      }
      if (c === SLASH && s.charCodeAt(this.pos + 1) === GT) {
        this.pos += 2;
        selfClosing = true;
        break;
      }
      if (!spaced || !this.attribute()) return false;
      if (this.rawCount / 2 > this.limits.maxAttributes) return false;
    }
    const declared = this.rawCount === 0 ? 0 : this.declare();
    if (declared === -1) return false;
    const element = this.element(nameAt, colon, end, declared);
    if (element === undefined) return false;
    if (depth > 0) {
      const parent = this.stack[depth - 1] as ParsedElement;
      if (this.textShown[depth - 1]) parent.mixed = true;
      parent.children.push(element);
      if (
        depth < 3 &&
        this.checkpoint !== undefined &&
        !this.watch(this.checkpoint, element, parent, depth)
      ) {
        return false;
      }
    } else if (this.root === undefined) {
      this.root = element;
    } else {
      return false; // a second root element
    }
    if (this.recording) {
      this.note(this.openedCount);
      this.opened[this.openedCount++] = element;
      if (selfClosing) this.note(OP_CLOSE);
    }
    if (selfClosing) {
      this.bindings -= declared;
    } else {
      this.stack[depth] = element;
      this.nameAt[depth] = nameAt;
      this.nameLength[depth] = end - nameAt;
      this.textShown[depth] = false;
      this.declared[depth] = declared;
      this.depth = depth + 1;
      if (this.skipNext) return this.skip(element);
    }
    this.skipNext = false;
    return true;
  }

  /**
   * Reads past the content of `element`, just opened, to its end tag, holding it (xml/skip.ts);
   * content of text alone is left to be parsed. False to give up: a limit reached, or the
   * document ending inside the element, which the streaming parser then reports.
   */
  skip(element: ParsedElement): boolean {
    this.skipNext = false;
    const scanner = new MarkupScanner(this.depth);
    scanner.skip();
    const end = scanner.scan(this.s, this.pos, this.s.length);
    const elements = this.elements + scanner.elements;
    if (scanner.skipping || elements > this.limits.maxElements || scanner.deepest > this.limits.maxDepth)
      return false;
    if (scanner.elements === 0) return true;
    this.elements = elements;
    // `end` is the `/` of the end tag, which the parse reads next.
    const held = { element, content: this.s.slice(this.pos, end - 1) };
    if (this.held === undefined) this.held = [held];
    else this.held.push(held);
    this.pos = end - 1;
    // A template holds every element of its document: this one has some unbuilt.
    this.recording = false;
    return true;
  }

  /**
   * The checkpoint's questions for an element opening at depth 1 or 2 (as xml/reader.ts asks them); false
   * to give up past the children limit (saxes then refuses the document).
   */
  watch(checkpoint: XmlCheckpoint, element: ParsedElement, parent: ParsedElement, depth: number): boolean {
    if (depth === 1) this.childLimit = checkpoint.maxChildren(element, parent.children.length - 1);
    else if (parent.children.length > this.childLimit) return false;
    if (this.mayStop && !this.stopped) {
      if (checkpoint.stopBefore(element, parent, depth as 1 | 2)) this.stopped = true;
      else if (depth === 2 && checkpoint.skipContent?.(element, parent)) this.skipNext = true;
    }
    return true;
  }

  /** One `name="value"` pair into `raw`; false to give up. */
  attribute(): boolean {
    const s = this.s;
    const start = this.pos;
    const end = qnameEnd(s, start, this.at);
    if (end === -1) return false;
    const name = s.slice(start, end);
    this.pos = end;
    this.skipSpace();
    if (s.charCodeAt(this.pos) !== EQ) return false;
    this.pos++;
    this.skipSpace();
    const quote = s.charCodeAt(this.pos);
    if (quote !== QUOT && quote !== APOS) return false;
    const valueAt = this.pos + 1;
    const i = s.indexOf(quote === QUOT ? '"' : "'", valueAt);
    if (i === -1) return false;
    const value = s.slice(valueAt, i);
    // §3.3.3: no references and no white space but #x20, so the value needs no normalisation.
    if (NOT_PLAIN_IN_VALUE.test(value)) return false;
    const raw = this.raw;
    const n = this.rawCount;
    for (let k = 0; k < n; k += 2) if (raw[k] === name) return false;
    raw[n] = name;
    raw[n + 1] = value;
    this.rawCount = n + 2;
    this.pos = i + 1;
    return true;
  }

  /**
   * Takes the tag's namespace declarations into scope (Namespaces §3); how many, or -1 to give
   * up: no undeclaring a prefix in 1.0, `xml` and `xmlns` are reserved.
   */
  declare(): number {
    const raw = this.raw;
    let declared = 0;
    for (let k = 0; k < this.rawCount; k += 2) {
      const name = raw[k] as string;
      const value = raw[k + 1] as string;
      const prefix = name === "xmlns" ? "" : name.startsWith("xmlns:") ? name.slice(6) : undefined;
      if (prefix === undefined) continue;
      if (value !== value.trim() || (prefix !== "" && value === "")) return -1;
      if (prefix === "xml" || prefix === "xmlns" || value === XML_URI || value === XMLNS_URI) return -1;
      // Past the limit the streaming parser takes over and refuses the message.
      if (this.bindings >= this.limits.maxNamespaces) return -1;
      this.prefixes[this.bindings] = prefix;
      this.uris[this.bindings] = value;
      this.bindings++;
      declared++;
    }
    return declared;
  }

  /** The namespace bound to the prefix `s[at, at + len)` (`""` when len is 0), or undefined. */
  lookup(at: number, len: number): string | undefined {
    const s = this.s;
    const prefixes = this.prefixes;
    for (let k = this.bindings - 1; k >= 0; k--) {
      const p = prefixes[k] as string;
      if (p.length === len && (len === 0 || s.startsWith(p, at))) return this.uris[k];
    }
    return this.baseScope[len === 0 ? "" : s.slice(at, at + len)];
  }

  /** The element with its namespace scope and expanded attributes; undefined to give up. */
  element(nameAt: number, colon: number, end: number, declared: number): ParsedElement | undefined {
    const s = this.s;
    const depth = this.depth;
    const parentScope = depth > 0 ? (this.stack[depth - 1] as ParsedElement).scope : this.baseScope;
    let scope = parentScope;
    if (declared > 0) {
      const own = Object.create(parentScope) as Record<string, string>;
      for (let k = this.bindings - declared; k < this.bindings; k++)
        own[this.prefixes[k] as string] = this.uris[k] as string;
      scope = own;
    }
    // Namespaces §3: the prefixes `xml` and `xmlns` name no element.
    const prefixLength = colon === -1 ? 0 : colon - nameAt;
    if (
      (prefixLength === 3 && s.startsWith("xml", nameAt)) ||
      (prefixLength === 5 && s.startsWith("xmlns", nameAt))
    )
      return undefined;
    const namespace = this.lookup(nameAt, prefixLength);
    if (namespace === undefined && prefixLength !== 0) return undefined;
    const attributes: Record<string, string> = {};
    const raw = this.raw;
    for (let k = 0; k < this.rawCount; k += 2) {
      const name = raw[k] as string;
      if (name === "xmlns" || name.startsWith("xmlns:")) continue;
      const c = name.indexOf(":");
      let key = name;
      if (c !== -1) {
        const p = name.slice(0, c);
        const uri = p === "xml" ? undefined : scope[p];
        if (uri === undefined) return undefined;
        key = `{${uri}}${name.slice(c + 1)}`;
      }
      if (Object.hasOwn(attributes, key)) return undefined; // §6.3: unique expanded names
      setAttribute(attributes, key, raw[k + 1] as string);
    }
    return {
      namespace: namespace ?? "",
      localName: s.slice(colon === -1 ? nameAt : colon + 1, end),
      attributes,
      children: [],
      text: "",
      scope,
      mixed: false,
    };
  }

  /**
   * An end tag at `pos` (just after `</`); false to give up. Its name must be the open
   * element's QName (XML 1.0 §3 element type match): compared in place, then a following name
   * character would make it another name; anything else but white space and `>` gives up.
   */
  endTag(): boolean {
    const s = this.s;
    const top = this.depth - 1;
    const len = this.nameLength[top] as number;
    let i = this.pos;
    if (!sameRange(s, i, this.nameAt[top] as number, len)) return false;
    i += len;
    if (isNameChar(s.charCodeAt(i))) return false;
    this.pos = i;
    this.skipSpace();
    if (s.charCodeAt(this.pos) !== GT) return false;
    this.pos++;
    this.stack[top] = undefined;
    this.bindings -= this.declared[top] as number;
    this.depth = top;
    if (this.recording) this.note(OP_CLOSE);
    return true;
  }
}

/** Parses from `p.pos` to the end of the text, or to a checkpoint's stop; false to give up. */
export function run(p: FastParse): boolean {
  const s = p.s;
  const n = s.length;
  while (p.pos < n) {
    if (s.charCodeAt(p.pos) !== LT) {
      if (!p.text()) return false;
      continue;
    }
    p.pos++;
    if (s.charCodeAt(p.pos) === SLASH) {
      p.pos++;
      if (p.depth === 0 || !p.endTag()) return false;
    } else {
      if (!p.startTag()) return false;
      if (p.stopped && p.mayStop) return true;
    }
  }
  return true;
}

/** The root of a parse that ran to the end (`ok`), else undefined; the parser is cleared. */
export function finish(p: FastParse, ok: boolean): ParsedElement | undefined {
  const root = ok && p.depth === 0 ? p.root : undefined;
  p.reset("", p.limits, p.baseScope);
  return root;
}
