import { describe, expect, it } from "vitest";
import { holdsExactly, inexactNumbers } from "./exact-numbers.js";

describe("holdsExactly (RFC 8259 §6)", () => {
  it.each([
    ["0", true],
    ["-0", true],
    ["1", true],
    ["0.1", true],
    ["1.50", true],
    ["15e-1", true],
    ["1E2", true],
    ["0.001", true],
    ["123456789012345", true],
    ["9007199254740991", true],
    ["1e21", true],
    ["5e-324", true],
    ["0e99999", true],
    ["1.0000000000000001", false],
    ["9007199254740993", false],
    ["3.141592653589793238462643383279", false],
    ["1e400", false],
    ["-1e400", false],
    ["1e-400", false],
    // Parses to the double written 0.3: another value than the text names.
    ["0.30000000000000001", false],
  ])("%s → %s", (text, held) => {
    expect(holdsExactly(text)).toBe(held);
  });
});

describe("inexactNumbers", () => {
  it("names each inexact number by its path, in text order", () => {
    const json =
      '{"a":1,"b":[0.1,1.0000000000000001],"c":{"d\\"e":9007199254740993,"s":"1.0000000000000001"},"f":-1e400}';
    expect(inexactNumbers(json)).toEqual([
      { path: "b.1", text: "1.0000000000000001" },
      { path: 'c.d"e', text: "9007199254740993" },
      { path: "f", text: "-1e400" },
    ]);
  });
  it("a number at the root → the empty path", () => {
    expect(inexactNumbers(" 1e999 ")).toEqual([{ path: "", text: "1e999" }]);
  });
  it("nothing inexact → []", () => {
    expect(inexactNumbers('[{"x":[1,2.5,{"y":-0.25}]},"\\\\",true,null]')).toEqual([]);
  });
  it("stops at max, cuts long texts", () => {
    const many = `[${Array.from({ length: 50 }, () => "1e400").join(",")}]`;
    expect(inexactNumbers(many, 3)).toHaveLength(3);
    expect(inexactNumbers(`[1${"0".repeat(400)}1]`)[0]?.text).toHaveLength(41);
  });
});
