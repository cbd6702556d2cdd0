import { describe, expect, it, vi } from "vitest";

// Counts the parses of Accept-Encoding / Accept-Language lists behind the selections.
const parses = vi.hoisted(() => ({ count: 0 }));
vi.mock("@svc/kernel", async (importOriginal) => {
  const actual = await importOriginal<typeof import("@svc/kernel")>();
  return {
    ...actual,
    parseQList: (...args: Parameters<typeof actual.parseQList>) => {
      parses.count++;
      return actual.parseQList(...args);
    },
  };
});
const { selectEncoding, selectLanguage } = await import("../src/index.js");

describe("a repeated header value is parsed once (one-entry memo)", () => {
  it("Accept-Encoding: the same value three times → one parse, same answers; a new value → parsed", () => {
    parses.count = 0;
    const answers = [1, 2, 3].map(() => selectEncoding("gzip;q=0.5, br", ["br", "gzip"]));
    expect(answers).toEqual(["br", "br", "br"]);
    // The identity-refused check of the same value reuses the parse too.
    expect(selectEncoding("gzip;q=0.5, br", [])).toBe("identity");
    expect(parses.count).toBe(1);
    expect(selectEncoding("gzip", ["br", "gzip"])).toBe("gzip");
    expect(parses.count).toBe(2);
  });

  it("Accept-Language: the same value three times → one parse, same answers", () => {
    parses.count = 0;
    const answers = [1, 2, 3].map(() => selectLanguage("de-AT, en;q=0.5", ["en", "de"]));
    expect(answers).toEqual(["de", "de", "de"]);
    expect(parses.count).toBe(1);
    expect(selectLanguage("en", ["en", "de"])).toBe("en");
    expect(parses.count).toBe(2);
  });
});
