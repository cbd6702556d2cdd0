/**
 * Bytes without Node's `Buffer`, for runtimes that have only the Web platform: UTF-8, base64 and
 * a comparison whose time does not depend on where two byte strings differ; `concatBytes`, the
 * chunks one after another in one array, is the kernel's.
 */

export { concatBytes } from "@svc/kernel/internal";

const ENCODER = new TextEncoder();

/** The UTF-8 bytes of `text`. */
export function utf8(text: string): Uint8Array {
  return ENCODER.encode(text);
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const SEXTET = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) SEXTET[ALPHABET.charCodeAt(i)] = i;

/**
 * The bytes of base64 `text` (RFC 4648 §4), padded or not; `undefined` for a character outside
 * the alphabet. Bits that make no whole octet (a lone last character, the pad bits of the last
 * one) are ignored, as Node's decoder ignores them, so stored values decode to the same bytes.
 * Callers check the form they accept first.
 *
 * @see https://www.rfc-editor.org/rfc/rfc4648#section-4
 */
export function fromBase64(text: string): Uint8Array | undefined {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x3d) end--;
  const out = new Uint8Array(Math.floor((end * 3) / 4));
  let bits = 0;
  let buffered = 0;
  let at = 0;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    const value = c < 128 ? (SEXTET[c] as number) : -1;
    if (value < 0) return undefined;
    bits = (bits << 6) | value;
    buffered += 6;
    if (buffered >= 8) {
      buffered -= 8;
      out[at++] = (bits >> buffered) & 0xff;
    }
  }
  return out;
}

/** `bytes` in base64 with padding (RFC 4648 §4), as `btoa` writes it. */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** `bytes` in base64url without padding (RFC 4648 §5), as JOSE writes it. */
export function toBase64url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
}

/**
 * Whether `a` and `b` hold the same bytes, in a time that depends on their length only (what
 * `crypto.timingSafeEqual` does, for lengths the caller already knows to be public): every byte
 * is read whatever the first difference.
 */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/** `length` bytes from the platform's CSPRNG (Web Crypto's `getRandomValues`). */
export function randomBytes(length: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(length));
}
