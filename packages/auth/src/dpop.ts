/**
 * DPoP proofs (RFC 9449): the options of `authenticate({ dpop })`, resolved once, and the checks
 * of one proof against the request it came with. Pure over header strings and the request-target
 * the exchange resolved; the signature checks are jose's.
 */
import {
  compileTrust,
  type ForwardedHeaders,
  type RequestView,
  repeatsField,
  requestFacts,
  type TrustHop,
  type TrustOption,
  targetPath,
} from "@svc/kernel";
import {
  calculateJwkThumbprint,
  compactVerify,
  decodeJwt,
  decodeProtectedHeader,
  importJWK,
  type JWK,
  type JWTPayload,
} from "jose";
import { ASYMMETRIC_ALGORITHMS } from "./algorithms.js";
import type { AuthRefusal } from "./diagnostics.js";
import { hmacSha256Base64url, sha256Base64url } from "./digest.js";
import { memoryNonceStore, type NonceStore } from "./nonce-store.js";
import { checkOptions, codedError, functionOption, nonNegativeNumber, optionError } from "./options.js";

/** The JWS algorithms a DPoP proof may be signed with: asymmetric ones only (RFC 9449 §4.2). */
export type DpopAlgorithm =
  | "ES256"
  | "ES384"
  | "ES512"
  | "RS256"
  | "RS384"
  | "RS512"
  | "PS256"
  | "PS384"
  | "PS512"
  | "EdDSA"
  | "Ed25519";

/** Server-provided nonces (RFC 9449 §9): options of `dpop.nonce`. */
export interface DpopNonceOptions {
  /**
   * The key nonces are signed with (HMAC-SHA-256), at least 32 bytes: a nonce is the time it was
   * issued and its MAC, so no instance stores one, and every instance given the same secret
   * accepts the nonces the others issued.
   */
  secret: string | Uint8Array;
  /**
   * Seconds a nonce is accepted after it was issued; past that the client is sent a fresh one.
   * @default 300
   */
  maxAge?: number;
}

/** Options of `authenticate({ dpop })`: DPoP-bound access tokens (RFC 9449). */
export interface DpopOptions {
  /**
   * The proof algorithms accepted, named in the challenge's `algs`. Asymmetric only: `none` and
   * the HMAC algorithms are refused (RFC 9449 §4.2: "MUST NOT be none or an identifier for a
   * symmetric algorithm").
   * @default ["ES256", "EdDSA", "Ed25519", "PS256", "RS256"]
   */
  algorithms?: readonly DpopAlgorithm[];
  /**
   * Accept only DPoP: `Authorization: Bearer` is then a scheme not enabled (401 with the DPoP
   * challenge alone). Without it both schemes are accepted, and a DPoP-bound token presented as
   * Bearer is still refused (RFC 9449 §7.2).
   * @default false
   */
  required?: boolean;
  /**
   * Seconds a proof is accepted after its `iat` (RFC 9449 §11.1: a short window keeps the replay
   * cache small).
   * @default 60
   */
  maxAge?: number;
  /**
   * Seconds the client's clock may be off, either way: an `iat` this far ahead still passes, one
   * further is refused.
   * @default 5
   */
  clockTolerance?: number;
  /**
   * Where the `jti` of each accepted proof is kept for its window, so a proof is used once
   * (RFC 9449 §11.1). `memoryNonceStore()` serves one process; behind a load balancer give every
   * instance one `redisNonceStore()`. A store that fails, or a `memoryNonceStore` full of proofs
   * still in their window, answers 503: size its `max` as proofs per second × (`maxAge` +
   * `clockTolerance`).
   * @default memoryNonceStore({ max: 100000 })
   */
  replayStore?: NonceStore;
  /**
   * The longest `DPoP` header accepted, in characters: a longer one is refused before it is
   * decoded. An ES256 proof is about 600; an RSA-4096 one, with a nonce, under 2500.
   * @default 4096
   */
  maxProofLength?: number;
  /**
   * Require a server-provided `nonce` in every proof (RFC 9449 §9). A fresh nonce is then sent in
   * `DPoP-Nonce` on the 401 `use_dpop_nonce` and on every response to a request DPoP
   * authenticated (RFC 9449 §8.2), so a client with steady traffic never needs that 401 again.
   * @default undefined (none)
   */
  nonce?: DpopNonceOptions;
  /**
   * The proxies whose `X-Forwarded-Proto`, `-Host` and `-Prefix` (or RFC 7239 `Forwarded`) name
   * the URL the client used, which a proof's `htu` is compared with (Express's `trust proxy`
   * forms: `true`, `false`, a hop count, addresses and CIDR ranges, a function). Not given: the
   * framework's own setting (Express's `trust proxy`, Fastify's `trustProxy`), and on `node:http`
   * and Fetch servers none, so the connection's own scheme and `Host` are compared: behind a
   * TLS-terminating proxy there, give it.
   * @default the framework's setting
   * @see https://www.rfc-editor.org/rfc/rfc7239#section-8.1
   */
  trustProxy?: TrustOption;
  /**
   * The one family of forwarded fields read behind a trusted proxy, the one it sets:
   * `"x-forwarded"` or `"forwarded"` (RFC 7239, which has no path prefix).
   * @default "x-forwarded"
   */
  forwardedHeaders?: ForwardedHeaders;
  /**
   * The clock in milliseconds, for tests.
   * @default Date.now
   */
  now?: () => number;
}

