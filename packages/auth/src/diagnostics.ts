import { type HttpError, isHttpError } from "@svc/errors";
import type { DecisionMessage } from "@svc/kernel";
import { decisionChannel, publishDecision, tracedCall } from "@svc/kernel/internal";
import { parseAuthorization } from "./authorization-header.js";

/**
 * Why a request was refused, as `svc:auth` tells it (never the client: its 401 says only
 * `invalid_token`).
 *
 * - `missing`: no credentials, or a scheme not enabled; `malformed`: credentials that cannot be
 *   read (a header that is no `Authorization` syntax, a token that is no JWS, a token in the query
 *   or a form body, a repeated `Authorization`);
 * - a Bearer token refused by its claims or signature: `expired`, `not-yet-valid` (`nbf`, or an
 *   `iat` ahead of the clock), `audience`, `issuer`, `signature`, `unknown-key` (no key of the set
 *   has its `kid`), `algorithm` (an `alg` not allowed), `claims` (any other claim, `typ`, or claims
 *   that name no principal or one `verifyPrincipal` refused);
 * - Basic: `bad-credentials`, `budget-spent` (429), `overloaded` (503, hashing slots and queue full);
 * - SOAP header credentials (scheme `soap`): `missing`, `malformed` (a block or token that cannot
 *   be read, two of them, an unsupported token or password type, or header and `Authorization`
 *   naming different users), `expired` (`wsu:Created` out of its window), `replayed` (a nonce seen
 *   before), `bad-credentials`, `budget-spent`, `overloaded`;
 * - DPoP (scheme `dpop`, RFC 9449): a proof refused as `missing`, `malformed` (not one compact
 *   JWS, too large, repeated, no public `jwk`), `algorithm`, `claims` (`typ`, `htm`, `htu`, `ath`,
 *   `jti`), `expired` or `not-yet-valid` (`iat` out of its window), `signature`, `replayed` (a
 *   `jti` seen before); `nonce`: no current server nonce (`use_dpop_nonce`); `binding`: a token
 *   not bound to the proof's key, one presented as DPoP without `cnf.jkt`;
 * - `binding` for the Bearer scheme too: a token bound to a key or a certificate (`cnf`) presented
 *   as Bearer, without `bearer.acceptBoundTokens` (a `jkt` one beside DPoP, with it too);
 * - a guard's 403: `insufficient-scope`;
 * - `keys-unavailable`: the key set (or the issuer's metadata) could not be fetched, a 503: the
 *   token was not judged;
 * - `error`: a verifier or callback failed (a 500, or the `HttpError` a callback threw).
 */
export type AuthRefusal =
  | "missing"
  | "malformed"
  | "expired"
  | "not-yet-valid"
  | "audience"
  | "issuer"
  | "signature"
  | "unknown-key"
  | "algorithm"
  | "claims"
  | "bad-credentials"
  | "replayed"
  | "binding"
  | "nonce"
  | "budget-spent"
  | "overloaded"
  | "insufficient-scope"
  | "keys-unavailable"
  | "error";

/**
 * A message on the `svc:auth` channel: one per authentication decision (`authenticated`,
 * `anonymous`, `refused`), one per guard refusal, and one per key-set download that succeeded
 * (`jwks-refreshed`) or failed (`jwks-failed`). Its names and members are part of the package's
 * API.
 *
 * @example
 * subscribeDiagnostics("svc:auth", (message) => {
 *   const m = message as AuthDiagnostic;
 *   if (m.decision === "refused") console.info(m.reason, m.scheme);
 * });
 * @see https://nodejs.org/api/diagnostics_channel.html
 */
export type AuthDiagnostic =
  | {
      readonly request: object;
      readonly decision: "authenticated";
      /** `bearer`, `basic`, or the scheme a verifier of one's own gave its principal. */
      readonly scheme: "bearer" | "basic" | (string & {});
      /** The principal's `id`. */
      readonly principal: string;
    }
  | { readonly request: object; readonly decision: "anonymous" }
  | {
      readonly request: object;
      readonly decision: "refused";
      /** The scheme of the credentials refused (lower case), `undefined` when there were none. */
      readonly scheme: string | undefined;
      readonly reason: AuthRefusal;
      /** What the refusal rests on, when anything: jose's error, the key source's, a callback's. */
      readonly error?: unknown;
    }
  | { readonly decision: "jwks-refreshed"; readonly uri: string; readonly keys: number }
  | { readonly decision: "jwks-failed"; readonly uri: string; readonly error: unknown };

