import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import { compileXsdPattern, translateXsdPattern } from "./regex.js";
import { compileSequence } from "./sequence.js";

// The sequence automaton must answer exactly as RE2 does on the same translated pattern: checked
// on seeded random values over each pattern's own alphabet (near misses are where the two could
// part), plus the empty value and non-BMP characters.

/** Mulberry32: a small seeded generator, so a failure names a value that reproduces. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PATTERNS: readonly [pattern: string, alphabet: string][] = [
  ["[^@\\s]+@[^@\\s]+\\.[^@\\s]+", "ab.@ \t"],
  ["[A-Z]{3}", "ABZaz1"],
  ["\\d{5}", "0129a"],
  ["a{2,3}", "ab"],
  ["a{2,}b?", "ab"],
  ["a{0}b", "ab"],
  ["a*b*c*", "abcd"],
  ["a?b?c?", "abc"],
  ["x+y+x+", "xyz"],
  ["[a-z-[aeiou]]+", "aebxz"],
  ["[\\p{Lu}\\d]+", "Aa1É\u00e9"],
  ["\\i\\c*", "a1-:.b "],
  [".+", "a\n\rb"],
  ["[^a-c]{1,4}", "abdz"],
  ["\\.\\*", ".*a"],
  ["", "a"],
  ["\\p{L}{2}", "a\u{1d400}1é"],
  ["[\u{10000}-\u{10ffff}]+a", "a\u{1f600}\u{10000}b"],
  // 128 deterministic states, more than the automaton caches: the rest are stepped as bit sets.
  ["[ab]*a[ab]{6}", "ab"],
];

describe("the sequence automaton answers as RE2", () => {
  it.each(PATTERNS)("%j on 3,000 seeded values over its alphabet", (pattern, alphabet) => {
    const re2 = RE2JS.compile(translateXsdPattern(pattern));
    const compiled = compileXsdPattern(pattern);
    const chars = [...alphabet];
    const next = random(pattern.length * 7919 + chars.length);
    for (let n = 0; n < 3000; n++) {
      let value = "";
      const length = Math.floor(next() * 9);
      for (let i = 0; i < length; i++) value += chars[Math.floor(next() * chars.length)];
      if (compiled.test(value) !== re2.testExact(value)) {
        expect.fail(
          `pattern ${JSON.stringify(pattern)}, value ${JSON.stringify(value)}: ${!re2.testExact(value)}`,
        );
      }
    }
  });

  it("a pattern with more deterministic states than are cached answers as RE2 on long values", () => {
    const pattern = "[ab]*a[ab]{6}";
    const re2 = RE2JS.compile(translateXsdPattern(pattern));
    const test = compileXsdPattern(pattern).test;
    const next = random(42);
    for (let n = 0; n < 500; n++) {
      let value = "";
      const length = Math.floor(next() * 60);
      for (let i = 0; i < length; i++) value += next() < 0.5 ? "a" : "b";
      if (test(value) !== re2.testExact(value)) expect.fail(`value ${JSON.stringify(value)}`);
    }
  });

  it("a value that almost matches the email pattern, 1 MB long, is refused in linear time", () => {
    const test = compileXsdPattern("[^@\\s]+@[^@\\s]+\\.[^@\\s]+").test;
    const value = `a@${"b".repeat(1 << 20)}`;
    const started = process.hrtime.bigint();
    expect(test(value)).toBe(false);
    // A backtracking engine takes seconds here; a linear one a few milliseconds. The bound is
    // loose on purpose (a shared machine); what it guards is the order of growth.
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(2000);
  });
});

describe("which patterns take the sequence automaton", () => {
  const all = { ranges: [{ lo: 0, hi: 0x10ffff }] };
  it("up to 31 states: `\\d{31}` yes, `\\d{32}` and `\\d{20,40}` no (RE2 then)", () => {
    expect(compileSequence([{ ...all, min: 31, max: 31 }])).toBeDefined();
    expect(compileSequence([{ ...all, min: 32, max: 32 }])).toBeUndefined();
    expect(compileSequence([{ ...all, min: 20, max: 40 }])).toBeUndefined();
    expect(compileSequence([{ ...all, min: 1000, max: Number.POSITIVE_INFINITY }])).toBeUndefined();
  });
  it("groups and alternatives go to RE2 and still match", () => {
    expect(compileXsdPattern("(ab)+").test("abab")).toBe(true);
    expect(compileXsdPattern("a|b").test("b")).toBe(true);
    expect(compileXsdPattern("\\d{40}").test("1".repeat(40))).toBe(true);
    expect(compileXsdPattern("\\d{40}").test("1".repeat(39))).toBe(false);
  });
});
