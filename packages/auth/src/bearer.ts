import type * as NodeCrypto from "node:crypto";
import type { KeyObject } from "node:crypto";
import {
  createLocalJWKSet,
  decodeJwt,
  errors,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  type JWTVerifyResult,
  jwtVerify,
} from "jose";
import {
  ASYMMETRIC_ALGORITHMS,
  HMAC_ALGORITHMS,
  type KeyKind,
  kindFitsAlgorithm,
  kindOf,
} from "./algorithms.js";
import { utf8 } from "./bytes.js";
import { acceptBoundTokensOption, type Confirmation, confirmationOf } from "./confirmation.js";
import {
  type DiscoveryOptions,
  discoveredKeySource,
  discoverySettings,
  isIssuerIdentifier,
} from "./discovery.js";
import type { CryptoKey, JSONWebKeySet, JWK, JWTPayload } from "./jose-types.js";
import { asKeyObject, verificationKey } from "./key-input.js";
import { nodeCrypto } from "./node-crypto.js";
import {
  checkOptions,
  codedError,
  functionOption,
  nonNegativeNumber,
  optionError,
  positiveMilliseconds,
  positiveNumber,
  timeoutMilliseconds,
} from "./options.js";
import { type Principal, type PrincipalInit, toPrincipal } from "./principal.js";
import {
  FAILURE_COOLDOWN_DEFAULT,
  isKeySourceFailure,
  JWKS_MAX_BYTES_DEFAULT,
  type ReloadableKeySource,
  type RemoteJwksConfig,
  remoteKeySet,
} from "./remote-jwks.js";
import { principalBytes, VerifiedTokenCache } from "./token-cache.js";
import { isCryptoKey, portablePublicKey, portableVerificationKey } from "./web-key.js";

/** The verified-token cache's settings. */
export interface BearerCacheOptions {
  /**
   * How many verified tokens are kept; the least recently used leaves first. The cache also holds
   * at most 8 MiB (estimated: about 200 bytes an entry plus its principal's strings at two bytes a
   * character), so a `principal` mapping returning thousands of roles cannot make `max` entries
   * take gigabytes; a principal over 8 MiB on its own is verified on every request.
   * @default 1000
   */
  max?: number;
  /**
   * Upper bound, in seconds, on how long a verified token is trusted without re-verification,
   * whatever its `exp`: it bounds how late a key removed from the JWKS is noticed.
   * @default 300
   */
  maxTtl?: number;
}

/** Settings of a remote JWKS (jose's `createRemoteJWKSet`). */
export interface RemoteJwksOptions {
  /**
   * Milliseconds a fetched key set is used before it is fetched again. `0` keeps no key set: every
   * verification the verified-token cache does not answer downloads it first (concurrent ones share
   * one download), forged tokens included, so each such request costs the key server a request.
   * Unlike the verified-token cache (`cache: false` switches it off, a `maxTtl` of 0 is refused),
   * 0 is accepted here, as jose takes it, for tests and key servers that must be read every time.
   * @default 600000
   */
  cacheMaxAge?: number;
  /**
   * Milliseconds after a fetch during which an unknown `kid` does not trigger another fetch,
   * so tokens with made-up `kid`s cannot make the server hammer the JWKS endpoint. `0` switches
   * that protection off: every request with an unknown `kid` then starts a download.
   * @default 30000
   */
  cooldownDuration?: number;
  /**
   * Milliseconds before a JWKS fetch is abandoned: a whole number from 1 to 2^31 - 1 (what
   * `AbortSignal.timeout` keeps).
   * @default 5000
   */
  timeoutDuration?: number;
  /**
   * Milliseconds after a failed JWKS download (network error, timeout, a status other than 200,
   * a body that is no JWKS) during which no other download is tried: requests that need the keys
   * fail at once (503 with `Retry-After`), so a key server outage is not met with one download per
   * request. A number from more than 0 to 2^31 - 1.
   * @default 5000
   */
  failureCooldownDuration?: number;
  /**
   * Largest key set read, in bytes: a larger download is abandoned as soon as it passes this
   * (checked on `Content-Length` first, then while reading) and counts as a failed download (503).
   * A positive integer.
   * @default 262144 (256 KiB)
   */
  maxBytes?: number;
}

/**
 * One issuer of a multi-issuer verifier (`bearer.issuers`): its `iss`, its own key source and,
 * when it differs from `bearer.audience`, its own audience.
 */
export interface BearerIssuerOptions {
  /**
   * The `iss` value this issuer's tokens carry, compared as written (RFC 7519 §4.1.1: a
   * StringOrURI, compared case-sensitively): a token is verified with this entry's keys only when
   * its `iss` is identical to it.
   */
  issuer: string;
  /** URL of this issuer's JSON Web Key Set (`https:`, or `http:` with `bearer.allowHttp`). */
  jwksUri?: string | URL;
  /** This issuer's keys as a local JSON Web Key Set. */
  jwks?: JSONWebKeySet;
  /** This issuer's one public key: a JWK, a PEM, a `KeyObject` or a `CryptoKey`. */
  key?: JWK | string | KeyObject | CryptoKey;
  /**
   * Accepted `aud` value(s) of this issuer's tokens (RFC 7519 §4.1.3).
   * @default bearer.audience
   */
  audience?: string | readonly string[];
}

