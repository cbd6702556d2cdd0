import { sha1 } from "@noble/hashes/legacy";
import { sha256 } from "@noble/hashes/sha2";

/** The digests the @svc packages compute: entity tags (SHA-1), keys and fingerprints (SHA-256). */
export type DigestAlgorithm = "sha1" | "sha256";
export type DigestEncoding = "base64" | "base64url" | "hex";

type NodeHash = (algorithm: string, data: string | Uint8Array, encoding: DigestEncoding) => string;

/**
 * `crypto.hash` of `node:crypto` where the runtime has it (Node.js, Bun, Deno, workerd with
 * `nodejs_compat`), found with `process.getBuiltinModule`: an import would keep the entries from
 * loading where there is no Node.js.
 *
 * @see https://nodejs.org/api/crypto.html#cryptohashalgorithm-data-outputencoding
 */
function nodeHash(): NodeHash | undefined {
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  if (typeof runtime?.getBuiltinModule !== "function") return undefined;
  try {
    const crypto = runtime.getBuiltinModule("node:crypto") as { hash?: NodeHash } | undefined;
    return typeof crypto?.hash === "function" ? crypto.hash : undefined;
  } catch {
    return undefined;
  }
}

const utf8 = new TextEncoder();
const HEX = "0123456789abcdef";

/** RFC 4648 §4 base64 (§5 base64url, unpadded, as `node:crypto` writes it) of `bytes`. */
function encode(bytes: Uint8Array, encoding: DigestEncoding): string {
  if (encoding === "hex") {
    let out = "";
    for (const byte of bytes) out += HEX[byte >> 4] + (HEX[byte & 15] as string);
    return out;
  }
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  const base64 = btoa(binary);
  return encoding === "base64" ? base64 : base64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The same digest without `node:crypto` (workerd without `nodejs_compat`, browsers), where Web
 * Crypto's `crypto.subtle.digest` is asynchronous and the pipeline's steps are not: the audited
 * `@noble/hashes`. Same bytes, same output, so a tag or key made on one runtime matches another's.
 */
function portableHash(
  algorithm: DigestAlgorithm,
  data: string | Uint8Array,
  encoding: DigestEncoding,
): string {
  const bytes = typeof data === "string" ? utf8.encode(data) : data;
  return encode(algorithm === "sha1" ? sha1(bytes) : sha256(bytes), encoding);
}

const hash: (algorithm: DigestAlgorithm, data: string | Uint8Array, encoding: DigestEncoding) => string =
  nodeHash() ?? portableHash;

/**
 * The SHA-1 or SHA-256 digest of `data` (a string as UTF-8), in one call: `node:crypto`'s
 * where there is one, else a portable implementation with the same output.
 *
 * @example digest("sha256", "key", "base64url")
 * @see https://www.rfc-editor.org/rfc/rfc6234
 * @internal
 */
export function digest(
  algorithm: DigestAlgorithm,
  data: string | Uint8Array,
  encoding: DigestEncoding,
): string {
  return hash(algorithm, data, encoding);
}

/** {@link digest} without `node:crypto`, for the tests that compare both. @internal */
export { portableHash as portableDigest };
