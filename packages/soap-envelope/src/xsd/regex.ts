import { RE2JS } from "re2js";
import { compileSequence } from "./sequence.js";

/**
 * XML Schema regular expressions (XML Schema 1.0 Part 2 Appendix F; XML Schema 1.1 Part 2
 * Appendix G) translated into RE2 syntax and matched by `re2js`, a pure-JavaScript port of RE2.
 *
 * Why not `RegExp`: V8's engine backtracks, so a pattern such as `[^@\s]+@[^@\s]+\.[^@\s]+` takes
 * time quadratic (or worse) in the length of a value that almost matches, and a pattern facet sees
 * client input. RE2 runs in time linear in the input for every pattern it accepts, and XSD
 * regular expressions need nothing RE2 lacks (no back-references, no lookaround).
 *
 * The translation is done once, when the contract is compiled; a construct that cannot be
 * translated throws {@link XsdPatternError} then, never while a request is validated. A pattern
 * that is one sequence of quantified character sets (most facets) is matched by the smaller
 * automaton of `xsd-sequence.ts` instead, also in linear time.
 */

/** A pattern that is not a valid XSD regular expression, or that the engine cannot run. */
export class XsdPatternError extends Error {
  /** Code point offset in the pattern where the problem was found, when known. */
  readonly offset: number | undefined;
  constructor(message: string, offset?: number) {
    super(offset === undefined ? message : `${message} (at offset ${offset})`);
    this.name = "XsdPatternError";
    this.offset = offset;
  }
}

/** A compiled pattern facet: `test` matches the whole value (XSD patterns are implicitly anchored). */
export interface XsdPattern {
  /** The XSD pattern as written in the schema. */
  readonly source: string;
  /** The RE2 pattern it was translated into. */
  readonly re2: string;
  /** Whether the entire value matches, in time linear in its length. */
  test(value: string): boolean;
}

/**
 * Translates and compiles an XSD `pattern` facet value.
 *
 * @example
 * compileXsdPattern("[a-z-[aeiou]]+").test("xyz"); // true
 * compileXsdPattern("\\d{3}").test("1234"); // false: the whole value must match
 * @throws {XsdPatternError} when the pattern is invalid or cannot be translated
 * @see https://www.w3.org/TR/xmlschema-2/#regexs
 */
export function compileXsdPattern(pattern: string): XsdPattern {
  const parser = new Parser(pattern);
  const re2 = parser.parse();
  let compiled: ReturnType<typeof RE2JS.compile>;
  try {
    compiled = RE2JS.compile(re2);
  } catch (err) {
    // RE2's own limits, such as a repetition count above 1000 (`a{1001}`, `(a{100}){100}`).
    throw new XsdPatternError(`the linear-time engine refuses it: ${(err as Error).message}`);
  }
  // A plain sequence of quantified character sets (most facets) runs on its own small automaton,
  // linear time too; anything else on RE2.
  const steps = parser.sequence;
  const sequence =
    steps === undefined
      ? undefined
      : compileSequence(steps.map((s) => ({ ranges: materialize(s.set), min: s.min, max: s.max })));
  return { source: pattern, re2, test: sequence ?? ((value) => compiled.testExact(value)) };
}

/**
 * Translates an XSD regular expression into an RE2 pattern with the same meaning (to be matched
 * against the whole value). `.`, `\s`, `\d`, `\w`, `\i`, `\c` and their complements keep their
 * XSD meanings (which differ from RE2's), `^` and `$` are ordinary characters, and character
 * class subtraction (`[a-z-[aeiou]]`) is computed into plain ranges.
 *
 * @example translateXsdPattern("a.c"); // "(?:a[^\\x{A}\\x{D}]c)"
 * @throws {XsdPatternError} when the pattern is not a valid XSD regular expression, or uses a
 *   Unicode block escape (`\p{IsBasicLatin}`), which RE2 has no tables for
 * @see https://www.w3.org/TR/xmlschema11-2/#regexs
 */
export function translateXsdPattern(pattern: string): string {
  return new Parser(pattern).parse();
}