/** Options of {@link createBearerVerifier} (and `authenticate({ bearer })`). */
export interface BearerOptions {
  /**
   * The JWS algorithms accepted: required, never inferred from the token. `none` is refused,
   * and symmetric (`HS*`) and asymmetric algorithms cannot be mixed, which closes the
   * HS256-with-a-public-key confusion.
   */
  algorithms: readonly string[];
  /**
   * URL of a JSON Web Key Set; keys are fetched, cached and refreshed by jose. Must be `https:`
   * unless `allowHttp` is set.
   */
  jwksUri?: string | URL;
  /**
   * The issuer (`https://issuer.example/`): its `jwks_uri` is discovered from
   * `${issuerBaseURL}/.well-known/openid-configuration` (OpenID Connect Discovery 1.0 §4, then the
   * RFC 8414 form) on first use. The metadata's `issuer` must be identical to this string, and
   * `iss` is checked against it unless `issuer` is given.
   */
  issuerBaseURL?: string | URL;
  /** Settings of the metadata download for `issuerBaseURL`. */
  discovery?: DiscoveryOptions;
  /** Settings for `jwksUri` (and the JWKS discovered from `issuerBaseURL`). */
  jwksOptions?: RemoteJwksOptions;
  /**
   * Accept `http:` for `jwksUri`, `issuerBaseURL` and a discovered `jwks_uri`: for a loopback or
   * development issuer only, since keys fetched in clear can be replaced by anyone on the path.
   * Without it an `http:` URL is refused at construction (or, once discovered, by a 503).
   * @default false
   */
  allowHttp?: boolean;
  /**
   * Receives the warning about an `http:` key source allowed by `allowHttp`, once per verifier
   * (at construction, or at discovery for a discovered `jwks_uri`), code `SVC_AUTH_INSECURE_JWKS`;
   * and, at most once a minute, why a token could not be verified when the reason is not the
   * token (a key the runtime cannot use: such tokens are refused as invalid all the same), code
   * `SVC_AUTH_TOKEN_UNVERIFIABLE`.
   * @default (message, code) => process.emitWarning(message, { type: "SecurityWarning", code }), or
   * `console.warn` where there is no `process` (workerd, browsers)
   */
  onWarning?: (message: string, code: string) => void;
  /**
   * A local JSON Web Key Set; the token's `alg` and `kid` select the key. A token without `kid`
   * (RFC 7515 §4.1.4) that fits several keys is tried against each, at most 4.
   */
  jwks?: JSONWebKeySet;
  /**
   * One public key: a JWK, a PEM (SPKI public key or X.509 certificate), a `KeyObject`, or a Web
   * Crypto `CryptoKey` (jose's `generateKeyPair` and `importJWK` make those). A private key is
   * reduced to its public half.
   */
  key?: JWK | string | KeyObject | CryptoKey;
  /**
   * A shared secret for `HS256`/`HS384`/`HS512`: a string (UTF-8), bytes, or a secret `KeyObject`
   * or HMAC `CryptoKey`, of at least as many bytes as the largest hash output among `algorithms`
   * (32 for HS256, 48 for HS384, 64 for HS512; RFC 7518 §3.2).
   */
  secret?: string | Uint8Array | KeyObject | CryptoKey;
  /** Accepted `iss` value(s) (RFC 7519 §4.1.1). */
  issuer?: string | readonly string[];
  /**
   * Several issuers in one verifier (multi-tenant), each with its own key source and audience,
   * instead of `jwksUri`/`jwks`/`key` and `issuer`. A token's unverified `iss` picks the entry
   * whose keys may verify it, and only those: a token signed by one issuer's key that names
   * another issuer in `iss` fails that other issuer's signature check. A token whose `iss` names
   * no entry is refused before any key is looked up or fetched. Asymmetric algorithms only.
   * @default undefined (one key source)
   */
  issuers?: readonly BearerIssuerOptions[];
  /**
   * Accepted `aud` value(s) (RFC 7519 §4.1.3). Without it, a token carrying an `aud` claim is
   * refused ("the JWT MUST be rejected" when the processor does not identify itself with a value in
   * it); tokens without `aud` pass.
   */
  audience?: string | readonly string[];
  /**
   * Seconds of clock skew allowed when checking `exp`, `nbf` and `iat` (a token whose `iat` is
   * further ahead than this was not issued yet, RFC 7519 §4.1.6, and is refused). Not capped: a
   * token is accepted this long after its `exp`, so keep it small (RFC 7519 §4.1.4: "some small
   * leeway, usually no more than a few minutes").
   * @default 5
   */
  clockTolerance?: number;
  /**
   * Maximum age of a token from its `iat`, in seconds or as a jose duration (`"1h"`).
   * @default undefined (only `exp` limits a token's life)
   */
  maxTokenAge?: number | string;
  /**
   * Claims that must be present. `exp` is always required: a token without it never expires.
   * @default ["exp"]
   */
  requiredClaims?: readonly string[];
  /**
   * The media type the token's protected header `typ` must name: `"at+jwt"` for RFC 9068 JWT
   * access tokens, whose §4 says resource servers "MUST verify that the typ header value is
   * "at+jwt" or "application/at+jwt" and reject tokens carrying any other value". Compared as RFC
   * 7515 §4.1.9 says, `application/` implied and case-insensitively (`"at+jwt"` accepts `at+jwt`,
   * `AT+JWT` and `application/at+jwt`); a token without `typ` is refused. Set it when the issuer
   * types its access tokens: it keeps an ID token, a logout token or any other JWT the same key
   * signs for the same `iss` and `aud` from passing as an access token (RFC 8725 §3.11).
   * @default undefined (`typ` not checked)
   */
  typ?: string;
  /**
   * Accept a token bound to a key or a certificate (a `cnf` claim: DPoP's `jkt`, mutual TLS's
   * `x5t#S256`) when it is sent as `Bearer`, which proves no possession of that key: for a gateway
   * in front that checked the binding, or while clients move to DPoP (RFC 9449 §7.2). Otherwise
   * such a token is a 401 `invalid_token`. With `dpop` beside, a `jkt`-bound token sent as `Bearer`
   * is refused whatever this says (RFC 9449 §7.2: "MUST reject").
   * @default false
   * @see https://www.rfc-editor.org/rfc/rfc9449#section-7.2
   */
  acceptBoundTokens?: boolean;
  /**
   * Longest accepted token in characters; a longer one is an invalid token at once, before it is
   * decoded, looked up in the cache or verified (the issuers this serves produce well under 2 KiB).
   * @default 8192
   */
  maxTokenLength?: number;
  /**
   * The verified-token cache: a hot token is verified once, then served from memory until its
   * `exp` (or `maxTtl`). `false` verifies every request.
   * @default { max: 1000, maxTtl: 300 }
   */
  cache?: BearerCacheOptions | false;
  /**
   * Maps verified claims to the principal.
   * @default `sub` → id, `scope` (space separated) or `scp` → scopes, `roles` → roles
   */
  principal?: (payload: JWTPayload) => PrincipalInit;
  /**
   * Asks the application whether the principal of a token whose signature and claims check out
   * may still use it: resolve to `true` for a user that exists (and is allowed in), anything else
   * refuses the token (401 `invalid_token`, RFC 6750 §3.1). A signed token outlives the user it
   * names: removed, it still verifies until `exp`. Called once per token, before the token is
   * cached, so a token already cached keeps working for up to `cache.maxTtl` (or until
   * `clearCache()`). A throw or rejection fails the request (500, or the status of an `HttpError`
   * it throws: a 503 for a user store that is down), never lets the token pass.
   * @default undefined (every verified token's principal is accepted)
   */
  verifyPrincipal?: (principal: Principal, claims: JWTPayload) => boolean | Promise<boolean>;
  /**
   * The clock in milliseconds, for tests.
   * @default Date.now
   */
  now?: () => number;
}

/**
 * A token that failed verification; `reason` (jose's error code) is for logs, never for the client.
 *
 * @example
 * try { await verifier.verify(token) } catch (err) { if (err instanceof InvalidTokenError) log.info(err.reason) }
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3.1
 */
export class InvalidTokenError extends Error {
  /** jose's error code, or this package's reason for refusing the token. */
  readonly reason: string;
  constructor(reason: string, options?: { cause?: unknown }) {
    super("The access token is invalid", options);
    this.name = "InvalidTokenError";
    this.reason = reason;
  }
}

/**
 * The remote JWKS could not be fetched or read (timeout, connection refused, not 200, not a
 * JWKS): the server's problem, not the token's, so it becomes a 503 rather than a 401.
 */
export class KeySourceUnavailableError extends Error {
  /**
   * Seconds until the key source is tried again (the rest of `failureCooldownDuration`), when
   * known: `authenticate` sends it as the 503's `Retry-After`.
   */
  readonly retryAfter: number | undefined;
  constructor(options?: { cause?: unknown; retryAfter?: number }) {
    super("The JSON Web Key Set could not be fetched", options);
    this.name = "KeySourceUnavailableError";
    this.retryAfter = options?.retryAfter;
  }
}

