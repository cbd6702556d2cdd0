import type { KeyObject, webcrypto } from "node:crypto";
import { type CryptoKey, importJWK, type JWK, type JWTVerifyGetKey } from "jose";
import { nodeCrypto } from "./node-crypto.js";
import { isCryptoKey, keyPerAlgorithm } from "./web-key.js";

/**
 * A key given as a Node `KeyObject` or as a Web Crypto `CryptoKey` (what jose's `generateKeyPair`
 * and `importJWK` return, and `crypto.subtle` makes), as the `KeyObject` Node verifies and signs
 * with; `undefined` for anything else (a JWK, a PEM string, bytes). `KeyObject.from` takes a
 * `CryptoKey` whether or not it is extractable, and refuses anything that is not one. Always
 * `undefined` where the runtime has no `node:crypto` (and so no `KeyObject`).
 *
 * @example asKeyObject((await generateKeyPair("ES256")).publicKey)?.asymmetricKeyType; // "ec"
 * @see https://nodejs.org/api/crypto.html#static-method-keyobjectfromkey
 */
export function asKeyObject(value: unknown): KeyObject | undefined {
  if (nodeCrypto === undefined) return undefined;
  const { KeyObject } = nodeCrypto;
  if (value instanceof KeyObject) return value;
  if (typeof value !== "object" || value === null || value instanceof Uint8Array) return undefined;
  try {
    return KeyObject.from(value as webcrypto.CryptoKey);
  } catch {
    return undefined;
  }
}

/**
 * What jose verifies with for the one public key `key` (`bearer.key`, checked and reduced to its
 * public half; `given`, the option as given): Web Crypto `CryptoKey`s on every runtime, imported
 * from the key's JWK with `crypto.subtle` once per algorithm a token names (a `CryptoKey` serves
 * one algorithm: an RSA key verifies RS256 and PS256 as two). Handed a `KeyObject`, jose would
 * convert it with `KeyObject.toCryptoKey`, which Cloudflare Workers do not implement. A token
 * whose algorithm the key does not fit (`fits`) fails as a signature no key verifies. A key that
 * cannot be written as a JWK (an RSA-PSS key on Node, a non-extractable one elsewhere) goes to
 * jose as given when it is a public `CryptoKey`, else as the `KeyObject`.
 *
 * @example await jwtVerify(token, verificationKey(createPublicKey(pem), pem, fits), { algorithms });
 * @see https://www.w3.org/TR/WebCryptoAPI/#SubtleCrypto-method-importKey
 */
export function verificationKey(
  key: KeyObject,
  given: unknown,
  fits: (alg: string) => boolean,
): KeyObject | CryptoKey | JWTVerifyGetKey {
  let jwk: JWK;
  try {
    jwk = key.export({ format: "jwk" }) as JWK;
  } catch {
    return isCryptoKey(given) && given.type === "public" ? given : key;
  }
  return keyPerAlgorithm((alg) => importJWK(jwk, alg) as Promise<CryptoKey>, fits);
}

/**
 * What jose signs with for the private key `key` (the token issuer's, checked; `given`, the
 * option as given) and `alg`: a Web Crypto `CryptoKey` on every runtime, imported from the key's
 * JWK with `crypto.subtle`, as for {@link verificationKey}. A key that cannot be written as a JWK
 * goes to jose as given when it is a private `CryptoKey`, else as the `KeyObject`.
 *
 * @example const key = await signingKey(createPrivateKey(pem), pem, "ES256");
 * @see https://www.w3.org/TR/WebCryptoAPI/#SubtleCrypto-method-importKey
 */
export async function signingKey(
  key: KeyObject,
  given: unknown,
  alg: string,
): Promise<KeyObject | CryptoKey> {
  let jwk: JWK;
  try {
    jwk = key.export({ format: "jwk" }) as JWK;
  } catch {
    return isCryptoKey(given) && given.type === "private" ? given : key;
  }
  return (await importJWK(jwk, alg)) as CryptoKey;
}
