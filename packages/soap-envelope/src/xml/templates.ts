import { interned } from "./interned.js";
import { type ParsedElement, type ResolvedXmlLimits, setAttribute } from "./model.js";
import { NOT_BLANK, NOT_PLAIN_IN_TEXT } from "./plain-text.js";

// The messages a service receives differ in their text, rarely in their markup: a client sends
// the same tags, namespace declarations and attributes on every call of an operation, with other
// values between them. A document the fast path (xml/fast-parse.ts) read to its end (one stopped
// at the checkpoint once its rest is read) leaves its shape behind: its markup, cut at its text
// runs, and the elements it opens. A later document whose markup is the same, character for
// character, with text runs in the same places, has the same elements, namespaces and attributes
// under the same limits and checkpoint: its tree is built from the template, and only its text
// runs are read, with the checks FastParse.text() makes (an empty run is no run: the parser reads
// nothing there either). Any difference in the markup (another value in a tag, white space between
// tags where there was none) fails the comparison, and the document is parsed. What the checkpoint
// would have stopped is built too: it holds no more than the template's document did.

/** Ops of a template besides an element opening (its index, ≥ 0). */
export const OP_CLOSE = -1;
export const OP_TEXT = -2;
/** The most ops (elements opening and closing, text runs) a template holds. */
export const TEMPLATE_OPS = 512;
/** The longest document a template is made of or compared with, in characters. */
export const TEMPLATE_CHARS = 16 * 1024;
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
 * The shape a parse writes down as it reads (FastParse, xml/fast-parse.ts), while `recording`:
 * what {@link XmlTemplates.remember} makes a template of.
 */
export interface RecordedParse {
  readonly s: string;
  readonly limits: ResolvedXmlLimits;
  readonly baseScope: Readonly<Record<string, string>>;
  /** Off once the document is past what a template keeps. */
  readonly recording: boolean;
  readonly depth: number;
  readonly root: ParsedElement | undefined;
  /** The elements in the order they open. */
  readonly opened: readonly (ParsedElement | undefined)[];
  readonly openedCount: number;
  /** Element indices as they open, {@link OP_CLOSE} and {@link OP_TEXT}, in document order. */
  readonly ops: readonly number[];
  readonly opCount: number;
  /** Each text run's start and end offsets. */
  readonly runs: readonly number[];
  readonly runCount: number;
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
  remember(p: RecordedParse): void {
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
function template(p: RecordedParse): Template {
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