function wrapRemote(remote: ReloadableKeySource): ReloadableKeySource {
  const getKey: JWTVerifyGetKey = async (header, token) => {
    try {
      return await remote(header, token);
    } catch (err) {
      if (err instanceof KeySourceUnavailableError || !isKeySourceFailure(err)) throw err;
      throw new KeySourceUnavailableError({ cause: err });
    }
  };
  return Object.assign(getKey, { invalidate: () => remote.invalidate() });
}

/**
 * The verified-token cache's synchronous lookup on the verifiers {@link createBearerVerifier}
 * makes, for {@link authenticate}: a known token costs no promise. Not exported from the package.
 */
export const CACHED = Symbol("@svc/auth cached principal");

/**
 * A verified token as the cache keeps it: its principal, and how it is bound (RFC 7800 `cnf`),
 * read once when it was verified, so a known token's binding costs nothing more to check.
 */
export interface VerifiedToken {
  principal: Principal;
  bound: Confirmation | undefined;
}

/** A verifier that may answer from its cache without a promise (see {@link CACHED}). */
export interface CachedLookup {
  [CACHED]?(token: string): VerifiedToken | undefined;
}

/** What {@link createBearerVerifier} returns. */
export interface BearerVerifier {
  /**
   * Verifies a compact JWS and returns its principal, or throws {@link InvalidTokenError}
   * (or {@link KeySourceUnavailableError} when a remote JWKS cannot be fetched).
   */
  verify(token: string): Promise<Principal>;
  /**
   * Empties the verified-token cache (after a key revocation, for instance), and has a remote
   * JWKS (`jwksUri`, `issuerBaseURL`) downloaded again before the next token is verified, so a key
   * the issuer no longer publishes stops verifying at once rather than after `cacheMaxAge`.
   */
  clearCache(): void;
  /**
   * Whether `authenticate` takes a token with a `cnf` claim sent as `Bearer` (the option
   * `acceptBoundTokens`); a verifier of one's own without it has such tokens refused.
   */
  readonly acceptBoundTokens?: boolean;
}

function defaultPrincipal(payload: JWTPayload): PrincipalInit {
  const scopes =
    typeof payload.scope === "string"
      ? payload.scope.split(" ").filter(Boolean)
      : Array.isArray(payload.scp)
        ? payload.scp.filter((s): s is string => typeof s === "string")
        : typeof payload.scp === "string"
          ? payload.scp.split(" ").filter(Boolean)
          : [];
  const roles = Array.isArray(payload.roles)
    ? payload.roles.filter((r): r is string => typeof r === "string")
    : [];
  return { id: payload.sub ?? "", roles, scopes };
}

const KEY_ACCEPTED =
  "a public key: a JWK, a PEM string, a KeyObject or a CryptoKey (use bearer.secret for HS*)";

function toKeyObject(node: typeof NodeCrypto, key: JWK | string | KeyObject | CryptoKey): KeyObject {
  const { createPublicKey } = node;
  const object = asKeyObject(key);
  if (object !== undefined) {
    if (object.type === "secret") throw codedError("bearer.key", `bearer.key must be ${KEY_ACCEPTED}`);
    return object.type === "private" ? createPublicKey(object) : object;
  }
  try {
    if (typeof key === "string") return createPublicKey(key);
    // Not a KeyObject or a CryptoKey (asKeyObject said so): a JWK, or nothing this accepts.
    const jwk = key as JWK;
    if (typeof jwk === "object" && jwk !== null && jwk.kty !== "oct") {
      // Only the public members: a private JWK passed by mistake is not kept around.
      const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, oth: _oth, ...pub } = jwk;
      return createPublicKey({ key: pub as JsonWebKeyInput["key"], format: "jwk" });
    }
  } catch {
    // Node's own parse error would name neither the option nor what it accepts.
  }
  // The key itself never goes into the message: a string here may well be a secret.
  throw codedError("bearer.key", `bearer.key must be ${KEY_ACCEPTED}`);
}

type JsonWebKeyInput = { key: import("node:crypto").JsonWebKey; format: "jwk" };

/**
 * The one public key, once it can verify a token of at least one of `algorithms`: a key of
 * another type or curve (a P-384 key with ES256) made every token a 401 with nothing at startup
 * to say why.
 */
function keyFitting(kind: KeyKind, algorithms: readonly string[]): void {
  if (algorithms.some((alg) => kindFitsAlgorithm(kind, alg))) return;
  const { curve } = kind;
  throw codedError(
    "bearer.key",
    `bearer.key is a${curve ? ` ${curve}` : "n"} ${kind.type ?? "unknown"} key, which verifies none of bearer.algorithms (${algorithms.join(", ")})`,
  );
}

/**
 * `bearer.key` where the runtime has no `node:crypto`: its kind is read at construction (a key
 * that fits none of `algorithms`, or that is no key, is refused there as on Node.js); Web Crypto
 * imports it on first use, and a key it refuses then fails every token with the coded
 * `TypeError` (a 500), never a 401.
 */
function portableKeySource(key: unknown, algorithms: readonly string[]): JWTVerifyGetKey {
  const portable = portablePublicKey(key);
  if (portable === undefined) throw codedError("bearer.key", `bearer.key must be ${KEY_ACCEPTED}`);
  keyFitting(portable.kind, algorithms);
  return portableVerificationKey(
    portable,
    (alg) => kindFitsAlgorithm(portable.kind, alg),
    (alg, cause) =>
      Object.assign(
        codedError(
          "bearer.key",
          `bearer.key cannot verify ${alg} here: Web Crypto refused it (${cause instanceof Error ? cause.message : String(cause)})`,
        ),
        { cause },
      ),
  );
}

/**
 * `bearer.secret` as jose takes it, with its size in bytes: a secret `KeyObject` on Node.js, the
 * bytes themselves or an HMAC `CryptoKey` elsewhere; `undefined` for anything else.
 */
function secretKey(secret: unknown): { key: KeyObject | CryptoKey | Uint8Array; bytes: number } | undefined {
  if (nodeCrypto !== undefined) {
    const key =
      typeof secret === "string"
        ? nodeCrypto.createSecretKey(secret, "utf8")
        : secret instanceof Uint8Array
          ? nodeCrypto.createSecretKey(Uint8Array.from(secret))
          : asKeyObject(secret);
    return key?.type === "secret" ? { key, bytes: key.symmetricKeySize ?? 0 } : undefined;
  }
  // A copy, as createSecretKey makes one: the caller's array may change after construction.
  const bytes =
    typeof secret === "string"
      ? utf8(secret)
      : secret instanceof Uint8Array
        ? Uint8Array.from(secret)
        : undefined;
  if (bytes !== undefined) return { key: bytes, bytes: bytes.length };
  if (!isCryptoKey(secret) || secret.type !== "secret") return undefined;
  const { length } = secret.algorithm as { length?: unknown };
  return { key: secret, bytes: typeof length === "number" ? length / 8 : 0 };
}

type KeySource = KeyObject | CryptoKey | Uint8Array | JWTVerifyGetKey;

/** jose's `jwtVerify` options but the clock. */
interface VerifyOptions {
  algorithms: string[];
  clockTolerance: number;
  requiredClaims: string[];
  issuer?: string[];
  audience?: string[];
  maxTokenAge?: number;
  /** jose compares it to the header's `typ` as RFC 7515 §4.1.9 says (see {@link typOption}). */
  typ?: string;
}

