import { KeyObject, type webcrypto } from "node:crypto";

/**
 * A key given as a Node `KeyObject` or as a Web Crypto `CryptoKey` (what jose's `generateKeyPair`
 * and `importJWK` return, and `crypto.subtle` makes), as the `KeyObject` Node verifies and signs
 * with; `undefined` for anything else (a JWK, a PEM string, bytes). `KeyObject.from` takes a
 * `CryptoKey` whether or not it is extractable, and refuses anything that is not one.
 *
 * @example asKeyObject((await generateKeyPair("ES256")).publicKey)?.asymmetricKeyType; // "ec"
 * @see https://nodejs.org/api/crypto.html#static-method-keyobjectfromkey
 */
export function asKeyObject(value: unknown): KeyObject | undefined {
  if (value instanceof KeyObject) return value;
  if (typeof value !== "object" || value === null || value instanceof Uint8Array) return undefined;
  try {
    return KeyObject.from(value as webcrypto.CryptoKey);
  } catch {
    return undefined;
  }
}
