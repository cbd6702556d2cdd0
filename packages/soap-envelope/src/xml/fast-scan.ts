import { interned } from "./interned.js";
import type { HeldContent, ParsedElement, ResolvedXmlLimits, XmlParse } from "./model.js";
import { MarkupScanner } from "./skip.js";
import { XML_NON_WHITESPACE } from "./space.js";

// A fast path for the documents SOAP clients send: an optional XML declaration and elements with
// ASCII names, quoted attributes and plain text, nothing else. It builds the same tree saxes
// would, and returns undefined as soon as the document holds anything beyond that subset
// (a comment, a CDATA section, an entity or character reference, a DOCTYPE, a processing
// instruction, a carriage return, a control or non-BMP character, a non-ASCII name, a broken tag,
// a limit reached): saxes then parses the whole document and decides, so every error and every
// refusal is still saxes' (XML 1.0 §2, Namespaces in XML 1.0 §3-§6). The subset is chosen so
// that everything it accepts is well-formed and namespace-well-formed.
//
// One pass over the text with a cursor: names are compared in place (no string is cut for a
// prefix or an end tag), prefixes resolve against a stack of the declarations in scope, and the
// scope objects of the tree are built only on the elements that declare namespaces.

const XMLNS_URI = "http://www.w3.org/2000/xmlns/";
const XML_URI = "http://www.w3.org/XML/1998/namespace";

/** XML 1.0 §2.8 XMLDecl with version 1.0, an EncName (§4.3.3) and SDDecl (§2.9), at offset 0. */
const XML_DECL =
  /^<\?xml[ \t\n]+version[ \t\n]*=[ \t\n]*(?:"1\.0"|'1\.0')(?:[ \t\n]+encoding[ \t\n]*=[ \t\n]*(?:"[A-Za-z][A-Za-z0-9._-]*"|'[A-Za-z][A-Za-z0-9._-]*'))?(?:[ \t\n]+standalone[ \t\n]*=[ \t\n]*(?:"(?:yes|no)"|'(?:yes|no)'))?[ \t\n]*\?>/;

/**
 * The declaration clients write most: a whole match of {@link XML_DECL} (the expression cannot
 * take in more after `?>`), recognised by comparison before the expression runs.
 */
const COMMON_DECL = '<?xml version="1.0" encoding="UTF-8"?>';

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
/** In text: references, controls but tab and line feed, surrogates and above; `]]>` separately. */
const NOT_PLAIN_IN_TEXT = /[^\t\n\x20-\x25\x27-\ud7ff]/;
const NOT_BLANK = /[^ \t\n]/;

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

/**
 * Stores an attribute as an own property: an attribute named `__proto__`, assigned to a plain
 * object, would hit Object.prototype's setter and vanish, hidden from every later check.
 */
