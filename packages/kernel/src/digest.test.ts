import { hash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { digest, portableDigest } from "./digest.js";

// Entity tags and keys must be the same whichever runtime made them: the portable digest (no
// node:crypto: workerd, browsers) gives node:crypto's output for every algorithm and encoding.
const inputs: (string | Uint8Array)[] = [
  "",
  "a",
  '{"id":42}',
  "é😀 utf-8",
  "x".repeat(1000),
  new Uint8Array([0, 255, 1, 254]),
  new Uint8Array(4096).map((_, i) => (i * 31) & 255),
];

describe("digest", () => {
  for (const algorithm of ["sha1", "sha256"] as const)
    for (const encoding of ["base64", "base64url", "hex"] as const)
      it.each(inputs.map((input, i) => [i, input]))(`${algorithm} ${encoding}, input %i`, (_, input) => {
        const want = hash(algorithm, input, encoding);
        expect(portableDigest(algorithm, input, encoding)).toBe(want);
        expect(digest(algorithm, input, encoding)).toBe(want);
      });
});
