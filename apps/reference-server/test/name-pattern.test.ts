import { describe, expect, it } from "vitest";
import { CustomerInput } from "../src/schemas.js";
import { documentOfTheApp } from "./openapi-check.js";

/**
 * The customer's `name` pattern in the document is read by every schema tool a client runs, not
 * only by ECMA-262 engines: Rust's regex (jsonschema-rs, which schemathesis validates with) refuses
 * a surrogate escape such as `\uD800` outright, as no Unicode scalar value, and with it the whole
 * schema. The rule (XML 1.0 `Char`, a visible character) is written without one, and means what it
 * meant to an ECMA-262 engine with `u`.
 * @see https://www.w3.org/TR/xml/#NT-Char
 */
const pattern = (
  documentOfTheApp() as {
    components: { schemas: { CustomerInput: { properties: { name: { pattern: string } } } } };
  }
).components.schemas.CustomerInput.properties.name.pattern;

/** The rule as it was first written, with the surrogate range named (ECMA-262 only). */
const REFUSED = "\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\uD800-\\uDFFF\\uFFFE\\uFFFF";
const ECMA_ONLY = new RegExp(`^[^${REFUSED}]*[^\\s${REFUSED}][^${REFUSED}]*$`, "u");

const NAMES: [string, string][] = [
  ["ASCII", "Ada Lovelace"],
  ["Latin-1 and CJK", "Zoë 李"],
  ["a tab, LF and CR inside", "Ada\tB\nC\rD"],
  ["a non-BMP emoji", "Ada 😀"],
  ["only a non-BMP character", "𝒳"],
  ["U+10FFFF", "x\u{10FFFF}"],
  ["U+D7FF and U+E000", "\uD7FF\uE000"],
  ["U+FFFD", "\uFFFD"],
  ["a no-break space around a letter", "\u00A0a\u00A0"],
  ["U+0085 (white space to Rust, not to ECMA-262)", "\u0085"],
  ["U+200B (no white space anywhere)", "\u200B"],
  ["empty", ""],
  ["spaces only", "   "],
  ["every ECMA-262 white space", "\t\n\r \u00A0\u1680\u2000\u200A\u2028\u2029\u202F\u205F\u3000\uFEFF"],
  ["U+0001", "a\u0001b"],
  ["U+000B", "a\u000Bb"],
  ["U+000C", "\u000Ca"],
  ["U+001F", "a\u001F"],
  ["U+FFFE", "a\uFFFE"],
  ["U+FFFF", "a\uFFFF"],
  ["a lone high surrogate", "a\uD800b"],
  ["a lone low surrogate", "a\uDC00b"],
  ["a low surrogate before a high one", "\uDC00\uD800"],
  ["a lone surrogate at the end", "a\uDBFF"],
];

describe("the customer name's pattern in the document", () => {
  it("compiles as an ECMA-262 expression with the u flag", () => {
    expect(() => new RegExp(pattern, "u")).not.toThrow();
  });

  it("names no surrogate code point (no \\uD800-\\uDFFF escape, no surrogate in the text)", () => {
    expect(pattern).not.toMatch(/\\u\{?0*[dD][89a-fA-F][0-9a-fA-F]{2}\}?/);
    expect([...pattern].some((c) => /^[\uD800-\uDFFF]$/u.test(c))).toBe(false);
  });

  it.each(NAMES)(
    "%s: taken or refused as the ECMA-262 rule with the surrogate range decides",
    (_label, name) => {
      expect(new RegExp(pattern, "u").test(name)).toBe(ECMA_ONLY.test(name));
    },
  );

  it.each(NAMES)("%s: the server's check agrees with the pattern", (_label, name) => {
    expect(CustomerInput.shape.name.safeParse(name).success).toBe(new RegExp(pattern, "u").test(name));
  });
});
