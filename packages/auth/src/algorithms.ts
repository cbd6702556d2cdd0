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