/** The keys a token is verified with and the claims it must carry. */
interface KeyRoute {
  keySource: KeySource;
  verifyOptions: VerifyOptions;
}

/** The options of {@link createBearerVerifier}, checked and resolved once. */
interface BearerConfig {
  /** One key source for every token; undefined with `issuers`. */
  route: KeyRoute | undefined;
  /** With `issuers`: each issuer's keys and claims by its exact `iss`. */
  tenants: Map<string, KeyRoute> | undefined;
  clockTolerance: number;
  mapPrincipal: (payload: JWTPayload) => PrincipalInit;
  verifyPrincipal: BearerOptions["verifyPrincipal"];
  now: () => number;
  /** The verified-token cache; undefined with `cache: false`. */
  cache: VerifiedTokenCache<VerifiedToken> | undefined;
  maxTtlMs: number;
  maxTokenAgeSeconds: number | undefined;
  maxTokenLength: number;
  onWarning: (message: string, code: string) => void;
  /** When a token last could not be verified for a reason other than the token (see {@link reportUnverifiable}). */
  unverifiable: { warnedAt: number };
}

/**
 * Resolves Bearer options once into a verifier: the algorithm allow-list, the key source, the
 * claim checks and the verified-token cache. Misconfiguration throws a `TypeError` here, never
 * per request.
 *
 * @example
 * const verifier = createBearerVerifier({
 *   jwksUri: "https://issuer.example/.well-known/jwks.json",
 *   algorithms: ["ES256"],
 *   issuer: "https://issuer.example/",
 *   audience: "https://api.example/",
 * });
 * const principal = await verifier.verify(token);
 * @see https://www.rfc-editor.org/rfc/rfc8725 (JWT Best Current Practices)
 */
export function createBearerVerifier(options: BearerOptions): BearerVerifier {
  const config = resolveBearerConfig(options);
  const verifier: BearerVerifier & CachedLookup = {
    acceptBoundTokens: acceptBoundTokensOption(options.acceptBoundTokens),
    verify: (token) => verifyToken(config, token),
    clearCache() {
      config.cache?.clear();
      // A key revoked from the issuer's JWK Set (RFC 7517 §5) must not keep verifying from
      // jose's copy of the set for up to cacheMaxAge, nor be cached again from it.
      for (const { keySource } of config.route ? [config.route] : (config.tenants?.values() ?? []))
        if (typeof keySource === "function" && "invalidate" in keySource)
          (keySource as ReloadableKeySource).invalidate();
    },
    // The same lookup verify() starts with, without the promise: undefined for anything else.
    [CACHED]: (token) => cachedPrincipal(config, token),
  };
  return verifier;
}

/** Every name {@link BearerOptions} has (the compiler checks the list is complete). */
const BEARER_OPTIONS = Object.keys({
  algorithms: 0,
  jwksUri: 0,
  issuerBaseURL: 0,
  discovery: 0,
  jwksOptions: 0,
  allowHttp: 0,
  onWarning: 0,
  jwks: 0,
  key: 0,
  secret: 0,
  issuer: 0,
  issuers: 0,
  audience: 0,
  clockTolerance: 0,
  maxTokenAge: 0,
  requiredClaims: 0,
  typ: 0,
  acceptBoundTokens: 0,
  maxTokenLength: 0,
  cache: 0,
  principal: 0,
  verifyPrincipal: 0,
  now: 0,
} satisfies Record<keyof BearerOptions, 0>);

const ISSUER_OPTIONS = Object.keys({
  issuer: 0,
  jwksUri: 0,
  jwks: 0,
  key: 0,
  audience: 0,
} satisfies Record<keyof BearerIssuerOptions, 0>);

const BEARER_CACHE_OPTIONS = Object.keys({ max: 0, maxTtl: 0 } satisfies Record<keyof BearerCacheOptions, 0>);

const JWKS_OPTIONS = Object.keys({
  cacheMaxAge: 0,
  cooldownDuration: 0,
  timeoutDuration: 0,
  failureCooldownDuration: 0,
  maxBytes: 0,
} satisfies Record<keyof RemoteJwksOptions, 0>);

function resolveBearerConfig(options: BearerOptions): BearerConfig {
  checkOptions(
    options,
    BEARER_OPTIONS,
    "bearer",
    "an object { algorithms, and one of jwksUri, issuerBaseURL, jwks, key or secret }",
  );
  const algorithms = checkAlgorithms(options);
  const now = functionOption(options.now ?? Date.now, "bearer.now", "a function () => milliseconds");
  const allowHttp = options.allowHttp ?? false;
  if (typeof allowHttp !== "boolean") throw optionError("bearer.allowHttp", allowHttp, "true or false");
  const onWarning = functionOption(
    options.onWarning ?? emitWarning,
    "bearer.onWarning",
    "a function (message, code) => void",
  );
  const issuer = listOption(options.issuer, "bearer.issuer");
  const context: KeySourceContext = { allowHttp, onWarning, now };
  const keySource = options.issuers === undefined ? keySourceOf(options, context) : undefined;
  const clockTolerance = nonNegativeNumber(options.clockTolerance ?? 5, "bearer.clockTolerance", "seconds");
  const cacheOptions = options.cache === false ? undefined : (options.cache ?? {});
  if (cacheOptions !== undefined)
    checkOptions(cacheOptions, BEARER_CACHE_OPTIONS, "bearer.cache", "an object { max?, maxTtl? } or false");
  const cacheMax = cacheOptions?.max ?? 1000;
  if (!Number.isSafeInteger(cacheMax) || cacheMax < 1)
    throw optionError("bearer.cache.max", cacheMax, "a positive integer");
  const cacheMaxTtl = positiveNumber(cacheOptions?.maxTtl ?? 300, "bearer.cache.maxTtl", "seconds");
  const maxTokenAgeSeconds = maxTokenAgeInSeconds(options.maxTokenAge);
  const maxTokenLength = options.maxTokenLength ?? 8192;
  if (!Number.isSafeInteger(maxTokenLength) || maxTokenLength < 1)
    throw optionError("bearer.maxTokenLength", maxTokenLength, "a positive integer");
  const audience = listOption(options.audience, "bearer.audience");
  const requiredClaims = listOption(options.requiredClaims ?? [], "bearer.requiredClaims", true) ?? [];
  const typ = typOption(options.typ);
  // With issuerBaseURL and no `issuer`, `iss` must name the discovered (identical) issuer.
  const issuers =
    issuer ?? (options.issuerBaseURL !== undefined ? [String(options.issuerBaseURL)] : undefined);
  const verifyOptions: VerifyOptions = {
    algorithms,
    clockTolerance,
    requiredClaims: [...new Set(["exp", ...requiredClaims])],
    ...(issuers ? { issuer: issuers } : {}),
    ...(audience ? { audience } : {}),
    // The seconds read here, not the option as given: jose parses a duration string again, per
    // token, by a stricter grammar ("1h " or "\t1h" made every token a 401, never a TypeError).
    ...(maxTokenAgeSeconds !== undefined ? { maxTokenAge: maxTokenAgeSeconds } : {}),
    ...(typ !== undefined ? { typ } : {}),
  };
  return {
    route: keySource === undefined ? undefined : { keySource, verifyOptions },
    tenants: options.issuers === undefined ? undefined : tenantRoutes(options, verifyOptions, context),
    clockTolerance,
    mapPrincipal: functionOption(
      options.principal ?? defaultPrincipal,
      "bearer.principal",
      "a function (claims) => { id, roles?, scopes? }",
    ),
    verifyPrincipal:
      options.verifyPrincipal === undefined
        ? undefined
        : functionOption(
            options.verifyPrincipal,
            "bearer.verifyPrincipal",
            "a function (principal, claims) => boolean | Promise<boolean>",
          ),
    now,
    cache: cacheOptions ? new VerifiedTokenCache<VerifiedToken>(cacheMax, verifiedTokenBytes) : undefined,
    maxTtlMs: cacheMaxTtl * 1000,
    maxTokenAgeSeconds,
    maxTokenLength,
    onWarning,
    unverifiable: { warnedAt: Number.NEGATIVE_INFINITY },
  };
}