/** Why a DPoP proof was refused: the refusal `svc:auth` publishes, and a description for the client. */
export class DpopProofError extends Error {
  /** The `svc:auth` refusal reason. */
  readonly reason: AuthRefusal;
  constructor(reason: AuthRefusal, description: string, options?: { cause?: unknown }) {
    super(description, options);
    this.name = "DpopProofError";
    this.reason = reason;
  }
}

/** A proof without the server's current nonce (RFC 9449 §9): answered `use_dpop_nonce`. */
export class DpopNonceError extends Error {
  /** The nonce the client is to use, for the `DPoP-Nonce` field. */
  readonly nonce: string;
  constructor(nonce: string) {
    super("Resource server requires nonce in DPoP proof");
    this.name = "DpopNonceError";
    this.nonce = nonce;
  }
}

/** The options of `dpop`, resolved once. */
export interface DpopConfig {
  readonly algorithms: ReadonlySet<string>;
  /** The `algs` of the challenge: the algorithms, space-separated (RFC 9449 §7.1). */
  readonly algs: string;
  readonly required: boolean;
  readonly maxAgeSeconds: number;
  readonly toleranceSeconds: number;
  readonly replayStore: NonceStore;
  readonly maxProofLength: number;
  readonly nonce: { readonly key: Uint8Array; readonly maxAgeSeconds: number } | undefined;
  /** `trustProxy`, compiled; `undefined`: the framework's trust the request's exchange records. */
  readonly trust: TrustHop | undefined;
  readonly forwardedHeaders: ForwardedHeaders | undefined;
  readonly now: () => number;
}

const DEFAULT_ALGORITHMS: readonly DpopAlgorithm[] = ["ES256", "EdDSA", "Ed25519", "PS256", "RS256"];

const DPOP_OPTIONS = Object.keys({
  algorithms: 0,
  required: 0,
  maxAge: 0,
  clockTolerance: 0,
  replayStore: 0,
  maxProofLength: 0,
  nonce: 0,
  trustProxy: 0,
  forwardedHeaders: 0,
  now: 0,
} satisfies Record<keyof DpopOptions, 0>);

/** `dpop`, checked and resolved once (a refused option throws here, never per request). */
export function resolveDpop(options: DpopOptions | undefined): DpopConfig | undefined {
  if (options === undefined) return undefined;
  const given = options;
  checkOptions(given, DPOP_OPTIONS, "dpop", "an object { algorithms?, required?, maxAge?, nonce?, ... }");
  const list = given.algorithms ?? DEFAULT_ALGORITHMS;
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    list.some((alg) => typeof alg !== "string" || !ASYMMETRIC_ALGORITHMS.has(alg))
  )
    throw optionError(
      "dpop.algorithms",
      list,
      `a non-empty list of asymmetric JWS algorithms (${[...ASYMMETRIC_ALGORITHMS].join(", ")})`,
    );
  const required = given.required ?? false;
  if (typeof required !== "boolean") throw optionError("dpop.required", required, "true or false");
  const maxAgeSeconds = nonNegativeNumber(given.maxAge ?? 60, "dpop.maxAge", "seconds");
  const toleranceSeconds = nonNegativeNumber(given.clockTolerance ?? 5, "dpop.clockTolerance", "seconds");
  const maxProofLength = given.maxProofLength ?? 4096;
  if (!Number.isSafeInteger(maxProofLength) || maxProofLength < 256)
    throw optionError("dpop.maxProofLength", maxProofLength, "a whole number of characters, at least 256");
  const replayStore = given.replayStore ?? memoryNonceStore();
  if (typeof (replayStore as Partial<NonceStore> | null)?.claim !== "function")
    throw optionError(
      "dpop.replayStore",
      replayStore,
      "a store with claim(key, ttlMs), such as memoryNonceStore()",
    );
  return {
    algorithms: new Set(list),
    algs: [...new Set(list)].join(" "),
    required,
    maxAgeSeconds,
    toleranceSeconds,
    replayStore,
    maxProofLength,
    nonce: resolveNonce(given.nonce),
    trust: resolveTrust(given.trustProxy),
    forwardedHeaders: resolveForwardedHeaders(given.forwardedHeaders),
    now: functionOption(given.now ?? Date.now, "dpop.now", "a function () => milliseconds"),
  };
}