// ------------------------------------------------------------------ character sets

interface Range {
  lo: number;
  hi: number;
}

/** A class item RE2 understands directly: a code point range or a general category `\p{X}`. */
type Item = Range | { prop: string };

/** A set of characters: the union of `items`, or its complement when `negated`. */
interface CharSet {
  negated: boolean;
  items: Item[];
}

const MAX_CP = 0x10ffff;

const set = (items: Item[], negated = false): CharSet => ({ negated, items });
const ranges = (...pairs: [number, number][]): Range[] => pairs.map(([lo, hi]) => ({ lo, hi }));

/** XML Schema Part 2 Appendix F: `\s` is `[#x20\t\n\r]` (not RE2's `\s`, which adds `\f`). */
const SPACE = ranges([0x09, 0x0a], [0x0d, 0x0d], [0x20, 0x20]);

/** XML 1.0 (Fifth Edition) §2.3 [4] NameStartChar: the meaning of `\i` (XML Schema 1.1 Part 2). */
const NAME_START = ranges(
  [0x3a, 0x3a],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
  [0xc0, 0xd6],
  [0xd8, 0xf6],
  [0xf8, 0x2ff],
  [0x370, 0x37d],
  [0x37f, 0x1fff],
  [0x200c, 0x200d],
  [0x2070, 0x218f],
  [0x2c00, 0x2fef],
  [0x3001, 0xd7ff],
  [0xf900, 0xfdcf],
  [0xfdf0, 0xfffd],
  [0x10000, 0xeffff],
);

/** XML 1.0 (Fifth Edition) §2.3 [4a] NameChar: the meaning of `\c`. */
const NAME_CHAR = [
  ...NAME_START,
  ...ranges([0x2d, 0x2e], [0x30, 0x39], [0xb7, 0xb7], [0x300, 0x36f], [0x203f, 0x2040]),
];

/** `\w` is every character but punctuation, separators and "other" (Part 2 Appendix F). */
const NOT_WORD: Item[] = [{ prop: "P" }, { prop: "Z" }, { prop: "C" }];

/** The general categories an XSD `\p{..}` may name (Part 2 Appendix F, category escapes). */
const CATEGORIES: ReadonlySet<string> = new Set(
  "L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po Z Zs Zl Zp S Sm Sc Sk So C Cc Cf Co Cn".split(
    " ",
  ),
);

/** `.` is every character but a line feed and a carriage return (Part 2 Appendix F). */
const DOT = set(ranges([0x0a, 0x0a], [0x0d, 0x0d]), true);

function multiCharEscape(c: string): CharSet | undefined {
  switch (c) {
    case "s":
      return set(SPACE);
    case "S":
      return set(SPACE, true);
    case "i":
      return set(NAME_START);
    case "I":
      return set(NAME_START, true);
    case "c":
      return set(NAME_CHAR);
    case "C":
      return set(NAME_CHAR, true);
    case "d":
      return set([{ prop: "Nd" }]);
    case "D":
      return set([{ prop: "Nd" }], true);
    case "w":
      return set(NOT_WORD, true);
    case "W":
      return set(NOT_WORD);
    default:
      return undefined;
  }
}

/** Characters a single-character escape may name: `\n \r \t` and `\` + one of these. */
const ESCAPABLE = new Set([..."\\|.-^?*+{}()[]"]);

function union(sets: readonly CharSet[]): CharSet {
  if (sets.length === 1) return sets[0] as CharSet;
  if (sets.every((s) => !s.negated)) return set(sets.flatMap((s) => s.items));
  return set(normalize(sets.flatMap(materialize)));
}

function subtract(a: CharSet, b: CharSet): CharSet {
  return set(intersect(materialize(a), complement(materialize(b))));
}

/** The set as sorted, disjoint code point ranges (general categories enumerated). */
function materialize(s: CharSet): Range[] {
  const flat = normalize(s.items.flatMap((i) => ("prop" in i ? propertyRanges(i.prop) : [i])));
  return s.negated ? complement(flat) : flat;
}