/**
 * `bearer.issuers`: each issuer's key source, built as the single-issuer one is (a `jwksUri` gets
 * the same remote key set, cache and failure cool-down, `jwksOptions` shared), and its claim checks:
 * `iss` exactly this issuer, `aud` its own audience or `bearer.audience`.
 */
function tenantRoutes(
  options: BearerOptions,
  shared: VerifyOptions,
  context: KeySourceContext,
): Map<string, KeyRoute> {
  const list: unknown = options.issuers;
  const accepted = "a non-empty list of { issuer, jwksUri | jwks | key, audience? }";
  if (!Array.isArray(list) || list.length === 0) throw optionError("bearer.issuers", list, accepted);
  if (options.issuer !== undefined)
    throw codedError(
      "bearer.issuers",
      "bearer.issuers names each issuer itself: give bearer.issuer or bearer.issuers, not both",
    );
  if (options.discovery !== undefined)
    throw optionError("bearer.discovery", options.discovery, "given only with bearer.issuerBaseURL");
  const tenants = new Map<string, KeyRoute>();
  list.forEach((entry: BearerIssuerOptions, i) => {
    checkOptions(entry, ISSUER_OPTIONS, "bearer.issuers", accepted);
    const { issuer } = entry;
    if (typeof issuer !== "string" || issuer === "")
      throw optionError("bearer.issuers", issuer, `bearer.issuers[${i}].issuer: a non-empty string`);
    if (tenants.has(issuer))
      throw codedError("bearer.issuers", `bearer.issuers names ${JSON.stringify(issuer)} twice`);
    const sources = (["jwksUri", "jwks", "key"] as const).filter((k) => entry[k] !== undefined);
    if (sources.length !== 1)
      throw codedError(
        "bearer.issuers",
        `bearer.issuers[${i}] (${JSON.stringify(issuer)}): give exactly one of jwksUri, jwks, key, got ${sources.length === 0 ? "none" : sources.join(" and ")}`,
      );
    const keySource = keySourceOf(
      {
        algorithms: shared.algorithms,
        ...(options.jwksOptions === undefined ? {} : { jwksOptions: options.jwksOptions }),
        [sources[0] as string]: entry[sources[0] as "key"],
      },
      context,
    );
    const audience = listOption(entry.audience, "bearer.issuers.audience") ?? shared.audience;
    const { audience: _shared, ...rest } = shared;
    tenants.set(issuer, {
      keySource,
      verifyOptions: { ...rest, issuer: [issuer], ...(audience ? { audience } : {}) },
    });
  });
  return tenants;
}

/**
 * The keys and checks for `token`: the one key source, or the issuer its `iss` names. The `iss`
 * read here is not yet verified: it only chooses whose keys are tried, and jose then checks the
 * signature with those keys and `iss` against that issuer, so a token naming an issuer whose key
 * did not sign it fails. One naming no issuer is refused here, before any key is fetched (RFC 8725
 * §3.8: "validate that the cryptographic keys used for the cryptographic operations in the JWT
 * belong to the issuer").
 */
function routeOf(config: BearerConfig, token: string): KeyRoute {
  if (config.route !== undefined) return config.route;
  const payload = decodeJwt(token);
  const route = typeof payload.iss === "string" ? config.tenants?.get(payload.iss) : undefined;
  if (route === undefined)
    throw new errors.JWTClaimValidationFailed('unexpected "iss" claim value', payload, "iss", "check_failed");
  return route;
}

/**
 * `process.emitWarning` with a code, so `--no-warnings` or a `process.on("warning")` handler see
 * it; `console.warn` where there is no `process` (workerd, browsers).
 */
function emitWarning(message: string, code: string): void {
  const { process } = globalThis as {
    process?: { emitWarning?: NodeJS.Process["emitWarning"] };
  };
  if (typeof process?.emitWarning === "function")
    process.emitWarning(message, { type: "SecurityWarning", code });
  else console.warn(`(${code}) SecurityWarning: ${message}`);
}

/** A string or a list of strings (`iss`, `aud`, claim names), none empty. */
function listOption(value: unknown, option: string, emptyListOk = false): string[] | undefined {
  if (value === undefined) return undefined;
  const list = typeof value === "string" ? [value] : value;
  if (
    !Array.isArray(list) ||
    (list.length === 0 && !emptyListOk) ||
    list.some((item) => typeof item !== "string" || item === "")
  ) {
    throw optionError(
      option,
      value,
      `a non-empty string or a ${emptyListOk ? "" : "non-empty "}list of them`,
    );
  }
  return [...list];
}

/**
 * An RFC 6838 §4.2 media type name, `type/subtype` or the subtype alone (RFC 7515 §4.1.9: producers
 * omit `application/`), without parameters. Runs on the option only, never on client input.
 */
