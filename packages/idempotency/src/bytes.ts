/**
 * Bytes, base64 and random tokens without `node:buffer` or `node:crypto`, for the stores and the
 * fingerprint to load on every runtime the Fetch entry serves (workerd without `nodejs_compat`,
 * Deno, browsers). Node's `Buffer` is used where the runtime has it, so Node.js reads and writes
 * records exactly as it did.
 */

interface NodeBuffer {
  from(
    data: Uint8Array | string,
    encoding?: "base64" | "utf8",
  ): Uint8Array & { toString(encoding: "base64"): string };
  from(
    buffer: ArrayBufferLike,
    byteOffset: number,
    length: number,
  ): Uint8Array & { toString(encoding: "base64"): string };
  byteLength(text: string): number;
}

const nodeBuffer = (globalThis as { Buffer?: NodeBuffer }).Buffer;

/**
 * How many bytes `text` takes in UTF-8, a lone surrogate counted as U+FFFD's three (as
 * `TextEncoder` writes it), without encoding it.
 * @see https://encoding.spec.whatwg.org/#utf-8-encoder
 */
export function utf8Length(text: string): number {
  if (nodeBuffer !== undefined) return nodeBuffer.byteLength(text);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/** `bytes` in base64 (RFC 4648 §4). @see https://www.rfc-editor.org/rfc/rfc4648#section-4 */
export function toBase64(bytes: Uint8Array): string {
  if (nodeBuffer !== undefined) {
    return nodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
  }
  let binary = "";
  // In slices: String.fromCharCode takes its bytes as arguments, and their number is bounded.
  for (let at = 0; at < bytes.byteLength; at += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  }
  return btoa(binary);
}

/** The bytes a base64 text (RFC 4648 §4) stands for, in a `Uint8Array` of their own. */
export function fromBase64(text: string): Uint8Array {
  if (nodeBuffer !== undefined) return new Uint8Array(nodeBuffer.from(text, "base64"));
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const HEX = "0123456789abcdef";

/**
 * `size` random bytes in hex, from the Web Crypto API's CSPRNG (a claim's token: who holds the
 * record).
 * @see https://w3c.github.io/webcrypto/#Crypto-method-getRandomValues
 */
export function randomHex(size: number): string {
  let out = "";
  for (const byte of crypto.getRandomValues(new Uint8Array(size))) {
    out += HEX[byte >> 4] + (HEX[byte & 15] as string);
  }
  return out;
}