function normalize(list: readonly Range[]): Range[] {
  const sorted = [...list].sort((x, y) => x.lo - y.lo);
  const out: Range[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.lo <= last.hi + 1) last.hi = Math.max(last.hi, r.hi);
    else out.push({ lo: r.lo, hi: r.hi });
  }
  return out;
}

function complement(list: readonly Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const r of list) {
    if (r.lo > next) out.push({ lo: next, hi: r.lo - 1 });
    next = r.hi + 1;
  }
  if (next <= MAX_CP) out.push({ lo: next, hi: MAX_CP });
  return out;
}

function intersect(a: readonly Range[], b: readonly Range[]): Range[] {
  const out: Range[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as Range;
    const y = b[j] as Range;
    const lo = Math.max(x.lo, y.lo);
    const hi = Math.min(x.hi, y.hi);
    if (lo <= hi) out.push({ lo, hi });
    if (x.hi < y.hi) i++;
    else j++;
  }
  return out;
}

const PROPERTY_RANGES = new Map<string, Range[]>();

/**
 * The code points of a general category, enumerated once with V8's Unicode tables. Needed only
 * where a category takes part in set arithmetic (`[\w-[_]]`, `[\S\d]`), which RE2's class
 * syntax cannot express; elsewhere `\p{X}` is handed to RE2 as it is.
 */
function propertyRanges(prop: string): Range[] {
  let found = PROPERTY_RANGES.get(prop);
  if (found) return found;
  found = [];
  const re = new RegExp(`\\p{${prop}}+`, "gu");
  for (let plane = 0; plane <= 0x10; plane++) {
    const base = plane << 16;
    // Plane 0 without the surrogate block, which holds no characters.
    const chunks: [number, number][] =
      plane === 0
        ? [
            [0, 0xd7ff],
            [0xe000, 0xffff],
          ]
        : [[base, base + 0xffff]];
    for (const [lo, hi] of chunks) {
      const unit = lo > 0xffff ? 2 : 1; // UTF-16 code units per code point
      const cps: number[] = [];
      for (let cp = lo; cp <= hi; cp++) cps.push(cp);
      let text = "";
      for (let k = 0; k < cps.length; k += 4096) text += String.fromCodePoint(...cps.slice(k, k + 4096));
      for (const m of text.matchAll(re)) {
        const start = lo + (m.index ?? 0) / unit;
        found.push({ lo: start, hi: start + m[0].length / unit - 1 });
      }
    }
  }
  found = normalize(found);
  PROPERTY_RANGES.set(prop, found);
  return found;
}

function hex(cp: number): string {
  return `\\x{${cp.toString(16).toUpperCase()}}`;
}

/** A literal character in RE2 syntax: letters and digits as they are, anything else escaped. */
function emitChar(cp: number): string {
  return /^[A-Za-z0-9]$/.test(String.fromCodePoint(cp)) ? String.fromCodePoint(cp) : hex(cp);
}

function emitItem(item: Item): string {
  if ("prop" in item) return `\\p{${item.prop}}`;
  return item.lo === item.hi ? hex(item.lo) : `${hex(item.lo)}-${hex(item.hi)}`;
}

function emitSet(s: CharSet): string {
  const only = s.items[0];
  if (!s.negated && s.items.length === 1 && only && !("prop" in only) && only.lo === only.hi)
    return emitChar(only.lo);
  // RE2 has no empty class: `[^\x{0}-\x{10FFFF}]` matches nothing, its complement anything.
  if (s.items.length === 0) return s.negated ? `[${hex(0)}-${hex(MAX_CP)}]` : `[^${hex(0)}-${hex(MAX_CP)}]`;
  return `[${s.negated ? "^" : ""}${s.items.map(emitItem).join("")}]`;
}

// ------------------------------------------------------------------ parser

/**
 * Recursive descent over the grammar of XML Schema Part 2 Appendix F: regExp, branch, piece,
 * quantifier, atom, charClassExpr, charGroup (posCharGroup, negCharGroup, charClassSub),
 * charRange, single- and multi-character escapes, category escapes.
 */