const MEDIA_TYPE = /^(?:[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/)?[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;

/**
 * `bearer.typ`, handed to jose's `jwtVerify` as is: jose refuses a token whose header has no `typ`
 * or one that differs once both are lower-cased and `application/` is prepended to a value without
 * a `/` (RFC 7515 §4.1.9: "A recipient using the media type value MUST treat it as if
 * "application/" were prepended to any "typ" value not containing a '/'"), which is what RFC 9068
 * §4 asks. The refusal is a JWTClaimValidationFailed, thrown before the token can be cached.
 */
function typOption(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !MEDIA_TYPE.test(value))
    throw optionError(
      "bearer.typ",
      value,
      'a media type without parameters, e.g. "at+jwt" or "application/at+jwt" (RFC 9068 §4)',
    );
  return value;
}

const KEY_SOURCES = ["jwksUri", "issuerBaseURL", "jwks", "key", "secret"] as const;

/** The accepted JWS algorithms, and that they fit the one key source given. */
function checkAlgorithms(options: BearerOptions): string[] {
  const algorithms: unknown = options.algorithms;
  const accepted = 'a non-empty list of JWS algorithms, e.g. ["ES256"] ("none" never)';
  // RFC 8725 §3.1: "libraries MUST enable the caller to specify a supported set of algorithms".
  if (!Array.isArray(algorithms) || algorithms.length === 0)
    throw optionError("bearer.algorithms", algorithms, accepted);
  for (const alg of algorithms) {
    if (typeof alg !== "string" || (!HMAC_ALGORITHMS.has(alg) && !ASYMMETRIC_ALGORITHMS.has(alg)))
      throw optionError("bearer.algorithms", algorithms, accepted);
  }
  const symmetric = algorithms.filter((a: string) => HMAC_ALGORITHMS.has(a));
  if (symmetric.length > 0 && symmetric.length !== algorithms.length) {
    throw codedError(
      "bearer.algorithms",
      "bearer.algorithms must not mix HS* with asymmetric algorithms (key confusion)",
    );
  }
  const sources = KEY_SOURCES.filter((k) => options[k] !== undefined);
  if (options.issuers !== undefined && sources.length > 0)
    throw codedError(
      "bearer",
      `bearer: give bearer.issuers or one of ${KEY_SOURCES.join(", ")}, got issuers and ${sources.join(" and ")}`,
    );
  if (sources.length !== (options.issuers === undefined ? 1 : 0)) {
    throw codedError(
      "bearer",
      `bearer: give exactly one of ${KEY_SOURCES.join(", ")}, got ${sources.length === 0 ? "none" : sources.join(" and ")}`,
    );
  }
  if (symmetric.length > 0 && options.secret === undefined) {
    throw codedError(
      "bearer.algorithms",
      "bearer: HS* algorithms need bearer.secret (never a public key used as a secret)",
    );
  }
  if (symmetric.length === 0 && options.secret !== undefined) {
    throw codedError("bearer.secret", "bearer.secret needs HS256, HS384 or HS512 in bearer.algorithms");
  }
  return [...(algorithms as string[])];
}

interface KeySourceContext {
  allowHttp: boolean;
  onWarning: (message: string, code: string) => void;
  now: () => number;
}

/** An absolute `https:` URL (or `http:` with `allowHttp`, warned about once here). */
function remoteUrl(value: unknown, option: string, context: KeySourceContext): URL {
  let url: URL | undefined;
  try {
    url = new URL(String(value));
  } catch {
    url = undefined;
  }
  if (url?.protocol === "https:") return url;
  if (url?.protocol === "http:" && context.allowHttp) {
    context.onWarning(
      `@svc/auth: ${option} ${url.href} is plain http: keys fetched in clear can be replaced on the way; use it for loopback or development only`,
      "SVC_AUTH_INSECURE_JWKS",
    );
    return url;
  }
  throw optionError(option, value, "an absolute https: URL (http: only with bearer.allowHttp)");
}

/** `bearer.jwksOptions`: jose's remote JWKS settings and the failure cool-down, each checked. */
function remoteJwksSettings(options: RemoteJwksOptions | undefined): RemoteJwksConfig {
  if (options !== undefined)
    checkOptions(
      options,
      JWKS_OPTIONS,
      "bearer.jwksOptions",
      "an object { cacheMaxAge?, cooldownDuration?, timeoutDuration?, failureCooldownDuration?, maxBytes? }",
    );
  const given = options ?? {};
  const maxBytes = given.maxBytes ?? JWKS_MAX_BYTES_DEFAULT;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1)
    throw optionError("bearer.jwksOptions.maxBytes", maxBytes, "a positive integer");
  const settings: RemoteJwksConfig = {
    failureCooldownDuration: positiveMilliseconds(
      given.failureCooldownDuration ?? FAILURE_COOLDOWN_DEFAULT,
      "bearer.jwksOptions.failureCooldownDuration",
    ),
    maxBytes,
  };
  for (const name of ["cacheMaxAge", "cooldownDuration"] as const) {
    const value = given[name];
    if (value !== undefined)
      settings[name] = nonNegativeNumber(value, `bearer.jwksOptions.${name}`, "milliseconds");
  }
  // jose aborts the download with AbortSignal.timeout(timeoutDuration).
  if (given.timeoutDuration !== undefined)
    settings.timeoutDuration = timeoutMilliseconds(
      given.timeoutDuration,
      "bearer.jwksOptions.timeoutDuration",
    );
  return settings;
}

/** The one key source given: a secret, a public key, a local JWKS, a remote one or a discovered one. */
function keySourceOf(
  options: BearerOptions,
  context: KeySourceContext,
): KeyObject | CryptoKey | Uint8Array | JWTVerifyGetKey {
  if (options.discovery !== undefined && options.issuerBaseURL === undefined)
    throw optionError("bearer.discovery", options.discovery, "given only with bearer.issuerBaseURL");
  // Checked whatever the key source, so a misspelt setting is refused even where none is used.
  const jwksSettings = remoteJwksSettings(options.jwksOptions);
  if (options.secret !== undefined) {
    const secret: unknown = options.secret;
    // RFC 7518 §3.2: "A key of the same size as the hash output (for instance, 256 bits for
    // "HS256") or larger MUST be used with this algorithm": 48 bytes for HS384, 64 for HS512.
    const minBytes = Math.max(
      32,
      ...options.algorithms.map((alg) => (alg === "HS512" ? 64 : alg === "HS384" ? 48 : 32)),
    );
    const key = secretKey(secret);
    // RFC 7518 §3.2: "A key of the same size as the hash output ... or larger MUST be used".
    // The secret itself never goes into the message.
    if (key === undefined || key.bytes < minBytes)
      throw codedError(
        "bearer.secret",
        `bearer.secret must be a string, bytes, a secret KeyObject or an HMAC CryptoKey of at least ${minBytes} bytes (RFC 7518 §3.2: the size of ${minBytes === 32 ? "HS256" : minBytes === 48 ? "HS384" : "HS512"}'s hash output)`,
      );
    return key.key;
  }
  if (options.key !== undefined) {
    if (nodeCrypto === undefined) return portableKeySource(options.key, options.algorithms);
    const key = toKeyObject(nodeCrypto, options.key);
    const kind = kindOf(key);
    keyFitting(kind, options.algorithms);
    return verificationKey(key, options.key, (alg) => kindFitsAlgorithm(kind, alg));
  }
  if (options.jwks !== undefined) {
    if (typeof options.jwks !== "object" || options.jwks === null || !Array.isArray(options.jwks.keys))
      throw optionError("bearer.jwks", options.jwks, "a JWKS: { keys: [...] }");
    return createLocalJWKSet(options.jwks);
  }
  if (options.issuerBaseURL !== undefined) {
    // An http: issuer is warned about here, once; its http: jwks_uri is then no news.
    const issuerUrl = remoteUrl(options.issuerBaseURL, "bearer.issuerBaseURL", context);
    if (!isIssuerIdentifier(issuerUrl))
      throw optionError(
        "bearer.issuerBaseURL",
        options.issuerBaseURL,
        "an issuer identifier: an absolute https: URL without query, fragment or user info (RFC 8414 §2)",
      );
    // OpenID Connect Discovery 1.0 §4.3 compares the issuer as written, so it is kept as written.
    const issuer = String(options.issuerBaseURL);
    const discovery = discoverySettings(options.discovery, context.allowHttp, "bearer.discovery");
    return wrapRemote(
      discoveredKeySource({
        issuer,
        discovery,
        jwks: jwksSettings,
        now: context.now,
        onInsecureJwks: (jwksUri) =>
          issuerUrl.protocol === "http:" ||
          context.onWarning(
            `@svc/auth: the jwks_uri ${jwksUri} discovered from ${issuer} is plain http: use it for loopback or development only`,
            "SVC_AUTH_INSECURE_JWKS",
          ),
        unavailable: (cause, retryAfter) =>
          new KeySourceUnavailableError({ cause, ...(retryAfter === undefined ? {} : { retryAfter }) }),
      }),
    );
  }
  const url = remoteUrl(options.jwksUri, "bearer.jwksUri", context);
  return wrapRemote(
    remoteKeySet(url, {
      jwks: jwksSettings,
      now: context.now,
      unavailable: (cause, retryAfter) => new KeySourceUnavailableError({ cause, retryAfter }),
    }),
  );
}

