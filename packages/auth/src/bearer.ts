import { createPublicKey, createSecretKey, KeyObject } from "node:crypto";
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  type JSONWebKeySet,
  type JWK,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from "jose";
import { ASYMMETRIC_ALGORITHMS, HMAC_ALGORITHMS } from "./algorithms.js";
import { type Principal, type PrincipalInit, toPrincipal } from "./principal.js";
import { VerifiedTokenCache } from "./token-cache.js";

/** The verified-token cache's settings. */
export interface BearerCacheOptions {
  /**
   * How many verified tokens are kept; the least recently used leaves first.
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
   * Milliseconds a fetched key set is used before it is fetched again.
   * @default 600000
   */
  cacheMaxAge?: number;
  /**
   * Milliseconds after a fetch during which an unknown `kid` does not trigger another fetch,
   * so tokens with made-up `kid`s cannot make the server hammer the JWKS endpoint.
   * @default 30000
   */
  cooldownDuration?: number;
  /**
   * Milliseconds before a JWKS fetch is abandoned.
   * @default 5000
   */
  timeoutDuration?: number;
}

/** Options of {@link createBearerVerifier} (and `authenticate({ bearer })`). */
export interface BearerOptions {
  /**
   * The JWS algorithms accepted: required, never inferred from the token. `none` is refused,
   * and symmetric (`HS*`) and asymmetric algorithms cannot be mixed, which closes the
   * HS256-with-a-public-key confusion.
   */
  algorithms: readonly string[];
  /** URL of a JSON Web Key Set; keys are fetched, cached and refreshed by jose. */
  jwksUri?: string | URL;
  /** Settings for `jwksUri`. */
  jwksOptions?: RemoteJwksOptions;
  /** A local JSON Web Key Set; the token's `kid` selects the key. */
  jwks?: JSONWebKeySet;
  /** One public key: a JWK, a PEM (SPKI public key or X.509 certificate), or a `KeyObject`. */
  key?: JWK | string | KeyObject;
  /** A shared secret for `HS256`/`HS384`/`HS512`; at least 32 bytes. */
  secret?: string | Uint8Array;
  /** Accepted `iss` value(s) (RFC 7519 §4.1.1). */
  issuer?: string | readonly string[];
  /** Accepted `aud` value(s) (RFC 7519 §4.1.3). */
  audience?: string | readonly string[];
  /**
   * Seconds of clock skew allowed when checking `exp`, `nbf` and `iat`.
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
  constructor(options?: { cause?: unknown }) {
    super("The JSON Web Key Set could not be fetched", options);
    this.name = "KeySourceUnavailableError";
  }
}

// jose's codes for a JWKS that could not be obtained or parsed; token-caused failures
// (no matching key, unsupported key type) keep their own codes and stay a 401.
const UNAVAILABLE_CODES = new Set(["ERR_JWKS_TIMEOUT", "ERR_JWKS_INVALID", "ERR_JOSE_GENERIC"]);

function wrapRemote(remote: JWTVerifyGetKey): JWTVerifyGetKey {
  return async (header, token) => {
    try {
      return await remote(header, token);
    } catch (err) {
      const code = typeof err === "object" && err !== null && "code" in err ? String(err.code) : undefined;
      if (code === undefined || !code.startsWith("ERR_") || UNAVAILABLE_CODES.has(code)) {
        throw new KeySourceUnavailableError({ cause: err });
      }
      throw err;
    }
  };
}

/**
 * The verified-token cache's synchronous lookup on the verifiers {@link createBearerVerifier}
 * makes, for {@link authenticate}: a known token costs no promise. Not exported from the package.
 */
export const CACHED = Symbol("@svc/auth cached principal");

/** A verifier that may answer from its cache without a promise (see {@link CACHED}). */
export interface CachedLookup {
  [CACHED]?(token: string): Principal | undefined;
}

/** What {@link createBearerVerifier} returns. */
export interface BearerVerifier {
  /**
   * Verifies a compact JWS and returns its principal, or throws {@link InvalidTokenError}
   * (or {@link KeySourceUnavailableError} when a remote JWKS cannot be fetched).
   */
  verify(token: string): Promise<Principal>;
  /** Empties the verified-token cache (after a key revocation, for instance). */
  clearCache(): void;
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

function asList(value: string | readonly string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return typeof value === "string" ? [value] : [...value];
}

function toKeyObject(key: JWK | string | KeyObject): KeyObject {
  if (key instanceof KeyObject) {
    if (key.type === "secret")
      throw new TypeError("bearer.key must be a public key; use bearer.secret for HS*");
    return key.type === "private" ? createPublicKey(key) : key;
  }
  if (typeof key === "string") return createPublicKey(key);
  if (typeof key === "object" && key !== null) {
    if (key.kty === "oct") throw new TypeError("bearer.key must be a public key; use bearer.secret for HS*");
    // Only the public members: a private JWK passed by mistake is not kept around.
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, oth: _oth, ...pub } = key;
    return createPublicKey({ key: pub as JsonWebKeyInput["key"], format: "jwk" });
  }
  throw new TypeError("bearer.key must be a JWK, a PEM string or a KeyObject");
}

type JsonWebKeyInput = { key: import("node:crypto").JsonWebKey; format: "jwk" };

/** The options of {@link createBearerVerifier}, checked and resolved once. */
interface BearerConfig {
  keySource: KeyObject | JWTVerifyGetKey;
  /** jose's `jwtVerify` options but the clock. */
  verifyOptions: {
    algorithms: string[];
    clockTolerance: number;
    requiredClaims: string[];
    issuer?: string[];
    audience?: string[];
    maxTokenAge?: number | string;
  };
  clockTolerance: number;
  mapPrincipal: (payload: JWTPayload) => PrincipalInit;
  now: () => number;
  /** The verified-token cache; undefined with `cache: false`. */
  cache: VerifiedTokenCache<Principal> | undefined;
  maxTtlMs: number;
  maxTokenAgeSeconds: number | undefined;
  maxTokenLength: number;
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
    verify: (token) => verifyToken(config, token),
    clearCache() {
      config.cache?.clear();
    },
    // The same lookup verify() starts with, without the promise: undefined for anything else.
    [CACHED]: (token) => cachedPrincipal(config, token),
  };
  return verifier;
}

