// Bytes and UTF-8 lengths without naming a Node.js module or global: `Buffer` and `node:buffer`'s
// `isAscii` where the runtime has them (Node.js, Bun, Deno: native code on the per-request path),
// the Web platform's `TextEncoder` and plain loops elsewhere (workerd, browsers). Either way the
// same values come out.

import { concatBytes as concatChunks } from "@svc/kernel/internal";

interface NodeBufferClass {
  byteLength(text: string): number;
  from(text: string, encoding?: string): Uint8Array & { toString(encoding: string): string };
  from(
    buffer: ArrayBufferLike,
    byteOffset: number,
    length: number,
  ): Uint8Array & { toString(encoding: string): string };
  concat(chunks: readonly Uint8Array[], total?: number): Uint8Array;
  isBuffer(value: unknown): boolean;
}

type BuiltinLoader = { getBuiltinModule?: (id: string) => unknown };

const nodeBuffer = (globalThis as { Buffer?: NodeBufferClass }).Buffer;

/**
 * `isAscii` of `node:buffer` (Node.js 19.6, 18.15), found with `process.getBuiltinModule` rather
 * than imported, so that this module loads where there is no Node.js.
 * @see https://nodejs.org/api/buffer.html#bufferisasciiinput
 */
const nodeIsAscii = (() => {
  try {
    const loader = (globalThis as { process?: BuiltinLoader }).process;
    const buffer = loader?.getBuiltinModule?.("node:buffer") as
      | { isAscii?: (bytes: Uint8Array) => boolean }
      | undefined;
    return typeof buffer?.isAscii === "function" ? buffer.isAscii : undefined;
  } catch {
    return undefined;
  }
})();

const encoder = new TextEncoder();

/** Whether every byte of `bytes` is below 80 (US-ASCII: the same text in UTF-8 and Latin-1). */
export const isAscii: (bytes: Uint8Array) => boolean =
  nodeIsAscii ??
  ((bytes) => {
    for (let i = 0; i < bytes.length; i++) if ((bytes[i] as number) > 0x7f) return false;
    return true;
  });

/** The UTF-8 length of `text` in bytes, without encoding it (a lone surrogate counts 3, as U+FFFD). */
export const utf8Length: (text: string) => number =
  nodeBuffer !== undefined
    ? (text) => nodeBuffer.byteLength(text)
    : (text) => {
        let bytes = text.length;
        for (let i = 0; i < text.length; i++) {
          const c = text.charCodeAt(i);
          if (c < 0x80) continue;
          if (c < 0x800) bytes += 1;
          else if (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
            // A surrogate pair: 4 bytes for two code units.
            bytes += 2;
            i++;
          } else bytes += 2;
        }
        return bytes;
      };

/** The UTF-8 bytes of `text`. */
export const utf8Bytes: (text: string) => Uint8Array =
  nodeBuffer !== undefined ? (text) => nodeBuffer.from(text, "utf8") : (text) => encoder.encode(text);

/** `chunks` as one array of `total` bytes (their sum). */
export function concatBytes(chunks: readonly Uint8Array[], total?: number): Uint8Array {
  return nodeBuffer !== undefined ? nodeBuffer.concat(chunks, total) : concatChunks(chunks, total);
}

/** The text of US-ASCII `bytes` (each byte one character, as Latin-1 reads it). */
export function asciiText(bytes: Uint8Array): string {
  if (nodeBuffer !== undefined) {
    // A Buffer (what Node's streams read) decodes itself; a view is made only of another array.
    const buffer = nodeBuffer.isBuffer(bytes)
      ? (bytes as ReturnType<NodeBufferClass["from"]>)
      : nodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return buffer.toString("latin1");
  }
  let text = "";
  for (let at = 0; at < bytes.length; at += 8192)
    text += String.fromCharCode(...bytes.subarray(at, at + 8192));
  return text;
}

const HEX = "0123456789ABCDEF";

/** The octets of a valid `xs:hexBinary` lexical (even length, hex digits only). */
export function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Upper-case hex of `bytes` (XML Schema Part 2 §3.2.15.2, the canonical hexBinary). */
export function bytesToHex(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += (HEX[byte >> 4] as string) + (HEX[byte & 15] as string);
  return out;
}

/**
 * The octets of a valid `xs:base64Binary` lexical, its spaces removed (RFC 4648 §4).
 * @see https://www.w3.org/TR/xmlschema-2/#base64Binary
 */
export function base64ToBytes(base64: string): Uint8Array {
  const compact = base64.replaceAll(" ", "");
  if (nodeBuffer !== undefined) return new Uint8Array(nodeBuffer.from(compact, "base64"));
  const binary = atob(compact);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** RFC 4648 §4 base64 of `bytes`, padded. */
export function bytesToBase64(bytes: Uint8Array): string {
  if (nodeBuffer !== undefined)
    return nodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
  let binary = "";
  for (let at = 0; at < bytes.length; at += 8192)
    binary += String.fromCharCode(...bytes.subarray(at, at + 8192));
  return btoa(binary);
}