/**
 * A JWS Compact Serialization: three base64url parts, the signature not empty (`alg: none` is
 * never accepted). RFC 7515 §7.1 writes each part as BASE64URL(...), and §2 defines that encoding
 * "with all trailing '=' characters omitted ... and without the inclusion of any line breaks,
 * whitespace, or other additional characters"; RFC 7519 §7.2 step 2 decodes "following the
 * restriction that no line breaks, whitespace, or other additional characters have been used".
 * jose decodes a part leniently, so `<token>==` or a space inside the signature verified as the
 * genuine token: one signature, many strings. Linear: the classes never match the separator.
 */
const JWS_COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * Whether each part of a token in {@link JWS_COMPACT} form is the one BASE64URL encoding of its
 * octets. RFC 7515 §2 takes base64url from RFC 4648 §5, whose §3.5 ("Canonical Encoding") notes
 * that when the octets do not fill the last character, its unused low bits "MUST be set to zero by
 * conforming encoders" and that "decoders MAY chose to reject an encoding if the pad bits have not
 * been set to zero". jose ignores them, so the last character of an ES256 signature (86 characters
 * for 64 octets: 4 unused bits) could be spelled 16 ways, an HS256 one (43 for 32: 2 bits) 4 ways,
 * each string verifying and cached as the genuine token. A part of 4n + 1 characters encodes no
 * octets at all. One pass to find the two dots, then one character read per part.
 */
function isCanonicalJws(token: string): boolean {
  const first = token.indexOf(".");
  const second = token.indexOf(".", first + 1);
  return (
    isCanonicalPart(token, first, first) &&
    isCanonicalPart(token, second, second - first - 1) &&
    isCanonicalPart(token, token.length, token.length - second - 1)
  );
}

/** Whether the part of `length` characters ending before `end` sets no bit past its last octet. */
function isCanonicalPart(token: string, end: number, length: number): boolean {
  const rest = length % 4;
  if (rest === 0) return true;
  if (rest === 1) return false;
  // 4n + 2 characters: one octet in the last 12 bits, 4 unused; 4n + 3: two octets, 2 unused.
  return (sextet(token.charCodeAt(end - 1)) & (rest === 2 ? 0x0f : 0x03)) === 0;
}

/** The 6-bit value of a base64url character (RFC 4648 §5, Table 2). */
function sextet(c: number): number {
  if (c === 0x2d) return 62; // "-"
  if (c === 0x5f) return 63; // "_"
  if (c >= 0x61) return c - 0x61 + 26; // a-z
  if (c >= 0x41) return c - 0x41; // A-Z
  return c - 0x30 + 52; // 0-9
}

/**
 * A token's principal: from the cache, else verified (RFC 7519 §7.2) and then cached. Only a
 * token in {@link JWS_COMPACT} form, each part canonical ({@link isCanonicalJws}), is verified, so
 * only such a token is ever cached, and a cache hit needs no syntax check (every such token is a
 * token68, RFC 9110 §11.2).
 */
async function verifyToken(config: BearerConfig, token: string): Promise<Principal> {
  if (token.length > config.maxTokenLength) throw new InvalidTokenError("ERR_TOKEN_TOO_LONG");
  if (!JWS_COMPACT.test(token) || !isCanonicalJws(token)) throw new InvalidTokenError("ERR_JWS_INVALID");
  const { cache } = config;
  const nowMs = config.now();
  const cacheKey = cache ? VerifiedTokenCache.keyOf(token) : "";
  if (cache) {
    const hit = cache.get(cacheKey, nowMs);
    if (hit) return clonePrincipal(hit.principal);
  }
  const generation = cache?.generation;
  const payload = await verifyJws(config, token, nowMs);
  let principal: Principal;
  try {
    principal = toPrincipal(config.mapPrincipal(payload), "bearer", issuerOf(payload));
  } catch (cause) {
    throw new InvalidTokenError("ERR_NO_PRINCIPAL", { cause });
  }
  // Its own failure (a user store that is down) propagates: the request fails, the token is
  // neither refused as invalid nor let through.
  if (config.verifyPrincipal && (await config.verifyPrincipal(clonePrincipal(principal), payload)) !== true)
    throw new InvalidTokenError("ERR_PRINCIPAL_REFUSED");
  // clearCache() during the verification (after a key revocation): the result answers this
  // request only; caching it would serve the token for up to maxTtl after the clear.
  if (cache && typeof payload.exp === "number" && cache.generation === generation) {
    const entry = { principal: clonePrincipal(principal), bound: confirmationOf(token) };
    cache.set(cacheKey, entry, cachedUntil(config, payload.exp, payload.iat, nowMs));
  }
  return principal;
}

/**
 * The verified token's `iss`, which the principal carries: `sub` is unique only within its issuer.
 * @see https://openid.net/specs/openid-connect-core-1_0.html#ClaimStability
 */
function issuerOf(payload: JWTPayload): string | undefined {
  return typeof payload.iss === "string" ? payload.iss : undefined;
}

/** The signature and claims checked by jose; any refusal an {@link InvalidTokenError}. */
async function verifyJws(config: BearerConfig, token: string, nowMs: number): Promise<JWTPayload> {
  try {
    const { keySource, verifyOptions } = routeOf(config, token);
    const options = { ...verifyOptions, currentDate: new Date(nowMs) };
    const result =
      typeof keySource === "function"
        ? await jwtVerify(token, keySource, options).catch((err: unknown) =>
            verifyWithCandidates(err, token, options),
          )
        : await jwtVerify(token, keySource, options);
    // RFC 7519 §4.1.3: "If the principal processing the claim does not identify itself with a
    // value in the "aud" claim when this claim is present, then the JWT MUST be rejected." Without
    // `audience` this verifier names no audience, so a token addressed to any (another API of the
    // same issuer) is refused; jose checks `aud` only when given an audience.
    if (verifyOptions.audience === undefined && result.payload.aud !== undefined)
      throw new InvalidTokenError("ERR_JWT_AUDIENCE_UNEXPECTED");
    // RFC 7519 §7.2 step 8: "If the JOSE Header contains a "cty" (content type) value of "JWT",
    // then the Message is a JWT that was the subject of nested signing or encryption operations",
    // to be validated in turn from step 1; §5.2: the signer says so to mark a Nested JWT. Its
    // payload is not this token's claims, whatever it parses as, and this verifier validates no
    // nested tokens: refused. RFC 7515 §4.1.10 has "application/" implied in a cty without a "/",
    // and RFC 6838 §4.2 makes type and subtype names case-insensitive (as jose compares `typ`).
    if (isNestedJwt(result.protectedHeader.cty)) throw new InvalidTokenError("ERR_JWT_NESTED");
    // RFC 7519 §4.1.6: "iat" is "the time at which the JWT was issued". One further ahead than the
    // clock tolerance was not issued yet (a signer's broken clock, or a token minted to outlast
    // maxTokenAge); jose checks it only with maxTokenAge.
    const { iat } = result.payload;
    if (typeof iat === "number" && iat > nowMs / 1000 + config.clockTolerance)
      throw new InvalidTokenError("ERR_JWT_IAT_IN_FUTURE");
    return result.payload;
  } catch (cause) {
    if (cause instanceof KeySourceUnavailableError || cause instanceof InvalidTokenError) throw cause;
    // A bearer.key Web Crypto refused on first use (portableKeySource): the server's fault.
    if ((cause as { code?: unknown } | null)?.code === "ERR_SVC_AUTH_BEARER_KEY") throw cause;
    if (!(cause instanceof errors.JOSEError)) reportUnverifiable(config, cause, nowMs);
    const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : "";
    throw new InvalidTokenError(code || "ERR_INVALID_TOKEN", { cause });
  }
}