class Parser {
  private readonly cps: string[];
  private pos = 0;
  /**
   * The pattern as one sequence of quantified character sets, while it is one: a group or a
   * second branch makes it undefined.
   */
  sequence: { set: CharSet; min: number; max: number }[] | undefined = [];
  /** The character set the last atom matched; undefined after a group. */
  private lastSet: CharSet | undefined;

  constructor(pattern: string) {
    this.cps = [...pattern];
  }

  /** The whole pattern in RE2 syntax, as one non-capturing group. */
  parse(): string {
    const out = this.regExp();
    if (this.pos < this.cps.length) this.fail(`unexpected "${this.peek()}"`);
    return `(?:${out})`;
  }

  private peek(ahead = 0): string | undefined {
    return this.cps[this.pos + ahead];
  }

  private fail(message: string): never {
    throw new XsdPatternError(message, this.pos);
  }

  private regExp(): string {
    const branches = [this.branch()];
    while (this.peek() === "|") {
      this.pos++;
      this.sequence = undefined;
      branches.push(this.branch());
    }
    return branches.join("|");
  }

  private branch(): string {
    let out = "";
    for (let c = this.peek(); c !== undefined && c !== "|" && c !== ")"; c = this.peek()) out += this.piece();
    return out;
  }

  private piece(): string {
    const atom = this.atom();
    const set = this.lastSet;
    const quantity = { min: 1, max: 1 };
    const quantifier = this.quantifier(quantity);
    // XSD has no lazy or possessive quantifiers: `a*?` is not a regular expression there.
    if (quantifier && "?*+{".includes(this.peek() ?? "x"))
      this.fail("a quantifier cannot follow a quantifier");
    if (set === undefined) this.sequence = undefined;
    else this.sequence?.push({ set, ...quantity });
    return atom + quantifier;
  }

  /** The quantifier as RE2 writes it, its bounds into `quantity` (`max` Infinity when open). */
  private quantifier(quantity: { min: number; max: number }): string {
    const c = this.peek();
    if (c === "?" || c === "*" || c === "+") {
      this.pos++;
      quantity.min = c === "+" ? 1 : 0;
      quantity.max = c === "?" ? 1 : Number.POSITIVE_INFINITY;
      return c;
    }
    if (c !== "{") return "";
    this.pos++;
    const min = this.number();
    if (min === undefined) this.fail("a quantity {n}, {n,} or {n,m} needs n");
    let out = `{${min}`;
    quantity.min = min;
    quantity.max = min;
    if (this.peek() === ",") {
      this.pos++;
      const max = this.number();
      if (max !== undefined && max < min) this.fail(`{${min},${max}}: the maximum is below the minimum`);
      out += max === undefined ? "," : `,${max}`;
      quantity.max = max ?? Number.POSITIVE_INFINITY;
    }
    if (this.peek() !== "}") this.fail('a quantity must end with "}"');
    this.pos++;
    return `${out}}`;
  }

  private number(): number | undefined {
    let digits = "";
    for (let c = this.peek(); c !== undefined && c >= "0" && c <= "9"; c = this.peek()) {
      digits += c;
      this.pos++;
    }
    return digits === "" ? undefined : Number(digits);
  }

  private atom(): string {
    const c = this.peek() as string;
    this.lastSet = undefined;
    switch (c) {
      case "(": {
        this.pos++;
        const inner = this.regExp();
        if (this.peek() !== ")") this.fail('"(" is not closed');
        this.pos++;
        this.lastSet = undefined;
        return `(?:${inner})`;
      }
      case "[":
        return emitSet(this.remember(this.classExpr()));
      case "\\": {
        const esc = this.escape();
        return typeof esc === "number" ? emitChar(this.rememberChar(esc)) : emitSet(this.remember(esc));
      }
      case ".":
        this.pos++;
        return emitSet(this.remember(DOT));
      case "?":
      case "*":
      case "+":
        return this.fail(`"${c}" has nothing to repeat`);
      case "{":
      case "}":
      case "]":
        return this.fail(`"${c}" must be escaped as "\\${c}"`);
      default:
        this.pos++;
        return emitChar(this.rememberChar(c.codePointAt(0) as number));
    }
  }