/** Every `AuthDiagnostic` is a kernel `DecisionMessage`. */
type Checked = AuthDiagnostic extends DecisionMessage ? AuthDiagnostic : never;

/** The `svc:auth` channel. */
export const authChannel = decisionChannel<Checked>("svc:auth");

/** The tracing channels `tracing:svc:auth:jwks:*`, around each key-set download. */
export const jwksFetches = tracedCall<{ uri: string }>("svc:auth:jwks");

const TOKEN_REASONS: Readonly<Record<string, AuthRefusal>> = {
  ERR_JWT_EXPIRED: "expired",
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: "signature",
  ERR_JWKS_NO_MATCHING_KEY: "unknown-key",
  ERR_JWKS_MULTIPLE_MATCHING_KEYS: "unknown-key",
  ERR_JOSE_ALG_NOT_ALLOWED: "algorithm",
  ERR_JOSE_NOT_SUPPORTED: "algorithm",
  ERR_JWS_INVALID: "malformed",
  ERR_JWT_INVALID: "malformed",
  ERR_TOKEN_TOO_LONG: "malformed",
  ERR_JWT_NESTED: "malformed",
  ERR_JWT_AUDIENCE_UNEXPECTED: "audience",
  ERR_JWT_IAT_IN_FUTURE: "not-yet-valid",
  ERR_NO_PRINCIPAL: "claims",
  ERR_PRINCIPAL_REFUSED: "claims",
  ERR_DPOP_BOUND: "binding",
  ERR_CERTIFICATE_BOUND: "binding",
  ERR_KEY_BOUND: "binding",
  ERR_DPOP_UNBOUND: "binding",
  ERR_DPOP_KEY_MISMATCH: "binding",
};

const CLAIM_REASONS: Readonly<Record<string, AuthRefusal>> = {
  aud: "audience",
  iss: "issuer",
  nbf: "not-yet-valid",
  exp: "expired",
};

function stringMember(value: unknown, name: string): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const member = (value as Record<string, unknown>)[name];
  return typeof member === "string" ? member : undefined;
}

/**
 * Why a Bearer token was refused, from what its verification threw: jose's error (read by its
 * `code`, so a second copy of jose is read alike) or an `InvalidTokenError`'s `reason`. A refusal
 * that names none (a verifier of one's own answering no principal) is `signature`: the token was
 * not shown valid.
 *
 * @see https://github.com/panva/jose/blob/main/docs/util/errors/README.md
 */
export function tokenRefusal(err: unknown, depth = 4): AuthRefusal {
  const cause = (err as { cause?: unknown } | null | undefined)?.cause;
  const code = stringMember(err, "code") ?? stringMember(err, "reason");
  if (code === "ERR_JWT_CLAIM_VALIDATION_FAILED")
    return CLAIM_REASONS[stringMember(err, "claim") ?? stringMember(cause, "claim") ?? ""] ?? "claims";
  const known = code === undefined ? undefined : TOKEN_REASONS[code];
  if (known !== undefined) return known;
  return depth > 0 && typeof cause === "object" && cause !== null
    ? tokenRefusal(cause, depth - 1)
    : "signature";
}

