import type * as NodeCrypto from "node:crypto";
import type { KeyObject } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, SignJWT } from "jose";
import { keyFitsAlgorithm, SIGNING_ALGORITHMS } from "./algorithms.js";
import type { CryptoKey, JSONWebKeySet, JWK } from "./jose-types.js";
import { asKeyObject, signingKey } from "./key-input.js";
import { nodeCrypto } from "./node-crypto.js";
import { checkOptions, codedError, functionOption, optionError } from "./options.js";
import type { Principal } from "./principal.js";

/** A JWS algorithm {@link createTokenIssuer} can sign with. */
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

/** Options of {@link createTokenIssuer}. */
export interface TokenIssuerOptions {
  /**
   * The signing key: a private JWK, a PKCS#8 PEM, a private `KeyObject`, or a private Web Crypto
   * `CryptoKey` (jose's `generateKeyPair` makes one).
   * @default a fresh key pair generated in memory (demos and tests: tokens die with the process)
   */
  privateKey?: JWK | string | KeyObject | CryptoKey;
  /** The `iss` claim (RFC 7519 §4.1.1). */
  issuer: string;
  /** The `aud` claim (RFC 7519 §4.1.3). */
  audience: string | readonly string[];
  /**
   * Token lifetime in seconds (`exp - iat`, and `expires_in`).
   * @default 900
   */
  ttl?: number;
  /**
   * The signing algorithm.
   * @default "ES256"
   */
  algorithm?: SigningAlgorithm;
  /**
   * The key id in the token header and the JWKS.
   * @default the key's RFC 7638 thumbprint
   */
  kid?: string;
  /**
   * The clock in milliseconds, for tests.
   * @default Date.now
   */
  now?: () => number;
}

/** An OAuth 2.0 access token response (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  /** Lifetime in seconds. */
  expires_in: number;
}

/** What {@link createTokenIssuer} returns. */
export interface TokenIssuer {
  /** The algorithm tokens are signed with: list it in the verifier's `algorithms`. */
  readonly algorithm: SigningAlgorithm;
  /**
   * Signs an RFC 9068 access token for `principal` (`client_id` is the principal's id unless
   * `claims` names another); `claims` adds or overrides claims. Each scope must be
   * one RFC 6749 §3.3 scope-token (no spaces): anything else rejects with a `TypeError`.
   */
  issue(
    principal: Pick<Principal, "id"> & Partial<Pick<Principal, "roles" | "scopes">>,
    claims?: Readonly<Record<string, unknown>>,
  ): Promise<TokenResponse>;
  /** The JWKS document (public key only) to serve at the `jwks_uri`. */
  jwks(): Promise<JSONWebKeySet>;
}

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

const CURVE: Partial<Record<SigningAlgorithm, string>> = { ES256: "P-256", ES384: "P-384", ES512: "P-521" };

function generate({ generateKeyPairSync }: typeof NodeCrypto, algorithm: SigningAlgorithm): KeyObject {
  if (algorithm.startsWith("ES")) {
    return generateKeyPairSync("ec", { namedCurve: CURVE[algorithm] ?? "P-256" }).privateKey;
  }
  if (algorithm === "EdDSA") return generateKeyPairSync("ed25519").privateKey;
  return generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
}

function toPrivateKey(
  { createPrivateKey }: typeof NodeCrypto,
  key: JWK | string | KeyObject | CryptoKey,
): KeyObject {
  const object = asKeyObject(key);
  if (object?.type === "private") return object;
  try {
    if (typeof key === "string") return createPrivateKey(key);
    if (
      object === undefined &&
      typeof key === "object" &&
      key !== null &&
      "d" in key &&
      typeof key.d === "string"
    ) {
      return createPrivateKey({ key: key as import("node:crypto").JsonWebKey, format: "jwk" });
    }
  } catch {
    // Node's parse error names neither the option nor what it accepts.
  }
  // The key itself never goes into the message.
  throw codedError(
    "tokenIssuer.privateKey",
    "tokenIssuer.privateKey must be a private JWK, a PKCS#8 PEM, a private KeyObject or a private CryptoKey",
  );
}

/**
 * The key, once it can sign `algorithm`: one of another type or curve (an RSA key with ES256), or
 * an RSA key under 2048 bits (RFC 7518 §3.3: "A key of size 2048 bits or larger MUST be used"),
 * let the issuer start and made every `issue()` throw, a 500 on every token request.
 */
function keyFor(algorithm: SigningAlgorithm, key: KeyObject): KeyObject {
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (keyFitsAlgorithm(key, algorithm) && (bits === undefined || bits >= 2048)) return key;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  const kind =
    `${curve ?? (bits === undefined ? "" : `${bits}-bit`)} ${key.asymmetricKeyType ?? "unknown"}`.trim();
  throw codedError(
    "tokenIssuer.privateKey",
    `tokenIssuer.privateKey is a ${kind} key, which cannot sign ${algorithm} (RFC 7518 §3.3, §3.4, §3.5; RFC 8037 §3.1)`,
  );
}

const TOKEN_ISSUER_OPTIONS = Object.keys({
  privateKey: 0,
  issuer: 0,
  audience: 0,
  ttl: 0,
  algorithm: 0,
  kid: 0,
  now: 0,
} satisfies Record<keyof TokenIssuerOptions, 0>);