/** `dpop.trustProxy`, compiled once with Express's meaning (`compileTrust` of `@svc/kernel`). */
function resolveTrust(option: TrustOption | undefined): TrustHop | undefined {
  if (option === undefined) return undefined;
  try {
    return compileTrust(option, "auth");
  } catch {
    throw optionError(
      "dpop.trustProxy",
      option,
      'true, false, a hop count, addresses or CIDR ranges ("loopback, 10.0.0.0/8" or a list of them) or a function (address, hop) => boolean',
    );
  }
}

function resolveForwardedHeaders(option: ForwardedHeaders | undefined): ForwardedHeaders | undefined {
  if (option === undefined || option === "x-forwarded" || option === "forwarded") return option;
  throw optionError("dpop.forwardedHeaders", option, '"x-forwarded" or "forwarded" (RFC 7239 Forwarded)');
}

function resolveNonce(options: DpopNonceOptions | undefined): DpopConfig["nonce"] {
  if (options === undefined) return undefined;
  checkOptions(
    options,
    Object.keys({ secret: 0, maxAge: 0 } satisfies Record<keyof DpopNonceOptions, 0>),
    "dpop.nonce",
    "an object { secret, maxAge? }",
  );
  const { secret } = options;
  const key =
    typeof secret === "string"
      ? new TextEncoder().encode(secret)
      : secret instanceof Uint8Array
        ? secret
        : undefined;
  // RFC 2104 §3: a key shorter than the hash output (32 bytes for SHA-256) weakens the MAC.
  if (key === undefined || key.length < 32)
    throw codedError(
      "dpop.nonce.secret",
      "dpop.nonce.secret must be a string or Uint8Array of at least 32 bytes",
    );
  const maxAge = options.maxAge ?? 300;
  if (typeof maxAge !== "number" || !Number.isFinite(maxAge) || maxAge <= 0)
    throw optionError("dpop.nonce.maxAge", maxAge, "a positive number of seconds");
  return { key: key.slice(), maxAgeSeconds: maxAge };
}

/** RFC 7515 §7.1: the JWS Compact Serialization, three base64url parts. */
const JWS_COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** JWK members that carry private key material (RFC 7518 §6.2.2, §6.3.2, §6.4.1; RFC 8037 §2). */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] as const;

/** The longest `jti` kept: RFC 9449 §4.2 asks only for enough randomness (96 bits), not size. */
const MAX_JTI_LENGTH = 256;

/** A proof whose cheap checks passed: what is left to verify once the access token is. */
export interface CheckedProof {
  readonly proof: string;
  readonly alg: string;
  readonly jwk: JWK;
  readonly jti: string;
  readonly iat: number;
}

/**
 * RFC 9449 §4.3 checks 1 to 11 that cost no signature: one `DPoP` field, its size and syntax, the
 * header (`typ`, `alg`, a public `jwk`), and the claims `htm`, `htu`, `iat`, `jti`, `ath` and, with
 * `nonce`, the server's nonce. Throws {@link DpopProofError} or {@link DpopNonceError}.
 */