export function setAttribute(attributes: Record<string, string>, key: string, value: string): void {
  if (key === "__proto__") {
    Object.defineProperty(attributes, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    attributes[key] = value;
  }
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
   * Whether the parse writes down its document's shape for a {@link Template}: the elements in
   * the order they open, the ops (an element opening, closing, a text run) and the text runs'
   * offsets. Off once the document is past what a template keeps.
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

/** The parser of every document in turn; one that stopped at a checkpoint keeps its own. */
let PARSE = new FastParse();

/** The length of the XML declaration at offset 0, 0 when there is none, -1 when it is not one. */
function declarationLength(s: string): number {
  if (!s.startsWith("<?xml")) return 0;
  // A slice and a comparison cost less than startsWith over this many characters.
  if (s.slice(0, COMMON_DECL.length) === COMMON_DECL) return COMMON_DECL.length;
  const decl = XML_DECL.exec(s);
  return decl === null ? -1 : decl[0].length;
}

/**
 * The document's root element when the whole document lies in the plain subset described above,
 * else undefined (saxes parses it then).
 */
export function parseSimpleXml(
  s: string,
  limits: ResolvedXmlLimits,
  baseScope: Readonly<Record<string, string>>,
): ParsedElement | undefined {
  const declLength = declarationLength(s);
  if (declLength === -1) return undefined;
  const p = PARSE;
  p.reset(s, limits, baseScope);
  p.pos = declLength;
  return finish(p, run(p));
}

/**
 * {@link parseSimpleXml} asking `checkpoint` as the first levels open. A parse that stops keeps
 * its state (another document takes a fresh parser meanwhile) and resumes in `rest()`; when the
 * rest leaves the subset, `reparse()` (saxes over the whole document) gives the tree.
 */
export function parseSimpleXmlUntil(
  s: string,
  limits: ResolvedXmlLimits,
  baseScope: Readonly<Record<string, string>>,
  checkpoint: XmlCheckpoint,
  reparse: () => ParsedElement,
): XmlParse | undefined {
  const templates = checkpoint.templates;
  const templated = templates !== undefined && s.length <= TEMPLATE_CHARS && templates.attempt();
  if (templated) {
    const root = templates.replay(s, limits, baseScope);
    if (root !== undefined) return { root, rest: undefined };
  }
  const declLength = declarationLength(s);
  if (declLength === -1) return undefined;
  const p = PARSE;
  p.reset(s, limits, baseScope);
  p.checkpoint = checkpoint;
  p.mayStop = checkpoint.stops;
  p.pos = declLength;
  p.recording = templated;
  const ok = run(p);
  const held = p.held;
  if (!ok || !p.stopped) {
    if (ok) templates?.remember(p);
    const root = finish(p, ok);
    return root === undefined ? undefined : { root, rest: undefined, held };
  }
  PARSE = new FastParse();
  return {
    root: p.root as ParsedElement,
    held,
    rest: () => {
      p.mayStop = false;
      const ok = run(p);
      if (ok) templates?.remember(p);
      return finish(p, ok) ?? reparse();
    },
  };
}

/** Parses from `p.pos` to the end of the text, or to a checkpoint's stop; false to give up. */
function run(p: FastParse): boolean {
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
function finish(p: FastParse, ok: boolean): ParsedElement | undefined {
  const root = ok && p.depth === 0 ? p.root : undefined;
  p.reset("", p.limits, p.baseScope);
  return root;
}

// Templates. The messages a service receives differ in their text, rarely in their markup: a
// client sends the same tags, namespace declarations and attributes on every call of an operation,
// with other values between them. A document the parser above read to its end (one stopped at
// the checkpoint once its rest is read) leaves its shape behind: its markup, cut at its text runs,
// and the elements it opens. A later document whose markup is the same, character for character,
// with text runs in the same places, has the same elements, namespaces and attributes under the
// same limits and checkpoint: its tree is built from the template, and only its text runs are
// read, with the checks text() makes (an empty run is no run: the parser reads nothing there
// either). Any difference in the markup (another value in a tag, white space between tags where
// there was none) fails the comparison, and the document is parsed. What the checkpoint would
// have stopped is built too: it holds no more than the template's document did.

/** Ops of a template besides an element opening (its index, ≥ 0). */
const OP_CLOSE = -1;
const OP_TEXT = -2;
/** The most ops (elements opening and closing, text runs) a template holds. */
const TEMPLATE_OPS = 512;
/** The longest document a template is made of or compared with, in characters. */
const TEMPLATE_CHARS = 16 * 1024;
/** Templates kept, the last used first. */
const TEMPLATE_COUNT = 8;
/**
 * How far documents no template builds may outnumber those one builds (see
 * {@link XmlTemplates.attempt}) before only one in {@link COLD_EVERY} is compared with the
 * templates: traffic whose markup differs from message to message (an attribute with a fresh id
 * in each) would pay the comparisons and the recording for nothing.
 */
const CREDIT = 64;
const COLD_EVERY = 16;

/** An element as its start tag made it: what every document of the template shares. */
export interface TemplateElement {
  namespace: string;
  localName: string;
  /** Expanded attribute names and their values, in document order. */
  attributes: string[];
  /** Its in-scope namespaces: an index into the template's scopes (0: the base scope). */
  scope: number;
}

/** Namespace bindings an element made: on the scope at index `parent`, prefixes and URIs. */
interface TemplateScope {
  parent: number;
  bindings: string[];
}

export interface Template {
  limits: ResolvedXmlLimits;
  baseScope: Readonly<Record<string, string>>;
  /** The markup before the first text run, between runs, and after the last: one more than the runs. */
  markup: string[];
  /** Element indices as they open, {@link OP_CLOSE} and {@link OP_TEXT}, in document order. */
  ops: number[];
  elements: TemplateElement[];
  /** The scopes its elements' declarations made, after the base scope (index 0). */
  scopes: TemplateScope[];
  /**
   * The scope objects every tree built from it shares (frozen), by index; undefined until a
   * document's markup first begins as its does (see {@link detach}).
   */
  scopeObjects: Readonly<Record<string, string>>[] | undefined;
}

/**
 * The templates of the documents one checkpoint's parses read (a service's messages), the last
 * used first. A checkpoint without them (`parseEnvelope`'s, made per call) keeps none.
 */
export class XmlTemplates {
  private readonly list: Template[] = [];
  /**
   * Goes up by 2 for each document a template builds (to {@link CREDIT}) and down by 1 for each
   * that is compared and none builds (to 0); at 0, only one document in {@link COLD_EVERY} is
   * compared. A document built saves more than twice what a miss costs.
   */
  private credit = CREDIT;
  private skipped = 0;

  /** Whether this document is compared with the templates, and leaves its own if none builds it. */
  attempt(): boolean {
    return this.credit > 0 || ++this.skipped % COLD_EVERY === 0;
  }

  /** The shape of the document `p` parsed to its end, as the first template, if it recorded one. */
  remember(p: FastParse): void {
    if (!p.recording || p.depth !== 0 || p.root === undefined) return;
    this.list.unshift(template(p));
    if (this.list.length > TEMPLATE_COUNT) this.list.pop();
  }

  /** The tree of `s` from the first template whose markup it repeats, else undefined. */
  replay(
    s: string,
    limits: ResolvedXmlLimits,
    baseScope: Readonly<Record<string, string>>,
  ): ParsedElement | undefined {
    const list = this.list;
    for (let k = 0; k < list.length; k++) {
      const t = list[k] as Template;
      if (t.limits !== limits || t.baseScope !== baseScope) continue;
      const root = replay(t, s);
      if (root === undefined) continue;
      if (k > 0) {
        list.splice(k, 1);
        list.unshift(t);
      }
      if (this.credit < CREDIT) this.credit += 2;
      return root;
    }
    if (this.credit > 0) this.credit--;
    return undefined;
  }
}

/** The shape of the document `p` parsed to its end. */
function template(p: FastParse): Template {
  const s = p.s;
  const runs = p.runs;
  const markup: string[] = [];
  let at = 0;
  for (let k = 0; k < p.runCount; k += 2) {
    markup.push(s.slice(at, runs[k] as number));
    at = runs[k + 1] as number;
  }
  markup.push(s.slice(at));
  // The scopes as the parse made them: an element's is its parent's object or one made from it
  // with the element's declarations (few: most documents declare on their root alone).
  const made: object[] = [p.baseScope];
  const scopes: TemplateScope[] = [];
  const elements: TemplateElement[] = [];
  for (let k = 0; k < p.openedCount; k++) {
    const e = p.opened[k] as ParsedElement;
    const keys = Object.keys(e.attributes);
    const attributes: string[] = [];
    for (const key of keys) attributes.push(key, e.attributes[key] as string);
    elements.push({
      namespace: e.namespace,
      localName: e.localName,
      attributes,
      scope: scopeIndex(e.scope, made, scopes),
    });
  }
  return {
    limits: p.limits,
    baseScope: p.baseScope,
    markup,
    ops: p.ops.slice(0, p.opCount),
    elements,
    scopes,
    scopeObjects: undefined,
  };
}

/** The index of `scope` among the scopes `made`, its bindings added to `scopes` when new. */
function scopeIndex(scope: object, made: object[], scopes: TemplateScope[]): number {
  let index = made.indexOf(scope);
  if (index === -1) {
    const parent = scopeIndex(Object.getPrototypeOf(scope) as object, made, scopes);
    const bindings: string[] = [];
    for (const prefix of Object.keys(scope))
      bindings.push(prefix, (scope as Record<string, string>)[prefix] as string);
    index = made.push(scope) - 1;
    scopes.push({ parent, bindings });
  }
  return index;
}

/** The open elements of a replay and whether each one's text so far holds character data. */
const REPLAY_STACK: (ParsedElement | undefined)[] = [];
const REPLAY_SHOWN: boolean[] = [];

/** `s` built from template `t`, or undefined when its markup is not `t`'s or a text run is not plain. */
function replay(t: Template, s: string): ParsedElement | undefined {
  let segment = t.markup[0] as string;
  if (!sameAt(s, 0, segment)) return undefined;
  const scopes = t.scopeObjects ?? detach(t);
  const markup = t.markup;
  let pos = segment.length;
  let next = 1;
  let depth = 0;
  let root: ParsedElement | undefined;
  const stack = REPLAY_STACK;
  const shown = REPLAY_SHOWN;
  const ops = t.ops;
  const elements = t.elements;
  try {
    for (let k = 0; k < ops.length; k++) {
      const op = ops[k] as number;
      if (op >= 0) {
        const e = elements[op] as TemplateElement;
        const element: ParsedElement = {
          namespace: e.namespace,
          localName: e.localName,
          attributes: attributesOf(e.attributes),
          children: [],
          text: "",
          scope: scopes[e.scope] as Readonly<Record<string, string>>,
          mixed: false,
        };
        if (depth > 0) {
          const parent = stack[depth - 1] as ParsedElement;
          if (shown[depth - 1]) parent.mixed = true;
          parent.children.push(element);
        } else {
          root = element;
        }
        stack[depth] = element;
        shown[depth] = false;
        depth++;
      } else if (op === OP_CLOSE) {
        depth--;
        stack[depth] = undefined;
      } else {
        let i = s.indexOf("<", pos);
        if (i === -1) i = s.length;
        // An empty run is no run: the parser reads none there.
        if (i > pos && !replayText(s, pos, i, depth)) return undefined;
        pos = i;
        segment = markup[next++] as string;
        if (!sameAt(s, pos, segment)) return undefined;
        pos += segment.length;
      }
    }
  } finally {
    for (let k = 0; k < depth; k++) stack[k] = undefined;
  }
  return pos === s.length ? root : undefined;
}

/**
 * Whether `s` holds `segment` at `pos`. A cut and one comparison: V8 compiles `startsWith` with a
 * string it does not know in advance into a loop that costs some forty instructions a character.
 */
function sameAt(s: string, pos: number, segment: string): boolean {
  return s.slice(pos, pos + segment.length) === segment;
}

/**
 * FastParse.text() over `s[start, end)` in the element open at `depth` (0: outside the root). A
 * short run (most values: an id, an amount) is checked in one pass over its characters rather
 * than by three expressions, each of which costs more to start than to read a few characters.
 */
function replayText(s: string, start: number, end: number, depth: number): boolean {
  let blank = true;
  let text: string | undefined;
  if (end - start <= SHORT_RUN) {
    for (let i = start; i < end; i++) {
      const c = s.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x09) continue;
      // NOT_PLAIN_IN_TEXT: a control character, `&`, a surrogate or above.
      if (c < 0x20 || c === 0x26 || c > 0xd7ff) return false;
      blank = false;
    }
  } else {
    text = s.slice(start, end);
    if (NOT_PLAIN_IN_TEXT.test(text)) return false;
    blank = !NOT_BLANK.test(text);
  }
  if (depth === 0) return blank;
  if (end === s.length) return false;
  text ??= s.slice(start, end);
  if (!blank && text.includes("]]>")) return false;
  const top = REPLAY_STACK[depth - 1] as ParsedElement;
  top.text += text;
  if (!blank) {
    if (top.children.length > 0) top.mixed = true;
    // Not blank and plain (no carriage return): it holds a character that is not XML white
    // space, which text() asks XML_NON_WHITESPACE.
    REPLAY_SHOWN[depth - 1] = true;
  }
  return true;
}

/** Characters of a text run checked one by one (longer ones by the expressions). */
const SHORT_RUN = 16;

function attributesOf(pairs: readonly string[]): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (let k = 0; k < pairs.length; k += 2)
    setAttribute(attributes, pairs[k] as string, pairs[k + 1] as string);
  return attributes;
}

/**
 * A template whose markup a second document begins with is kept: its strings, cut from the first
 * one, would keep that document (its text, credentials too) alive as long as the template. They
 * are replaced by {@link interned} copies, which the service's comparisons with its constant names
 * (`Envelope`, the SOAP namespace, the contract's names) find equal without reading them, and its
 * scope objects are made (frozen: every tree built from it shares them).
 */
function detach(t: Template): Readonly<Record<string, string>>[] {
  t.markup = t.markup.map(interned);
  t.elements = t.elements.map((e) => ({
    namespace: interned(e.namespace),
    localName: interned(e.localName),
    attributes: e.attributes.map(interned),
    scope: e.scope,
  }));
  const objects: Readonly<Record<string, string>>[] = [t.baseScope];
  for (const { parent, bindings } of t.scopes) {
    const own = Object.create(objects[parent] as object) as Record<string, string>;
    // Defined, not assigned: a prefix the parent binds too is frozen there, and assigning it
    // would throw.
    for (let k = 0; k < bindings.length; k += 2) {
      Object.defineProperty(own, interned(bindings[k] as string), {
        value: interned(bindings[k + 1] as string),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    objects.push(Object.freeze(own));
  }
  t.scopes = [];
  t.scopeObjects = objects;
  return objects;
}

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
   * document that repeats one's markup is built without parsing it (xml/fast-scan.ts); none without.
   */
  readonly templates?: XmlTemplates | undefined;
}
