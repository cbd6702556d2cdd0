import { hmac } from "@noble/hashes/hmac";
import { sha256 as portableSha256 } from "@noble/hashes/sha2";
import { toBase64url, utf8 } from "./bytes.js";
import { nodeCrypto } from "./node-crypto.js";

/**
 * SHA-256 of `text` (UTF-8) in base64url, synchronously: the key of a cache looked up without a
 * promise. Node's `crypto.hash` where the runtime has it (one native call on a hot path),
 * `@noble/hashes` elsewhere (Web Crypto's `digest` is asynchronous): the same bytes either way,
 * so a key made on one runtime is the key made on another.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6234
 */
export function sha256Base64url(text: string): string {
  if (nodeCrypto !== undefined) return nodeCrypto.hash("sha256", text, "base64url");
  return toBase64url(portableSha256(utf8(text)));
}

/** SHA-256 of `text` (UTF-8): its 32 bytes. */
export function sha256(text: string): Uint8Array {
  if (nodeCrypto !== undefined) return nodeCrypto.createHash("sha256").update(text, "utf8").digest();
  return portableSha256(utf8(text));
}

/** HMAC-SHA-256 (RFC 2104) of `text` (UTF-8) under `key`, in base64url, synchronously. */
export function hmacSha256Base64url(key: Uint8Array, text: string): string {
  if (nodeCrypto !== undefined)
    return nodeCrypto.createHmac("sha256", key).update(text, "utf8").digest("base64url");
  return toBase64url(hmac(portableSha256, key, utf8(text)));
}
