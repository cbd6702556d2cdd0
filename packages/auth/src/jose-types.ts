/**
 * The jose types the public API names (`bearer.key`, `bearer.jwks`, `principal(payload)`, the token
 * issuer's `privateKey` and `jwks()`), declared here with jose's structure rather than imported
 * from it. jose is an ES module only: a CommonJS declaration file (`dist/*.d.cts`) that imports
 * its types fails under TypeScript's `moduleResolution: node16` (TS1479), so the declarations name
 * none of them. jose's own values fit these types and these fit jose's parameters, both ways
 * (test/jose-types.test.ts checks it against the jose installed).
 *
 * @see https://www.rfc-editor.org/rfc/rfc7517 (JWK, JWK Set)
 * @see https://www.rfc-editor.org/rfc/rfc7519#section-4 (JWT claims)
 */

/** A JSON Web Key (RFC 7517 §4; RFC 7518 §6; RFC 8037 §2), as jose's `JWK`. */
export type JWK = {
  kty?: string;
  alg?: string;
  key_ops?: string[];
  ext?: boolean;
  use?: string;
  x5c?: string[];
  x5t?: string;
  "x5t#S256"?: string;
  x5u?: string;
  kid?: string;
  crv?: string;
  d?: string;
  dp?: string;
  dq?: string;
  e?: string;
  k?: string;
  n?: string;
  p?: string;
  q?: string;
  qi?: string;
  x?: string;
  y?: string;
  pub?: string;
  priv?: string;
  oth?: Array<{ d?: string; r?: string; t?: string }>;
};

/** A JWK Set (RFC 7517 §5), as jose's `JSONWebKeySet`. */
export interface JSONWebKeySet {
  /** The keys (RFC 7517 §5.1). */
  keys: JWK[];
}

/** A JWT's claims (RFC 7519 §4), as jose's `JWTPayload`: the registered ones, and any other. */
export interface JWTPayload {
  /** Issuer (RFC 7519 §4.1.1). */
  iss?: string;
  /** Subject (§4.1.2). */
  sub?: string;
  /** Audience (§4.1.3). */
  aud?: string | string[];
  /** JWT ID (§4.1.7). */
  jti?: string;
  /** Not before, in seconds since the epoch (§4.1.5). */
  nbf?: number;
  /** Expiration time, in seconds since the epoch (§4.1.4). */
  exp?: number;
  /** Issued at, in seconds since the epoch (§4.1.6). */
  iat?: number;
  /** Any other claim. */
  [claim: string]: unknown;
}

/**
 * The runtime's Web Crypto `CryptoKey`, as jose's `CryptoKey`: the type `crypto.subtle.generateKey`
 * resolves to where the global `crypto` is typed (`@types/node`, `lib.dom`), else its structure.
 */
export type CryptoKey = typeof globalThis extends {
  crypto: { subtle: { generateKey(...args: never[]): Promise<infer R> } };
}
  ? Extract<R, { type: string }>
  : {
      readonly algorithm: { name: string };
      readonly extractable: boolean;
      readonly type: string;
      readonly usages: string[];
    };
