import { hash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { labelCacheSize, representationTag } from "./validators.js";

/** The tag as documented, computed from first principles: length, SHA-1 of label then bytes. */
function expectedTag(label: string, body: string): string {
  const bytes = Buffer.from(body, "utf8");
  const digest = hash("sha1", Buffer.concat([Buffer.from(label, "utf8"), bytes]), "base64").slice(0, 27);
  return `"${bytes.byteLength.toString(16)}-${digest}"`;
}

// representationTag keeps the labels of the content types it tags: at most 64 without a language
// and 64 with one.
describe("representationTag's labels", () => {
  it("2,000 distinct content types, half with a language → each tagged as documented, at most 128 labels held", () => {
    for (let i = 0; i < 2_000; i++) {
      const language = i % 2 === 0 ? undefined : "de";
      const tag = representationTag(`application/x-${i}; charset=utf-8`, language, '{"id":1}');
      if (i % 97 === 0 || i % 97 === 1)
        expect(tag).toBe(expectedTag(`application/x-${i}\n${language ?? ""}\n`, '{"id":1}'));
      expect(labelCacheSize()).toBeLessThanOrEqual(128);
    }
  });

  it("a content type longer than 256 characters → tagged as documented, not held", () => {
    const type = `application/x-${"a".repeat(300)}`;
    const before = labelCacheSize();
    expect(representationTag(type, "de", "x")).toBe(expectedTag(`${type}\nde\n`, "x"));
    expect(labelCacheSize()).toBe(before);
  });

  it('("a\\nb", no language) and ("a", "b") in turn → each its own label, though joined they read alike', () => {
    for (let round = 0; round < 3; round++) {
      expect(representationTag("a\nb", undefined, "x")).toBe(expectedTag("a\nb\n\n", "x"));
      expect(representationTag("a", "b", "x")).toBe(expectedTag("a\nb\n", "x"));
    }
  });

  it("JSON and XML, English and German, in turn → each its own tag, as computed alone", () => {
    const cases: [string, string | undefined, string][] = [
      ["application/json", undefined, "application/json\n\n"],
      ["application/xml; charset=utf-8", "de", "application/xml\nde\n"],
      ["application/json", "EN", "application/json\nen\n"],
      ["text/csv; header=present", undefined, "text/csv;header=present\n\n"],
    ];
    for (let round = 0; round < 20; round++) {
      for (const [type, language, label] of cases) {
        expect(representationTag(type, language, `body ${round}`)).toBe(expectedTag(label, `body ${round}`));
      }
    }
  });
});
