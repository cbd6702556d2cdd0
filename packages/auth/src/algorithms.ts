import type { KeyObject } from "node:crypto";

/** JWS algorithms with a shared secret (RFC 7518 §3.2). */
export const HMAC_ALGORITHMS: ReadonlySet<string> = new Set(["HS256", "HS384", "HS512"]);

/**
 * JWS algorithms with a key pair that a token can be signed with: RSASSA-PKCS1-v1_5 (RFC 7518
 * §3.3), ECDSA (§3.4), RSASSA-PSS (§3.5) and EdDSA (RFC 8037 §3.1).
 */
export const SIGNING_ALGORITHMS = [
  "ES256",
  "ES384",
  "ES512",
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "EdDSA",
] as const;

/**
 * JWS algorithms with a key pair a verifier accepts: every {@link SIGNING_ALGORITHMS} member plus
 * the fully-specified `Ed25519` (RFC 9864 §2.2).
 */
export const ASYMMETRIC_ALGORITHMS: ReadonlySet<string> = new Set<string>([...SIGNING_ALGORITHMS, "Ed25519"]);

/**
 * What a public or private key is, in Node's `KeyObject` names: `asymmetricKeyType` (`"ec"`,
 * `"rsa"`, `"rsa-pss"`, `"ed25519"`, `"ed448"`) and, for `"ec"`, the OpenSSL curve name
 * (`"prime256v1"`, `"secp384r1"`, `"secp521r1"`).
 */
export interface KeyKind {
  type: string | undefined;
  curve?: string | undefined;
}

/** A `KeyObject`'s {@link KeyKind}. */
export function kindOf(key: KeyObject): KeyKind {
  return { type: key.asymmetricKeyType, curve: key.asymmetricKeyDetails?.namedCurve };
}

/** RFC 7518 §3.4 (ES*: one curve each), §3.3 and §3.5 (RSA), RFC 8037 §3.1 (EdDSA: Ed25519, Ed448). */
export function keyFitsAlgorithm(key: KeyObject, alg: string): boolean {
  return kindFitsAlgorithm(kindOf(key), alg);
}

/** {@link keyFitsAlgorithm} for a key known by its {@link KeyKind}. */
export function kindFitsAlgorithm({ type, curve }: KeyKind, alg: string): boolean {
  switch (alg) {
    case "ES256":
      return type === "ec" && curve === "prime256v1";
    case "ES384":
      return type === "ec" && curve === "secp384r1";
    case "ES512":
      return type === "ec" && curve === "secp521r1";
    case "RS256":
    case "RS384":
    case "RS512":
      return type === "rsa";
    case "PS256":
    case "PS384":
    case "PS512":
      return type === "rsa" || type === "rsa-pss";
    case "EdDSA":
      return type === "ed25519" || type === "ed448";
    case "Ed25519":
      return type === "ed25519";
    default:
      return false;
  }
}