export function checkProof(config: DpopConfig, view: RequestView, accessToken: string): CheckedProof {
  // §4.3 check 1: "There is not more than one DPoP HTTP request header field." A Fetch `Headers`
  // joins repeated lines with ", ", which no compact JWS holds: refused below as well.
  if (repeatsField(view.rawHeaders, "dpop"))
    throw new DpopProofError("malformed", "More than one DPoP header");
  const field = view.headers.dpop;
  const proof = Array.isArray(field) ? undefined : field?.trim();
  if (proof === undefined || proof === "") throw new DpopProofError("missing", "DPoP proof is missing");
  if (proof.length > config.maxProofLength) throw new DpopProofError("malformed", "DPoP proof is too large");
  // §4.3 check 2: "The DPoP HTTP request header field value is a single and well-formed JWT."
  if (!JWS_COMPACT.test(proof)) throw new DpopProofError("malformed", "DPoP proof is not a JWS");
  let header: ReturnType<typeof decodeProtectedHeader>;
  let claims: JWTPayload;
  try {
    header = decodeProtectedHeader(proof);
    claims = decodeJwt(proof);
  } catch (cause) {
    throw new DpopProofError("malformed", "DPoP proof is not a JWT", { cause });
  }
  // §4.3 check 4: "The typ JOSE Header Parameter has the value dpop+jwt."
  if (header.typ !== "dpop+jwt") throw new DpopProofError("claims", "DPoP proof typ is not dpop+jwt");
  // §4.3 check 5: an asymmetric algorithm the server accepts, never none nor a MAC.
  const { alg, jwk } = header;
  if (typeof alg !== "string" || !config.algorithms.has(alg))
    throw new DpopProofError("algorithm", "DPoP proof alg is not accepted");
  // §4.3 check 7: "The jwk JOSE Header Parameter does not contain a private key."
  if (typeof jwk !== "object" || jwk === null || Array.isArray(jwk) || typeof jwk.kty !== "string")
    throw new DpopProofError("malformed", "DPoP proof has no jwk");
  if (PRIVATE_MEMBERS.some((name) => Object.hasOwn(jwk, name)))
    throw new DpopProofError("malformed", "DPoP proof jwk holds a private key");
  // §4.3 check 3: "All required claims per Section 4.2 are contained in the JWT."
  const { jti, htm, htu, iat } = claims;
  if (typeof jti !== "string" || jti === "" || jti.length > MAX_JTI_LENGTH)
    throw new DpopProofError("claims", "DPoP proof jti is missing or too long");
  // §4.3 check 8: htm "matches the HTTP method of the current request" (methods are case-sensitive).
  if (htm !== view.method)
    throw new DpopProofError("claims", "DPoP proof htm does not match the request method");
  // §4.3 check 9: htu "matches the HTTP URI value for the HTTP request in which the JWT was
  // received, ignoring any query and fragment parts".
  if (typeof htu !== "string" || comparableUri(htu) !== requestUri(config, view))
    throw new DpopProofError("claims", "DPoP proof htu does not match the request URI");
  // §4.3 check 11: "the creation time of the JWT, as determined by ... the iat claim, is within
  // an acceptable window".
  if (typeof iat !== "number" || !Number.isFinite(iat))
    throw new DpopProofError("claims", "DPoP proof iat is missing");
  const nowSeconds = config.now() / 1000;
  if (iat > nowSeconds + config.toleranceSeconds)
    throw new DpopProofError("not-yet-valid", "DPoP proof iat is in the future");
  if (iat < nowSeconds - config.maxAgeSeconds - config.toleranceSeconds)
    throw new DpopProofError("expired", "DPoP proof iat is too old");
  // §4.3 check 12: "ath ... equals the hash of the access token".
  if (claims.ath !== sha256Base64url(accessToken))
    throw new DpopProofError("claims", "DPoP proof ath does not match the access token");
  // §4.3 check 10: "if the server provided a nonce value to the client, the nonce claim matches".
  if (config.nonce !== undefined && !validNonce(config, claims.nonce))
    throw new DpopNonceError(issueNonce(config));
  return { proof, alg, jwk: jwk as JWK, jti, iat };
}

/**
 * RFC 9449 §4.3 checks 6 and 12 and §11.1: the proof's signature with its own `jwk`, the access
 * token bound to that key (`cnf.jkt`, RFC 7638 thumbprint), and the `jti` used once. The token
 * must have been verified before its claims are read here.
 */
export async function verifyProof(
  config: DpopConfig,
  checked: CheckedProof,
  boundJkt: string,
): Promise<void> {
  // §6.1: "the value of ... jkt ... is the base64url encoding of the JWK SHA-256 Thumbprint".
  let jkt: string;
  try {
    jkt = await calculateJwkThumbprint(checked.jwk, "sha256");
  } catch (cause) {
    throw new DpopProofError("malformed", "DPoP proof jwk is not a valid key", { cause });
  }
  if (jkt !== boundJkt) throw new DpopBindingError();
  try {
    const key = await importJWK(checked.jwk, checked.alg);
    await compactVerify(checked.proof, key, { algorithms: [checked.alg] });
  } catch (cause) {
    throw new DpopProofError("signature", "DPoP proof signature is invalid", { cause });
  }
  // §11.1: "the server MUST NOT accept a proof with a jti it has already seen" within the window;
  // claimed last, so only a verified proof takes room in the store.
  const untilMs = (checked.iat + config.maxAgeSeconds + config.toleranceSeconds) * 1000;
  let fresh: boolean;
  try {
    fresh = await config.replayStore.claim(
      `dpop:${sha256Base64url(checked.jti)}`,
      Math.max(1, untilMs - config.now()),
    );
  } catch (cause) {
    throw new DpopReplayStoreError(cause);
  }
  if (!fresh) throw new DpopProofError("replayed", "DPoP proof jti has been used before");
}