/**
 * Signs access tokens (ES256 by default) and publishes the matching JWKS, for demos, tests and
 * the reference server's token endpoint. Not an authorization server: it checks nothing about
 * who asks; the caller decides what principal gets a token.
 *
 * @example
 * const issuer = createTokenIssuer({ issuer: "https://api.example/", audience: "https://api.example/" });
 * app.get("/.well-known/jwks.json", async (_req, res) => res.json(await issuer.jwks()));
 * // RFC 6749 §5.1: a token response MUST carry Cache-Control: no-store.
 * app.post("/token", async (req, res) => res.set("Cache-Control", "no-store").json(await issuer.issue({ id: "alice", scopes: ["read"] })));
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-5.1
 * @see https://www.rfc-editor.org/rfc/rfc7517#section-5
 */
export function createTokenIssuer(options: TokenIssuerOptions): TokenIssuer {
  checkOptions(options, TOKEN_ISSUER_OPTIONS, "tokenIssuer", "an object { issuer, audience, ... }");
  const algorithm = options.algorithm ?? "ES256";
  if (!SIGNING_ALGORITHMS.includes(algorithm))
    throw optionError("tokenIssuer.algorithm", algorithm, `one of ${SIGNING_ALGORITHMS.join(", ")}`);
  if (typeof options.issuer !== "string" || options.issuer === "")
    throw optionError("tokenIssuer.issuer", options.issuer, "a non-empty string");
  const audience: unknown = options.audience;
  if (
    !(typeof audience === "string" && audience !== "") &&
    !(
      Array.isArray(audience) &&
      audience.length > 0 &&
      audience.every((a) => typeof a === "string" && a !== "")
    )
  )
    throw optionError("tokenIssuer.audience", audience, "a non-empty string or a non-empty list of them");
  const aud: string | string[] = typeof audience === "string" ? audience : [...(audience as string[])];
  const ttl = options.ttl ?? 900;
  if (!Number.isSafeInteger(ttl) || ttl <= 0)
    throw optionError("tokenIssuer.ttl", ttl, "a positive integer of seconds");
  if (options.kid !== undefined && (typeof options.kid !== "string" || options.kid === ""))
    throw optionError("tokenIssuer.kid", options.kid, "a non-empty string");
  const now = functionOption(options.now ?? Date.now, "tokenIssuer.now", "a function () => milliseconds");
  // Its keys are checked (and generated) synchronously, here, by node:crypto's KeyObject.
  const node = nodeCrypto;
  if (node === undefined)
    throw codedError("tokenIssuer", "tokenIssuer needs node:crypto, which this runtime does not have");
  const privateKey =
    options.privateKey === undefined
      ? generate(node, algorithm)
      : keyFor(algorithm, toPrivateKey(node, options.privateKey));

  const publicJwk: Promise<JWK> = (async () => {
    const jwk = await exportJWK(node.createPublicKey(privateKey));
    const kid = options.kid ?? (await calculateJwkThumbprint(jwk));
    return { ...jwk, kid, alg: algorithm, use: "sig" };
  })();
  // Surface a key/algorithm mismatch on first use, not as an unhandled rejection.
  publicJwk.catch(() => {});
  const signing = signingKey(privateKey, options.privateKey, algorithm);
  signing.catch(() => {});

  return {
    algorithm,
    async issue(principal, claims = {}) {
      if (typeof principal?.id !== "string" || principal.id === "") {
        throw new TypeError("issue: principal.id must be a non-empty string");
      }
      const { kid } = await publicJwk;
      const iat = Math.floor(now() / 1000);
      const payload: Record<string, unknown> = {
        iss: options.issuer,
        sub: principal.id,
        aud,
        iat,
        exp: iat + ttl,
        // RFC 9068 §2.2, the JWT access token profile this token's `typ: at+jwt` names: client_id
        // is REQUIRED beside iss, exp, aud, sub, iat and jti, and a validator of the profile
        // refuses a token without it. The issuer knows no client but the principal it was asked
        // for: a client authenticating as itself (RFC 6749 §4.4), whose sub "SHOULD correspond
        // to an identifier of the client" (§2.2). `claims` can name another.
        client_id: principal.id,
        jti: crypto.randomUUID(),
      };
      if (principal.scopes && principal.scopes.length > 0) {
        // RFC 6749 §3.3: scope = scope-token *( SP scope-token ), scope-token = 1*( %x21 / %x23-5B
        // / %x5D-7E ). Joined as is, a scope "read admin" came back from the verifier as two
        // scopes, "admin" among them; a value that is not one scope-token is refused here.
        const bad = principal.scopes.findIndex((s) => typeof s !== "string" || !SCOPE_TOKEN.test(s));
        if (bad !== -1)
          throw new TypeError(
            `issue: principal.scopes must be OAuth scope-tokens (printable ASCII, no spaces, quotes or backslashes), got ${JSON.stringify(String(principal.scopes[bad]))}`,
          );
        payload.scope = principal.scopes.join(" ");
      }
      if (principal.roles && principal.roles.length > 0) payload.roles = [...principal.roles];
      // Extra claims last: tests and demos may override any registered claim (an expired `exp`).
      Object.assign(payload, claims);
      const jwt = await new SignJWT(payload)
        .setProtectedHeader({ alg: algorithm, typ: "at+jwt", ...(kid ? { kid } : {}) })
        .sign(await signing);
      // RFC 6749 §5.1: expires_in is "the lifetime in seconds of the access token": that of the
      // exp signed, which claims may have replaced (never below 0 for one already past).
      const exp = payload.exp;
      const expiresIn =
        typeof exp === "number" && Number.isFinite(exp) ? Math.max(0, Math.floor(exp - iat)) : ttl;
      return { access_token: jwt, token_type: "Bearer", expires_in: expiresIn };
    },
    async jwks() {
      return { keys: [{ ...(await publicJwk) }] };
    },
  };
}