  private remember(s: CharSet): CharSet {
    this.lastSet = s;
    return s;
  }

  private rememberChar(cp: number): number {
    this.lastSet = set([{ lo: cp, hi: cp }]);
    return cp;
  }

  /** charClassExpr ::= '[' charGroup ']' */
  private classExpr(): CharSet {
    this.pos++; // [
    let negated = false;
    if (this.peek() === "^") {
      negated = true;
      this.pos++;
    }
    const items: CharSet[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined) this.fail('"[" is not closed');
      if (c === "]") {
        if (items.length === 0) this.fail("a character class cannot be empty");
        this.pos++;
        const group = union(items);
        return negated ? set(group.items, !group.negated) : group;
      }
      if (c === "-") {
        const after = this.peek(1);
        if (after === "[") {
          // charClassSub ::= ( posCharGroup | negCharGroup ) '-' charClassExpr
          if (items.length === 0) this.fail("a subtraction needs a character group before it");
          this.pos++;
          const base = union(items);
          const sub = this.classExpr();
          if (this.peek() !== "]") this.fail("a subtracted class must end its character class");
          this.pos++;
          return subtract(negated ? set(base.items, !base.negated) : base, sub);
        }
        // "-" is a character only at the start or the end of a character group.
        if (items.length === 0 || after === "]") {
          this.pos++;
          items.push(set([{ lo: 0x2d, hi: 0x2d }]));
          continue;
        }
        this.fail('"-" must be escaped as "\\-" inside a character class, except first or last');
      }
      if (c === "[") this.fail('"[" must be escaped as "\\[" inside a character class');
      const start = this.classChar();
      if (typeof start !== "number") {
        items.push(start);
        continue;
      }
      const dash = this.peek();
      const after = this.peek(1);
      if (dash === "-" && after !== undefined && after !== "[" && after !== "]") {
        this.pos++;
        if (after === "-") this.fail('"-" must be escaped as "\\-" at the end of a range');
        const end = this.classChar();
        if (typeof end !== "number") this.fail("a range cannot end with a multi-character escape");
        if (end < start) this.fail("the range is reversed (its end is below its start)");
        items.push(set([{ lo: start, hi: end }]));
      } else {
        items.push(set([{ lo: start, hi: start }]));
      }
    }
  }

  /** One character or escape inside a class: a code point, or a set for `\d`, `\p{..}`, ... */
  private classChar(): number | CharSet {
    const c = this.peek() as string;
    if (c === "\\") return this.escape();
    this.pos++;
    return c.codePointAt(0) as number;
  }

  /** SingleCharEsc, MultiCharEsc, catEsc, complEsc. */
  private escape(): number | CharSet {
    this.pos++; // backslash
    const c = this.peek();
    if (c === undefined) this.fail("the pattern ends with a backslash");
    this.pos++;
    if (c === "n") return 0x0a;
    if (c === "r") return 0x0d;
    if (c === "t") return 0x09;
    if (ESCAPABLE.has(c)) return c.codePointAt(0) as number;
    const multi = multiCharEscape(c);
    if (multi) return multi;
    if (c === "p" || c === "P") {
      if (this.peek() !== "{") this.fail(`"\\${c}" must be followed by {name}`);
      const close = this.cps.indexOf("}", this.pos);
      if (close < 0) this.fail(`"\\${c}{" is not closed`);
      const name = this.cps.slice(this.pos + 1, close).join("");
      if (/^Is[A-Za-z0-9-]+$/.test(name)) {
        this.fail(
          `the Unicode block escape "\\${c}{${name}}" is not supported (RE2 has no block tables); ` +
            "write the block as a character range instead",
        );
      }
      if (!CATEGORIES.has(name)) this.fail(`"${name}" is not a Unicode general category`);
      this.pos = close + 1;
      return set([{ prop: name }], c === "P");
    }
    return this.fail(`"\\${c}" is not an escape of XML Schema regular expressions`);
  }
}