/** The refusal an `HttpError` of `authenticate` stands for, and the scheme it was about. */
function refusalOf(
  err: unknown,
  authorization: string | undefined,
): { scheme: string | undefined; reason: AuthRefusal; error?: unknown } {
  const scheme = parseAuthorization(authorization)?.scheme;
  if (!isHttpError(err)) return { scheme, reason: "error", error: err };
  const { status, code, cause } = err as HttpError;
  if (status === 400) return { scheme, reason: "malformed" };
  if (status === 401) {
    if (code === "invalid_token") return { scheme, reason: tokenRefusal(cause), error: cause };
    if (code === "invalid_credentials") return { scheme, reason: "bad-credentials" };
    if (code === "use_dpop_nonce") return { scheme, reason: "nonce" };
    if (code === "invalid_dpop_proof") {
      const reason = stringMember(cause, "reason") as AuthRefusal | undefined;
      return { scheme, reason: reason ?? "malformed", error: cause };
    }
    const blank = authorization === undefined || /^[ \t]*$/.test(authorization);
    return { scheme, reason: blank || scheme !== undefined ? "missing" : "malformed" };
  }
  if (status === 429 && code === "too_many_failed_attempts") return { scheme, reason: "budget-spent" };
  if (status === 503 && code === "authentication_busy")
    return cause === undefined
      ? { scheme, reason: "overloaded" }
      : { scheme, reason: "overloaded", error: cause };
  if (status === 503 && (cause as { name?: unknown } | undefined)?.name === "KeySourceUnavailableError")
    return { scheme, reason: "keys-unavailable", error: cause };
  return { scheme, reason: "error", error: cause ?? err };
}

/** Publishes what `authenticate` decided for `request`: call only when `authChannel.hasSubscribers`. */
export function publishAuthentication(
  request: object,
  principal: { readonly id: string; readonly scheme: string } | undefined,
): void {
  publishDecision(
    authChannel,
    principal === undefined
      ? { request, decision: "anonymous" }
      : { request, decision: "authenticated", scheme: principal.scheme, principal: principal.id },
  );
}

/** Publishes why `authenticate` refused `request`: call only when `authChannel.hasSubscribers`. */
export function publishRefusal(request: object, authorization: string | undefined, err: unknown): void {
  const { scheme, reason, error } = refusalOf(err, authorization);
  publishDecision(
    authChannel,
    error === undefined
      ? { request, decision: "refused", scheme, reason }
      : { request, decision: "refused", scheme, reason, error },
  );
}

/**
 * Why SOAP header credentials were refused: a `SoapAuthError` by its WS-Security fault code (read
 * by its members, so another copy of the package is read alike); the failure budget's and the
 * hashing slots' `HttpError`s as for Basic; anything else (a `verify` that threw) is an `error`.
 *
 * @see https://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0.pdf (§12)
 */
function soapRefusal(err: unknown): { reason: AuthRefusal; error?: unknown } {
  if (stringMember(err, "name") !== "SoapAuthError") return refusalOf(err, undefined);
  switch (stringMember(err, "code")) {
    case "MessageExpired":
      return { reason: "expired" };
    case "FailedAuthentication": {
      const why = stringMember(err, "reason");
      if (why === SOAP_REPLAYED) return { reason: "replayed" };
      return { reason: why === SOAP_MISSING ? "missing" : "bad-credentials" };
    }
    default:
      return { reason: "malformed" };
  }
}

/** The `reason` of the `SoapAuthError`s that are no failed password. */
export const SOAP_MISSING = "no credentials in the SOAP header or the HTTP request";
export const SOAP_REPLAYED = "replayed nonce";

/** Publishes why SOAP header credentials were refused: call only when `authChannel.hasSubscribers`. */
export function publishSoapRefusal(request: object, err: unknown): void {
  const { reason, error } = soapRefusal(err);
  publishDecision(
    authChannel,
    error === undefined
      ? { request, decision: "refused", scheme: "soap", reason }
      : { request, decision: "refused", scheme: "soap", reason, error },
  );
}

/** Publishes a guard's refusal (401 without a principal, 403 without the scope or role). */
export function publishGuardRefusal(request: object, refusal: HttpError, scheme: string | undefined): void {
  if (!authChannel.hasSubscribers) return;
  if (refusal.status === 403)
    publishDecision(authChannel, { request, decision: "refused", scheme, reason: "insufficient-scope" });
  else if (refusal.status === 401)
    publishDecision(authChannel, { request, decision: "refused", scheme: undefined, reason: "missing" });
}
