import { afterEach, describe, expect, it, vi } from "vitest";
import * as withBuffer from "./bytes.js";

/** The module as a runtime without `Buffer` loads it (workerd, Deno, browsers). */
async function withoutBuffer(): Promise<typeof withBuffer> {
  vi.resetModules();
  vi.stubGlobal("Buffer", undefined);
  try {
    return await import("./bytes.js");
  } finally {
    vi.unstubAllGlobals();
  }
}

afterEach(() => {
  vi.unstubAllGlobals();
});

const texts = ["", "a=1", "naïve", "€", "😀", "\ud800", "\udc00x", "a\ud83d", "\ud83d\ude00\ud83d"];
const bytes = [
  new Uint8Array(),
  Uint8Array.from({ length: 256 }, (_, i) => i),
  Uint8Array.from({ length: 100_000 }, (_, i) => (i * 7) & 255),
  new Uint8Array([1, 2, 3, 4, 5]).subarray(1, 4),
];

describe("bytes without Buffer", () => {
  it.each(texts)("utf8Length(%j) is the length TextEncoder writes", async (text) => {
    const portable = await withoutBuffer();
    expect(portable.utf8Length(text)).toBe(new TextEncoder().encode(text).byteLength);
    expect(portable.utf8Length(text)).toBe(withBuffer.utf8Length(text));
  });
  it.each(bytes.map((b) => [b.byteLength, b] as const))(
    "base64 of %i bytes agrees with Buffer's",
    async (_, b) => {
      const portable = await withoutBuffer();
      const text = portable.toBase64(b);
      expect(text).toBe(withBuffer.toBase64(b));
      expect(portable.fromBase64(text)).toEqual(new Uint8Array(b));
      expect(withBuffer.fromBase64(text)).toEqual(new Uint8Array(b));
    },
  );
  it("randomHex(16) → 32 hex digits", async () => {
    const portable = await withoutBuffer();
    expect(portable.randomHex(16)).toMatch(/^[0-9a-f]{32}$/);
    expect(portable.randomHex(16)).not.toBe(portable.randomHex(16));
  });
});
