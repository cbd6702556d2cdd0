import { describe, expect, it } from "vitest";
import { compileXsdPattern, translateXsdPattern, XsdPatternError } from "./regex.js";

// [XSD pattern, value, whole-value match?]
const CASES: [string, string, boolean][] = [
  // Implicit anchoring: the whole value, never a part of it.
  ["abc", "abc", true],
  ["abc", "xabc", false],
  ["abc", "abcx", false],
  ["a|ab", "ab", true],
  ["\\d{3}", "1234", false],
  ["\\d{3}", "123", true],
  // ^ and $ are ordinary characters in XSD.
  ["^a$", "^a$", true],
  ["^a$", "a", false],
  ["a$", "a\n", false],
  ["[^^]", "^", false],
  ["[a^]", "^", true],
  // . is any character but \n and \r (and one code point, astral included).
  ["a.c", "abc", true],
  ["a.c", "a\nc", false],
  ["a.c", "a\rc", false],
  ["a.c", "a😀c", true],
  // \s is [#x20\t\n\r] only.
  ["\\s", " ", true],
  ["\\s", "\t", true],
  ["\\s", "\f", false],
  ["\\S", "\f", true],
  ["\\S", "\n", false],
  // \d is \p{Nd}, not only ASCII digits.
  ["\\d+", "0123", true],
  ["\\d", "٣", true],
  ["\\d", "a", false],
  ["\\D", "a", true],
  ["\\D", "7", false],
  // \w is everything but \p{P}, \p{Z}, \p{C}.
  ["\\w+", "aé9ß", true],
  ["\\w", "_", false],
  ["\\w", "-", false],
  ["\\w", " ", false],
  ["\\w", "+", true],
  ["\\W", ".", true],
  ["\\W", "a", false],
  // \i and \c: XML names.
  ["\\i\\c*", "xs:element-1.a", true],
  ["\\i\\c*", "1abc", false],
  ["\\i", "_", true],
  ["\\i", "-", false],
  ["\\c", "-", true],
  ["\\c", " ", false],
  ["\\I", "1", true],
  ["\\I", "a", false],
  ["\\C", " ", true],
  ["\\C", ".", false],
  // Categories and their complements.
  ["\\p{Lu}+", "ABC", true],
  ["\\p{Lu}", "a", false],
  ["\\P{Lu}", "a", true],
  ["\\p{L}\\p{N}", "é7", true],
  ["[\\p{Lu}\\d]+", "A1B2", true],
  ["[\\p{Lu}\\d]+", "a1", false],
  // Character classes: ranges, negation, dashes at the edges, escapes.
  ["[a-c]+", "abcab", true],
  ["[a-c]", "d", false],
  ["[^a-c]", "d", true],
  ["[^a-c]", "b", false],
  ["[-a]", "-", true],
  ["[a-]", "-", true],
  ["[^-a]", "-", false],
  ["[\\-\\[\\]]+", "-[]", true],
  ["[\\S\\n]+", "a\nb", true],
  ["[\\S\\n]", " ", false],
  ["[\\w.-]+", "first.last-1", true],
  ["[\\w.-]+", "first last", false],
  // Class subtraction.
  ["[a-z-[aeiou]]+", "xyz", true],
  ["[a-z-[aeiou]]", "e", false],
  ["[a-z-[aeiou]]", "B", false],
  ["[^a-z-[0-9]]", "A", true],
  ["[^a-z-[0-9]]", "5", false],
  ["[^a-z-[0-9]]", "b", false],
  ["[\\w-[\\d]]+", "abc", true],
  ["[\\w-[\\d]]", "1", false],
  ["[\\p{L}-[a-z]]", "Q", true],
  ["[\\p{L}-[a-z]]", "q", false],
  ["[a-z-[b-y-[c]]]", "c", true],
  ["[a-z-[b-y-[c]]]", "d", false],
  ["[a-z-[a-z]]", "a", false],
  // Quantifiers and groups.
  ["(ab)+", "ababab", true],
  ["(ab)+", "aba", false],
  ["a{2,3}", "aaa", true],
  ["a{2,3}", "aaaa", false],
  ["a{2,}", "aaaaaaa", true],
  ["a{0}b", "b", true],
  ["(a|b)?c", "c", true],
  // Single-character escapes.
  ["\\.\\*\\+\\?\\(\\)\\{\\}\\|\\\\\\^", ".*+?(){}|\\^", true],
  ["a\\tb", "a\tb", true],
  // The customer email pattern.
  ["[^@\\s]+@[^@\\s]+\\.[^@\\s]+", "jane@example.com", true],
  ["[^@\\s]+@[^@\\s]+\\.[^@\\s]+", "jane@example", false],
  ["[^@\\s]+@[^@\\s]+\\.[^@\\s]+", "ja ne@example.com", false],
  ["[^@\\s]+@[^@\\s]+\\.[^@\\s]+", "a@b@c.d", false],
];

describe("XSD pattern → linear-time engine", () => {
  it.each(CASES)("pattern %j, value %j → %s", (pattern, value, expected) => {
    expect(compileXsdPattern(pattern).test(value)).toBe(expected);
  });

  it("^ and $ are escaped, not anchors, in the translation", () => {
    expect(translateXsdPattern("^a$")).toBe("(?:\\x{5E}a\\x{24})");
  });

  const INVALID: [string, RegExp][] = [
    ["\\p{IsBasicLatin}", /Unicode block escape "\\p\{IsBasicLatin\}" is not supported/],
    ["\\p{Foo}", /"Foo" is not a Unicode general category/],
    ["\\b", /"\\b" is not an escape/],
    ["\\x41", /"\\x" is not an escape/],
    ["a*?", /a quantifier cannot follow a quantifier/],
    ["a{3,2}", /maximum is below the minimum/],
    ["a{,2}", /needs n/],
    ["[a-z", /"\[" is not closed/],
    ["(ab", /"\(" is not closed/],
    ["ab)", /unexpected "\)"/],
    ["[]", /cannot be empty/],
    ["[z-a]", /reversed/],
    ["[a-c-x]", /"-" must be escaped/],
    ["[a[b]", /"\[" must be escaped/],
    ["[a-z-[b]c]", /must end its character class/],
    ["*a", /nothing to repeat/],
    ["a{2", /must end with "}"/],
    ["{", /must be escaped/],
    ["a\\", /ends with a backslash/],
    ["a{1001}", /linear-time engine refuses it/],
  ];
  it.each(INVALID)("invalid pattern %j → XsdPatternError", (pattern, message) => {
    expect(() => compileXsdPattern(pattern)).toThrow(XsdPatternError);
    expect(() => compileXsdPattern(pattern)).toThrow(message);
  });
});
