// ------------------------------------------------------------------ character sets

interface Range {
  lo: number;
  hi: number;
}

/** A class item RE2 understands directly: a code point range or a general category `\p{X}`. */
type Item = Range | { prop: string };

/** A set of characters: the union of `items`, or its complement when `negated`. */
export interface CharSet {
  negated: boolean;
  items: Item[];
}

const MAX_CP = 0x10ffff;

export const set = (items: Item[], negated = false): CharSet => ({ negated, items });

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
export const CATEGORIES: ReadonlySet<string> = new Set(
  "L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po Z Zs Zl Zp S Sm Sc Sk So C Cc Cf Co Cn".split(
    " ",
  ),
);

/** `.` is every character but a line feed and a carriage return (Part 2 Appendix F). */
export const DOT = set(ranges([0x0a, 0x0a], [0x0d, 0x0d]), true);

export function multiCharEscape(c: string): CharSet | undefined {
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
export const ESCAPABLE = new Set([..."\\|.-^?*+{}()[]"]);

export function union(sets: readonly CharSet[]): CharSet {
  if (sets.length === 1) return sets[0] as CharSet;
  if (sets.every((s) => !s.negated)) return set(sets.flatMap((s) => s.items));
  return set(normalize(sets.flatMap(materialize)));
}

export function subtract(a: CharSet, b: CharSet): CharSet {
  return set(intersect(materialize(a), complement(materialize(b))));
}

/** The set as sorted, disjoint code point ranges (general categories enumerated). */
export function materialize(s: CharSet): Range[] {
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
export function emitChar(cp: number): string {
  return /^[A-Za-z0-9]$/.test(String.fromCodePoint(cp)) ? String.fromCodePoint(cp) : hex(cp);
}

function emitItem(item: Item): string {
  if ("prop" in item) return `\\p{${item.prop}}`;
  return item.lo === item.hi ? hex(item.lo) : `${hex(item.lo)}-${hex(item.hi)}`;
}

export function emitSet(s: CharSet): string {
  const only = s.items[0];
  if (!s.negated && s.items.length === 1 && only && !("prop" in only) && only.lo === only.hi)
    return emitChar(only.lo);
  // RE2 has no empty class: `[^\x{0}-\x{10FFFF}]` matches nothing, its complement anything.
  if (s.items.length === 0) return s.negated ? `[${hex(0)}-${hex(MAX_CP)}]` : `[^${hex(0)}-${hex(MAX_CP)}]`;
  return `[${s.negated ? "^" : ""}${s.items.map(emitItem).join("")}]`;
}