/** The access token is not bound to the proof's key (`cnf.jkt`): RFC 9449 §7.1 `invalid_token`. */
export class DpopBindingError extends Error {
  constructor() {
    super("The access token is not bound to the DPoP proof key");
    this.name = "DpopBindingError";
  }
}

/**
 * The replay store failed (Redis unreachable or slower than its `timeoutMs`, a `memoryNonceStore`
 * full of proofs still in their window): the proof was not judged, so neither accepted nor
 * refused as invalid (a 503 the client may retry).
 */
export class DpopReplayStoreError extends Error {
  constructor(cause: unknown) {
    super("The DPoP replay store did not answer", { cause });
    this.name = "DpopReplayStoreError";
  }
}

/** The `cnf.jkt` a verified JWT access token carries (RFC 9449 §6.1), or undefined. */
export function boundThumbprint(accessToken: string): string | undefined {
  let claims: JWTPayload;
  try {
    claims = decodeJwt(accessToken);
  } catch {
    return undefined;
  }
  const cnf = claims.cnf as { jkt?: unknown } | undefined;
  return typeof cnf === "object" && cnf !== null && typeof cnf.jkt === "string" ? cnf.jkt : undefined;
}

/**
 * The URI the request was made to, as the client saw it: the external origin and path prefix
 * resolved behind `trustProxy` (else the framework's trusted proxies the exchange records), then
 * the path, no query nor fragment.
 */
function requestUri(config: DpopConfig, view: RequestView): string {
  const facts = requestFacts(view, config.trust, config.forwardedHeaders);
  return comparableUri(`${facts.origin}${facts.prefix}${targetPath(view.originalUrl ?? view.url ?? "/")}`);
}

/** RFC 3986 §2.3: unreserved characters, which a percent-encoding of means the same character. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/**
 * RFC 9449 §4.3 check 9 compares "after applying syntax-based normalization and scheme-based
 * normalization" (RFC 3986 §6.2.2, §6.2.3): the URL parser lowers scheme and host, drops the
 * default port and resolves dot-segments; percent-encodings get upper-case digits and those of
 * unreserved characters are decoded. Query and fragment are dropped. `""` for no http(s) URI.
 */
function comparableUri(uri: string): string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "";
  const path = url.pathname.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
  return `${url.protocol}//${url.host}${path}`;
}

/**
 * The nonce a response to an accepted proof carries, with `nonce` set: RFC 9449 §9 has a resource
 * server supply nonces as §8.2 has the authorization server do, a new one in any response, which
 * the client then uses in place of the one before. A new one on every such response rather than only near the end of the one presented: it
 * is one HMAC, nothing is stored, and a client with steady traffic then never meets the 401
 * `use_dpop_nonce` round trip again. `undefined` without `nonce`.
 */
export function freshNonce(config: DpopConfig): string | undefined {
  return config.nonce === undefined ? undefined : issueNonce(config);
}

/** A nonce: the second it was issued (base 36), a dot, and its MAC. */
function issueNonce(config: DpopConfig): string {
  const issued = Math.floor(config.now() / 1000).toString(36);
  return `${issued}.${nonceMac(config, issued)}`;
}

function nonceMac(config: DpopConfig, issued: string): string {
  return hmacSha256Base64url((config.nonce as NonNullable<DpopConfig["nonce"]>).key, `dpop-nonce:${issued}`);
}

function validNonce(config: DpopConfig, nonce: unknown): boolean {
  const settings = config.nonce;
  if (settings === undefined || typeof nonce !== "string" || nonce.length > 64) return false;
  const dot = nonce.indexOf(".");
  if (dot < 1) return false;
  const issued = nonce.slice(0, dot);
  if (!/^[0-9a-z]{1,11}$/.test(issued)) return false;
  const at = Number.parseInt(issued, 36);
  const nowSeconds = config.now() / 1000;
  if (at > nowSeconds + config.toleranceSeconds || at < nowSeconds - settings.maxAgeSeconds) return false;
  return equalStrings(nonce.slice(dot + 1), nonceMac(config, issued));
}

/** Compares without stopping at the first difference, so the time taken tells nothing of the MAC. */
function equalStrings(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