function resolveBearerConfig(options: BearerOptions): BearerConfig {
  if (typeof options !== "object" || options === null) throw new TypeError("bearer options are required");
  const algorithms = checkAlgorithms(options);
  const keySource = keySourceOf(options);
  const clockTolerance = options.clockTolerance ?? 5;
  if (!Number.isFinite(clockTolerance) || clockTolerance < 0) {
    throw new TypeError("bearer.clockTolerance must be a non-negative number of seconds");
  }
  const cacheOptions = options.cache === false ? undefined : (options.cache ?? {});
  const cacheMax = cacheOptions?.max ?? 1000;
  const cacheMaxTtl = cacheOptions?.maxTtl ?? 300;
  if (!Number.isInteger(cacheMax) || cacheMax < 1 || !Number.isFinite(cacheMaxTtl) || cacheMaxTtl <= 0) {
    throw new TypeError(
      "bearer.cache: max must be a positive integer and maxTtl a positive number of seconds",
    );
  }
  const maxTokenAgeSeconds = maxTokenAgeInSeconds(options.maxTokenAge);
  const maxTokenLength = options.maxTokenLength ?? 8192;
  if (!Number.isInteger(maxTokenLength) || maxTokenLength < 1) {
    throw new TypeError("bearer.maxTokenLength must be a positive integer");
  }
  const issuer = asList(options.issuer);
  const audience = asList(options.audience);
  return {
    keySource,
    verifyOptions: {
      algorithms,
      clockTolerance,
      requiredClaims: [...new Set(["exp", ...(options.requiredClaims ?? [])])],
      ...(issuer ? { issuer } : {}),
      ...(audience ? { audience } : {}),
      ...(options.maxTokenAge !== undefined ? { maxTokenAge: options.maxTokenAge } : {}),
    },
    clockTolerance,
    mapPrincipal: options.principal ?? defaultPrincipal,
    now: options.now ?? Date.now,
    cache: cacheOptions ? new VerifiedTokenCache<Principal>(cacheMax) : undefined,
    maxTtlMs: cacheMaxTtl * 1000,
    maxTokenAgeSeconds,
    maxTokenLength,
  };
}

/** The accepted JWS algorithms, and that they fit the one key source given. */
function checkAlgorithms(options: BearerOptions): string[] {
  const algorithms = options.algorithms;
  if (!Array.isArray(algorithms) || algorithms.length === 0) {
    // RFC 8725 §3.1: "libraries MUST enable the caller to specify a supported set of algorithms".
    throw new TypeError('bearer.algorithms is required: list the JWS algorithms you accept, e.g. ["ES256"]');
  }
  for (const alg of algorithms) {
    if (typeof alg !== "string" || alg.toLowerCase() === "none") {
      throw new TypeError(`bearer.algorithms: "${String(alg)}" is not an acceptable algorithm`);
    }
    if (!HMAC_ALGORITHMS.has(alg) && !ASYMMETRIC_ALGORITHMS.has(alg)) {
      throw new TypeError(`bearer.algorithms: unknown JWS algorithm "${alg}"`);
    }
  }
  const symmetric = algorithms.filter((a) => HMAC_ALGORITHMS.has(a));
  if (symmetric.length > 0 && symmetric.length !== algorithms.length) {
    throw new TypeError("bearer.algorithms must not mix HS* with asymmetric algorithms (key confusion)");
  }
  const sources = ["jwksUri", "jwks", "key", "secret"].filter(
    (k) => options[k as keyof BearerOptions] !== undefined,
  );
  if (sources.length !== 1) {
    throw new TypeError("bearer: give exactly one of jwksUri, jwks, key or secret");
  }
  if (symmetric.length > 0 && options.secret === undefined) {
    throw new TypeError("bearer: HS* algorithms need bearer.secret (never a public key used as a secret)");
  }
  if (symmetric.length === 0 && options.secret !== undefined) {
    throw new TypeError("bearer.secret needs HS256, HS384 or HS512 in bearer.algorithms");
  }
  return [...algorithms];
}