/** How often {@link reportUnverifiable} tells of tokens it could not verify: once a minute. */
const UNVERIFIABLE_WARN_MS = 60_000;

/**
 * A verification that failed on something other than jose's judgement of the token (every such
 * judgement is a `JOSEError`): the key or the runtime's crypto failed, so a valid token is refused
 * as well. It is refused all the same (RFC 6750 §3.1 invalid_token: the token was not shown
 * valid), and `onWarning` says why, at most once a minute.
 */
function reportUnverifiable(config: BearerConfig, cause: unknown, nowMs: number): void {
  if (nowMs - config.unverifiable.warnedAt < UNVERIFIABLE_WARN_MS) return;
  config.unverifiable.warnedAt = nowMs;
  const why = cause instanceof Error ? `${cause.name}: ${cause.message}` : `a thrown ${typeof cause}`;
  try {
    config.onWarning(
      `@svc/auth: a Bearer token could not be verified for a reason other than the token (${why}); tokens are refused (401 invalid_token) while it lasts`,
      "SVC_AUTH_TOKEN_UNVERIFIABLE",
    );
  } catch {
    // A warning that fails must not turn the 401 into something else.
  }
}

/** A `cty` naming the JWT media type: `JWT`, `application/jwt`, in any case. */
function isNestedJwt(cty: unknown): boolean {
  if (typeof cty !== "string") return false;
  const type = cty.toLowerCase();
  return type === "jwt" || type === "application/jwt";
}

/**
 * Most keys of a JWK Set a token is tried against when several fit it (no `kid`, or a `kid` the
 * set repeats): one signature check each, so a token cannot make one request cost a check per key
 * of a large set. Key rotation holds two or three keys of one algorithm at a time.
 */
const CANDIDATE_KEYS_MAX = 4;

/**
 * RFC 7515 §4.1.4: `kid` "is a hint indicating which key was used to secure the JWS ... Use of
 * this Header Parameter is OPTIONAL", and RFC 7517 §4.5 only says keys of a set SHOULD have
 * distinct `kid`s. When a JWK Set holds more than one key fitting the token's header, jose throws
 * JWKSMultipleMatchingKeys, iterable over those keys: each (at most {@link CANDIDATE_KEYS_MAX}, in
 * the set's order) is tried in turn. Only a wrong signature moves on to the next; any other
 * refusal (an expired token whose signature this key verified) is the answer.
 */
async function verifyWithCandidates(
  err: unknown,
  token: string,
  options: JWTVerifyOptions,
): Promise<JWTVerifyResult> {
  if (!(err instanceof errors.JWKSMultipleMatchingKeys)) throw err;
  let tried = 0;
  for await (const key of err) {
    try {
      return await jwtVerify(token, key, options);
    } catch (cause) {
      if (!(cause instanceof errors.JWSSignatureVerificationFailed)) throw cause;
    }
    if (++tried === CANDIDATE_KEYS_MAX) break;
  }
  throw new errors.JWSSignatureVerificationFailed();
}

/** Valid until the earliest of: exp (+ the tolerance jose allowed), iat + maxTokenAge, maxTtl. */
function cachedUntil(config: BearerConfig, exp: number, iat: number | undefined, nowMs: number): number {
  const { clockTolerance, maxTokenAgeSeconds } = config;
  let expiresAt = Math.min((exp + clockTolerance) * 1000, nowMs + config.maxTtlMs);
  if (maxTokenAgeSeconds !== undefined && typeof iat === "number") {
    expiresAt = Math.min(expiresAt, (iat + maxTokenAgeSeconds + clockTolerance) * 1000);
  }
  return expiresAt;
}

/**
 * The cache lookup verify() starts with, without the promise (see {@link CACHED}). A hit is a
 * token verify() checked and cached, so it has the JWS compact form and is a token68.
 */
function cachedPrincipal(config: BearerConfig, token: string): VerifiedToken | undefined {
  const { cache } = config;
  if (!cache || token.length > config.maxTokenLength) return undefined;
  const key = VerifiedTokenCache.keyOf(token);
  const hit = cache.get(key, config.now());
  if (hit === undefined) return undefined;
  return { principal: clonePrincipal(hit.principal), bound: hit.bound };
}

/** A cache entry's estimated bytes: its principal's (the binding is one of three interned strings). */
function verifiedTokenBytes(entry: VerifiedToken): number {
  return principalBytes(entry.principal);
}

/**
 * A copy whose lists the caller may change without changing the cached principal (a handler
 * pushing a role must not grant it to the next request). `slice()` copies a list without the
 * iteration a spread goes through; an empty one is a new literal.
 */
function clonePrincipal(p: Principal): Principal {
  const { roles, scopes } = p;
  return {
    id: p.id,
    issuer: p.issuer,
    roles: roles.length === 0 ? [] : roles.slice(),
    scopes: scopes.length === 0 ? [] : scopes.slice(),
    scheme: p.scheme,
  };
}

const UNIT_SECONDS: Record<string, number> = {
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hr: 3600,
  hrs: 3600,
  hour: 3600,
  hours: 3600,
  d: 86400,
  day: 86400,
  days: 86400,
  w: 604800,
  week: 604800,
  weeks: 604800,
};

function maxTokenAgeInSeconds(value: number | string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const accepted = 'a non-negative number of seconds or a duration such as "1h"';
  if (typeof value === "number") return nonNegativeNumber(value, "bearer.maxTokenAge", "seconds");
  if (typeof value !== "string") throw optionError("bearer.maxTokenAge", value, accepted);
  const match = /^(\d+|\d+\.\d+) ?([a-z]+)$/i.exec(value.trim());
  const unit = match?.[2] ? UNIT_SECONDS[match[2].toLowerCase()] : undefined;
  if (!match?.[1] || unit === undefined) throw optionError("bearer.maxTokenAge", value, accepted);
  return Number(match[1]) * unit;
}
