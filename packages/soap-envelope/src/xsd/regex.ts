import { RE2JS } from "re2js";
import {
  CATEGORIES,
  type CharSet,
  DOT,
  ESCAPABLE,
  emitChar,
  emitSet,
  materialize,
  multiCharEscape,
  set,
  subtract,
  union,
} from "./regex-charsets.js";
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