/** The one key source given: a secret, a public key, a local JWKS or a remote one. */
function keySourceOf(options: BearerOptions): KeyObject | JWTVerifyGetKey {
  if (options.secret !== undefined) {
    const bytes =
      typeof options.secret === "string" ? Buffer.from(options.secret, "utf8") : Buffer.from(options.secret);
    // RFC 7518 §3.2: "A key of the same size as the hash output ... or larger MUST be used".
    if (bytes.length < 32) throw new TypeError("bearer.secret must be at least 32 bytes");
    return createSecretKey(bytes);
  }
  if (options.key !== undefined) return toKeyObject(options.key);
  if (options.jwks !== undefined) {
    if (!Array.isArray(options.jwks?.keys))
      throw new TypeError("bearer.jwks must be a JWKS: { keys: [...] }");
    return createLocalJWKSet(options.jwks);
  }
  let url: URL;
  try {
    url = new URL(String(options.jwksUri));
  } catch {
    throw new TypeError(`bearer.jwksUri must be an absolute URL, got "${String(options.jwksUri)}"`);
  }
  const jwksOptions = options.jwksOptions ?? {};
  const remote: Parameters<typeof createRemoteJWKSet>[1] = {};
  if (jwksOptions.cacheMaxAge !== undefined) remote.cacheMaxAge = jwksOptions.cacheMaxAge;
  if (jwksOptions.cooldownDuration !== undefined) remote.cooldownDuration = jwksOptions.cooldownDuration;
  if (jwksOptions.timeoutDuration !== undefined) remote.timeoutDuration = jwksOptions.timeoutDuration;
  return wrapRemote(createRemoteJWKSet(url, remote));
}

/** A token's principal: from the cache, else verified (RFC 7519 §7.2) and then cached. */
async function verifyToken(config: BearerConfig, token: string): Promise<Principal> {
  if (token.length > config.maxTokenLength) throw new InvalidTokenError("ERR_TOKEN_TOO_LONG");
  const { cache } = config;
  const nowMs = config.now();
  const cacheKey = cache ? VerifiedTokenCache.keyOf(token) : "";
  if (cache) {
    const hit = cache.get(cacheKey, nowMs);
    if (hit) return clonePrincipal(hit);
  }
  const payload = await verifyJws(config, token, nowMs);
  let principal: Principal;
  try {
    principal = toPrincipal(config.mapPrincipal(payload), "bearer");
  } catch (cause) {
    throw new InvalidTokenError("ERR_NO_PRINCIPAL", { cause });
  }
  if (cache && typeof payload.exp === "number") {
    cache.set(cacheKey, clonePrincipal(principal), cachedUntil(config, payload.exp, payload.iat, nowMs));
  }
  return principal;
}

/** The signature and claims checked by jose; any refusal an {@link InvalidTokenError}. */
async function verifyJws(config: BearerConfig, token: string, nowMs: number): Promise<JWTPayload> {
  const { keySource } = config;
  const options = { ...config.verifyOptions, currentDate: new Date(nowMs) };
  try {
    const result =
      typeof keySource === "function"
        ? await jwtVerify(token, keySource, options)
        : await jwtVerify(token, keySource, options);
    return result.payload;
  } catch (cause) {
    if (cause instanceof KeySourceUnavailableError) throw cause;
    const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : "";
    throw new InvalidTokenError(code || "ERR_INVALID_TOKEN", { cause });
  }
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

/** The cache lookup verify() starts with, without the promise (see {@link CACHED}). */
function cachedPrincipal(config: BearerConfig, token: string): Principal | undefined {
  const { cache } = config;
  if (!cache || token.length > config.maxTokenLength) return undefined;
  const hit = cache.get(VerifiedTokenCache.keyOf(token), config.now());
  return hit ? clonePrincipal(hit) : undefined;
}

function clonePrincipal(p: Principal): Principal {
  return { id: p.id, roles: [...p.roles], scopes: [...p.scopes], scheme: p.scheme };
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
  if (typeof value === "number") return value;
  const match = /^(\d+|\d+\.\d+) ?([a-z]+)$/i.exec(value.trim());
  const unit = match?.[2] ? UNIT_SECONDS[match[2].toLowerCase()] : undefined;
  if (!match?.[1] || unit === undefined) throw new TypeError(`bearer.maxTokenAge: cannot read "${value}"`);
  return Number(match[1]) * unit;
}
